"""The repository's own settings in ``dashgen.toml`` besides its Grafana contexts: where the team's panel
modules live (``panels_dir``) and where the release ledger is kept (``ledger``; backups beside it).

```toml
panels_dir = "panels"            # default: panels/ beside the profiles folder; must lie inside the repository
ledger = "releases/ledger.jsonl" # default; relative paths are relative to this file
```

The file is the one ``dashgen.publish.contexts`` reads (``[contexts.<name>]``, ``default_context``); this module
reads only its top-level keys. A repository is found from its profiles folder: ``dashgen.toml`` beside it.

It also owns the one translation between dashgen's content folders as a reader finds them (``panels/``,
``queries/``, ``profiles/``) and the names they install under (``dashgen_panels``...; setup.py): ``shown_name``
and ``import_name``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dashgen.errors import InputError
from dashgen.files import read_regular_text
from dashgen.files.parsers import parse_toml

# repository folder -> installed import name (setup.py installs them so; site-packages gets no generic "panels")
CONTENT_PACKAGES = {"panels": "dashgen_panels", "queries": "dashgen_queries", "profiles": "dashgen_profiles"}
_FOLDERS = {name: folder for folder, name in CONTENT_PACKAGES.items()}


def shown_name(module: str) -> str:
    """``dashgen_panels.first_screen`` -> ``panels.first_screen``: a module named by the folder a reader opens."""
    package, dot, rest = module.partition(".")
    return f"{_FOLDERS[package]}{dot}{rest}" if package in _FOLDERS else module


def import_name(module: str) -> str:
    """``panels.first_screen`` -> ``dashgen_panels.first_screen``: the name to import a shown module by."""
    package, dot, rest = module.partition(".")
    return f"{CONTENT_PACKAGES[package]}{dot}{rest}" if package in CONTENT_PACKAGES else module


CONFIG_FILE = "dashgen.toml"
KEYS = ("panels_dir", "ledger")
# the file's other top-level keys, read by dashgen.publish.contexts: refused here when unknown, so a typo'd key
# fails every command alike (a build that ignored `panel_dir` would pass the check its publish then refuses)
CONTEXT_KEYS = ("default_context", "contexts", "stages")
DEFAULT_PANELS_DIR = "panels"


@dataclass(frozen=True)
class ProjectSettings:
    root: Path  # the folder holding the profiles folder (and dashgen.toml, when there is one)
    panels_dir: Path
    ledger: Path | None = None  # None: the commands' default (releases/ledger.jsonl)


def parse_settings(path: Path, data: dict[str, Any]) -> ProjectSettings:
    """The top-level keys of a parsed ``dashgen.toml`` at ``path`` (errors name the file and the key); an unknown
    top-level key is refused."""
    unknown = sorted(set(data) - {*CONTEXT_KEYS, *KEYS})
    if unknown:
        raise InputError(
            f"{path}: unknown top-level key {unknown[0]!r} (expected default_context, [contexts.<name>], "
            f"[stages], {', '.join(KEYS)})"
        )
    for key in KEYS:
        if key in data and (not isinstance(data[key], str) or not data[key].strip()):
            raise InputError(f"{path}: {key}: expected a non-empty path string")
    base = path.parent

    def resolved(text: str) -> Path:
        candidate = Path(text)
        return candidate if candidate.is_absolute() else base / candidate

    panels_dir = resolved(data.get("panels_dir", DEFAULT_PANELS_DIR))
    # the team's modules are run as code: only from the repository itself, never a folder elsewhere on the machine
    if not panels_dir.resolve().is_relative_to(base.resolve()):
        raise InputError(
            f"{path}: panels_dir: {data['panels_dir']!r} lies outside the repository ({base}); "
            "the team's panel modules must be inside it"
        )
    return ProjectSettings(
        root=base,
        panels_dir=panels_dir,
        ledger=resolved(data["ledger"]) if "ledger" in data else None,
    )


def read_settings(root: Path) -> ProjectSettings:
    """``root/dashgen.toml``'s settings, or the defaults when there is none."""
    path = root / CONFIG_FILE
    if not path.is_file():
        return ProjectSettings(root=root, panels_dir=root / DEFAULT_PANELS_DIR)
    try:
        data = parse_toml(read_regular_text(path))
    except OSError as exc:
        raise InputError(f"{path}: cannot read ({exc.strerror or exc})") from None
    except ValueError as exc:  # not UTF-8, not TOML, or nested too deeply
        raise InputError(f"{path}: not valid TOML ({exc})") from None
    return parse_settings(path, data)


def settings_for_profiles(profiles_folder: Path) -> ProjectSettings:
    """The settings of the repository whose profiles are in ``profiles_folder``."""
    return read_settings(profiles_folder.resolve().parent)
