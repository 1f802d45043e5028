"""The set-up a fresh clone gets: every dependency pyproject.toml names is pinned in requirements.lock, the
versions the suite ran on, so that nothing changes under the app but on purpose."""

import re
from pathlib import Path

import tomllib

ROOT = Path(__file__).resolve().parents[1]


def name_of(requirement: str) -> str:
    return re.split(r"[\s\[<>=!~;]", requirement.strip(), maxsplit=1)[0].lower().replace("_", "-")


def test_every_dependency_is_pinned_and_torch_is_the_documented_one():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    named = {name_of(r) for r in project["dependencies"]}
    named |= {name_of(r) for extra in project["optional-dependencies"].values() for r in extra}
    named.discard("musicvid")  # the extras that name the others
    pins = {}
    for line in (ROOT / "requirements.lock").read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            package, _, version = line.split(";")[0].strip().partition("==")
            pins[package.lower().replace("_", "-")] = version
    assert sorted(named - set(pins)) == []
    assert (pins["torch"], pins["torchvision"]) == ("2.14.1", "0.29.1")  # as the README and .ci/run say
