"""The musicvid web page (Gradio): `musicvid ui`, or `from ui.app import build_app`."""
