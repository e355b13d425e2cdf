"""Rules presets: the files config/rules/NAME.toml, read here and handed to
the pure rules layer as text (pbem.rules.options.preset_options)."""

from __future__ import annotations

from pathlib import Path

from pbem.paths import presets_dir
from pbem.rules.errors import OptionsError
from pbem.rules.options import Options, preset_options, preset_text_description


def preset_names(directory: Path | None = None) -> list[str]:
    """The presets shipped (or found in ``directory``), sorted."""
    return sorted(p.stem for p in (directory or presets_dir()).glob("*.toml"))


def load_preset(name: str, directory: Path | None = None) -> Options:
    """Load ``config/rules/NAME.toml``: a table ``[options]`` over the defaults."""
    directory = directory or presets_dir()
    path = directory / f"{name}.toml"
    if not path.is_file():
        known = ", ".join(preset_names(directory))
        raise OptionsError(f"no rules preset {name!r} (known: {known})")
    return preset_options(path.read_text(encoding="utf-8"), str(path))


def preset_description(name: str, directory: Path | None = None) -> str:
    """The one-line description a preset file gives of itself."""
    path = (directory or presets_dir()) / f"{name}.toml"
    return preset_text_description(path.read_text(encoding="utf-8"))
