"""Stage 5, train: fine-tune a causal LM on LyricCanvas into a ViPE model.

Each example is  <eos> context <eos> elaboration <eos>,  where the context is the line and the
`context_size` lines before it, formatted by vipe_core.context (the same call inference makes).
The loss counts only the elaboration and its closing <eos>: the model learns to elaborate, not to
write lyrics. The paper's recipe is the default: AdamW, lr 5e-5, a linear schedule with 1000
warm-up steps, 5 epochs, the paper's batch size for the model and context size.

Runs on one device as `python -m vipe_core train ...` and on several GPUs as
`accelerate launch --multi_gpu --num_processes N -m vipe_core train ...` (or with an `accelerate
config`); bf16 or fp16 mixed precision on a GPU. (Several CPU processes, for trying the distributed
path without GPUs: `ACCELERATE_USE_CPU=1 torchrun --nproc_per_node 2 -m vipe_core train ...`.)
Written to --out:

    best/    the checkpoint with the lowest validation loss: save_pretrained model + tokenizer,
             loadable by vipe_core.inference.ViPE.from_pretrained and by `musicvid --vipe out/best`
    last/    the full training state (model, optimizer, schedule, RNG, position in the epoch):
             a rerun with the same --out continues from it
"""

from __future__ import annotations

import json
import math
import shutil
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import torch
from torch.utils.data import DataLoader, Subset
from tqdm.auto import tqdm

from vipe_core.canvas import examples, read_canvas
from vipe_core.context import model_input
from vipe_core.errors import VipeError
from vipe_core.records import atomic_dir, replace_dir, write_json
from vipe_core.train_config import TrainConfig, paper_batch_size

TRAINING_INFO = "vipe_training.json"


# ---------------------------------------------------------------------------------------------
# Examples and batches


