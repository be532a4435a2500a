"""NVIDIA's dcgm-exporter: its metric per quantity, the units it reports (MiB, MHz) and their factors
to the common unit, the fields its default counters CSV collects (and so what a profile's exporter
collects: ``collects``), the framebuffer total as ``FB_USED + FB_FREE + FB_RESERVED``, its 30 s
collect interval, and the per-GPU hardware-health builders (Xid, remapped rows, PCIe replays,
NVLink errors; S22).

dcgm-exporter collects every 30 s by default (``-c 30000`` ms, metric catalogue §4) whatever the
scrape interval: a faster scrape only stores repeated values, so the source's real resolution is
the coarser of the collect and the stored sample interval. It has no per-sample validity series: a
field it could not read is simply absent.

What it collects is a CSV of fields (``-f`` / ``--collectors``, env ``DCGM_EXPORTER_COLLECTORS``,
default ``/etc/dcgm-exporter/default-counters.csv``). A profile states it in ``[sources.dcgm]
fields``; without it the exporter is assumed to run the shipped default list (``DEFAULT_FIELDS``). A
field outside the list has no series at all, so a panel on it is a "not collected" text and an
alert on it is not written (S22): never an empty chart, never an alert that cannot fire.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import ClassVar

from dashgen_queries.gpu_source import GpuSource, seconds_text
from dashgen_queries.promql import agg, gpu_var, increase, job, node_var, over_time, selector

from dashgen.deployment.profile import Profile
from dashgen.exporters.table import DCGM

COLLECT_SECONDS = 30.0  # dcgm-exporter -c 30000 (ms), metric catalogue §4
METRICS: dict[str, str] = {
    "power": DCGM.name("DCGM_FI_DEV_POWER_USAGE"),
    "memory_used": DCGM.name("DCGM_FI_DEV_FB_USED"),
    "sm_active": DCGM.name("DCGM_FI_PROF_SM_ACTIVE"),
    "sm_occupancy": DCGM.name("DCGM_FI_PROF_SM_OCCUPANCY"),
    "tensor_active": DCGM.name("DCGM_FI_PROF_PIPE_TENSOR_ACTIVE"),
    "dram_active": DCGM.name("DCGM_FI_PROF_DRAM_ACTIVE"),
    "busy": DCGM.name("DCGM_FI_PROF_GR_ENGINE_ACTIVE"),
    "temperature": DCGM.name("DCGM_FI_DEV_GPU_TEMP"),
    "sm_clock": DCGM.name("DCGM_FI_DEV_SM_CLOCK"),
    "clock_event_reasons": DCGM.name("DCGM_FI_DEV_CLOCKS_EVENT_REASONS"),
}
CLOCK_EVENT_REASONS_FIELD = 112  # the DCGM field id of DCGM_FI_DEV_CLOCKS_EVENT_REASONS
# quantity key -> (unit DCGM reports, factor to the common unit): MiB -> bytes, MHz -> Hz
REPORTED_UNITS: dict[str, tuple[str, float]] = {"memory_used": ("MiB", 1048576), "sm_clock": ("MHz", 1e6)}
# The default CSV has no DCGM_FI_DEV_FB_TOTAL: the total is used + free + reserved (all MiB, the unit cancels).
MEMORY_TOTAL = (
    DCGM.name("DCGM_FI_DEV_FB_USED"),
    DCGM.name("DCGM_FI_DEV_FB_FREE"),
    DCGM.name("DCGM_FI_DEV_FB_RESERVED"),
)

# etc/default-counters.csv of NVIDIA/dcgm-exporter @ d5e5f51 (metric catalogue §4, "In default-counters.csv? yes").
DEFAULT_FIELDS: tuple[str, ...] = (
    DCGM.name("DCGM_FI_DEV_SM_CLOCK"),
    DCGM.name("DCGM_FI_DEV_MEM_CLOCK"),
    DCGM.name("DCGM_FI_DEV_MEMORY_TEMP"),
    DCGM.name("DCGM_FI_DEV_GPU_TEMP"),
    DCGM.name("DCGM_FI_DEV_POWER_USAGE"),
    DCGM.name("DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION"),
    DCGM.name("DCGM_FI_DEV_PCIE_REPLAY_COUNTER"),
    DCGM.name("DCGM_FI_DEV_GPU_UTIL"),
    DCGM.name("DCGM_FI_DEV_MEM_COPY_UTIL"),
    "DCGM_FI_DEV_ENC_UTIL",
    "DCGM_FI_DEV_DEC_UTIL",
    DCGM.name("DCGM_FI_DEV_XID_ERRORS"),
    DCGM.name("DCGM_FI_DEV_FB_FREE"),
    DCGM.name("DCGM_FI_DEV_FB_USED"),
    DCGM.name("DCGM_FI_DEV_FB_RESERVED"),
    DCGM.name("DCGM_FI_DEV_NVLINK_BANDWIDTH_TOTAL"),
    "DCGM_FI_DEV_VGPU_LICENSE_STATUS",
    DCGM.name("DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS"),
    DCGM.name("DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS"),
    DCGM.name("DCGM_FI_DEV_ROW_REMAP_FAILURE"),
    DCGM.name("DCGM_FI_PROF_GR_ENGINE_ACTIVE"),
    DCGM.name("DCGM_FI_PROF_PIPE_TENSOR_ACTIVE"),
    DCGM.name("DCGM_FI_PROF_DRAM_ACTIVE"),
    DCGM.name("DCGM_FI_PROF_PCIE_TX_BYTES"),
    DCGM.name("DCGM_FI_PROF_PCIE_RX_BYTES"),
    "DCGM_FI_DRIVER_VERSION",
)

# The hardware-health fields (S22) and the three of them the default CSV leaves commented out with the NVLink ones.
XID = DCGM.name("DCGM_FI_DEV_XID_ERRORS")
CORRECTABLE_ROWS = DCGM.name("DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS")
UNCORRECTABLE_ROWS = DCGM.name("DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS")
ROW_REMAP_FAILURE = DCGM.name("DCGM_FI_DEV_ROW_REMAP_FAILURE")
PCIE_REPLAYS = DCGM.name("DCGM_FI_DEV_PCIE_REPLAY_COUNTER")
NVLINK_ERRORS: tuple[tuple[str, str], ...] = (
    (DCGM.name("DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL"), "NVLink flow-control CRC errors"),
    (DCGM.name("DCGM_FI_DEV_NVLINK_CRC_DATA_ERROR_COUNT_TOTAL"), "NVLink data CRC errors"),
    (DCGM.name("DCGM_FI_DEV_NVLINK_REPLAY_ERROR_COUNT_TOTAL"), "NVLink retries"),
    (DCGM.name("DCGM_FI_DEV_NVLINK_RECOVERY_ERROR_COUNT_TOTAL"), "NVLink recovery errors"),
)
# The CSV line a field needs (field, Prometheus type, help), as dcgm-exporter's shipped CSVs write it.
CSV_LINES: dict[str, tuple[str, str]] = {
    DCGM.name("DCGM_FI_PROF_SM_ACTIVE"): ("gauge", "The ratio of cycles an SM has at least 1 warp assigned."),
    DCGM.name("DCGM_FI_PROF_SM_OCCUPANCY"): ("gauge", "The ratio of number of warps resident on an SM."),
    DCGM.name("DCGM_FI_DEV_CLOCKS_EVENT_REASONS"): ("gauge", "Current clock event reasons (bitmask)."),
    **{field: ("counter", f"Total number of {what}.") for field, what in NVLINK_ERRORS},
}
# Fields the default CSV lists but comments out (so uncommenting the line collects them).
COMMENTED_OUT = frozenset(
    {DCGM.name("DCGM_FI_PROF_SM_ACTIVE"), DCGM.name("DCGM_FI_PROF_SM_OCCUPANCY"), *(f for f, _ in NVLINK_ERRORS)}
)
COLLECTORS = (
    "the counters CSV dcgm-exporter reads (-f / --collectors, env DCGM_EXPORTER_COLLECTORS; default "
    "/etc/dcgm-exporter/default-counters.csv)"
)


def fields(profile: Profile) -> tuple[str, ...]:
    """The DCGM fields the profile's exporter collects: its ``[sources.dcgm] fields``, else the default CSV."""
    listed = profile.source("dcgm").fields
    return DEFAULT_FIELDS if listed is None else listed


