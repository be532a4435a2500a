"""The values of the exporter table: one ``Series`` per exposed name, one ``SourceTable`` per metric source,
and exporter versions as comparable tuples. Data only; ``dashgen.exporters.table`` holds the rows."""

from __future__ import annotations

import re
from dataclasses import dataclass

HISTOGRAM_SUFFIXES = ("_bucket", "_sum", "_count")
_VERSION_RE = re.compile(r"^v?(\d+)\.(\d+)(?:\.(\d+))?(?:[.+-].*)?\Z")

Version = tuple[int, int, int]


def parse_version(text: str) -> Version:
    """``"0.5.23"`` (or ``v0.5.23``, ``0.5.23.post1``) -> (0, 5, 23). ValueError on anything else."""
    match = _VERSION_RE.match(text.strip())
    if not match:
        raise ValueError(f'{text!r} is not a version such as "0.5.23"')
    major, minor, patch = match.groups()
    return int(major), int(minor), int(patch or 0)


@dataclass(frozen=True)
class Series:
    """One series an exporter writes (a histogram by its base name, exposing ``_bucket``/``_sum``/``_count``).

    ``since``: the first version of the source that writes it ("" = every supported version). ``old_name`` and
    ``renamed_in``: versions before ``renamed_in`` write it as ``old_name``. ``needs``: exporter flags (the
    exporter's own spelling) without which it is never written. ``role``: a condition of the deployment's shape the
    profile does not state (written on the prefill side only, ...), shown on the panel, never used to gate it.
    """

    name: str
    histogram: bool = False
    since: str = ""
    old_name: str = ""
    renamed_in: str = ""
    needs: tuple[str, ...] = ()
    role: str = ""
    # A series every version writes beside this one: this one absent while that one is present says the version
    # predates ``since`` (``dashgen doctor``); "" = its absence says nothing (it may need traffic or a pool kind).
    absent_beside: str = ""

    def exposed(self) -> tuple[str, ...]:
        """Every series name it exposes at the latest version (a histogram: its base and the three suffixes)."""
        if not self.histogram:
            return (self.name,)
        return (self.name, *(self.name + suffix for suffix in HISTOGRAM_SUFFIXES))


@dataclass(frozen=True)
class Flag:
    """An exporter flag a series may need: its name as the exporter spells it and its default, said once."""

    name: str
    default: str  # "off by default", "default -1: no admission control"
    turn_on: str  # what to set: "--engine-metrics", "--max-concurrent-requests N (N > 0)"


@dataclass(frozen=True)
class SourceTable:
    """What one metric source writes. ``version_of``: the source whose version and prefix apply (a feature
    collector inside another process: HiCache inside SGLang). ``versions``: the versions read, oldest first (a
    profile stating an older one is refused; none = no version data for this source). ``prefixes``: the name
    prefix the exporter writes first, then the ones a different scrape path writes instead."""

    source: str
    exporter: str
    series: tuple[Series, ...]
    version_of: str = ""
    versions: tuple[str, ...] = ()  # the versions read, oldest first
    flags: tuple[Flag, ...] = ()
    prefixes: tuple[str, ...] = ()
    prefix_note: str = ""
    switch: str = ""  # what makes the exporter write anything at all (SGLang: --enable-metrics); "" = nothing
    # A source a profile declares in its [sources] section: its default scrape job and how panels name it
    # ("" = not one: the collector's and the rule evaluator's own series).
    job: str = ""
    what: str = ""
    # The status a profile that leaves the source out gets ("" = every profile must state it): an exporter added
    # after profiles were written, and off by default, reads as not exported there.
    unstated: str = ""
    # What the text shown instead of its panels adds where a deployment does not export it: how the exporter is
    # built in or switched on, beyond ``switch`` ("" = nothing to add).
    not_exported: str = ""

    @property
    def oldest(self) -> str:
        return self.versions[0] if self.versions else ""

    @property
    def latest(self) -> str:
        return self.versions[-1] if self.versions else ""

    def name(self, name: str) -> str:
        """``name``, which must be a series of this source (a histogram by its base name): how a query builder
        reads a metric name from the table, so a name no row registers fails at import, naming the source."""
        if not any(series.name == name for series in self.series):
            raise KeyError(f"{name}: not a series of {self.source} in dashgen/exporters/table.py; add its row there")
        return name

    def flag(self, name: str) -> Flag | None:
        return next((flag for flag in self.flags if flag.name == name), None)
