"""The catalogue rows of the hardware: GPUs, hosts, disks by role (mount point)."""

from __future__ import annotations

from typing import Any

from dashgen_queries import dcgm, health
from dashgen_queries.gpu import gpu_source

from dashgen.catalogue import conditions as c
from dashgen.catalogue.build import (
    clock_reasons_collected,
    dcgm_field,
    exports,
    fault,
    hw_slowdown,
    power,
    reads,
    row,
    thermal,
)
from dashgen.catalogue.model import FailureMode, Paint
from dashgen.deployment.profile import Profile

# -- a row builder per component: what the component's rows share ---------------------------------------------------

_FILESYSTEM = reads("node_exporter", "node_filesystem_avail_bytes", "node_filesystem_size_bytes")
# a filesystem is full when its bytes or its inodes run out (``conditions.filesystem_full``)
_FULL = _FILESYSTEM + reads("node_exporter", "node_filesystem_files_free", "node_filesystem_files")


def _gpu_row(*fields: Any, **named: Any) -> FailureMode:
    """A GPU's row: it names the node and the GPU unless it says otherwise."""
    return row("gpu", *fields, **{"entity": ("node", "gpu"), **named})


def _host_row(*fields: Any, **named: Any) -> FailureMode:
    """A host's row: node_exporter's series of the node, painting no column unless it says otherwise."""
    return row("host", *fields, **{"layer": "", "entity": ("node",), "applies": exports("node_exporter"), **named})


def _disk_row(*fields: Any, **named: Any) -> FailureMode:
    """A disk's row, by role (mount point): a filesystem's available and total bytes on the node unless it says
    otherwise."""
    return row("disk", *fields, **{"layer": "", "entity": ("node", "mountpoint"), "reads": _FILESYSTEM, **named})


# -- the rows --------------------------------------------------------------------------------------------------------