def collects(profile: Profile, field: str) -> bool:
    """True when the profile's dcgm-exporter field list collects ``field`` (whether DCGM is exported at
    all is the source status, asked separately)."""
    return field in fields(profile)


def field_list(profile: Profile) -> str:
    """Which list the profile's exporter runs, as descriptions name it."""
    if profile.source("dcgm").fields is None:
        return "dcgm-exporter's default-counters.csv"
    return f"the field list of [sources.dcgm] fields in profiles/{profile.name}.toml"


def how_to_collect(profile: Profile, missing: Iterable[str]) -> str:
    """What to do so the exporter collects ``missing``: the CSV lines and the profile field to set."""
    missing = list(missing)
    lines = []
    for field in missing:
        kind, text = CSV_LINES.get(field, ("gauge", ""))
        verb = "uncomment" if field in COMMENTED_OUT and profile.source("dcgm").fields is None else "add"
        inner = ", ".join(part for part in (field, kind, text) if part)
        lines.append(f"{verb} `{inner}`")
    return (
        f"To collect {'them' if len(missing) > 1 else 'it'}: {'; '.join(lines)} in {COLLECTORS}, restart the "
        f"exporter, and list {'them' if len(missing) > 1 else 'it'} in `[sources.dcgm] fields` of "
        f"profiles/{profile.name}.toml (with every other field the CSV collects)"
    )


