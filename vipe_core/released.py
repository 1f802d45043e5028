"""The released ViPE models by hub name, and how many lyric lines a checkpoint was trained to read: light to import
(no torch), for whoever only names them."""

from __future__ import annotations

import os
import re
from pathlib import Path

from vipe_core.context import MAX_CONTEXT_SIZE
from vipe_core.errors import VipeError
from vipe_core.records import read_json
from vipe_core.train_config import TRAINING_INFO

# The paper's default: ViPE-M (GPT-2 Medium) fine-tuned with context size 7.
DEFAULT_VIPE = "fittar/ViPE-M-CTX7"
# The released checkpoints ship no tokenizer; their authors load GPT-2 Medium's (`gpt2-medium`, which the
# hub now redirects to this name).
DEFAULT_VIPE_TOKENIZER = "openai-community/gpt2-medium"

# The lines before each line the released checkpoints were trained to read (their names end -CTX7).
RELEASED_CONTEXT = 7
_NAMED_CONTEXT = re.compile(r"-CTX(\d+)$", re.IGNORECASE)


def trained_context(checkpoint: str | os.PathLike) -> int:
    """How many lines before each line `checkpoint` was trained to read: a `vipe train` folder's record says
    (TRAINING_INFO); a hub name says it by its end (-CTX7); else the released checkpoints' RELEASED_CONTEXT."""
    info = Path(checkpoint) / TRAINING_INFO
    if not info.is_file():
        named = _NAMED_CONTEXT.search(str(checkpoint))
        return int(named[1]) if named else RELEASED_CONTEXT
    data = read_json(info, "the training record")
    size = data.get("context_size", RELEASED_CONTEXT) if isinstance(data, dict) else None
    if not isinstance(size, int) or isinstance(size, bool) or not 0 <= size <= MAX_CONTEXT_SIZE:
        raise VipeError(
            f"{info} is damaged: its context_size should be a whole number from 0 to {MAX_CONTEXT_SIZE} (the most "
            f"lines ViPE reads), not {size!r}."
        )
    return size
