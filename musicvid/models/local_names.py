"""Which model names can only be paths on this machine, and the hub's cache asked without a name it refuses: a
path typed wrong (`./models/lcm.safetensors`) is said to be missing, not advised to be downloaded."""

from __future__ import annotations

from pathlib import Path

from musicvid.core.errors import UserError


def is_local_path(name: str) -> bool:
    """Whether `name` can name nothing but a path here: it starts as one does (./, ../, /, ~), or its first two parts
    are no hub repository's name (huggingface_hub's own rule, stricter than musicvid.models.names.REPO_ID)."""
    from huggingface_hub.errors import HFValidationError
    from huggingface_hub.utils import validate_repo_id

    if name.startswith(("./", "../", "/", "~")) or name in (".", ".."):
        return True
    try:
        validate_repo_id("/".join(name.split("/")[:2]))
    except HFValidationError:
        return True
    return False


def check_not_missing(flag: str, name: str) -> None:
    """Refuse a local path that is not there, in one sentence."""
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


def refuse_offline(flag: str, name: str, repo: str, file: str) -> None:
    """Refuse, before any work, a hub file not in the cache where HF_HUB_OFFLINE keeps the run from the hub: its
    load would fail only after the storyboard (musicvid.models.names.unavailable's sentence)."""
    from musicvid.models.names import unavailable

    if missing := unavailable(repo, file):
        raise UserError(f"{flag} {name}: {missing}")