def not_collected(profile: Profile, missing: Iterable[str]) -> str:
    """The sentence every "not collected" panel and description carries: which fields, which list, how to add."""
    missing = list(missing)
    named = ", ".join(f"`{field}`" for field in missing)
    default = profile.source("dcgm").fields is None
    why = ""
    if default:
        out = [f for f in missing if f in COMMENTED_OUT]
        why = ", where it is commented out" if out == missing else ", which does not list it" if not out else ""
        why = why.replace("it is", "they are").replace("list it", "list them") if len(missing) > 1 else why
    return (
        f"{named} {'are' if len(missing) > 1 else 'is'} not collected by this exporter's field list "
        f"({field_list(profile)}{why}), so {'they have' if len(missing) > 1 else 'it has'} no series at all: "
        f"absent, not zero. {how_to_collect(profile, missing)}"
    )


class DcgmSource(GpuSource):
    """dcgm-exporter: MiB and MHz converted to bytes and Hz, no validity series, 30 s collect interval."""

    key: ClassVar[str] = "dcgm"
    name: ClassVar[str] = "DCGM exporter"
    short: ClassVar[str] = "DCGM"
    uuid_label_key: ClassVar[str] = "dcgm_uuid"
    metrics: ClassVar[dict[str, str]] = METRICS
    memory_total_metrics: ClassVar[tuple[str, ...]] = MEMORY_TOTAL
    memory_share_formula: ClassVar[str] = f"{METRICS['memory_used']} / (FB_USED + FB_FREE + FB_RESERVED)"
    memory_total_caveat: ClassVar[str] = "FB_TOTAL is not in the default CSV"
    collect_seconds: ClassVar[float] = COLLECT_SECONDS
    reported_units: ClassVar[dict[str, tuple[str, float]]] = REPORTED_UNITS

    @classmethod
    def collected_metrics(cls, profile: Profile) -> frozenset[str] | None:
        return frozenset(fields(profile))

    def not_collected(self, profile: Profile, metrics: Iterable[str]) -> str:
        return not_collected(profile, metrics)

    def sampling(self) -> str:
        stored = "" if self.sample_interval == self.interval else f", stored every {self.sample_interval}"
        return (
            f"dcgm-exporter collects every {seconds_text(COLLECT_SECONDS)} by default "
            f"(-c {COLLECT_SECONDS * 1000:.0f}), whatever the scrape interval; scraped every {self.interval}"
            f"{stored}, so the resolution is {self.resolution} and faster scrapes only store repeated values. "
            "There is no GPM sampler here, so DCGM is the only per-GPU source"
        )

    def window_validity(self) -> str:
        return "DCGM has no per-sample validity: a blank field is simply absent"


# --- per-GPU hardware health (S22): one row / series per GPU, from DCGM whatever the utilisation source ----


