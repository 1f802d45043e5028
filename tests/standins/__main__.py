"""python -m tests.standins FOLDER: every stand-in into FOLDER/hub (HF_HOME=FOLDER)."""

import argparse
from pathlib import Path

from tests.standins import write_hub

parser = argparse.ArgumentParser(prog="python -m tests.standins", description=__doc__)
parser.add_argument("folder", type=Path, help="the HF_HOME to write the stand-in hub cache into")
print(write_hub(parser.parse_args().folder.resolve()))
