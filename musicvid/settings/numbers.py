"""Numbers as a person types them: ASCII digits only, and no more than a machine number holds. Python's int() and
float() also take "1_0", "+５" and other scripts' digits, so a slip ("64_0x64") would cost a whole render at a size
nobody asked for; float() reads 1e400 as inf and 1e-400 as 0, which a range's refusal would echo, though nobody typed
them. A leaf: every front door's parsers (musicvid.settings.front_doors) and a LoRA's weight read numbers here."""

from __future__ import annotations

import argparse
import math
import re

WHOLE = re.compile(r"[+-]?\d+", re.ASCII)
NUMBER = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:e[+-]?\d+)?|[+-]?(?:nan|inf|infinity)", re.ASCII | re.IGNORECASE)
LONGEST_DIGITS = 4300  # Python's int() reads no more (sys.get_int_max_str_digits)
SHOWN = 40  # characters of a refused number echoed back


def typed(text: str) -> str:
    """`text` as a refusal echoes it: its start, where it is long."""
    return repr(text if len(text) <= SHOWN else text[:SHOWN] + "…")


def parse_whole(text: str) -> int:
    if not WHOLE.fullmatch(text) or len(text) > LONGEST_DIGITS:
        raise argparse.ArgumentTypeError(f"must be a whole number, not {typed(text)}")
    return int(text)


def parse_number(text: str) -> float:
    if not NUMBER.fullmatch(text):
        raise argparse.ArgumentTypeError(f"must be a number, not {typed(text)}")
    value, digits = float(text), text.lower().partition("e")[0]
    if (math.isinf(value) and "inf" not in digits) or (value == 0 and any(d in "123456789" for d in digits)):
        raise argparse.ArgumentTypeError(f"must be a number a float can hold, not {typed(text)}")
    return value
