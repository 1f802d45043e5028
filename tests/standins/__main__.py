"""python -m tests.standins FOLDER: every stand-in into FOLDER/hub (HF_HOME=FOLDER)."""

import sys
from pathlib import Path

from tests.standins import write_hub

print(write_hub(Path(sys.argv[1]).resolve()))