GPU_ROWS = (
    _gpu_row(
        "gpu-missing",
        "GpuMissing",
        "fewer GPUs report to a scraped per-GPU exporter than cluster.gpus_per_node",
        "a GPU off the bus takes its series with it: only the count against the profile sees it",
        "5m",
        "an exporter restart or a slow NVML call skips a GPU for a scrape or two",
        "critical",
        "GPU fell off the bus or was reset",
        "GPU health: Xid and row remapping per GPU",
        "Drain the node's engine replica; `nvidia-smi -q` on the node; a GPU gone from the bus (Xid 79) "
        "needs a node reboot or an RMA.",
        fault("gpu-missing", "every series of one GPU ends (DCGM and GPM), after an Xid 79 on it"),
        layer="",
        reads=reads("dcgm", "DCGM_FI_DEV_GPU_TEMP") + reads("gpm", "gpm_sample_valid") + reads("vmagent", "up"),
        entity=("node", "job"),
        applies=lambda p: bool(p.exported("dcgm") or p.exported("gpm")),
        also=("gpu-xid-fatal",),  # a GPU off the bus reports Xid 79 first
    ),
    _gpu_row(
        "gpu-missing-from-exporter",
        "GpuMissingFromExporter",
        "one per-GPU exporter reports the GPU and the other, scraped, does not",
        "the other exporter proves the GPU is on the bus: the exporter, not the GPU, lost it",
        "5m",
        "as GpuMissing: a skipped scrape is not a lost GPU",
        "warning",
        "one exporter lost the GPU (exporter fault)",
        "GPU health: Xid and row remapping per GPU",
        "Restart the exporter that lost the GPU (dcgm-exporter or the GPM sampler); its hardware alerts "
        "are blind to the GPU until then.",
        fault("dcgm-lost-gpu", "DCGM's series of one GPU end while GPM still reports it"),
        layer="",
        reads=reads("dcgm", "DCGM_FI_DEV_GPU_TEMP") + reads("gpm", "gpm_sample_valid"),
        entity=("node", "gpu", "job"),
        applies=exports("dcgm", "gpm"),
        also=("gpu-missing",),
    ),
    _gpu_row(
        "gpu-xid-fatal",
        "GpuXidFatal",
        "DCGM's last Xid code is a fatal class (48, 74, 79, 94, 95, 119, 120); kept while the GPU has no series",
        "a fatal Xid needs a GPU reset, not an application fix; the last code is what DCGM reports",
        "0m",
        "a fatal Xid is already a confirmed hardware event",
        "critical",
        "fatal GPU error (Xid)",
        "GPU health: Xid and row remapping per GPU",
        "Drain the GPU's replica; reset the GPU (`nvidia-smi -r`) or reboot; repeated Xid 48/94/95 means RMA.",
        fault("xid-no-loss", "DCGM_FI_DEV_XID_ERRORS of one GPU reads 48 from the fault on"),
        layer="gpu",
        reads=reads("dcgm", "DCGM_FI_DEV_XID_ERRORS"),
        applies=dcgm_field(dcgm.XID),
        paints=(Paint(health.GPU_XID_FATAL, dcgm.fatal_xid),),
    ),
    _gpu_row(
        "gpu-row-remap-failure",
        "GpuRowRemapFailure",
        "DCGM_FI_DEV_ROW_REMAP_FAILURE > 0",
        "no spare row left: HBM errors are no longer contained",
        "0m",
        "a latched flag, it does not flap",
        "critical",
        "HBM row remapping failed (no spare rows)",
        "GPU health: Xid and row remapping per GPU",
        "Drain the GPU and open an RMA; its memory is no longer protected.",
        fault("fault:gpu-row-remap-failure", "DCGM_FI_DEV_ROW_REMAP_FAILURE of one GPU turns 1"),
        layer="gpu",
        reads=reads("dcgm", "DCGM_FI_DEV_ROW_REMAP_FAILURE"),
        applies=dcgm_field(dcgm.ROW_REMAP_FAILURE),
        paints=(Paint(health.GPU_REMAP_FAILED, dcgm.remap_failed),),
    ),
    _gpu_row(
        "gpu-hbm-uncorrectable",
        "GpuUncorrectableRemappedRows",
        "uncorrectable remapped rows grew within 24h",
        "each new row is an uncorrectable HBM (ECC) error; the remap takes effect at the next reset",
        "0m",
        "the count only grows: growth is the event",
        "warning",
        "uncorrectable HBM ECC errors (rows remapped)",
        "GPU health: Xid and row remapping per GPU",
        "Schedule a GPU reset when the replica is drained; growth again, or a remap failure, means RMA.",
        fault("fault:gpu-hbm-uncorrectable", "DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS of one GPU steps 0 -> 2"),
        layer="",
        reads=reads("dcgm", "DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS"),
        applies=dcgm_field(dcgm.UNCORRECTABLE_ROWS),
    ),
    _gpu_row(
        "gpu-nvlink-errors",
        "GpuNvlinkErrors",
        f"NVLink CRC (flit, data), replay and recovery errors together above {c.NVLINK_ERRORS_PER_SECOND:g}/s "
        f"over {c.WINDOW}",
        "a healthy link counts ~0; a degrading link replays every flit, which slows every collective of "
        "the replica's TP group",
        "10m",
        "a burst at link training or a GPU reset is not a failing link",
        "warning",
        "NVLink degrading (CRC / replay errors)",
        "GPU health: NVLink errors per GPU",
        "Compare the replica's TPOT with its peers; `nvidia-smi nvlink -e` on the node; drain and reseat / "
        "replace the GPU or baseboard when the errors keep climbing.",
        fault("fault:gpu-nvlink-errors", "the NVLink CRC and replay counters of one GPU climb by thousands/s"),
        layer="gpu",
        reads=reads("dcgm", *c.NVLINK_COUNTERS),
        applies=dcgm_field(*c.NVLINK_COUNTERS),
        expr=c.gpu_nvlink_errors,
        summary="NVLink errors on {{ $labels.node }} GPU {{ $labels.gpu }}",
        paints=(Paint(health.GPU_NVLINK),),
    ),
    _gpu_row(
        "gpu-pcie-replays",
        "GpuPcieReplays",
        f"PCIe replays above {c.PCIE_REPLAYS_PER_SECOND:g}/s over {c.WINDOW}",
        "replays retry TLPs on a bad PCIe link: host <-> GPU copies (weights, HiCache load-back) slow",
        "10m",
        "a handful at boot or reset is normal",
        "warning",
        "PCIe link errors (replays)",
        "GPU health: PCIe replays per GPU",
        "Check `nvidia-smi -q -d PCIE` (link width / speed) and the riser; drain and reseat if it persists.",
        fault("fault:gpu-pcie-replays", "DCGM_FI_DEV_PCIE_REPLAY_COUNTER of one GPU climbs by tens per second"),
        layer="",
        reads=reads("dcgm", "DCGM_FI_DEV_PCIE_REPLAY_COUNTER"),
        applies=dcgm_field(dcgm.PCIE_REPLAYS),
        expr=c.gpu_pcie_replays,
        summary="PCIe replays on {{ $labels.node }} GPU {{ $labels.gpu }}",
    ),
    _gpu_row(
        "gpu-clocks-throttled",
        "GpuClockThrottled",
        "a power (SW power cap 0x4, HW power brake 0x80) or thermal (SW 0x20, HW 0x40) bit of the clock-event "
        "reasons is set",
        "those bits lower SM clocks: the replica's TPOT grows with no software cause; 0x2 / 0x10 / 0x100 "
        "are configuration",
        "5m",
        "a short power-cap event under a load step is normal",
        "warning",
        "GPU clocks throttled (power cap or brake / thermal)",
        "GPU health: clock-event reasons per GPU",
        "Thermal: check the node's fans and inlet temperature; power brake (0x80): the PSU or the rack's "
        "power; drain the node if the replica's TPOT is out of line with its peers.",
        fault("thermal-throttling", "one GPU's temperature at 92 °C and its clock-event bitmask with 0x20|0x40"),
        layer="gpu",
        reads=reads("dcgm", "DCGM_FI_DEV_CLOCKS_EVENT_REASONS") + reads("gpm", "gpm_clock_event_reasons"),
        applies=clock_reasons_collected,
        paints=(Paint(health.GPU_THERMAL, thermal), Paint(health.GPU_POWER, power)),
    ),
    _gpu_row(
        "gpu-hw-slowdown",
        "GpuHwSlowdown",
        "the HW slowdown bit (0x8) of the clock-event reasons is set and no power or thermal bit",
        "the board halves its clocks on its own protection (fast power-draw, the baseboard's slowdown "
        "line): with no power cap or heat beside it the cause is the PSU, a power sensor or the board",
        "5m",
        "a load step can trip it for seconds",
        "warning",
        "GPU HW slowdown (PSU, power sensor or board)",
        "GPU health: clock-event reasons per GPU",
        "`nvidia-smi -q -d PERFORMANCE` on the node (HW Slowdown Active); the PSUs and the BMC's power log; "
        "drain the node if it persists: its replica's TPOT trails its peers.",
        fault("fault:gpu-hw-slowdown", "one GPU's clock-event bitmask reads 0x8 alone"),
        layer="gpu",
        reads=reads("dcgm", "DCGM_FI_DEV_CLOCKS_EVENT_REASONS") + reads("gpm", "gpm_clock_event_reasons"),
        applies=clock_reasons_collected,
        paints=(Paint(health.GPU_HW_SLOWDOWN, hw_slowdown),),
    ),
    _gpu_row(
        "gpu-temperature-high",
        "GpuTemperatureHigh",
        "GPU temperature above 85 °C",
        "thermal slowdown starts near there on H-class GPUs",
        "2m",
        "a load step heats a GPU for a minute",
        "warning",
        "GPU overheating (cooling)",
        "GPU health: temperature per GPU",
        "Check the node's fans, inlet temperature and neighbours; a single hot GPU is its heatsink.",
        fault("thermal-throttling", "one GPU's temperature climbs to 92 °C"),
        layer="",
        reads=reads("dcgm", "DCGM_FI_DEV_GPU_TEMP") + reads("gpm", "gpm_temperature_celsius"),
        applies=lambda p: gpu_source(p) is not None,
    ),
    _gpu_row(
        "gpu-memory-near-full",
        "GpuMemoryNearlyFull",
        "memory used above 95 % and more than 2 points above its lowest share of the last 6h",
        "the engine's static KV reservation is a flat 95 %: only growth above it is a leak or a foreign process",
        "1m",
        "growth from the static level is already a trend over 6h",
        "warning",
        "GPU memory growing past the engine's reservation (leak, foreign process)",
        "GPU health: memory used per GPU",
        "`nvidia-smi` on the node for foreign processes; an engine leak ends in an OOM and a restart: "
        "restart the replica in a quiet moment.",
        fault("fault:gpu-memory-near-full", "one GPU's memory used share climbs from 93 % to 99 %"),
        layer="",
        reads=reads("dcgm", "DCGM_FI_DEV_FB_USED", "DCGM_FI_DEV_FB_FREE") + reads("gpm", "gpm_memory_used_bytes"),
        applies=lambda p: gpu_source(p) is not None,
    ),
)

