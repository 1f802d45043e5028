"""Style LoRAs as a person names them: a file or hub name and the weight it is fused with, one per option, CSV
line or box line, and the limits on them. A leaf: settings, the loaders and the page read it."""

from __future__ import annotations

import argparse
from dataclasses import dataclass

from musicvid.core.errors import UserError, number_text
from musicvid.settings.numbers import NUMBER, parse_number

# Style LoRAs of one render: each is read and fused into the weights on loading, and one set of them is one
# pipeline kept in memory (musicvid.models.drawing.Drawing); a handful is what people stack.
MAX_LORAS = 8
LORA_WEIGHTS = (-2.0, 2.0)  # beyond these a LoRA's change swamps the model (negative: its opposite)


@dataclass(frozen=True)
class Lora:
    """A style LoRA and the weight it is fused with."""

    source: str  # a .safetensors file, a hub repository (its pytorch_lora_weights.safetensors) or hub file
    weight: float = 1.0

    def __str__(self) -> str:
        return self.source if self.weight == 1 else f"{self.source}:{number_text(self.weight)}"


def parse_lora(text: str) -> Lora:
    """FILE_OR_REPO[:WEIGHT]: a last colon followed by a number (as musicvid.settings.numbers reads one) gives the
    weight; any other colon is part of the name (C:\\loras\\ink.safetensors)."""
    source, colon, weight = text.strip().rpartition(":")
    if not (colon and source.strip() and NUMBER.fullmatch(weight.strip())):
        return Lora(text.strip())
    try:
        return Lora(source.strip(), parse_number(weight.strip()))
    except argparse.ArgumentTypeError as error:
        raise argparse.ArgumentTypeError(f"{text.strip()}: its weight {error}") from None


class Loras(tuple):
    """Style LoRAs in the order given. As text (a CSV cell, the page's box): one per line, or separated by
    semicolons."""

    @classmethod
    def parse(cls, text: str) -> Loras:
        try:
            return cls(parse_lora(part) for part in text.replace(";", "\n").splitlines() if part.strip())
        except argparse.ArgumentTypeError as error:  # (a CSV cell's, the page's box's: not argparse's)
            raise UserError(f"the style LoRA {error}") from None

    def __str__(self) -> str:
        return "\n".join(map(str, self))


def check_loras(loras: Loras) -> None:
    if len(loras) > MAX_LORAS:
        raise UserError(f"--lora may be given at most {MAX_LORAS} times, not {len(loras)}")
    low, high = LORA_WEIGHTS
    for lora in loras:
        if not lora.source:
            raise UserError("--lora needs a file or a hub repository before its :WEIGHT")
        if not low <= lora.weight <= high:
            raise UserError(
                f"--lora {lora.source}: its weight must be from {number_text(low)} to {number_text(high)}, "
                f"got {number_text(lora.weight)}"
            )
