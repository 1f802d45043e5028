"""The settings of `vipe train`, with their defaults: the paper's recipe (AdamW, lr 5e-5, a linear schedule with
1000 warm-up steps, 5 epochs, the paper's batch size for the model and context size). Light to import: the
command line reads its defaults from here."""

from __future__ import annotations

from dataclasses import dataclass

# The paper's batch sizes (§5), by model size and context size.
PAPER_BATCH_SIZES = {
    "small": {0: 50, 1: 50, 3: 50, 5: 50, 7: 32},
    "medium": {0: 32, 1: 32, 3: 20, 5: 16, 7: 8},
}

MIXED_PRECISIONS = ("auto", "no", "fp16", "bf16")
MAX_SEED = 2**32 - 1  # numpy's, which accelerate's set_seed seeds too
MAX_EPOCHS = 1000  # ViPE trained for 5; a number past this is a typo, a run of years
MAX_BATCH_SIZE = 2**16  # lines a step; past it a typo (torch's sampler takes no number past sys.maxsize)
# AdamW's learning rates are 1e-2 at most in practice; beyond 1 every step overshoots, and beyond float32's
# range the optimizer fails in torch. Its decoupled weight decay multiplies each weight by 1 - lr * decay:
# past 1 (at lr 1) that flips the weights' signs.
MAX_LR = 1.0
MAX_WEIGHT_DECAY = 1.0
# The fewest lyric tokens an example keeps of its line. encode_example gives the elaboration at most half of
# --max-length (rounded down) and its closing <eos>, and the prompt the rest, whose two <eos> stay: the
# rounded-up half must hold those lyric tokens and the three <eos>.
MIN_LYRIC_TOKENS = 8
MIN_MAX_LENGTH = 2 * (MIN_LYRIC_TOKENS + 3) - 1
# Written by vipe into best/ (the settings and score of the checkpoint): marks the folder as vipe's.
TRAINING_INFO = "vipe_training.json"


@dataclass
class TrainConfig:
    data: str
    out: str = "ckpt"
    base: str = "gpt2-medium"
    tokenizer: str | None = None  # defaults to the base model's
    context_size: int = 7
    epochs: int = 5
    batch_size: int | None = None  # None: the paper's for this model and context size
    grad_accum: int = 1
    lr: float = 5e-5
    weight_decay: float = 0.0
    warmup_steps: int = 1000
    max_grad_norm: float = 1.0
    max_length: int | None = None  # tokens per example; None: the model's context window
    patience: int = 2  # evaluations without improvement before stopping; 0: never stop early
    eval_every: int = 0  # optimizer steps between validations; 0: once per epoch
    save_every: int = 500  # optimizer steps between saves of the resumable state
    max_steps: int | None = None  # stop after this many optimizer steps; the schedule still spans the epochs
    seed: int = 0
    mixed_precision: str = "auto"  # one of MIXED_PRECISIONS
    restart: bool = False  # ignore a previous run's state in --out
    progress: bool = True


def paper_batch_size(base: str, context_size: int) -> int:
    table = PAPER_BATCH_SIZES["medium" if "medium" in base.lower() else "small"]
    return table.get(context_size, min(table.values()))
