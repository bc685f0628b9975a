"""The chat's look: fonts, phone layout, embed mode, and the little JS Gradio has no component for.

Fonts: Gradio 6.31's default theme loads its bundled Source Sans Pro, whose SemiBold file is a 5 KB
subset without most glyphs, so bold text mixed two typefaces ("Gi**B**" with a shrunken B). The
theme here names only installed system fonts (the Noto fonts the browser tests install, then each
platform's own CJK font), so every weight comes from one complete family and nothing is fetched.
"""

from __future__ import annotations

import gradio as gr

FONT_STACK = (
    "Noto Sans",
    "Noto Sans CJK SC",
    "Noto Sans SC",
    "PingFang SC",
    "Microsoft YaHei",
    "Segoe UI",
    "Helvetica Neue",
    "Arial",
    "system-ui",
    "sans-serif",
)
MONO_STACK = (
    "Noto Sans Mono",
    "Noto Sans Mono CJK SC",
    "DejaVu Sans Mono",
    "Menlo",
    "Consolas",
    "ui-monospace",
    "monospace",
)


def theme() -> gr.themes.Base:
    """Gradio's default look with local fonts only (no @font-face for the incomplete bundled files)."""
    return gr.themes.Default(font=list(FONT_STACK), font_mono=list(MONO_STACK))


# Sent in <head> as a <style> element, not as launch(css=): Gradio prefixes launch CSS with
# ".gradio-container .contain", which cannot reach the page padding outside ".contain" on a phone.
CHAT_CSS = """
/* bold text: a weight every installed CJK/Latin face has */
.gradio-container strong, .gradio-container b, .gradio-container h1, .gradio-container h2,
.gradio-container h3 { font-weight: 700; }
/* the small language switch of embed mode */
.batchbot-embed-only { display: none !important; }
html.batchbot-embed .batchbot-embed-only { display: flex !important; justify-content: flex-end; max-width: 220px;
  margin-left: auto; }
/* chat input */
#chat-hint-row { align-items: center; gap: 8px; }
#chat-hint p { font-size: var(--text-sm); color: var(--body-text-color-subdued); margin: 0; }
#chat-buttons { gap: 6px; }
#stop { min-height: 42px; }
/* the status line is our own message; Gradio's tracker would add "Error" to it when Stop cancels a run */
#chat-status [data-testid="status-tracker"] { display: none !important; }
/* example cards in the empty chat: the whole question, never cut off */
#chatbot .examples button, #chatbot .example { white-space: normal !important; height: auto !important; }
#chatbot .examples .example-text, #chatbot .example-text, #chatbot .example-content {
  white-space: normal !important; overflow: visible !important; text-overflow: clip !important;
  -webkit-line-clamp: unset !important; display: block !important; }
/* Gradio's "scroll to the end" arrow sat centred over the last message (on a phone, over a folded title): put it
   in the panel's bottom-right corner, on its own background */
#chatbot .scroll-down-button-container { left: auto !important; right: 10px !important; transform: none !important; }
#chatbot .scroll-down-button-container button { background: var(--background-fill-primary) !important;
  border: 1px solid var(--border-color-primary) !important; }
/* the panel's delete/copy-all icons (top right, 23 px) covered the end of the first question */
#chatbot .bubble-wrap { padding-top: 30px !important; }
/* the 👎 reasons (Gradio shows them on hover, below the button) were cut off by the panel's bottom edge under the
   last answer: open them upward, over the answer they rate, and keep them open while the button has focus (a tap) */
#chatbot .extra-feedback-options { top: auto !important; bottom: 100% !important; z-index: 20; padding: 4px !important;
  background: var(--background-fill-primary); border: 1px solid var(--border-color-primary); border-radius: 6px;
  box-shadow: var(--shadow-drop); }
#chatbot .extra-feedback:focus-within .extra-feedback-options { display: flex !important; }
/* the question box's placeholder on one line, never a clipped third line */
#question textarea::placeholder { white-space: nowrap; overflow: hidden; text-overflow: ellipsis; }
/* phone: title compact, the input pinned at the bottom and full width, the chat uses the viewport
   (.gradio-container clips overflow, so sticky cannot pin: the input is fixed and the tab keeps room for it) */
@media (max-width: 640px) {
  .gradio-container > .main, .gradio-container .main.app { padding-left: 6px !important; padding-right: 6px !important; }
  .batchbot-header { flex-wrap: nowrap !important; gap: 4px !important; align-items: center; }
  .batchbot-title-col { min-width: 0 !important; flex: 1 1 auto !important; overflow: hidden; }
  .batchbot-lang-col { min-width: 128px !important; max-width: 150px !important;
    flex: 0 0 auto !important; }
  .batchbot-header h1 { font-size: 1.1rem !important; margin: 0 !important; }
  #app-title p { display: none; }
  #lang-toggle { padding: 0 !important; border: 0 !important; background: none !important; }
  #lang-toggle [data-testid="block-info"], #lang-toggle .block-info, #lang-toggle > span { display: none !important; }
  #lang-toggle .wrap { flex-wrap: nowrap !important; gap: 4px !important; }
  #lang-toggle label { padding: 2px 6px !important; font-size: 12px !important; }
  #chatbot { height: calc(100dvh - 215px) !important; min-height: 240px !important; }
  #chatbot > label, #chatbot [data-testid="block-label"] { display: none !important; }   /* covered the question */
  #tab-chat { padding-bottom: 96px; }
  #chat-input { position: fixed; left: 0; right: 0; bottom: 0; z-index: 50; margin: 0 !important;
    background: var(--background-fill-primary); border-top: 1px solid var(--border-color-primary);
    padding: 4px 6px max(4px, env(safe-area-inset-bottom)) 6px !important; gap: 2px !important; }
  #chat-question-row { flex-wrap: nowrap !important; gap: 6px !important; }
  #chat-question-row .form { flex-wrap: nowrap !important; }
  #feedback-row { flex-wrap: nowrap !important; gap: 6px !important; }
  #feedback-row .form { flex-wrap: nowrap !important; }
  #feedback-submit { min-width: 64px !important; max-width: 96px !important; }
  #chat-buttons { min-width: 64px !important; max-width: 64px !important; flex: 0 0 64px !important; }
  #question { min-width: 0 !important; padding: 4px !important; }
  #chat-hint p { font-size: 11px; }
  #clear { font-size: 11px !important; padding: 0 6px !important; min-height: 22px !important; }
  /* the four tabs in one row at 390 px (Gradio pads each by 16 px a side); they wrap, never hide, if wider */
  #main-tabs [role=tablist] > button { padding: 0 8px !important; }
}
"""

