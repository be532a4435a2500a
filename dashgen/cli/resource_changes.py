"""What a pull request changes besides its dashboards, against a git ref (``check --base`` and ``diff --base``):
the alert rules of the committed rule files (Grafana-managed rule groups included, where a profile whose ruler
is Grafana has its Grafana rule file committed: ``dashgen rules`` writes it beside the ``.yml``) and the folder
permissions ``dashgen.toml`` gives (the Grafana rule files' freshness: ``dashgen.cli.rule_files``).
"""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Any

from dashgen.cli.diff_sources import DiffInputError, git_text, read_git_texts
from dashgen.diff.permission_changes import Grants, permission_changes
from dashgen.diff.rule_changes import rule_changes
from dashgen.errors import InputError
from dashgen.files import read_regular_text
from dashgen.files.parsers import parse_toml
from dashgen.publish.contexts import CONFIG_FILE, Config, load_config, parse_config
from dashgen.rules.render import GRAFANA_FORMATS, SUFFIX

RULE_SUFFIXES = (".yml", ".yaml")


def _rule_texts(rules_dir: Path) -> dict[str, str]:
    if not rules_dir.is_dir():
        return {}
    return {p.name: read_regular_text(p) for p in sorted(rules_dir.iterdir()) if p.suffix in RULE_SUFFIXES}


def rule_lines(base_ref: str, rules_dir: Path) -> list[str]:
    """The alerts added, removed or changed in the rule files since ``base_ref`` (lines, each change once)."""
    old: dict[str, str] = {}
    for suffix in RULE_SUFFIXES:
        with contextlib.suppress(DiffInputError):  # no rules folder at the base: every alert is added
            old.update(read_git_texts(base_ref, rules_dir, suffix))
    return [change.line() for change in rule_changes(old, _rule_texts(rules_dir))]


def _grants(config: Config | None) -> dict[str, dict[str, dict[str, str]]]:
    if config is None:
        return {}
    return {
        name: {access.folder_uid: dict(access.grants) for access in context.permissions}
        for name, context in config.contexts.items()
        if context.permissions
    }


def permission_lines(base_ref: str, config_path: Path | None) -> list[str]:
    """The folder permissions changed in ``dashgen.toml`` since ``base_ref`` (``config_path``, else
    ``./dashgen.toml``; none when there is no config file)."""
    path = config_path or Path(CONFIG_FILE)
    if config_path is None and not path.is_file():
        return []
    new = _grants(load_config(path))
    notes: list[str] = []
    old: Grants = {}
    try:
        text = git_text(base_ref, path)
    except DiffInputError:
        text = None  # no config file at the base: every managed folder is new
    if text is not None:
        try:
            old = _grants(parse_config(path, parse_toml(text)))
        except (ValueError, InputError) as exc:  # TOMLDecodeError and nesting too deep are ValueErrors
            notes.append(f"{path} at {base_ref} is not a valid config ({exc}); its permissions count as none")
    return notes + permission_changes(old, new)


def unshown_grafana_rules(profiles: list[Any], rules_dir: Path) -> list[str]:
    """A note per profile whose alerts Grafana evaluates but whose Grafana rule file is not committed: the rule
    changes of the pull request cannot show them."""
    notes = []
    for profile in profiles:
        if profile.dashboard.ruler == "prometheus":
            continue
        if not any((rules_dir / f"{profile.name}{SUFFIX[fmt]}").is_file() for fmt in GRAFANA_FORMATS):
            notes.append(
                f"{profile.name}: its alerts are Grafana-managed (ruler = {profile.dashboard.ruler!r}) and "
                f"{rules_dir / (profile.name + SUFFIX['grafana'])} is not committed: their changes are not shown "
                "(run dashgen rules and commit it)"
            )
    return notes


def resource_changes(
    base_ref: str, rules_dir: Path, config_path: Path | None, profiles: list[Any]
) -> dict[str, list[str]]:
    """``rule_changes`` and ``permission_changes`` lines since ``base_ref``, and ``rules_not_shown``: a note per
    profile whose Grafana-managed alerts the rule changes cannot show."""
    return {
        "rule_changes": rule_lines(base_ref, rules_dir),
        "permission_changes": permission_lines(base_ref, config_path),
        "rules_not_shown": unshown_grafana_rules(profiles, rules_dir),
    }
