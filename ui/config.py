"""What a running page is allowed to do: its models, where jobs live and how long, what it accepts."""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path

from musicvid.settings.model_choice import ModelChoice


@dataclass(frozen=True)
class UIConfig:
    models: str = ModelChoice.models  # the preset the page starts with: the command line's default
    device: str = ModelChoice.device
    jobs_dir: Path = Path(tempfile.gettempdir()) / "musicvid-ui"
    keep_hours: float = 24.0
    max_minutes: float = 15.0
    max_upload_mb: int = 100
    lora_dir: Path | None = None  # the style LoRAs the page offers besides a visitor's uploads (ui/loras.py)
    precision: str = ModelChoice.precision