# In the URL: the open tab (?tab=), so a link opens where it was copied. Not in <gradio-app> mode, where the
# page's URL belongs to the wiki page.
TAB_IN_URL_JS = """() => {
  try {
    if (document.querySelector('gradio-app[src]')) return;
    const u = new URL(window.location.href);
    u.searchParams.set('tab', 'TAB_ID');
    window.history.replaceState(window.history.state, '', u.toString());
  } catch (e) {}
}"""


# The tab asked for in the link, read before the app renders: Gradio selects the first tab on start, and that
# select event writes ?tab=chat into the URL before a load event could read the link's tab.
TAB_PARAM_SCRIPT = """<script>
try { window.__batchbotTab = (new URLSearchParams(window.location.search).get('tab') || '').toLowerCase(); }
catch (e) { window.__batchbotTab = ''; }
</script>"""


def head_style() -> str:
    return "<style>" + CHAT_CSS + "</style>" + TAB_PARAM_SCRIPT


TAB_FROM_URL_JS = """() => {
  try {
    if (document.querySelector('gradio-app[src]')) return;
    const tab = window.__batchbotTab || '';
    if (!/^(chat|calculators|check|knowledge)$/.test(tab)) return;
    const pick = () => {
      const b = document.querySelector('#tab-' + tab + '-button') ||
        [...document.querySelectorAll('[role=tab]')].find(x => (x.id || '').startsWith('tab-' + tab));
      if (b) { b.click(); return true; }
      return false;
    };
    if (!pick()) setTimeout(pick, 300);
  } catch (e) {}
}"""
