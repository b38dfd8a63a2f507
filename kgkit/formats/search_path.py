"""Find domain, view and DIY template files by name or path (without loading them).

Search path, first match wins: the project directory (``./domains``, ``./views``,
``./templates``), the user config directory (``<user config>/kgkit/<kind>``), then the
built-ins shipped with kgkit. Built-in files are loaded exactly as a user's own.
"""
from __future__ import annotations

import os
from pathlib import Path

from kgkit.errors import NotFoundError, did_you_mean

KINDS = ("domains", "views", "templates")

_PACKAGE_DIR = Path(__file__).resolve().parent.parent  # kgkit/


def builtin_root() -> Path:
    """Where the built-in YAML lives: inside the wheel, or at the top of a source checkout."""
    installed = _PACKAGE_DIR / "_builtin"
    return installed if installed.is_dir() else _PACKAGE_DIR.parent


def user_config_dir() -> Path:
    env = os.environ.get("KGKIT_CONFIG_DIR")
    if env:
        return Path(env)
    import platformdirs

    return Path(platformdirs.user_config_dir("kgkit"))


def search_path(kind: str, project_dir: Path | None = None) -> list[Path]:
    assert kind in KINDS, kind
    project = project_dir or Path.cwd()
    return [project / kind, user_config_dir() / kind, builtin_root() / kind]


def candidates(kind: str, project_dir: Path | None = None) -> dict[str, list[Path]]:
    """Every name of this kind and all files that define it, in search order (first wins).

    A file is listed once even when two search-path entries are the same folder (run from
    a source checkout, the project folder is the built-in root): it does not override itself.
    """
    found: dict[str, list[Path]] = {}
    seen: set[Path] = set()
    for directory in search_path(kind, project_dir):
        if not directory.is_dir():
            continue
        for path in sorted(directory.glob("*.yaml")) + sorted(directory.glob("*.yml")):
            if path.resolve() not in seen:
                seen.add(path.resolve())
                found.setdefault(path.stem, []).append(path)
    return found


def available(kind: str, project_dir: Path | None = None) -> dict[str, Path]:
    """Every name of this kind on the search path and the file it resolves to."""
    return {name: paths[0] for name, paths in candidates(kind, project_dir).items()}


def looks_like_path(ref: str) -> bool:
    return ref.endswith((".yaml", ".yml")) or os.sep in ref or "/" in ref


def find(kind: str, ref: str | os.PathLike, project_dir: Path | None = None, skip: Path | None = None) -> Path:
    """Resolve a name on the search path, or a path to a file; otherwise a helpful error.

    ``skip`` passes over one file: a project's ``domains/general.yaml`` that says
    ``extends: general`` means the next ``general`` down the search path, not itself.
    """
    ref_s = os.fspath(ref)
    if looks_like_path(ref_s):
        path = Path(ref_s).expanduser()
        if path.is_file():
            return path
        raise NotFoundError(f"no {kind[:-1]} file at {ref_s}")
    skipped = Path(skip).resolve() if skip else None
    for directory in search_path(kind, project_dir):
        for suffix in (".yaml", ".yml"):
            path = directory / f"{ref_s}{suffix}"
            if path.is_file() and path.resolve() != skipped:
                return path
    names = available(kind, project_dir)
    listing = ", ".join(sorted(names)) or "none"
    raise NotFoundError(f"unknown {kind[:-1]} {ref_s!r}; available: {listing}", hint=did_you_mean(ref_s, names, n=3))
