"""The S22 alerts: every expected GPU is accounted for, and GPU hardware faults page or warn.

- ``GpuMissing`` (critical, per node and per-GPU source ``job``): one of the exported per-GPU sources (GPM and
  DCGM, each on its own) is scraped (``up == 1``) but fewer GPUs report to it than ``cluster.gpus_per_node`` for
  5 minutes; 0 when the exporter answers without any GPU. A failed or vanished target is CollectionFailed /
  TargetMissing.
- ``GpuMissingFromExporter`` (warning, per GPU and the ``job`` that lost it): one exporter reports the GPU and
  the other, scraped, does not (only where both GPM and DCGM are exported): the hardware alerts of that exporter
  are blind to the GPU.
- ``GpuXidFatal`` (critical, per GPU): DCGM's last Xid code is one of ``queries.dcgm.FATAL_XIDS``; it keeps
  firing while the GPU has no Xid series at all (fallen off the bus), up to ``queries.dcgm.XID_HOLD``.
- ``GpuRowRemapFailure`` (critical, per GPU): row remapping failed, no spare row left.
- ``GpuUncorrectableRemappedRows`` (warning, per GPU): uncorrectable remapped rows grew within
  ``REMAP_WINDOW``.

The hardware alerts read DCGM whatever the utilisation source, and each is written only when the
profile exports DCGM and its exporter's field list collects the field (``queries.dcgm.collects``): an
alert on a field that has no series could never fire.
"""

from __future__ import annotations

from dashgen_queries import dcgm
from dashgen_queries.gpu import GpuSource, gpu_sources, gpus_missing_any, gpus_missing_from_exporter, seen_window

from dashgen.deployment.profile import Profile
from dashgen.rules.model import AlertRule

REMAP_WINDOW = "24h"  # GpuUncorrectableRemappedRows: new rows within this window warn


def _labels(profile: Profile) -> tuple[str, str]:
    return f"{{{{ $labels.{profile.label('node')} }}}}", f"{{{{ $labels.{profile.label('gpu')} }}}}"


def _reporting_rule(profile: Profile, sources: list[GpuSource]) -> str:
    """How each source decides that a GPU reports, as descriptions say it."""
    return "; ".join(
        f"{source.name} (job {profile.source(source.key).job}): a sample of "
        f"{source.presence_metric()} within the last {seen_window(profile, source)}"
        for source in sources
    )


def gpu_missing_alerts(profile: Profile) -> tuple[AlertRule, ...]:
    """GpuMissing per node and exported per-GPU source; GpuMissingFromExporter per GPU one exporter lost while
    another still sees it (only where the profile exports two per-GPU sources)."""
    sources = gpu_sources(profile)
    if not sources:
        return ()
    node, gpu = _labels(profile)
    job = f"{{{{ $labels.{profile.label('job')} }}}}"
    expected = profile.gpus_per_node
    alerts = [
        AlertRule(
            alert="GpuMissing",
            expr=gpus_missing_any(profile),
            for_="5m",
            severity="critical",
            summary=f"GPU missing on {node}: fewer than {expected} GPUs report to job {job}",
            description=(
                f"Node {node}: {{{{ $value }}}} of {expected} GPUs report to job {job} for 5m, while its "
                f"exporter is scraped (up == 1). Every exported per-GPU source is counted on its own "
                f"({_reporting_rule(profile, sources)}). A GPU fell off the bus (Xid 79), was reset or is no "
                "longer seen by the driver: the engine ranks on it are down; when only one job is short, that "
                "exporter lost the GPU (see GpuMissingFromExporter) and its panels and hardware alerts are "
                "blind to it. 0 means the exporter answers without any GPU (driver or NVML down). The "
                "Missing-data reasons table shows the node as 'GPU missing (k of N)', the GPU health table "
                "keeps the GPU's last Xid."
            ),
            anchor="gpumissing",
        )
    ]
    if len(sources) > 1:
        alerts.append(
            AlertRule(
                alert="GpuMissingFromExporter",
                expr=gpus_missing_from_exporter(profile),
                for_="5m",
                severity="warning",
                summary=f"GPU {gpu} on {node} is missing from job {job} but another exporter sees it",
                description=(
                    f"Node {node}, GPU {gpu}: job {job} has not reported this GPU for 5m while another per-GPU "
                    f"exporter of the node still does and job {job} is scraped (up == 1) "
                    f"({_reporting_rule(profile, sources)}). The GPU is alive; the exporter lost it "
                    "(dcgm-exporter's DCGM handle went stale, a sampler error, a relabelling). Every panel and "
                    f"alert that reads job {job} is blind to this GPU: for DCGM that is the Xid, row-remap and "
                    "other hardware-health alerts. Restart that exporter on the node."
                ),
                anchor="gpumissingfromexporter",
            )
        )
    return tuple(alerts)


