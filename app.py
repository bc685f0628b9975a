"""Batch & memory assistant — the web app (Gradio).

    .venv/bin/python app.py                       # http://127.0.0.1:7860
    .venv/bin/python app.py --host 0.0.0.0 --port 8080 --root-path /batchbot --embed

Flags override environment variables: BATCHBOT_HOST, BATCHBOT_PORT, BATCHBOT_ROOT_PATH,
BATCHBOT_EMBED_MODEL, BATCHBOT_EMBED (1 = embed mode), BATCHBOT_LANG (zh/en, the default UI
language), BATCHBOT_MCP (default 1; 0 = do not serve the tools over MCP at /gradio_api/mcp/, see docs/mcp.md),
BATCHBOT_TORCH_THREADS (default 1). The README's table lists these and the variables read elsewhere
(tests/test_readme_flags.py keeps it in step with the code).

Security and limits (body size, uploads, queue, what is trusted, running behind an
authenticating proxy): docs/security.md.

``build_app(assistant=None)`` returns the gr.Blocks for tests and for mounting elsewhere.
API endpoints (gradio_client): /chat, /effective_batch, /memory, /sweep, /check_config, /diagnose, /fact_check,
/memory_estimate, /memory_sweep, /config_check, /card_search, /diagnose_tool. MCP tools (docs/mcp.md):
effective_batch, memory_estimate, memory_sweep, config_check, diagnose, fact_check, card_search.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
from collections.abc import Callable

from ui.build import build_app  # noqa: F401  (re-exported for tests and other programs)
from ui.embed import embed_snippets

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 7860


def _int_in(name: str, low: int, high: int) -> Callable[[str], int]:
    """An argparse type: an integer in [low, high], else a usage error naming ``name`` (never a traceback)."""

    def parse(value: str) -> int:
        try:
            number = int(value)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{name} must be an integer, not {value!r}") from None
        if not low <= number <= high:
            raise argparse.ArgumentTypeError(f"{name} must be {low}-{high}, not {number}")
        return number

    return parse


_port = _int_in("port", 1, 65535)


def _root_path(value: str) -> str:
    value = (value or "").strip()
    if not value:
        return ""
    if value.startswith(("http://", "https://")):
        return value.rstrip("/")
    return "/" + value.strip("/")


_torch_threads = _int_in("torch threads", 1, 1024)


def build_parser(env: dict[str, str] | None = None) -> argparse.ArgumentParser:
    """The command line; each flag's default comes from its BATCHBOT_* variable in ``env`` (default os.environ).

    Defaults are strings where a value is checked, so argparse checks an environment value like a flag's and a bad
    one ends in a usage error naming the flag, not a traceback.
    """
    env = dict(os.environ if env is None else env)
    p = argparse.ArgumentParser(prog="batchbot", description=(__doc__ or "").split("\n")[0])
    p.add_argument(
        "--host",
        default=env.get("BATCHBOT_HOST") or DEFAULT_HOST,
        help="interface to listen on (env BATCHBOT_HOST; default 127.0.0.1)",
    )
    p.add_argument(
        "--port",
        type=_port,
        default=env.get("BATCHBOT_PORT") or str(DEFAULT_PORT),
        help="port (env BATCHBOT_PORT; default 7860)",
    )
    p.add_argument(
        "--root-path",
        type=_root_path,
        default=env.get("BATCHBOT_ROOT_PATH", ""),
        help="path prefix when served behind a reverse proxy, e.g. /batchbot (env BATCHBOT_ROOT_PATH)",
    )
    p.add_argument(
        "--embed-model",
        default=env.get("BATCHBOT_EMBED_MODEL") or None,
        help="sentence-embedding model name or local path (env BATCHBOT_EMBED_MODEL)",
    )
    p.add_argument(
        "--embed",
        action="store_true",
        default=str(env.get("BATCHBOT_EMBED", "")).lower() in ("1", "true", "yes"),
        help="embed mode: no header or footer, for an iframe (also per page: ?embed=1)",
    )
    p.add_argument(
        "--lang",
        choices=("zh", "en"),
        default=env.get("BATCHBOT_LANG") or None,
        help="default UI language before the browser's preference is known (env BATCHBOT_LANG)",
    )
    # On by default: the MCP tools are the public API endpoints under another protocol, and serving them
    # adds ~0.2 s to launch (measured: 0.9-1.3 s vs 0.7-1.05 s, three launches each, build_app + launch).
    p.add_argument(
        "--mcp",
        action=argparse.BooleanOptionalAction,
        default=str(env.get("BATCHBOT_MCP", "1")).strip().lower() not in ("0", "false", "no", "off"),
        help="serve the tools over the Model Context Protocol at /gradio_api/mcp/ (default on; "
        "--no-mcp or env BATCHBOT_MCP=0 turns it off)",
    )
    p.add_argument(
        "--print-embed-snippet",
        metavar="PUBLIC_URL",
        default=None,
        help="print the iframe and <gradio-app> snippets for the app served at PUBLIC_URL and exit",
    )
    # One torch thread per query embedding: on small CPUs this keeps p95 latency low under load
    # (bench/latency.py --threads 1 vs 2: 36 ms vs 500 ms p95 at load 2-4); the index is already built.
    p.add_argument(
        "--torch-threads",
        type=_torch_threads,
        default=env.get("BATCHBOT_TORCH_THREADS") or "1",
        help="torch CPU threads for query embeddings (env BATCHBOT_TORCH_THREADS; default 1)",
    )
    return p


def parse_args(argv: list[str] | None = None, env: dict[str, str] | None = None) -> argparse.Namespace:
    return build_parser(env).parse_args(argv)


def main(argv: list[str] | None = None) -> int | None:
    args = parse_args(argv)
    if args.print_embed_snippet:
        print(embed_snippets(args.print_embed_snippet))
        return None
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    if args.embed_model:
        os.environ["BATCHBOT_EMBED_MODEL"] = args.embed_model
    from rag.background import BackgroundAssistant
    from rag.cards import Card, CardError, load_cards
    from rag.embedding import EmbeddingLoadError, EmbeddingSettings, batch_settings, check_model_setting

    try:  # the cheap checks first: a bad card or model setting stops the start with its reason
        cards = load_cards()
        check_model_setting(EmbeddingSettings.from_env())
    except (CardError, EmbeddingLoadError) as err:  # refuse to start, with the reason, not a traceback
        print(f"batchbot: cannot start: {err}", file=sys.stderr)
        return 2
    threads = args.torch_threads

    def build_assistant(cards: list[Card]) -> object:
        from rag import Assistant

        bot = Assistant(cards=cards, embed_model=args.embed_model) if args.embed_model else Assistant(cards=cards)
        import torch

        torch.set_num_threads(threads)
        return bot

    # The model, its cache and BM25 load on a thread while Gradio builds and starts (bench/cold_start.py:
    # the server answers HTTP before the model is ready; a question asked meanwhile waits for it).
    assistant = BackgroundAssistant(build_assistant, cards, batches_queries=batch_settings()[0] > 0)
    demo = build_app(assistant, embed=args.embed, lang=args.lang)
    # build_app() already set the queue limits and BatchBotBlocks.launch() the body/upload limits (ui/limits.py).
    demo.launch(
        server_name=args.host,
        server_port=args.port,
        root_path=args.root_path or None,
        show_error=False,
        mcp_server=args.mcp or None,  # None: Gradio reads GRADIO_MCP_SERVER
        prevent_thread_lock=True,
    )
    try:
        assistant.wait()
    except Exception as err:  # noqa: BLE001 - the model failed to load after all: stop, with the reason
        print(f"batchbot: cannot start: {type(err).__name__}: {err}", file=sys.stderr)
        demo.close()
        return 2
    demo.block_thread()
    return None


if __name__ == "__main__":
    sys.exit(main())
