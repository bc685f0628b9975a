"""Placeholder app: replaced by the full chat app (issue 5)."""
import gradio as gr

if __name__ == "__main__":
    with gr.Blocks(title="Batch & memory assistant") as demo:
        gr.Markdown("# Batch & memory assistant\nComing soon.")
    demo.launch(server_name="127.0.0.1", server_port=7860)
