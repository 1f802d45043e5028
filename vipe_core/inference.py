"""ViPE inference: contexts in, visual elaborations out (batched, reproducible for a seed)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable, Sequence

import torch

from vipe_core.context import model_input

# The paper's default: ViPE-M (GPT-2 Medium) fine-tuned with context size 7.
DEFAULT_VIPE = "fittar/ViPE-M-CTX7"
DEFAULT_VIPE_TOKENIZER = "gpt2-medium"


@dataclass(frozen=True)
class GenerationSettings:
    max_new_tokens: int = 50
    do_sample: bool = True
    top_k: int = 50
    top_p: float = 0.95
    temperature: float = 1.0


def clean_elaboration(text: str) -> str:
    """One line of prose: no special tokens, no leftover separators, no broken characters (byte-level
    tokens cut mid-character decode to U+FFFD), single spaces."""
    text = re.sub(r"<\|[^|>]*\|>", " ", text).replace("\ufffd", "")
    text = " ".join(text.split())
    return text.strip(" ;,")


class ViPE:
    """A causal LM that continues ``<eos> context <eos>`` with a visual elaboration."""

    def __init__(self, model, tokenizer, generation: GenerationSettings = GenerationSettings()):
        self.model = model.eval()
        self.tokenizer = tokenizer
        self.generation = generation
        if tokenizer.pad_token is None:
            tokenizer.pad_token = tokenizer.eos_token
        # Batched generation continues after the prompt, so prompts are aligned on the right.
        tokenizer.padding_side = "left"
        tokenizer.truncation_side = "left"

    @classmethod
    def from_pretrained(cls, name_or_path: str, tokenizer_name: str | None = None, *, device="cpu", dtype=None):
        """Load a checkpoint; its own tokenizer if it ships one, else `tokenizer_name`."""
        from transformers import AutoModelForCausalLM, AutoTokenizer

        try:
            tokenizer = AutoTokenizer.from_pretrained(name_or_path)
        except (OSError, ValueError):
            if tokenizer_name is None:
                raise
            tokenizer = AutoTokenizer.from_pretrained(tokenizer_name)
        model = AutoModelForCausalLM.from_pretrained(name_or_path, dtype=dtype).to(device)
        return cls(model, tokenizer)

    @property
    def device(self) -> torch.device:
        return next(self.model.parameters()).device

    @torch.inference_mode()
    def elaborate(
        self,
        contexts: Sequence[str],
        *,
        seed: int = 0,
        batch_size: int = 16,
        on_batch: Callable[[int], None] | None = None,
    ) -> list[str]:
        """One cleaned elaboration per context ("" where the model produced nothing usable).

        Batch b is sampled after seeding with `seed + b`, so the same contexts and seed give the
        same elaborations.
        """
        settings = self.generation
        eos = self.tokenizer.eos_token
        max_positions = getattr(self.model.config, "n_positions", None) or self.model.config.max_position_embeddings
        max_input = max_positions - settings.max_new_tokens
        results: list[str] = []
        for batch_index, first in enumerate(range(0, len(contexts), batch_size)):
            batch = [model_input(c, eos) for c in contexts[first : first + batch_size]]
            encoded = self.tokenizer(
                batch, return_tensors="pt", padding=True, truncation=True, max_length=max_input
            ).to(self.device)
            torch.manual_seed(seed + batch_index)
            output = self.model.generate(
                **encoded,
                max_new_tokens=settings.max_new_tokens,
                do_sample=settings.do_sample,
                top_k=settings.top_k if settings.do_sample else None,
                top_p=settings.top_p if settings.do_sample else None,
                temperature=settings.temperature if settings.do_sample else None,
                pad_token_id=self.tokenizer.pad_token_id,
                eos_token_id=self.tokenizer.eos_token_id,
            )
            new_tokens = output[:, encoded["input_ids"].shape[1] :]
            texts = self.tokenizer.batch_decode(new_tokens, skip_special_tokens=True)
            results.extend(clean_elaboration(t) for t in texts)
            if on_batch:
                on_batch(len(batch))
        return results
