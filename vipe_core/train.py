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
             a rerun with the same --out and settings continues from it (vipe_core.resume), and
             puts it back first when a run was killed while saving it (resume.recover_last)
    train_result.json   the losses, written at the end (and removed when a run starts: resume.retire)

Everything a run reads is checked before any work (vipe_core.train_checks), and a run holds --out: a
second run on it is refused. A validation loss that is not finite stops the run (exit 1).
"""

from __future__ import annotations

import math
import os
import time
from contextlib import nullcontext
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import torch
from torch.utils.data import DataLoader, Subset
from tqdm.auto import tqdm

from vipe_core.bars import progress_bar
from vipe_core.canvas import examples
from vipe_core.context import model_input
from vipe_core.errors import StageError, VipeError
from vipe_core.guards import hold_folder
from vipe_core.records import atomic_dir, mark_copy, remove_copy, replace_dir, write_json
from vipe_core.resume import STATE_FILE, TrainState, load_saved, recover_last, resume_line, retire, saved_state
from vipe_core.train_checks import (
    BASE_HINT,
    RESULT_FILE,
    cannot_load,
    check_out_state,
    check_train,
    load_model,
    quiet_loading,
)
from vipe_core.train_config import TRAINING_INFO, TrainConfig

__all__ = ["TRAINING_INFO", "Collator", "TrainConfig", "TrainState", "encode_example", "train"]


# ---------------------------------------------------------------------------------------------
# Examples and batches


def encode_example(tokenizer, context: str, elaboration: str, max_length: int) -> tuple[list[int], int]:
    """Token ids of <eos> context <eos> elaboration <eos>, and how many belong to the prompt.

    The prompt is tokenized exactly as ViPE.elaborate tokenizes it at inference. When the example
    is too long, the oldest context tokens go (after the leading <eos>), never the elaboration.
    """
    eos_id = tokenizer.eos_token_id
    # (verbose=False: transformers would warn of a text longer than the tokenizer's limit, which is cut here)
    prompt = tokenizer(model_input(context, tokenizer.eos_token), verbose=False)["input_ids"]
    target = tokenizer(elaboration, add_special_tokens=False, verbose=False)["input_ids"][: max_length // 2] + [eos_id]
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
    """The tokenizer and the model a run starts from, loaded before it takes --out (train_checks.load_model's
    refusals)."""
    from transformers import AutoTokenizer

    try:
        with quiet_loading():
            tokenizer = AutoTokenizer.from_pretrained(tokenizer_name or base, trust_remote_code=False)
    except Exception as e:  # OSError, ValueError ...
        raise cannot_load("the tokenizer", tokenizer_name or base, e, BASE_HINT) from None
    if tokenizer.eos_token_id is None:
        raise VipeError(f"the tokenizer of {tokenizer_name or base!r} has no end-of-text token, which ViPE needs.")
    model = load_model(base, "the base model")
    if not all(bool(parameter.isfinite().all()) for parameter in model.parameters()):  # (a run said it "diverged")
        raise VipeError(f"the base model {base!r} holds weights that are no finite numbers (NaN or infinite).")
    if getattr(model, "loss_type", None) is None:
        # transformers finds no loss by a class name without "ForCausalLM" (GPT2LMHeadModel's), warns on every
        # run and falls back to the causal one: ViPE's, said here
        model.loss_type = "ForCausalLM"
    return tokenizer, model


def save_best(accelerator, model, tokenizer, path: Path, info: dict) -> None:
    if accelerator.is_main_process:
        with atomic_dir(path, TRAINING_INFO) as tmp:
            accelerator.unwrap_model(model).save_pretrained(tmp, safe_serialization=True)
            tokenizer.save_pretrained(tmp)
            write_json(tmp / TRAINING_INFO, info)
    accelerator.wait_for_everyone()


def save_last(accelerator, state: TrainState, path: Path) -> None:
    """Everything needed to continue: written beside `path`, then swapped in. One name for all processes
    (each writes its RNG state there); safe because one run holds the folder."""
    tmp = path.with_name(f".{path.name}.saving")
    if accelerator.is_main_process:
        remove_copy(tmp)  # a killed run's (resume.check_copies let only a marked or empty one through)
        tmp.mkdir(exist_ok=True)
        mark_copy(tmp)  # first: a kill from here on leaves a copy the next run may remove
    accelerator.wait_for_everyone()
    accelerator.save_state(str(tmp), safe_serialization=False)  # tied weights upset safetensors here
    if accelerator.is_main_process:
        write_json(tmp / STATE_FILE, asdict(state))
        replace_dir(tmp, path, STATE_FILE)
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


def finite_loss(loss: float, step: int) -> float:
    """`loss`, when finite; else the run failed (StageError, exit 1): nothing worse is kept as best/."""
    if not math.isfinite(loss):
        raise StageError(f"training diverged (validation loss {loss} at step {step}); try a lower --lr.")
    return loss


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
    run: dict  # the settings a resumed run must share (vipe_core.train_checks.check_train)
    state: TrainState
    started: float = 0.0  # when this run began to train, or last saved (time.monotonic)

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
        loss = finite_loss(validation_loss(self.accelerator, self.model, self.val_loader), state.step)
        state.history.append({"epoch": state.epoch + 1, "step": state.step, "val_loss": loss, "at": label})
        improved = loss < state.best_val_loss
        if improved:
            state.best_val_loss, state.evaluations_without_improvement = loss, 0
            info = {**self.run, "epoch": state.epoch + 1, "step": state.step, "val_loss": loss}
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
                batch_size=self.run["batch_size"],
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
        bar = progress_bar(
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
            # drawn with the update, as often as it is (set on its own, a log would get a line every batch)
            bar.set_postfix(loss=f"{smoothed:.3f}", lr=f"{self.scheduler.get_last_lr()[0]:.2e}", refresh=False)
            bar.update(1)
            if not accelerator.sync_gradients:
                continue
            state.step += 1
            if config.eval_every and state.step % config.eval_every == 0:
                state.finished = self.evaluate_and_keep_best(f"step {state.step}")  # early stopping
            if state.finished or self.out_of_steps():
                break
            if config.save_every and state.step % config.save_every == 0:
                self.keep_last()
        bar.close()
        if state.batches_done >= batches:  # the epoch is complete
            if not self.evaluated_now() and self.evaluate_and_keep_best(f"epoch {state.epoch + 1}"):
                state.finished = True
            state.epoch, state.batches_done = state.epoch + 1, 0
        elif not self.evaluated_now():  # stopped inside the epoch (--max-steps)
            self.evaluate_and_keep_best(f"step {state.step}")
        state.finished = state.finished or state.epoch >= config.epochs
        self.keep_last()

    def keep_last(self) -> None:
        """last/, with the seconds trained so far: this run's added to those of the runs it resumes."""
        now = time.monotonic()
        self.state.seconds, self.started = round(self.state.seconds + now - self.started, 1), now
        save_last(self.accelerator, self.state, self.out / "last")


