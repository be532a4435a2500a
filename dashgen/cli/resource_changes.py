"""What a pull request changes besides its dashboards, against a git ref (``check --base`` and ``diff --base``):
the alert rules of the committed rule files (Grafana-managed rule groups included, where a profile whose ruler
is Grafana has its Grafana rule file committed: ``dashgen rules`` writes it beside the ``.yml``) and the folder
permissions ``dashgen.toml`` gives. The Grafana rule files, when written, are checked to be fresh like the
Prometheus ones.
"""

from __future__ import annotations

import contextlib
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml

from dashgen.cli.diff_sources import DiffInputError, git_text, read_git_texts
from dashgen.diff.permission_changes import Grants, permission_changes
from dashgen.diff.rule_changes import rule_changes
from dashgen.errors import InputError
from dashgen.publish.contexts import CONFIG_FILE, Config, load_config, parse_config
from dashgen.render import yamlcheck
from dashgen.rules.render import GRAFANA_FORMATS, SUFFIX, GrafanaTarget, render_rule_file

RULE_SUFFIXES = (".yml", ".yaml")


def _rule_texts(rules_dir: Path) -> dict[str, str]:
    if not rules_dir.is_dir():
        return {}
    return {p.name: p.read_text(encoding="utf-8") for p in sorted(rules_dir.iterdir()) if p.suffix in RULE_SUFFIXES}


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
            old = _grants(parse_config(path, tomllib.loads(text)))
        except (tomllib.TOMLDecodeError, InputError) as exc:
            notes.append(f"{path} at {base_ref} is not a valid config ({exc}); its permissions count as none")
    return notes + permission_changes(old, new)


def written_target(fmt: str, text: str) -> tuple[GrafanaTarget, str | None, dict[str, str] | None]:
    """The folder, data source, namespace and instance labels a committed Grafana rule file was written with (so
    the check re-renders it with the same options); the defaults where the file holds no group."""
    data = yamlcheck.load(text)
    default = GrafanaTarget()
    if fmt == "grafana":
        groups = data.get("groups") or [] if isinstance(data, Mapping) else []
        group = groups[0] if groups else {}
        rule = (group.get("rules") or [{}])[0]
        return (
            GrafanaTarget(
                str(rule.get("folderUID", default.folder_uid)),
                str(group.get("folder", default.folder_title)),
                _datasource(rule, default.datasource_uid),
            ),
            None,
            None,
        )
    items = data.get("items") or [] if isinstance(data, Mapping) else []
    if not items:
        return default, None, None
    spec, metadata = items[0].get("spec") or {}, items[0].get("metadata") or {}
    rule = (spec.get("rules") or [{}])[0]
    labels = (spec.get("instanceSelector") or {}).get("matchLabels")
    target = GrafanaTarget(str(spec.get("folderUID", default.folder_uid)), default.folder_title, _datasource(rule))
    return target, metadata.get("namespace"), labels


def _datasource(rule: Mapping[str, Any], default: str = GrafanaTarget.datasource_uid) -> str:
    query = next((d for d in rule.get("data") or [] if isinstance(d, Mapping) and d.get("refId") == "A"), {})
    return str(query.get("datasourceUid", default))


def grafana_rule_problems(profiles: list[Any], rules_dir: Path) -> list[str]:
    """Each committed Grafana rule file of a profile (``<profile>.grafana-alerting.yaml``,
    ``.grafanaalertrulegroup.yaml``) that differs from a fresh render with the options it was written with."""
    problems = []
    by_name = {p.name: p for p in profiles}
    for fmt in GRAFANA_FORMATS:
        for path in sorted(rules_dir.glob(f"*{SUFFIX[fmt]}")) if rules_dir.is_dir() else []:
            profile = by_name.get(path.name[: -len(SUFFIX[fmt])])
            if profile is None:
                continue  # as for the Prometheus files: another profile set's file is none of this check's
            dropped = fmt == "grafana" and profile.dashboard.ruler == "prometheus"
            if dropped and path.read_bytes().startswith(b"# Generated by dashgen"):
                problems.append(f"{path}: its profile's ruler is prometheus; run dashgen rules (removes it)")
                continue
            text = path.read_text(encoding="utf-8")
            try:
                target, namespace, labels = written_target(fmt, text)
            except (yaml.YAMLError, AttributeError, IndexError, TypeError) as exc:
                problems.append(f"{path}: not a Grafana rule file dashgen wrote ({exc})")
                continue
            if render_rule_file(profile, fmt, namespace, labels, target) != text.encode("utf-8"):
                again = "dashgen rules" if fmt == "grafana" else f"dashgen rules --format {fmt}"
                problems.append(f"{path}: stale; run {again} and commit it")
    return problems


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