def _gpu(
    profile: Profile, alert: str, expr: str, for_: str, severity: str, summary: str, description: str
) -> AlertRule:
    node, gpu = _labels(profile)
    uuid = f"{{{{ $labels.{profile.label('dcgm_uuid')} }}}}"
    return AlertRule(
        alert=alert,
        expr=expr,
        for_=for_,
        severity=severity,
        summary=f"{summary} on {node} GPU {gpu}",
        description=f"Node {node}, GPU {gpu} ({uuid}): {description}",
    )


def health_alerts(profile: Profile) -> tuple[AlertRule, ...]:
    """The DCGM hardware alerts the profile's exporter can fire; none without DCGM."""
    if not profile.exported("dcgm"):
        return ()
    codes = ", ".join(f"{code} {meaning}" for code, meaning in dcgm.FATAL_XIDS.items())
    alerts = []
    if dcgm.collects(profile, dcgm.XID):
        alerts.append(
            _gpu(
                profile,
                "GpuXidFatal",
                dcgm.fatal_xid(profile),
                "0m",
                "critical",
                "Fatal Xid {{ $value }}",
                f"the last Xid code DCGM reports ({dcgm.XID}) is {{{{ $value }}}}, a fatal class: "
                "the GPU needs a reset, a reboot or a replacement, not an application fix. "
                f"Fatal classes: {codes}. Drain the GPU's engine replica; "
                "the code stays until the exporter restarts after the GPU reset. A GPU that fell off the bus "
                "takes its series with it: the alert keeps firing with its last code for as long as the GPU has no Xid "
                f"series (up to {dcgm.XID_HOLD}; GpuMissing fires beside it).",
            )
        )
    if dcgm.collects(profile, dcgm.ROW_REMAP_FAILURE):
        alerts.append(
            _gpu(
                profile,
                "GpuRowRemapFailure",
                dcgm.remap_failed(profile),
                "0m",
                "critical",
                "GPU row remapping failed",
                f"{dcgm.ROW_REMAP_FAILURE} is set: the GPU could not remap a row with memory errors "
                "(no spare row left in the bank). Its memory is no longer protected: "
                "drain it and replace the GPU (RMA).",
            )
        )
    if dcgm.collects(profile, dcgm.UNCORRECTABLE_ROWS):
        alerts.append(
            _gpu(
                profile,
                "GpuUncorrectableRemappedRows",
                dcgm.new_uncorrectable_rows(profile, REMAP_WINDOW),
                "0m",
                "warning",
                "New uncorrectable remapped rows",
                f"{{{{ $value }}}} rows were remapped for uncorrectable memory errors within {REMAP_WINDOW} "
                f"({dcgm.UNCORRECTABLE_ROWS}): the remap takes effect at the next GPU reset. Schedule a reset when the "
                "replica is drained; repeated growth, or a row-remap failure, means replacing the GPU.",
            )
        )
    return tuple(alerts)