def recovered(config: TrainConfig, run: dict, used: bool):
    """The run's accelerator, once --out holds no copy a killed run left (vipe_core.resume.recover_last; `used`:
    check_out_state's) and no result of an earlier run (resume.retire). The first process recovers while the
    others wait: each then reads the same last/."""
    from accelerate import Accelerator

    accelerator = Accelerator(mixed_precision=run["mixed_precision"], gradient_accumulation_steps=config.grad_accum)
    if accelerator.is_main_process:
        line = recover_last(Path(config.out), used)
        if line:
            accelerator.print(line)
        retire(Path(config.out), RESULT_FILE, config.restart)
    accelerator.wait_for_everyone()
    return accelerator


def prepare(config: TrainConfig, accelerator, frame, run: dict, base: tuple, saved: TrainState | None) -> Trainer:
    """The model, data, optimizer and schedule of a run (its settings `run`, from check_train; `base`, load_base's
    tokenizer and model), prepared by `accelerator`, and its state: `saved` (from --out's last/, whose model,
    optimizer and RNG are restored) or a fresh one."""
    from accelerate.utils import set_seed
    from transformers import get_linear_schedule_with_warmup

    set_seed(config.seed)  # (after loading, which may draw from the RNG: a run's draws start here)

    # Data: every example encoded once, up front.
    tokenizer, model = base
    batch_size, max_length = run["batch_size"], run["max_length"]
    train_set = encode_split(tokenizer, frame, "train", config.context_size, max_length)
    val_set = encode_split(tokenizer, frame, "validation", config.context_size, max_length)
    collate = Collator(tokenizer.pad_token_id if tokenizer.pad_token_id is not None else tokenizer.eos_token_id)

    # Optimizer and schedule. Steps are counted as on one process, as accelerate's scheduler expects.
    optimizer = torch.optim.AdamW(model.parameters(), lr=config.lr, weight_decay=config.weight_decay)
    steps_per_epoch = max(1, math.ceil(len(train_set) / batch_size) // config.grad_accum)
    total_steps = steps_per_epoch * config.epochs  # --max-steps stops early but leaves the schedule as it is
    scheduler = get_linear_schedule_with_warmup(optimizer, min(config.warmup_steps, total_steps), total_steps)
    val_loader = DataLoader(val_set, batch_size=batch_size, collate_fn=collate, generator=torch.Generator())
    model, optimizer, scheduler, val_loader = accelerator.prepare(model, optimizer, scheduler, val_loader)

    out = Path(config.out)
    if saved is not None:
        load_saved(accelerator, out / "last")
        accelerator.print(resume_line(out / "last", saved, config.epochs))
    state = saved or TrainState(run=run)
    parts = (tokenizer, model, optimizer, scheduler, train_set, len(val_set), val_loader, collate)
    return Trainer(config, accelerator, *parts, run, state)


def _held(out: Path):
    """Hold --out for this run. Under `accelerate launch` only the first process takes the hold (RANK is
    torchrun's): the others are the same run."""
    return hold_folder(out) if os.environ.get("RANK", "0") == "0" else nullcontext()


def train(config: TrainConfig) -> dict:
    """Train as `config` says; returns what train_result.json holds. Bad input is refused (VipeError) before
    any work; a run that diverges raises StageError."""
    frame, run = check_train(config)
    out = Path(config.out)
    used = check_out_state(out, run, config.restart)
    base = load_base(config.base, config.tokenizer)  # its weights checked before --out is used
    with _held(out):
        accelerator = recovered(config, run, used)
        trainer = prepare(config, accelerator, frame, run, base, saved_state(out, run, config.restart, used))
        state = trainer.state
        if not state.history:
            loss = finite_loss(validation_loss(trainer.accelerator, trainer.model, trainer.val_loader), 0)
            state.history.append({"epoch": 0, "step": 0, "val_loss": loss, "at": "start"})
            if trainer.main:
                tqdm.write(f"before training: validation loss {loss:.4f}")

        trainer.started = time.monotonic()
        while not state.finished and state.epoch < config.epochs and not trainer.out_of_steps():
            trainer.run_epoch()

        best = out / "best"
        saved_best = (best / TRAINING_INFO).is_file() and math.isfinite(state.best_val_loss)
        result = {
            "best": str(best) if saved_best else None,  # never a checkpoint that was not saved
            "best_val_loss": state.best_val_loss if saved_best else None,  # strict JSON: no Infinity
            "initial_val_loss": state.history[0]["val_loss"],
            "steps": state.step,
            "history": state.history,
            "train_examples": len(trainer.train_set),
            "validation_examples": trainer.validation_examples,
            "seconds": state.seconds,  # a finished run's, run again, as it was
        }
        if trainer.main:
            write_json(out / RESULT_FILE, result)
        trainer.accelerator.end_training()
    return result