HOST_ROWS = (
    _host_row(
        "host-memory-pressure",
        "HostMemoryPressure",
        f"MemAvailable below {c.MEMORY_AVAILABLE_SHARE:.0%} of MemTotal",
        "HiCache's host pool and the tokenizer live in host RAM; below this the kernel reclaims and the "
        "OOM killer is next (swap is off)",
        "5m",
        "a model load fills the page cache for a minute",
        "warning",
        "host RAM nearly exhausted",
        "Node: memory",
        "`free -g`, `ps aux --sort=-rss | head` on the node; a HiCache host pool sized past the RAM "
        "(--hicache-size) or a leaking tokenizer are the usual causes.",
        fault("fault:host-memory-pressure", "one node's MemAvailable falls to 2 % of MemTotal"),
        reads=reads("node_exporter", "node_memory_MemAvailable_bytes", "node_memory_MemTotal_bytes"),
        expr=c.host_memory_pressure,
        summary="Host memory nearly exhausted on {{ $labels.node }}",
    ),
    _host_row(
        "host-oom-kill",
        "HostOomKill",
        f"node_vmstat_oom_kill grew within {c.SLOW_WINDOW}",
        "an OOM-killed engine otherwise shows only as a failing scrape; the kernel counts every kill",
        "0m",
        "a kill is an event: it is over when the alert evaluates",
        "critical",
        "a process was OOM-killed (engine, collector)",
        "Node: memory",
        "`journalctl -k | grep -i oom` on the node names the process; an engine kill is followed by a "
        "restart (EngineRestarted) or a dead replica (TargetMissing).",
        fault("fault:host-oom-kill", "node_vmstat_oom_kill of one node steps 0 -> 1"),
        reads=reads("node_exporter", "node_vmstat_oom_kill"),
        expr=c.host_oom_kills,
        summary="Process OOM-killed on {{ $labels.node }}",
    ),
    _host_row(
        "host-cpu-saturated",
        "HostCpuSaturated",
        f"CPU busy (not idle, not iowait) above {c.CPU_BUSY_SHARE:.0%} over {c.WINDOW}",
        "the scheduler, tokenizer and detokenizer threads starve: TTFT grows on an idle GPU",
        "10m",
        "tokenizing a burst of long prompts saturates the CPUs for minutes",
        "warning",
        "host CPUs saturated",
        "Node: CPU",
        "`top -H` on the node: a runaway process, or too many tokenizer workers for the cores.",
        fault("fault:host-cpu-saturated", "one node's idle CPU seconds stop growing"),
        reads=reads("node_exporter", "node_cpu_seconds_total"),
        expr=c.host_cpu_saturated,
        summary="CPUs saturated on {{ $labels.node }}",
    ),
    _host_row(
        "host-nic-errors",
        "HostNicErrors",
        f"receive + transmit errors above {c.NIC_ERRORS_PER_SECOND:g}/s on one interface over {c.WINDOW}",
        "a bad cable or optic corrupts frames: RDMA transfers and Store reads retry and slow",
        "10m",
        "a link flap counts a burst",
        "warning",
        "NIC / link errors",
        "Node: network",
        "`ethtool -S <device>` on the node; replace the cable / optic; drain the node if the transfer "
        "engine's latency rises.",
        fault("fault:host-nic-errors", "node_network_receive_errs_total of one interface climbs by 50/s"),
        reads=reads("node_exporter", "node_network_receive_errs_total", "node_network_transmit_errs_total"),
        entity=("node", "device"),
        expr=c.host_nic_errors,
        summary="NIC errors on {{ $labels.node }} interface {{ $labels.device }}",
    ),
)


