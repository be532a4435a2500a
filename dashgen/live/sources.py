"""Which profile source exports which metric, as validate-queries and the demo read it.

``METRIC_SOURCES`` is the exporter table (``dashgen.exporters.table``, the one table per source) by
source: per source of ``dashgen.deployment.profile.KNOWN_SOURCES``, the metrics it exports (counters and
gauges by exposed name; histograms by base name, each exposing ``_bucket``, ``_sum`` and ``_count``).
:func:`source_of` answers for an exposed series name (``up`` and names no source lists: None);
:func:`scrape_seconds_for` turns the sources an expression reads into the scrape (or stored sample)
interval Grafana's ``$__rate_interval`` and the sample checks assume. The demo's value models
(``dashgen.demo.catalogue``) take each metric's source from here.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from dashgen.deployment.profile import KNOWN_SOURCES, Profile
from dashgen.exporters.availability import latest_spelling
from dashgen.exporters.model import HISTOGRAM_SUFFIXES
from dashgen.exporters.table import TABLES
from dashgen.live.expand import DEFAULT_SCRAPE_SECONDS
from dashgen.live.selectors import metric_names

__all__ = ["HISTOGRAM_SUFFIXES", "METRIC_SOURCES", "Exports", "is_histogram", "scrape_seconds_for", "source_of"]


@dataclass(frozen=True)
class Exports:
    """The metrics of one source: plain metrics by name, histograms by base name."""

    metrics: tuple[str, ...] = ()
    histograms: tuple[str, ...] = ()

    def series(self) -> tuple[str, ...]:
        """Every exposed series name (histogram bases included, as their family name)."""
        suffixed = tuple(h + s for h in self.histograms for s in HISTOGRAM_SUFFIXES)
        return (*self.metrics, *self.histograms, *suffixed)


METRIC_SOURCES: Mapping[str, Exports] = {
    name: Exports(
        metrics=tuple(series.name for series in table.series if not series.histogram),
        histograms=tuple(series.name for series in table.series if series.histogram),
    )
    for name, table in TABLES.items()
    if name in KNOWN_SOURCES  # the profile's sources; the collector's and the rule evaluator's own series: None
}

_SOURCE_OF: dict[str, str] = {name: source for source, exports in METRIC_SOURCES.items() for name in exports.series()}
_HISTOGRAMS = frozenset(h for exports in METRIC_SOURCES.values() for h in exports.histograms)


def source_of(name: str) -> str | None:
    """The profile source that exports the series ``name``, in any supported version's or scrape path's spelling
    (``up`` and unknown names: None)."""
    return _SOURCE_OF.get(name) or _SOURCE_OF.get(latest_spelling(name))


def is_histogram(name: str) -> bool:
    """True when ``name`` is listed as a histogram's base name."""
    return name in _HISTOGRAMS


def scrape_seconds_for(
    expr: str, profile: Profile | None, default: float = DEFAULT_SCRAPE_SECONDS, *, stored: bool = False
) -> float:
    """The smallest scrape interval of the profile sources whose metrics the expression reads;
    with ``stored``, their sample interval (the spacing the central store keeps) instead."""
    if profile is None:
        return default
    intervals = []
    for name in metric_names(expr):
        source = source_of(name)
        if source and source in profile.sources:
            found = profile.source(source)
            intervals.append(found.sample_interval_seconds if stored else found.scrape_interval_seconds)
    return min(intervals) if intervals else default
