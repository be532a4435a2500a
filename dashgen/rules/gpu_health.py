"""The S22 alerts: every expected GPU is accounted for, and GPU hardware faults page or warn.

- ``GpuMissing`` (critical, per node): the node's GPU source (GPM, else DCGM: ``queries.gpu.gpu_source``)
  is scraped (``up == 1``) but fewer GPUs report than ``cluster.gpus_per_node`` for 5 minutes; 0 when
  the exporter answers without any GPU. A failed or vanished target is CollectionFailed / TargetMissing.
- ``GpuXidFatal`` (critical, per GPU): DCGM's last Xid code is one of ``queries.dcgm.FATAL_XIDS``.
- ``GpuRowRemapFailure`` (critical, per GPU): row remapping failed, no spare row left.
- ``GpuUncorrectableRemappedRows`` (warning, per GPU): uncorrectable remapped rows grew within
  ``REMAP_WINDOW``.

The hardware alerts read DCGM whatever the utilisation source, and each is written only when the
profile exports DCGM and its exporter's field list collects the field (``queries.dcgm.collects``): an
alert on a field that has no series could never fire.
"""

from __future__ import annotations

from dashgen_queries import dcgm
from dashgen_queries.gpu import GpuSource, gpus_missing, seen_window

from dashgen.deployment.profile import Profile
from dashgen.rules.model import AlertRule

REMAP_WINDOW = "24h"  # GpuUncorrectableRemappedRows: new rows within this window warn


def _labels(profile: Profile) -> tuple[str, str]:
    return f"{{{{ $labels.{profile.label('node')} }}}}", f"{{{{ $labels.{profile.label('gpu')} }}}}"


def gpu_missing_alert(profile: Profile, source: GpuSource) -> AlertRule:
    node, _ = _labels(profile)
    expected = profile.gpus_per_node
    return AlertRule(
        alert="GpuMissing",
        expr=gpus_missing(profile, source),
        for_="5m",
        severity="critical",
        summary=f"GPU missing on {node}: fewer than {expected} GPUs report",
        description=(f"Node {node}: {{{{ $value }}}} of {expected} GPUs report to the {source.name} (job "
                     f"{profile.source(source.key).job}; a GPU reports when its {source.presence_metric()} has a "
                     f"sample within the last {seen_window(profile, source)}) for 5m, while the exporter is scraped "
                     "(up == 1). A GPU fell off the bus (Xid 79), was reset or is no longer seen by the driver: the "
                     "engine ranks on it are down. 0 means the exporter answers without any GPU (driver or NVML "
                     "down). The Missing-data reasons table shows the node as 'GPU missing (k of N)', the GPU "
                     "health table keeps the GPU's last Xid."),
        anchor="gpumissing",
    )


def _gpu(profile: Profile, alert: str, expr: str, for_: str, severity: str, summary: str,
         description: str) -> AlertRule:
    node, gpu = _labels(profile)
    uuid = f"{{{{ $labels.{profile.label('dcgm_uuid')} }}}}"
    return AlertRule(alert=alert, expr=expr, for_=for_, severity=severity, summary=f"{summary} on {node} GPU {gpu}",
                     description=f"Node {node}, GPU {gpu} ({uuid}): {description}")


def health_alerts(profile: Profile) -> tuple[AlertRule, ...]:
    """The DCGM hardware alerts the profile's exporter can fire; none without DCGM."""
    if not profile.exported("dcgm"):
        return ()
    codes = ", ".join(f"{code} {meaning}" for code, meaning in dcgm.FATAL_XIDS.items())
    alerts = []
    if dcgm.collects(profile, dcgm.XID):
        alerts.append(_gpu(
            profile, "GpuXidFatal", dcgm.fatal_xid(profile), "0m", "critical", "Fatal Xid {{ $value }}",
            f"the last Xid code DCGM reports ({dcgm.XID}) is {{{{ $value }}}}, a fatal class: the GPU needs a reset, "
            f"a reboot or a replacement, not an application fix. Fatal classes: {codes}. Drain the GPU's engine "
            "replica; the code stays until the exporter restarts after the GPU reset.",
        ))
    if dcgm.collects(profile, dcgm.ROW_REMAP_FAILURE):
        alerts.append(_gpu(
            profile, "GpuRowRemapFailure", dcgm.remap_failed(profile), "0m", "critical", "GPU row remapping failed",
            f"{dcgm.ROW_REMAP_FAILURE} is set: the GPU could not remap a row with memory errors (no spare row left in "
            "the bank). Its memory is no longer protected: drain it and replace the GPU (RMA).",
        ))
    if dcgm.collects(profile, dcgm.UNCORRECTABLE_ROWS):
        alerts.append(_gpu(
            profile, "GpuUncorrectableRemappedRows", dcgm.new_uncorrectable_rows(profile, REMAP_WINDOW), "0m",
            "warning", "New uncorrectable remapped rows",
            f"{{{{ $value }}}} rows were remapped for uncorrectable memory errors within {REMAP_WINDOW} "
            f"({dcgm.UNCORRECTABLE_ROWS}): the remap takes effect at the next GPU reset. Schedule a reset when the "
            "replica is drained; repeated growth, or a row-remap failure, means replacing the GPU.",
        ))
    return tuple(alerts)
