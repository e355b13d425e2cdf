"""Where the shipped data lives: maps, rule presets and templates.

An installed wheel carries them inside the package (``pbem/_data``); an
editable checkout reads them from the repository's top-level folders.
"""

from __future__ import annotations

from pathlib import Path

_PACKAGE = Path(__file__).resolve().parent
_REPO = _PACKAGE.parent


def _data_dir(name: str) -> Path:
    installed = _PACKAGE / "_data" / name
    if installed.is_dir():
        return installed
    return _REPO / name


def config_dir() -> Path:
    return _data_dir("config")


def maps_dir() -> Path:
    return config_dir() / "maps"


def presets_dir() -> Path:
    return config_dir() / "rules"


def templates_dir() -> Path:
    return _data_dir("templates")
