"""What the series names in a store say about the deployment (``dashgen doctor``, S35): per source, whether it
writes at all, the name prefix of its scrape path, the range of versions its names fit, and which of its flags
are on; and how that differs from what a profile states. Pure: a set of names and the table in, values out."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from dashgen.exporters.availability import Stated, is_old_name, latest_spelling, spelling_of
from dashgen.exporters.model import SourceTable, parse_version
from dashgen.exporters.table import TABLES


@dataclass(frozen=True)
class Inferred:
    """What the store shows of one source. ``since``: the oldest version its names allow ("" = any);
    ``before``: the first version they rule out ("" = none); ``flags_on`` / ``flags_off``: the flags whose
    series are present / absent while the source writes; ``evidence``: one line per conclusion."""

    source: str
    present: bool
    prefix: str = ""
    since: str = ""
    before: str = ""
    flags_on: tuple[str, ...] = ()
    flags_off: tuple[str, ...] = ()
    evidence: tuple[str, ...] = ()

    def version_range(self) -> str:
        if not self.since and not self.before:
            return "any read" if TABLES[self.source].versions else ""
        return ", ".join(
            part
            for part in (f">= {self.since}" if self.since else "", f"< {self.before}" if self.before else "")
            if part
        )

    def fits(self, version: str, latest: str) -> bool:
        """Whether ``version`` ("" = the latest) lies in the range the names allow."""
        chosen = parse_version(version or latest) if (version or latest) else None
        if chosen is None:
            return True
        if self.since and chosen < parse_version(self.since):
            return False
        return not (self.before and chosen >= parse_version(self.before))


def infer(names: Iterable[str]) -> dict[str, Inferred]:
    """Per source of the table, what the store's series names say."""
    seen: dict[str, set[str]] = {}  # source -> latest base names present
    spelled: dict[str, set[str]] = {}  # source -> the spellings present (old names, prefixes)
    for name in names:
        found = spelling_of(name)
        if found is not None:
            table, series, _ = found
            seen.setdefault(table.source, set()).add(series.name)
            spelled.setdefault(table.source, set()).add(name)
    return {
        source: _infer_one(table, seen.get(source, set()), spelled.get(source, set()))
        for source, table in TABLES.items()
    }


def _infer_one(table: SourceTable, present: set[str], spellings: set[str]) -> Inferred:
    if not present:
        return Inferred(table.source, False)
    evidence: list[str] = []
    prefix = next((p for p in table.prefixes[1:] if any(n.startswith(p) for n in spellings)), "")
    if prefix:
        evidence.append(f"names start {prefix!r}: {table.prefix_note or 'scraped through another path'}")
    since, before = "", ""
    for series in table.series:
        if any(is_old_name(name) and latest_spelling(name).startswith(series.name) for name in spellings):
            before = _lowest(before, series.renamed_in)
            evidence.append(f"{series.old_name} present: written as {series.name} from {series.renamed_in}")
        elif series.name in present and series.since:
            since = _highest(since, series.since)
        elif series.name in present and series.renamed_in:
            since = _highest(since, series.renamed_in)
        if series.absent_beside and series.name not in present and series.absent_beside in present:
            before = _lowest(before, series.since)
            evidence.append(f"{series.name} absent beside {series.absent_beside}: written from {series.since}")
    if since:
        evidence.append(f"names written from {since} on are present")
    on, off = [], []
    for flag in table.flags:
        needing = [series.name for series in table.series if flag.name in series.needs]
        if not needing:
            continue
        if any(name in present for name in needing):
            on.append(flag.name)
            evidence.append(f"{flag.name}: {', '.join(n for n in needing if n in present)} present")
        else:
            off.append(flag.name)
            evidence.append(f"{flag.name}: none of {', '.join(needing)} present")
    return Inferred(table.source, True, prefix, since, before, tuple(on), tuple(off), tuple(evidence))


def _highest(current: str, candidate: str) -> str:
    return candidate if not current or parse_version(candidate) > parse_version(current) else current


def _lowest(current: str, candidate: str) -> str:
    return candidate if not current or parse_version(candidate) < parse_version(current) else current


def differences(inferred: Inferred, stated: Stated) -> list[str]:
    """How the store differs from what the profile states about one source (none when it fits)."""
    if not inferred.present:
        return []
    table = TABLES[inferred.source]
    found = []
    own = table.prefixes[0] if table.prefixes else ""
    written, said = inferred.prefix or own, stated.metric_prefix or own
    if written != said:
        found.append(f"metric_prefix: the store writes {written!r}, the profile states {said!r}")
    if table.version_of == "" and table.versions and not inferred.fits(stated.version, table.latest):
        shown = stated.version or f"not stated (latest, {table.latest})"
        found.append(f"version: the store's names fit {inferred.version_range()}, the profile states {shown}")
    assumed = stated.features
    for flag in inferred.flags_off:
        if assumed is None:
            found.append(f"features: {flag} is off in the store; the profile states no features (all assumed on)")
        elif flag in assumed:
            found.append(f"features: {flag} is stated but off in the store")
    for flag in inferred.flags_on:
        if assumed is not None and flag not in assumed:
            found.append(f"features: {flag} is on in the store but not stated")
    return found


def proposed(inferred: Inferred, stated: Stated) -> dict[str, object]:
    """The ``[sources.<name>]`` fields that make the profile state what the store shows (only the ones to change)."""
    table = TABLES[inferred.source]
    if not inferred.present or table.version_of:
        return {}
    fields: dict[str, object] = {}
    own = table.prefixes[0] if table.prefixes else ""
    if (inferred.prefix or own) != (stated.metric_prefix or own):
        fields["metric_prefix"] = inferred.prefix or own
    if table.versions and not inferred.fits(stated.version, table.latest):
        fitting = [v for v in table.versions if inferred.fits(v, table.latest)]
        if fitting:
            fields["version"] = fitting[-1]
    if inferred.flags_on or inferred.flags_off:
        # Features not stated: every flag is assumed on, so a flag no name shows stays on in the proposal.
        assumed = [flag.name for flag in table.flags] if stated.features is None else stated.features
        kept = [flag for flag in assumed if flag not in inferred.flags_off]
        wanted = sorted({*kept, *inferred.flags_on})
        if stated.features is None or sorted(stated.features) != wanted:
            fields["features"] = wanted
    return fields
