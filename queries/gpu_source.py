"""The shape of a per-GPU source, as the GPU builders and panels ask it: the base class the source
modules (``queries.gpm``, ``queries.dcgm``) fill in, and the profile-bound values every source has.

A source answers what differs between sources (its metric for a quantity, the factor to the common
unit, whether it has a per-sample validity series and how it filters on it, its caveats and its
description sentences); nobody compares source keys. The defaults here are those of a source that
reports every quantity in the common unit and has no validity series. Which source a profile uses
is decided in one place, ``queries.gpu.gpu_source``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import ClassVar

from dashgen.deployment.profile import Profile


def seconds_text(seconds: float) -> str:
    """``30s``, ``1s``: an interval in seconds as descriptions write it."""
    return f"{seconds:g}s"


@dataclass(frozen=True)
class GpuSource:
    """A per-GPU source of one profile.

    ``interval`` is the scrape interval (kept for rule texts); ``resolution_seconds`` is the real
    spacing of distinct samples: the stored sample interval, or the exporter's own collect interval
    (``collect_seconds``) when that is coarser. ``uuid_label`` is the profile's label for the GPU UUID.
    """

    interval: str
    uuid_label: str
    sample_interval: str = ""
    resolution_seconds: float = 0.0

    key: ClassVar[str]  # the profile's source name (and so its scrape job)
    name: ClassVar[str]  # "GPM sampler", "DCGM exporter": what descriptions call it
    short: ClassVar[str]  # "GPM", "DCGM": captions and unit-conversion notes
    uuid_label_key: ClassVar[str]  # the profile label key of the GPU UUID
    metrics: ClassVar[Mapping[str, str]]  # quantity key (and "clock_event_reasons") -> metric
    memory_total_metrics: ClassVar[tuple[str, ...]]  # summed per series: the framebuffer total
    memory_share_formula: ClassVar[str]  # used / total as descriptions write it
    memory_total_caveat: ClassVar[str] = ""  # why the total is a sum, where it is one
    validity_metric: ClassVar[str | None] = None  # 1 where the sample is valid; None: no validity series
    collect_seconds: ClassVar[float] = 0.0  # the exporter's own collect interval (0: one value per scrape)
    reported_units: ClassVar[Mapping[str, tuple[str, float]]] = {}  # quantity key -> (unit, factor to common)
    caveats: ClassVar[Mapping[str, str]] = {}  # quantity key -> what panels must say about its metric
    rule_caveats: ClassVar[Mapping[str, str]] = {}  # quantity key -> what alerts must say about its metric

    @classmethod
    def from_profile(cls, profile: Profile) -> GpuSource:
        """The source as ``profile`` deploys it (whether it is exported is the caller's question)."""
        source = profile.source(cls.key)
        resolution = max(source.sample_interval_seconds, cls.collect_seconds)
        return cls(source.scrape_interval, profile.label(cls.uuid_label_key), source.sample_interval, resolution)

    def metric(self, key: str) -> str:
        """The metric measuring quantity ``key`` (a ``queries.gpu.QUANTITIES`` key or ``clock_event_reasons``)."""
        return self.metrics[key]

    def scale(self, key: str) -> float:
        """The factor from the source's unit of quantity ``key`` to the common unit (1 when they agree)."""
        return self.reported_units.get(key, ("", 1.0))[1]

    def reported_unit(self, key: str) -> str:
        """The unit the source reports quantity ``key`` in when it is not the common one, else ""."""
        return self.reported_units.get(key, ("", 1.0))[0]

    def caveat(self, key: str) -> str:
        """What a panel must say about the source's metric of ``key`` (e.g. absent by default), or ""."""
        return self.caveats.get(key, "")

    def rule_caveat(self, key: str) -> str:
        """What an alert must say about the source's metric of ``key``, or ""."""
        return self.rule_caveats.get(key, "")

    def caption(self) -> str:
        """Source and scrape interval, as the rule files name it."""
        return f"{self.short} {self.interval}"

    def title_caption(self) -> str:
        """Source and real resolution, for panel titles and table headers (``GPM 1s``, ``DCGM 30s``)."""
        return f"{self.short} {self.resolution}"

    @property
    def resolution(self) -> str:
        return seconds_text(self.resolution_seconds)

    def sampling(self) -> str:
        """One sentence on what a stored sample is, for descriptions (S18, S19)."""
        raise NotImplementedError(f"{type(self).__name__} does not say what its samples are")

    def window_validity(self) -> str:
        """How per-sample validity enters the window statistics, for their descriptions."""
        raise NotImplementedError(f"{type(self).__name__} does not say how validity enters a window")

    def valid_only(self, profile: Profile, expr: str, matchers: list[str]) -> str:
        """A per-(node, gpu) ``expr`` kept only where the GPU's sample is valid; without a validity
        series every sample counts and ``expr`` is returned as is."""
        return expr

    def valid_samples(self, profile: Profile, raw: str, matchers: list[str]) -> str:
        """Raw samples (exporter labels still on) kept only where they are valid; as is without a
        validity series."""
        return raw
