"""ViPE inference: contexts in, visual elaborations out (batched, reproducible for a seed)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Sequence

import torch

from vipe_core.context import model_input
from vipe_core.errors import VipeError
from vipe_core.released import DEFAULT_VIPE_TOKENIZER

# Any of these in a checkpoint means it carries its own tokenizer.
TOKENIZER_FILES = ("tokenizer.json", "tokenizer_config.json", "vocab.json", "tokenizer.model")
# A model's embedding matrix may be padded past its tokenizer's size (to a multiple of 64 or 128).
VOCABULARY_PADDING = 128


@dataclass(frozen=True)
class GenerationSettings:
    """How ViPE samples; the defaults are its authors': top-k 100, epsilon cutoff 5e-5, temperature 1,
    no nucleus cut, at most 50 new tokens."""

    max_new_tokens: int = 50
    do_sample: bool = True
    top_k: int = 100
    epsilon_cutoff: float = 5e-5
    temperature: float = 1.0

    def sampling(self) -> dict:
        if not self.do_sample:
            return {"do_sample": False}
        return {
            "do_sample": True,
            "top_k": self.top_k,
            "epsilon_cutoff": self.epsilon_cutoff,
            "temperature": self.temperature,
            "top_p": 1.0,
        }


def clean_elaboration(text: str) -> str:
    """One line of prose: no special tokens, no leftover separators, no broken or control characters
    (byte-level tokens cut mid-character decode to U+FFFD), single spaces."""
    text = re.sub(r"<\|[^|>]*\|>", " ", text).replace("\ufffd", "")
    text = " ".join("".join(ch if ch.isprintable() else " " for ch in text).split())
    return text.strip(" ;,")


def read_tokenizer(name: str, local_files_only: bool = False):
    """The tokenizer `name` (a folder, or a hub name): as transformers' AutoTokenizer reads it, but a folder of GPT-2's
    files alone (tokenizer.json, or vocab.json and merges.txt, no tokenizer_config.json naming their class) as GPT-2's,
    which AutoTokenizer cannot tell from them; its end of text then GPT-2's <|endoftext|>."""
    from transformers import AutoTokenizer, GPT2TokenizerFast

    folder = Path(name)
    named = any((folder / file).is_file() for file in ("tokenizer_config.json", "config.json"))
    if folder.is_dir() and not named:
        return GPT2TokenizerFast.from_pretrained(name, local_files_only=local_files_only)
    return AutoTokenizer.from_pretrained(name, local_files_only=local_files_only, trust_remote_code=False)


def ships_tokenizer(name_or_path: str) -> bool:
    """Whether a checkpoint (folder or hub name) carries tokenizer files of its own: one in the folder, or one
    the hub gives (from its cache when offline). A checkpoint the hub does not have carries none here; loading
    its model says why."""
    from huggingface_hub import hf_hub_download
    from huggingface_hub.errors import EntryNotFoundError, HfHubHTTPError

    folder = Path(name_or_path)
    if folder.is_dir():
        return any((folder / name).is_file() for name in TOKENIZER_FILES)
    for name in TOKENIZER_FILES:
        try:
            hf_hub_download(name_or_path, name)
            return True
        except (EntryNotFoundError, HfHubHTTPError):  # not in it, not in the cache offline, or no hub to ask
            continue
    return False


def causal_lm(config) -> bool:
    """Whether a config describes a causal language model (each token sees only those before it): its architecture
    is one (as musicvid.models.names.causal_lm says of a config.json), and an encoder (one with a masked-LM head,
    as BERT) is one only when its config makes it a decoder: transformers would otherwise run it with attention on
    the answer. (transformers documents its auto classes, not the tables of model types behind them.)"""
    from transformers.models.auto.modeling_auto import (
        MODEL_FOR_CAUSAL_LM_MAPPING_NAMES,
        MODEL_FOR_MASKED_LM_MAPPING_NAMES,
    )

    named = config.architectures or []
    causal_head = not named or any(str(a).endswith(("ForCausalLM", "LMHeadModel")) for a in named)
    encoder = config.model_type in MODEL_FOR_MASKED_LM_MAPPING_NAMES and not config.is_decoder
    return causal_head and not encoder and config.model_type in MODEL_FOR_CAUSAL_LM_MAPPING_NAMES