def encode_example(tokenizer, context: str, elaboration: str, max_length: int) -> tuple[list[int], int]:
    """Token ids of <eos> context <eos> elaboration <eos>, and how many belong to the prompt.

    The prompt is tokenized exactly as ViPE.elaborate tokenizes it at inference. When the example
    is too long, the oldest context tokens go (after the leading <eos>), never the elaboration.
    """
    eos_id = tokenizer.eos_token_id
    prompt = tokenizer(model_input(context, tokenizer.eos_token))["input_ids"]
    target = tokenizer(elaboration, add_special_tokens=False)["input_ids"][: max_length // 2] + [eos_id]
    room = max_length - len(target)
    if len(prompt) > room:
        prompt = prompt[:1] + prompt[len(prompt) - room + 1 :]
    return prompt + target, len(prompt)


@dataclass
class Collator:
    """Right-pads a batch; labels are -100 on the prompt and on padding, so only elaborations count."""

    pad_token_id: int

    def __call__(self, batch: list[tuple[list[int], int]]) -> dict[str, torch.Tensor]:
        longest = max(len(ids) for ids, _ in batch)
        input_ids = torch.full((len(batch), longest), self.pad_token_id, dtype=torch.long)
        attention_mask = torch.zeros((len(batch), longest), dtype=torch.long)
        labels = torch.full((len(batch), longest), -100, dtype=torch.long)
        for row, (ids, prompt_length) in enumerate(batch):
            tokens = torch.tensor(ids, dtype=torch.long)
            input_ids[row, : len(ids)] = tokens
            attention_mask[row, : len(ids)] = 1
            labels[row, prompt_length : len(ids)] = tokens[prompt_length:]
        return {"input_ids": input_ids, "attention_mask": attention_mask, "labels": labels}


def encode_split(tokenizer, frame, split: str, context_size: int, max_length: int) -> list[tuple[list[int], int]]:
    return [
        encode_example(tokenizer, e["context"], e["elaboration"], max_length)
        for e in examples(frame, split, context_size)
    ]


# ---------------------------------------------------------------------------------------------
# Model, state, checkpoints


def load_base(base: str, tokenizer_name: str | None = None):
    from transformers import AutoModelForCausalLM, AutoTokenizer

    try:
        tokenizer = AutoTokenizer.from_pretrained(tokenizer_name or base)
        model = AutoModelForCausalLM.from_pretrained(base)
    except (OSError, ValueError) as e:
        reason = str(e).strip().splitlines()[0][:160] if str(e).strip() else type(e).__name__
        raise VipeError(
            f"could not load the base model {base!r} ({reason}); give a local folder, or a hub name on a "
            "machine that can reach the hub (HF_HUB_OFFLINE=1 allows only cached models)."
        ) from None
    if tokenizer.eos_token_id is None:
        raise VipeError(f"the tokenizer of {tokenizer_name or base!r} has no end-of-text token, which ViPE needs.")
    return tokenizer, model


def _mixed_precision(choice: str) -> str:
    """--mixed-precision decides, not `accelerate launch`, whose default ("no") would turn it off on GPUs."""
    if choice != "auto":
        return choice
    if torch.cuda.is_available():
        return "bf16" if torch.cuda.is_bf16_supported() else "fp16"
    return "no"


@dataclass
class TrainState:
    epoch: int = 0
    batches_done: int = 0  # micro-batches of `epoch` already trained on
    step: int = 0  # optimizer steps in all
    best_val_loss: float = math.inf
    evaluations_without_improvement: int = 0
    history: list[dict] = field(default_factory=list)
    finished: bool = False  # all epochs done, or stopped early
    run: dict = field(default_factory=dict)  # the settings a resumed run must share


def save_best(accelerator, model, tokenizer, path: Path, info: dict) -> None:
    if accelerator.is_main_process:
        with atomic_dir(path) as tmp:
            accelerator.unwrap_model(model).save_pretrained(tmp, safe_serialization=True)
            tokenizer.save_pretrained(tmp)
            write_json(tmp / TRAINING_INFO, info)
    accelerator.wait_for_everyone()


def save_last(accelerator, state: TrainState, path: Path) -> None:
    """Everything needed to continue: written beside `path`, then swapped in."""
    tmp = path.with_name(f".{path.name}.saving")
    if accelerator.is_main_process:
        shutil.rmtree(tmp, ignore_errors=True)
    accelerator.wait_for_everyone()
    accelerator.save_state(str(tmp), safe_serialization=False)  # tied weights upset safetensors here
    if accelerator.is_main_process:
        write_json(tmp / "trainer_state.json", asdict(state))
        replace_dir(tmp, path)
    accelerator.wait_for_everyone()


@torch.no_grad()
def validation_loss(accelerator, model, loader) -> float:
    """Mean cross-entropy per elaboration token over the whole validation split (all processes)."""
    model.eval()
    total = torch.zeros(2, device=accelerator.device, dtype=torch.float64)
    for batch in loader:
        logits = model(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"]).logits[:, :-1]
        labels = batch["labels"][:, 1:]
        token_losses = torch.nn.functional.cross_entropy(
            logits.transpose(1, 2).float(), labels, ignore_index=-100, reduction="none"
        )
        per_example = torch.stack([token_losses.sum(1).double(), (labels != -100).sum(1).double()], dim=1)
        # gather_for_metrics drops the examples accelerate repeats to even out the last batch.
        total += accelerator.gather_for_metrics(per_example).sum(0)
    model.train()
    return (total[0] / total[1].clamp(min=1)).item()


# ---------------------------------------------------------------------------------------------
# The loop


@dataclass
class Trainer:
    """What one training run holds: the prepared model, optimizer, schedule and data, and its state."""

    config: TrainConfig
    accelerator: Any
    tokenizer: Any
    model: Any
    optimizer: Any
    scheduler: Any
    train_set: list
    validation_examples: int
    val_loader: DataLoader
    collate: Collator
    info: dict  # the settings a resumed run must share
    state: TrainState

    @property
    def out(self) -> Path:
        return Path(self.config.out)

    @property
    def main(self) -> bool:
        return self.accelerator.is_main_process

    def out_of_steps(self) -> bool:
        return bool(self.config.max_steps) and self.state.step >= self.config.max_steps

    def evaluated_now(self) -> bool:
        return self.state.history[-1]["step"] == self.state.step

    def evaluate_and_keep_best(self, label: str) -> bool:
        """Validate; save best/ if it improved. True when early stopping says stop."""
        state = self.state
        loss = validation_loss(self.accelerator, self.model, self.val_loader)
        state.history.append({"epoch": state.epoch + 1, "step": state.step, "val_loss": loss, "at": label})
        improved = loss < state.best_val_loss
        if improved:
            state.best_val_loss, state.evaluations_without_improvement = loss, 0
            info = {**self.info, "epoch": state.epoch + 1, "step": state.step, "val_loss": loss}
            save_best(self.accelerator, self.model, self.tokenizer, self.out / "best", info)
        else:
            state.evaluations_without_improvement += 1
        if self.main:
            tqdm.write(f"{label}: validation loss {loss:.4f}{' (best so far)' if improved else ''}")
        return bool(self.config.patience) and state.evaluations_without_improvement >= self.config.patience

    def epoch_loader(self):
        """This epoch's batches: a fixed order per epoch, the same on every process, so a resumed epoch skips
        exactly what it did. Its own generator too: a DataLoader draws a seed when it starts, which must not
        come from the global RNG (dropout's), or a resumed run would draw different dropout masks."""
        config = self.config
        order = torch.randperm(
            len(self.train_set), generator=torch.Generator().manual_seed(config.seed + self.state.epoch)
        )
        return self.accelerator.prepare(
            DataLoader(
                Subset(self.train_set, order.tolist()),
                batch_size=self.info["batch_size"],
                collate_fn=self.collate,
                generator=torch.Generator().manual_seed(config.seed),
            )
        )

    def run_epoch(self) -> None:
        """The rest of the current epoch, validating and saving as the config says."""
        config, state, accelerator, model = self.config, self.state, self.accelerator, self.model
        loader = self.epoch_loader()
        batches = len(loader)
        if state.batches_done:
            loader = accelerator.skip_first_batches(loader, state.batches_done)
        bar = tqdm(
            total=batches,
            initial=state.batches_done,
            desc=f"epoch {state.epoch + 1}/{config.epochs}",
            unit="batch",
            disable=not (self.main and config.progress),
        )
        smoothed = None
        model.train()
        for batch in loader:
            with accelerator.accumulate(model):
                loss = model(**batch).loss
                accelerator.backward(loss)
                if accelerator.sync_gradients and config.max_grad_norm:
                    accelerator.clip_grad_norm_(model.parameters(), config.max_grad_norm)
                self.optimizer.step()
                self.scheduler.step()
                self.optimizer.zero_grad(set_to_none=True)
            state.batches_done += 1
            smoothed = loss.item() if smoothed is None else 0.95 * smoothed + 0.05 * loss.item()
            bar.update(1)
            bar.set_postfix(loss=f"{smoothed:.3f}", lr=f"{self.scheduler.get_last_lr()[0]:.2e}")
            if not accelerator.sync_gradients:
                continue
            state.step += 1
            if config.eval_every and state.step % config.eval_every == 0:
                state.finished = self.evaluate_and_keep_best(f"step {state.step}")  # early stopping
            if state.finished or self.out_of_steps():
                break
            if config.save_every and state.step % config.save_every == 0:
                save_last(accelerator, state, self.out / "last")
        bar.close()
        if state.batches_done >= batches:  # the epoch is complete
            if not self.evaluated_now() and self.evaluate_and_keep_best(f"epoch {state.epoch + 1}"):
                state.finished = True
            state.epoch, state.batches_done = state.epoch + 1, 0
        elif not self.evaluated_now():  # stopped inside the epoch (--max-steps)
            self.evaluate_and_keep_best(f"step {state.step}")
        state.finished = state.finished or state.epoch >= config.epochs
        save_last(accelerator, state, self.out / "last")


def prepare(config: TrainConfig) -> Trainer:
    """The model, data, optimizer and schedule of a run, prepared by accelerate, and its state: resumed from
    --out's last/ when it holds a run with the same settings."""
    from accelerate import Accelerator
    from accelerate.utils import set_seed
    from transformers import get_linear_schedule_with_warmup

    if config.context_size < 0 or config.epochs < 1 or config.grad_accum < 1:
        raise VipeError("--context must be >= 0, and --epochs and --grad-accum at least 1.")
    accelerator = Accelerator(
        mixed_precision=_mixed_precision(config.mixed_precision), gradient_accumulation_steps=config.grad_accum
    )
    set_seed(config.seed)

    # Data: every example encoded once, up front.
    frame = read_canvas(config.data)
    tokenizer, model = load_base(config.base, config.tokenizer)
    window = getattr(model.config, "n_positions", None) or getattr(model.config, "max_position_embeddings", 1024)
    max_length = min(config.max_length or window, window)
    train_set = encode_split(tokenizer, frame, "train", config.context_size, max_length)
    val_set = encode_split(tokenizer, frame, "validation", config.context_size, max_length)
    if not train_set or not val_set:
        raise VipeError(f"{config.data} has no labelled {'training' if not train_set else 'validation'} lines.")
    batch_size = config.batch_size or paper_batch_size(config.base, config.context_size)
    collate = Collator(tokenizer.pad_token_id if tokenizer.pad_token_id is not None else tokenizer.eos_token_id)

    # Optimizer and schedule. Steps are counted as on one process, as accelerate's scheduler expects.
    optimizer = torch.optim.AdamW(model.parameters(), lr=config.lr, weight_decay=config.weight_decay)
    steps_per_epoch = max(1, math.ceil(len(train_set) / batch_size) // config.grad_accum)
    total_steps = steps_per_epoch * config.epochs  # --max-steps stops early but leaves the schedule as it is
    scheduler = get_linear_schedule_with_warmup(optimizer, min(config.warmup_steps, total_steps), total_steps)
    val_loader = DataLoader(val_set, batch_size=batch_size, collate_fn=collate, generator=torch.Generator())
    model, optimizer, scheduler, val_loader = accelerator.prepare(model, optimizer, scheduler, val_loader)

    info = {
        "base": config.base,
        "context_size": config.context_size,
        "max_length": max_length,
        "batch_size": batch_size,
    }
    state = resumed_state(accelerator, Path(config.out), info, config.restart)
    return Trainer(
        config,
        accelerator,
        tokenizer,
        model,
        optimizer,
        scheduler,
        train_set,
        len(val_set),
        val_loader,
        collate,
        info,
        state,
    )


def resumed_state(accelerator, out: Path, info: dict, restart: bool) -> TrainState:
    """A fresh state, or the one --out's last/ holds (with the model's, optimizer's and RNG's) when its run
    had the same settings; other settings are refused unless `restart`."""
    saved = out / "last" / "trainer_state.json"
    if not saved.exists() or restart:
        return TrainState(run=info)
    state = TrainState(**json.loads(saved.read_text()))
    if state.run and state.run != info:
        changed = ", ".join(f"{k} {state.run.get(k)} -> {v}" for k, v in info.items() if state.run.get(k) != v)
        raise VipeError(f"{out} holds a run with other settings ({changed}); pass --restart or choose another --out.")
    accelerator.load_state(str(out / "last"))
    accelerator.print(f"resuming from {out / 'last'}: epoch {state.epoch + 1}, step {state.step}")
    return state


def train(config: TrainConfig) -> dict:
    trainer = prepare(config)
    state = trainer.state
    if not state.history:
        loss = validation_loss(trainer.accelerator, trainer.model, trainer.val_loader)
        state.history.append({"epoch": 0, "step": 0, "val_loss": loss, "at": "start"})
        if trainer.main:
            tqdm.write(f"before training: validation loss {loss:.4f}")

    started = time.monotonic()
    while not state.finished and state.epoch < config.epochs and not trainer.out_of_steps():
        trainer.run_epoch()

    out = trainer.out
    result = {
        "best": str(out / "best"),
        "best_val_loss": state.best_val_loss,
        "initial_val_loss": state.history[0]["val_loss"],
        "steps": state.step,
        "history": state.history,
        "train_examples": len(trainer.train_set),
        "validation_examples": trainer.validation_examples,
        "seconds": round(time.monotonic() - started, 1),
    }
    if trainer.main:
        write_json(out / "train_result.json", result)
    trainer.accelerator.end_training()
    return result
