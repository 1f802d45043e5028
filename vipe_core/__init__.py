"""ViPE: lyrics -> visual elaborations. Inference (used by musicvid) and the training stack."""

from vipe_core.context import CONTEXT_SEPARATOR, lyric_context, model_input, scene_context

__all__ = ["CONTEXT_SEPARATOR", "ViPE", "clean_elaboration", "lyric_context", "model_input", "scene_context"]


def __getattr__(name: str):
    # Inference needs torch; the data stages (collect, filter, label) should start without it.
    if name in ("ViPE", "clean_elaboration"):
        from vipe_core import inference

        return getattr(inference, name)
    raise AttributeError(f"module 'vipe_core' has no attribute {name!r}")