def _cache_full(profile: Profile) -> str:
    return c.filesystem_full(profile, profile.disks.cache_mountpoint)


def _model_full(profile: Profile) -> str:
    return c.filesystem_full(profile, profile.disks.model_mountpoint)


def _root_full(profile: Profile) -> str:
    return c.filesystem_full(profile, c.ROOT_MOUNTPOINT)


DISK_ROWS = (
    _disk_row(
        "disk-cache-saturated",
        "CacheDiskSaturated",
        "the device mounted at the cache mount point (never a device-name pattern: the model disk is nvme*n1 "
        "too) is busy, deeply queued AND slower per I/O than its own baseline",
        "a busy disk that answers as fast as usual is working; only all three together is saturation",
        "10m",
        "a checkpoint or a prefetch burst saturates a disk for minutes",
        "warning",
        "KV-cache disk saturated",
        "Cache disk: busy, queue, await",
        "Open the cache disk rows for the node; `iostat -x 5` there; a failing NVMe shows rising await "
        "before errors (`nvme smart-log`).",
        fault("disk-saturated", "the cache device's busy share at 99.5 %, queue 60 and await x80"),
        layer="disk",
        reads=reads(
            "node_exporter",
            "node_disk_io_time_seconds_total",
            "node_disk_io_time_weighted_seconds_total",
            "node_disk_read_time_seconds_total",
            "node_disk_write_time_seconds_total",
            "node_disk_reads_completed_total",
            "node_disk_writes_completed_total",
            "node_filesystem_size_bytes",
        ),
        entity=("node", "device"),
        applies=lambda p: p.exported("node_exporter") and p.disks.has_cache_tier,
        paints=(Paint(health.DISK_SATURATED, health.disk_saturated),),
    ),
    _disk_row(
        "disk-cache-full",
        "CacheFilesystemFull",
        f"the cache mount (a video pool's scratch mount) has less than {c.FILESYSTEM_FREE_SHARE:.0%} of its bytes "
        "or inodes available",
        "at ENOSPC the cache's writes stop and the disk looks idle: I/O panels read healthy",
        "5m",
        "the cache evicts in bursts; a full disk that stays full is the fault",
        "critical",
        "cache filesystem full (ENOSPC)",
        "Cache disk: filesystem",
        "`df -h <mount>` and `df -i <mount>` (inodes: a file-per-page backend, frames) on the node; the Store / "
        "HiCache file backend's eviction is not keeping up or its "
        "capacity is set above the filesystem's: lower it or free the disk.",
        fault("fault:disk-cache-full", "node_filesystem_avail_bytes of the cache mount falls to 0"),
        layer="disk",
        applies=lambda p: p.exported("node_exporter") and bool(p.disks.cache_mountpoint),
        expr=_cache_full,
        reads=_FULL,
        summary="Cache filesystem {{ $labels.mountpoint }} full on {{ $labels.node }}",
        paints=(Paint(health.DISK_FULL),),
    ),
    _disk_row(
        "disk-model-full",
        "ModelFilesystemFull",
        f"the model-weights mount has less than {c.FILESYSTEM_FREE_SHARE:.0%} of its bytes or inodes available",
        "a model download or conversion onto a full disk fails half-written; the next load fails",
        "5m",
        "a download fills a disk for seconds before its clean-up",
        "warning",
        "model filesystem full",
        "Node disks: filesystems",
        "`df -h <mount>`, `df -i <mount>`; remove old model versions; verify the checksums of the weights "
        "being loaded.",
        fault("fault:disk-model-full", "node_filesystem_avail_bytes of the model mount falls to 0"),
        applies=lambda p: p.exported("node_exporter") and bool(p.disks.model_mountpoint),
        expr=_model_full,
        reads=_FULL,
        summary="Model filesystem {{ $labels.mountpoint }} full on {{ $labels.node }}",
    ),
    _disk_row(
        "disk-root-full",
        "RootFilesystemFull",
        f"the root filesystem has less than {c.FILESYSTEM_FREE_SHARE:.0%} of its bytes or inodes available",
        "logs, core dumps and container layers stop; the collector's persistent queue cannot grow",
        "5m",
        "log rotation frees space within minutes",
        "warning",
        "root filesystem full (logs, core dumps)",
        "Node disks: filesystems",
        "`df -h /` and `df -i /`, then `du -xh / | sort -h | tail` on the node; core dumps and container logs are "
        "the usual fill (many small logs use up the inodes first).",
        fault("fault:disk-root-full", "node_filesystem_avail_bytes of / falls to 0"),
        applies=exports("node_exporter"),
        expr=_root_full,
        reads=_FULL,
        summary="Root filesystem full on {{ $labels.node }}",
    ),
    _disk_row(
        "disk-filesystem-errors",
        "FilesystemFailing",
        "a role mount (cache, model, root) is read-only or its device fails to stat",
        "ext4 / xfs remount read-only on an I/O error: writes fail while reads go on",
        "2m",
        "a stat timeout under load is not a failing device",
        "critical",
        "filesystem remounted read-only (disk I/O errors)",
        "Node disks: filesystems",
        "`dmesg | grep -i 'I/O error'` and `nvme smart-log` on the node; drain the node, replace the disk.",
        fault("fault:disk-filesystem-errors", "node_filesystem_readonly of the cache mount turns 1"),
        reads=reads("node_exporter", "node_filesystem_readonly", "node_filesystem_device_error"),
        applies=exports("node_exporter"),
        expr=c.filesystem_failing,
        summary="Filesystem {{ $labels.mountpoint }} failing on {{ $labels.node }}",
    ),
)
