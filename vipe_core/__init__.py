"""ViPE: lyrics -> visual elaborations. Inference (used by musicvid) and the training stack."""

from vipe_core.context import CONTEXT_SEPARATOR, lyric_context, model_input, scene_context
from vipe_core.inference import ViPE, clean_elaboration

__all__ = ["CONTEXT_SEPARATOR", "ViPE", "clean_elaboration", "lyric_context", "model_input", "scene_context"]
