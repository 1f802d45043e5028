"""Which model names can only be paths on this machine, and the hub's cache asked without a name it refuses: a
path typed wrong (`./models/lcm.safetensors`) is said to be missing, not advised to be downloaded, and a symbolic
link that leads nowhere (into a loop, or to nothing) is refused as the broken path it is, not taken for a hub
name its spelling may also be."""

from __future__ import annotations

import os
from pathlib import Path

from musicvid.core.errors import UserError
from musicvid.core.files import is_url
from musicvid.core.paths import resolved
from musicvid.settings.presets import TINY

# What a file of weights is named: a model name ending so (`my-model.safetensors`) is a file's, never a hub repository's.
WEIGHT_SUFFIXES = (".safetensors", ".bin", ".pt", ".pth", ".ckpt")


def is_hub_name(name: str) -> bool:
    """Whether `name` can be a hub repository's (a name, or an owner and a name), by huggingface_hub's own rule:
    what else is named is a path on this machine (./, ../, / and ~ fail it)."""
    from huggingface_hub.errors import HFValidationError
    from huggingface_hub.utils import validate_repo_id

    try:
        validate_repo_id(name)
    except HFValidationError:
        return False
    return True


def is_weights_file(name: str) -> bool:
    """Whether the model `name` names a file of weights (WEIGHT_SUFFIXES), which no hub repository's name is."""
    return Path(name).suffix.lower() in WEIGHT_SUFFIXES


def is_local_path(name: str) -> bool:
    """Whether `name`, a model or a hub file (org/name/folders/file), can name nothing but a path here: its first
    two parts are no hub repository's name."""
    return not is_hub_name("/".join(name.split("/")[:2]))


def check_leads_somewhere(named: str, name: str) -> None:
    """Refuse, in one sentence naming it as `named` does, a path that is a symbolic link leading nowhere: into a loop
    of links, or to what is not there."""
    path = Path(name).expanduser()
    try:
        resolved(path)
    except UserError as error:
        raise UserError(f"{named}: {error}") from None
    try:
        link = os.readlink(path)
    except OSError:  # no link, or nothing there: said where the name is looked for
        return
    if not path.exists():
        raise UserError(f"{named} is a broken path: a symbolic link to {link}, which is not there")


def check_not_url(named: str, name: str) -> None:
    """Refuse a model given by its URL (`named`: how the message names it), which no loader here fetches."""
    if is_url(name):
        raise UserError(
            f"{named} is a URL: musicvid loads a model by its hub name (owner/name) or from a folder on this machine; "
            "download it first"
        )


def check_not_missing(flag: str, name: str) -> None:
    """Refuse a URL, a local path that is not there, or a symbolic link that leads nowhere, in one sentence."""
    check_not_url(f"{flag} {name}", name)
    check_leads_somewhere(f"{flag} {name}", name)
    if not Path(name).expanduser().exists() and is_local_path(name):
        raise UserError(f"{flag} {name}: there is no such file")


def cached_file(repo: str, file: str) -> str | None:
    """The cache's copy of a hub file, None where it has none or `repo` is no hub name (check_not_missing says so)."""
    from huggingface_hub import try_to_load_from_cache
    from huggingface_hub.errors import HFValidationError

    try:
        found = try_to_load_from_cache(repo, file)
    except HFValidationError:
        return None
    return found if isinstance(found, str) else None


def unavailable(name: str, config: str = "config.json") -> str | None:
    """Why the model `name` cannot be had where downloads are off (HF_HUB_OFFLINE): a hub name whose `config` file
    is not in the cache; None where it can be (built here, on this machine, in the cache, or on a reachable hub)."""
    from huggingface_hub import is_offline_mode

    if name == TINY or Path(name).expanduser().exists() or not is_offline_mode():
        return None
    if cached_file(name, config):
        return None
    return f"{name} is not in the model cache, and HF_HUB_OFFLINE keeps this run from the hub"


def refuse_offline(flag: str, name: str, repo: str, file: str) -> None:
    """Refuse, before any work, a hub file not in the cache where HF_HUB_OFFLINE keeps the run from the hub: its
    load would fail only after the storyboard (unavailable's sentence)."""
    if missing := unavailable(repo, file):
        raise UserError(f"{flag} {name}: {missing}")
