"""What a deployment's stated exporter versions, flags and scrape paths make of a PromQL expression: the names
it must use (an older version's name, the router's prefix) and the series it reads that the deployment never
writes, each with the reason and the switch. Pure: strings and the table in, strings out."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache, lru_cache

from dashgen.exporters.model import HISTOGRAM_SUFFIXES, Series, SourceTable, parse_version
from dashgen.exporters.table import TABLES

_TOKEN = re.compile(r"(?<![A-Za-z0-9_:])[A-Za-z_:][A-Za-z0-9_:]*(?![A-Za-z0-9_:])")


@dataclass(frozen=True)
class Stated:
    """What a profile states about one source: ``version`` ("" = the latest read), ``features`` (None = not
    stated: every flag the table knows is assumed on, today's dashboards), ``metric_prefix`` ("" = the
    exporter's own)."""

    version: str = ""
    features: tuple[str, ...] | None = None
    metric_prefix: str = ""


@dataclass(frozen=True)
class Missing:
    """A series an expression reads that the deployment does not write, and why (a sentence naming the switch)."""

    name: str
    source: str
    why: str


@dataclass(frozen=True)
class Adapted:
    expr: str
    missing: tuple[Missing, ...] = ()
    flags: tuple[tuple[str, str], ...] = ()  # (source, flag) of non-default flags the series read need


def _index() -> dict[str, tuple[SourceTable, Series, str]]:
    """Every exposed name (latest spelling) -> its source table, its row and the suffix after its base name."""
    found: dict[str, tuple[SourceTable, Series, str]] = {}
    for table in TABLES.values():
        for series in table.series:
            found[series.name] = (table, series, "")
            if series.histogram:
                found.update({series.name + suffix: (table, series, suffix) for suffix in HISTOGRAM_SUFFIXES})
    return found


INDEX = _index()


def lookup(name: str) -> tuple[SourceTable, Series] | None:
    """The source table and row of an exposed series name (a histogram's suffixed names included)."""
    found = INDEX.get(name)
    return (found[0], found[1]) if found else None


@cache
def _spellings() -> dict[str, tuple[SourceTable, Series, str, bool]]:
    """Every spelling of every exposed name (old names, other prefixes) -> its table, row, suffix and whether it
    is an old name."""
    found = {name: (*row, False) for name, row in INDEX.items()}
    for table, series, suffix in INDEX.values():
        for base, old in ((series.name, False), (series.old_name, True)):
            for prefix in ("", *table.prefixes[1:]):
                if base:
                    found.setdefault(_with_prefix(table, base + suffix, prefix), (table, series, suffix, old))
    return found


def spelling_of(name: str) -> tuple[SourceTable, Series, str] | None:
    """The table, row and histogram suffix of ``name`` in any supported version's or scrape path's spelling."""
    found = _spellings().get(name)
    return found[:3] if found else None


def is_old_name(name: str) -> bool:
    """Whether ``name`` is a renamed series' name before its rename (in any scrape path's spelling)."""
    found = _spellings().get(name)
    return bool(found and found[3])


def latest_spelling(name: str) -> str:
    """The table's own (latest) name for ``name`` written in any supported version's or scrape path's spelling;
    ``name`` itself when the table does not know it."""
    found = _spellings().get(name)
    return found[1].name + found[2] if found else name


def switch_of(name: str) -> str:
    """What a deployment must switch on, or be, for ``name`` (any spelling) to be written: its flags, its role
    and its first version; "" when the table knows no condition (or not the name). The *uninitialised* reason of
    an empty selector says this (S35)."""
    found = spelling_of(name)
    if found is None:
        return ""
    table, series, _ = found
    parts = [flag_text(table, flag) for flag in series.needs]
    if series.role:
        parts.append(series.role)
    if series.since:
        parts.append(f"first written by {versioned_by(table)} {series.since}")
    if table.switch:
        parts.append(source_switch(table.source))
    return "; ".join(parts)


def versioned_by(table: SourceTable) -> str:
    """The exporter whose release the source's versions are (HiCache's: SGLang's)."""
    return TABLES[table.version_of].exporter if table.version_of else table.exporter


def source_switch(source: str) -> str:
    """What makes ``source`` write anything ("needs `--enable-metrics` on SGLang"), or "" when nothing does."""
    table = TABLES.get(source)
    return f"needs `{table.switch}` on {table.exporter}" if table and table.switch else ""


def every_name() -> frozenset[str]:
    """Every name any supported version or scrape path writes: latest names, old names, other prefixes."""
    names: set[str] = set()
    for table, series, suffix in INDEX.values():
        names.add(series.name + suffix)
        if series.old_name:
            names.add(series.old_name + suffix)
        for prefix in table.prefixes[1:]:
            names.update(_with_prefix(table, n, prefix) for n in (series.name + suffix, series.old_name + suffix))
    return frozenset(name for name in names if name and not name.startswith(tuple(HISTOGRAM_SUFFIXES)))


def _with_prefix(table: SourceTable, name: str, prefix: str) -> str:
    own = table.prefixes[0] if table.prefixes else ""
    return prefix + name[len(own) :] if prefix and own and name.startswith(own) else name


def flag_text(table: SourceTable, flag: str) -> str:
    known = table.flag(flag)
    default = f" ({known.default})" if known else ""
    return f"needs `{known.turn_on if known else flag}` on {table.exporter}{default}"


def missing_reason(table: SourceTable, series: Series, stated: Stated) -> str | None:
    """Why the stated deployment never writes ``series`` (a sentence naming the switch), or None when it does."""
    if series.since and stated.version and parse_version(stated.version) < parse_version(series.since):
        return (
            f"not exported by {versioned_by(table)} {stated.version} (first written by {series.since}); "
            f"upgrade it and state the new [sources.{table.version_of or table.source}] version"
        )
    if stated.features is not None:
        off = [flag for flag in series.needs if flag not in stated.features]
        if off:
            return "; ".join(flag_text(table, flag) for flag in off) + f" (add it to [sources.{table.source}] features)"
    return None


def exposed_name(table: SourceTable, series: Series, suffix: str, stated: Stated) -> str:
    """The name the stated deployment writes for ``series`` (+ ``suffix``): an older version's old name, and the
    stated prefix of the scrape path."""
    name = series.name
    if series.old_name and stated.version and parse_version(stated.version) < parse_version(series.renamed_in):
        name = series.old_name
    return _with_prefix(table, name + suffix, stated.metric_prefix)


def adapt(expr: str, stated: Mapping[str, Stated]) -> Adapted:
    """``expr`` with each series name the deployment writes differently rewritten, the series it never writes
    listed (once each, in reading order), and the non-default flags its series need. A source ``stated`` does
    not name is left as it is (not exported or not known to the profile). Remembered per expression and
    statement (the answer is frozen): every profile that states its sources alike asks again for the same
    queries, and the rewrite tests each name token of the expression."""
    return _adapted(expr, tuple(stated.items()))


@lru_cache(maxsize=8192)
def _adapted(expr: str, statements: tuple[tuple[str, Stated], ...]) -> Adapted:
    stated = dict(statements)
    missing: dict[str, Missing] = {}
    flags: dict[tuple[str, str], None] = {}

    def rename(match: re.Match[str]) -> str:
        token = match.group(0)
        found = INDEX.get(token)
        if found is None or found[0].source not in stated:
            return token
        table, series, suffix = found
        said = stated[table.source]
        why = missing_reason(table, series, said)
        if why is not None:
            missing.setdefault(series.name, Missing(series.name, table.source, why))
        flags.update({(table.source, flag): None for flag in series.needs})
        return exposed_name(table, series, suffix, said)

    return Adapted(_TOKEN.sub(rename, expr), tuple(missing.values()), tuple(flags))


def stated_problem(source: str, stated: Stated) -> tuple[str, str] | None:
    """(field, problem) when a profile's statement about ``source`` cannot be honoured, else None."""
    table = TABLES.get(source)
    if table is None:
        return None
    if stated.version:
        try:
            version = parse_version(stated.version)
        except ValueError as exc:
            return "version", str(exc)
        if table.oldest and version < parse_version(table.oldest):
            return "version", (
                f"{stated.version} is older than the oldest {table.exporter} version dashgen supports "
                f"({table.oldest}; read: {table.oldest} to {table.latest})"
            )
    known = [flag.name for flag in table.flags]
    for feature in stated.features or ():
        if feature not in known:
            return "features", (
                f"{feature!r} is not a flag dashgen knows for {table.exporter}; known: {', '.join(known) or 'none'}"
            )
    if stated.metric_prefix and stated.metric_prefix not in table.prefixes:
        return "metric_prefix", (
            f"{stated.metric_prefix!r}: {table.exporter} is written with "
            f"{' or '.join(table.prefixes) or 'no configurable prefix'}"
        )
    return None
