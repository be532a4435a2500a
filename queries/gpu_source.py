"""The shape of a per-GPU source, as the GPU builders and panels ask it: the base class the source
modules (``queries.gpm``, ``queries.dcgm``) fill in, and the profile-bound values every source has.

A source answers what differs between sources (its metric for a quantity, the factor to the common
unit, whether it has a per-sample validity series and how it filters on it, which of its metrics
the deployment collects and its description sentences); nobody compares source keys. The defaults
here are those of a source that reports every quantity in the common unit, has no validity series
and collects every metric. Which source a profile uses is decided in one place,
``queries.gpu.gpu_source``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
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
    ``collected`` is the set of metrics the deployment's exporter collects (DCGM's field list); None
    means every metric of the source (the GPM sampler always sends all of them).
    """

    interval: str
    uuid_label: str
    sample_interval: str = ""
    resolution_seconds: float = 0.0
    collected: frozenset[str] | None = None

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
    # Metrics that tell a GPU is there, in order of preference: the first one collected is the presence series.
    presence_keys: ClassVar[tuple[str, ...]] = ("power", "memory_used", "temperature", "sm_clock", "busy")

    @classmethod
    def from_profile(cls, profile: Profile) -> GpuSource:
        """The source as ``profile`` deploys it (whether it is exported is the caller's question)."""
        source = profile.source(cls.key)
        resolution = max(source.sample_interval_seconds, cls.collect_seconds)
        return cls(
            source.scrape_interval,
            profile.label(cls.uuid_label_key),
            source.sample_interval,
            resolution,
            cls.collected_metrics(profile),
        )

    @classmethod
    def collected_metrics(cls, profile: Profile) -> frozenset[str] | None:
        """The metrics the profile's exporter collects; None: all of them."""
        return None

    def collects(self, key: str) -> bool:
        """True when the deployment collects the metric of ``key``; False means it has no series at all."""
        return self.collected is None or self.metric(key) in self.collected

    def presence_metric(self) -> str:
        """The metric whose series say a GPU reports: the first collected of ``presence_keys``."""
        for key in self.presence_keys:
            if self.collects(key):
                return self.metric(key)
        raise ValueError(f"the {self.name} collects none of {', '.join(self.presence_keys)}")

    def missing(self, metrics: Iterable[str]) -> list[str]:
        """Those of ``metrics`` the deployment does not collect."""
        return [m for m in metrics if self.collected is not None and m not in self.collected]

    def not_collected(self, profile: Profile, metrics: Iterable[str]) -> str:
        """The sentence saying ``metrics`` are not collected, and how to collect them."""
        raise NotImplementedError(f"{type(self).__name__} collects every metric")

    def metric(self, key: str) -> str:
        """The metric measuring quantity ``key`` (a ``queries.gpu.QUANTITIES`` key or ``clock_event_reasons``)."""
        return self.metrics[key]

    def scale(self, key: str) -> float:
        """The factor from the source's unit of quantity ``key`` to the common unit (1 when they agree)."""
        return self.reported_units.get(key, ("", 1.0))[1]

    def reported_unit(self, key: str) -> str:
        """The unit the source reports quantity ``key`` in when it is not the common one, else ""."""
        return self.reported_units.get(key, ("", 1.0))[0]

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
