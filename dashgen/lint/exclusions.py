"""Lint exclusions: findings a team has decided to accept, each with a written reason.

A TOML file (default ``.dashgen-lint.toml`` in the working directory) lists ``[[exclude]]``
entries; each names a ``rule`` (an id, or ``*``) and may narrow it by shell-style globs on
``dashboard`` title, ``panel`` title and ``file`` path. A ``reason`` is required: an exclusion
nobody can explain is a finding hidden, not a decision. Excluded findings are counted, never silent.

dashgen's own accepted findings on the dashboards it generates ship inside the package
(``dashgen/data/lint-exclusions.toml``) and always apply, so ``dashgen check`` gives a team's repository the
verdict it gives this one; a repository's file adds to them.
"""

from __future__ import annotations

from dataclasses import dataclass
from fnmatch import fnmatchcase
from importlib import resources
from pathlib import Path

from dashgen.errors import InputError
from dashgen.files import read_regular_text
from dashgen.files.parsers import parse_toml
from dashgen.lint.findings import Finding

DEFAULT_CONFIG = Path(".dashgen-lint.toml")
_FIELDS = {"rule", "dashboard", "panel", "file", "reason"}


@dataclass(frozen=True)
class Exclusion:
    rule: str
    reason: str
    dashboard: str = "*"
    panel: str = "*"
    file: str = "*"

    def matches(self, finding: Finding) -> bool:
        return (
            (self.rule == "*" or self.rule == finding.rule)
            and fnmatchcase(finding.dashboard or "", self.dashboard)
            and fnmatchcase(finding.panel or "", self.panel)
            and fnmatchcase(finding.file, self.file)
        )


SHIPPED_LABEL = "dashgen's own exclusions"


def shipped_exclusions() -> list[Exclusion]:
    """The findings dashgen accepts on its generated dashboards (``dashgen/data/lint-exclusions.toml``)."""
    text = resources.files("dashgen").joinpath("data", "lint-exclusions.toml").read_text(encoding="utf-8")
    return parse_exclusions(text, Path("dashgen/data/lint-exclusions.toml"))


def load_exclusions(path: Path) -> list[Exclusion]:
    """Read the config; every problem is an input error naming the file and the entry's field."""
    try:
        text = read_regular_text(path)
    except OSError as exc:
        raise InputError(f"{path}: cannot read ({exc.strerror})") from None
    return parse_exclusions(text, path)


def parse_exclusions(text: str, path: Path) -> list[Exclusion]:
    try:
        data = parse_toml(text)
    except ValueError as exc:
        raise InputError(f"{path}: not valid TOML: {exc}") from None
    unknown = sorted(set(data) - {"exclude"})
    if unknown:
        raise InputError(f"{path}: {unknown[0]}: unknown table (only [[exclude]] entries are read)")
    entries = data.get("exclude", [])
    if not isinstance(entries, list):
        raise InputError(f"{path}: exclude: expected [[exclude]] entries")
    exclusions = []
    for index, entry in enumerate(entries):
        where = f"{path}: exclude[{index}]"
        extra = sorted(set(entry) - _FIELDS)
        if extra:
            raise InputError(f"{where}.{extra[0]}: unknown field; use rule, dashboard, panel, file, reason")
        for field in ("rule", "reason"):
            if not isinstance(entry.get(field), str) or not entry[field].strip():
                raise InputError(f"{where}.{field}: required (a rule id or '*', and why it is accepted)")
        for field in ("dashboard", "panel", "file"):
            if field in entry and not isinstance(entry[field], str):
                raise InputError(f"{where}.{field}: expected a glob string")
        exclusions.append(Exclusion(**{k: v for k, v in entry.items()}))
    return exclusions


def apply_exclusions(findings: list[Finding], exclusions: list[Exclusion]) -> tuple[list[Finding], list[Finding]]:
    """(kept, excluded)."""
    kept: list[Finding] = []
    excluded: list[Finding] = []
    for finding in findings:
        (excluded if any(e.matches(finding) for e in exclusions) else kept).append(finding)
    return kept, excluded


def default_exclusions(config: Path | None) -> tuple[list[Exclusion], str]:
    """dashgen's shipped exclusions, plus the given config, else ``.dashgen-lint.toml`` when present; and
    what they were read from, for the "excluded by" line."""
    own = config if config is not None else (DEFAULT_CONFIG if DEFAULT_CONFIG.is_file() else None)
    if own is None:
        return shipped_exclusions(), SHIPPED_LABEL
    return [*shipped_exclusions(), *load_exclusions(own)], f"{own} and {SHIPPED_LABEL}"