def health_keys(profile: Profile, *, uuid: bool = True) -> list[str]:
    """The labels a health row is keyed by: node, GPU index and (on tables) the GPU's UUID."""
    keys = [profile.label("node"), profile.label("gpu")]
    return keys + [profile.label("dcgm_uuid")] if uuid else keys


def health_selector(profile: Profile, field: str, *, scoped: bool = True) -> str:
    """``field`` of the DCGM job, on the dashboards narrowed to ``$node`` / ``$gpu``."""
    matchers = [job(profile, "dcgm")] + ([node_var(profile), gpu_var(profile)] if scoped else [])
    return selector(field, *matchers)


def last_in_window(profile: Profile, field: str) -> str:
    """The field's last value in the window per GPU (a series split by pod labels: the highest)."""
    return agg("max", health_keys(profile), over_time("last", health_selector(profile, field)))


def xid_changes(profile: Profile) -> str:
    """How often the last-Xid code changed in the window per GPU: at least one Xid event per change (a repeat
    of the same code, or several events within one collect interval, is one change or none)."""
    return agg("max", health_keys(profile), f"changes({health_selector(profile, XID)}[$__range])")


def window_increase(profile: Profile, field: str) -> str:
    """A health counter's increase in the window per GPU, summed over the GPU's series (a pod split adds up)."""
    return agg("sum", health_keys(profile), increase(health_selector(profile, field)))


def per_second(profile: Profile, field: str, window: str) -> str:
    """A health counter's per-second rate per (node, GPU) over ``window``."""
    return agg("sum", health_keys(profile, uuid=False), f"rate({health_selector(profile, field)}[{window}])")


# Xid codes that mean the GPU (not the application) is broken and needs a reset, a reboot or a replacement:
# NVIDIA's Xid catalog (docs.nvidia.com/deploy/xid-errors), resolution buckets RESET_GPU / RESTART_BM, plus 94.
FATAL_XIDS: dict[int, str] = {
    48: "double-bit ECC error (DBE)",
    74: "NVLink error",
    79: "GPU has fallen off the bus",
    94: "contained ECC error (uncorrectable, the touching application was killed)",
    95: "uncontained ECC error (uncorrectable, every application on the GPU is affected)",
    119: "GSP RPC timeout",
    120: "GSP error",
}


# GpuXidFatal: how long a fatal Xid of a GPU whose series vanished (fallen off the bus) is still reported.
XID_HOLD = "24h"


def _fatal(expr: str) -> str:
    return " or ".join(f"({expr} == {code})" for code in FATAL_XIDS)


def fatal_xid(profile: Profile, hold: str = XID_HOLD) -> str:
    """The last Xid code per GPU, kept only where it is one of ``FATAL_XIDS`` (every GPU of the deployment).

    A GPU that fell off the bus (Xid 79) takes its series with it: the instant value vanishes after the store's
    look-back. Such a GPU keeps its last code from the last ``hold`` (``last_over_time``) for as long as it has no
    Xid series; once its series is back (the GPU reset, the exporter restarted), the current code decides.
    Written as an expression, not ``keep_firing_for``: vmalert 1.79 (the Debian package) does not know that key.
    """
    keys = health_keys(profile)
    xid = health_selector(profile, XID, scoped=False)
    now = agg("max", keys, xid)
    held = agg("max", keys, f"last_over_time({xid}[{hold}])")
    gpu = ", ".join(health_keys(profile, uuid=False))
    return f"{_fatal(now)} or (({_fatal(held)}) unless on({gpu}) {now})"


def remap_failed(profile: Profile) -> str:
    """GPUs whose row remapping has failed (``DCGM_FI_DEV_ROW_REMAP_FAILURE`` > 0)."""
    return f"{agg('max', health_keys(profile), health_selector(profile, ROW_REMAP_FAILURE, scoped=False))} > 0"


def new_uncorrectable_rows(profile: Profile, window: str) -> str:
    """Uncorrectable remapped rows added within ``window`` per GPU (the count lives in the GPU's InfoROM and
    only grows; the value is the number of new rows)."""
    rows = health_selector(profile, UNCORRECTABLE_ROWS, scoped=False)
    keys = health_keys(profile)
    return f"({agg('max', keys, rows)} - {agg('max', keys, over_time('min', rows, window))}) > 0"