def check_tokenizer(tokenizer, config, tokenizer_name: str, model_name: str) -> None:
    """A tokenizer that does not fit its model encodes text to ids the model never learned (a silently
    empty one turns every context into nothing): stop, naming both."""
    size, eos = len(tokenizer), tokenizer.eos_token_id
    model_eos = config.eos_token_id
    fits = size <= config.vocab_size < size + VOCABULARY_PADDING
    if not fits or eos is None or (model_eos is not None and eos != model_eos):
        raise VipeError(
            f"the tokenizer {tokenizer_name!r} (vocabulary {size}, end-of-text id {eos}) does not match the ViPE "
            f"model {model_name!r} (vocabulary {config.vocab_size}, end-of-text id {model_eos}); use the tokenizer "
            "the model was trained with"
        )


class ViPE:
    """A causal LM that continues ``<eos> context <eos>`` with a visual elaboration."""

    def __init__(self, model, tokenizer, generation: GenerationSettings = GenerationSettings()):
        from transformers import GenerationConfig

        # generate merges the folder's generation_config.json (num_beams, a repetition penalty) into its settings: ViPE
        # samples by `generation` alone, as its authors did, whatever a checkpoint saved there
        model.generation_config = GenerationConfig()
        self.model = model.eval()
        self.tokenizer = tokenizer
        self.generation = generation
        if tokenizer.pad_token is None:
            tokenizer.pad_token = tokenizer.eos_token
        # Batched generation continues after the prompt, so prompts are aligned on the right.
        tokenizer.padding_side = "left"
        tokenizer.truncation_side = "left"

    @classmethod
    def from_pretrained(cls, name_or_path: str, tokenizer: str | None = None, *, device="cpu", dtype=None):
        """A checkpoint with `tokenizer`, else its own tokenizer, else GPT-2 Medium's (what the released
        checkpoints were trained with); raises VipeError if tokenizer and model disagree."""
        from transformers import AutoConfig, AutoModelForCausalLM

        tokenizer = tokenizer or (name_or_path if ships_tokenizer(name_or_path) else DEFAULT_VIPE_TOKENIZER)
        config = AutoConfig.from_pretrained(name_or_path, trust_remote_code=False)
        loaded = read_tokenizer(tokenizer)
        check_tokenizer(loaded, config, tokenizer, name_or_path)
        model = AutoModelForCausalLM.from_pretrained(
            name_or_path, config=config, dtype=dtype, trust_remote_code=False
        ).to(device)
        return cls(model, loaded)

    @property
    def device(self) -> torch.device:
        return next(self.model.parameters()).device

    @torch.inference_mode()
    def sample(
        self,
        contexts: Sequence[str],
        *,
        candidates: int = 1,
        seed: int = 0,
        batch_size: int = 16,
        on_batch: Callable[[int], None] | None = None,
    ) -> list[list[str]]:
        """`candidates` cleaned elaborations per context ("" where the model produced nothing usable).

        All candidates of a context come from one generate call; a call holds at most `batch_size`
        sequences (at least one context). Call b is sampled after seeding with `seed + b`, so the same
        contexts, seed and number of candidates give the same elaborations.
        """
        settings = self.generation
        if candidates > 1 and not settings.do_sample:
            raise ValueError("several candidates need sampling (do_sample=True)")
        eos = self.tokenizer.eos_token
        max_positions = getattr(self.model.config, "n_positions", None) or self.model.config.max_position_embeddings
        max_input = max_positions - settings.max_new_tokens
        per_call = max(1, batch_size // candidates)
        results: list[list[str]] = []
        for call, first in enumerate(range(0, len(contexts), per_call)):
            batch = [model_input(c, eos) for c in contexts[first : first + per_call]]
            encoded = self.tokenizer(
                batch, return_tensors="pt", padding=True, truncation=True, max_length=max_input
            ).to(self.device)
            torch.manual_seed(seed + call)
            output = self.model.generate(
                **encoded,
                max_new_tokens=settings.max_new_tokens,
                num_return_sequences=candidates,
                pad_token_id=self.tokenizer.pad_token_id,
                eos_token_id=self.tokenizer.eos_token_id,
                **settings.sampling(),
            )
            new_tokens = output[:, encoded["input_ids"].shape[1] :]
            texts = [clean_elaboration(t) for t in self.tokenizer.batch_decode(new_tokens, skip_special_tokens=True)]
            results.extend(texts[i : i + candidates] for i in range(0, len(texts), candidates))
            if on_batch:
                on_batch(len(batch))
        return results

    def elaborate(self, contexts: Sequence[str], **options) -> list[str]:
        """One cleaned elaboration per context ("" where the model produced nothing usable)."""
        return [first for first, *_ in self.sample(contexts, **options)]
