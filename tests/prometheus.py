"""A real Prometheus 2.x holding the demo data, for the query tests (issue 12, item 5).

The demo series of ``dashgen.demo`` are rendered as OpenMetrics text (:func:`write_openmetrics`),
turned into TSDB blocks by ``promtool tsdb create-blocks-from openmetrics`` (:func:`backfill`) and
served by a throw-away ``prometheus`` on 127.0.0.1 with a temporary storage path and no scrape
targets (:func:`start`). Prometheus loads the blocks present at start-up, so the data is queryable
once ``/-/ready`` answers. Binaries: the Debian package ``prometheus`` (``make debian-deps``), or
``$PROMETHEUS_BIN`` / ``$PROMTOOL_BIN``. Missing: skip locally with a clear message, fail in CI
(``CI=true``), as the VictoriaMetrics harness does. Every wait and every subprocess is bounded.

Time layout: each profile's healthy window lies inside its own 2 h block range (promtool's default
block duration; blocks are aligned to multiples of 2 h), the newest at least 2 h before now, so the
blocks never overlap and no query of one window sees another's data.

Size: Prometheus evaluates the 1 s GPM subqueries (``[$__range:1s]``) step by step, and a range query
over a 1 s source below 1000 s of window has one point per second, so the query cost grows with
window x GPUs; the windows are 10 minutes (``$__interval`` is then each source's scrape interval, as
Grafana sets it for short ranges) and the large profiles' samples are thinned (:class:`Backfill`).
"""

from __future__ import annotations

import atexit
import fcntl
import hashlib
import json
import math
import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from victoriametrics import DemoWindow, program_or_skip
from xdist_scheduling import GROUPS_ENV

from dashgen.demo.catalogue import MetricModel
from dashgen.demo.run import demo_models, demo_plan
from dashgen.demo.series import generate
from dashgen.demo.vmlauncher import LaunchError, find_program, free_port, launch, log_tail, stop_process
from dashgen.deployment.profile import load_profiles
from dashgen.deployment.topology import Topology

BLOCK_SECONDS = 7200  # promtool's default --max-block-duration: blocks cover [k x 2 h, (k + 1) x 2 h)
SCENARIO = "healthy"


@dataclass(frozen=True)
class Backfill:
    """One profile's demo data: its 2 h slot (0 = newest), the window and the coarsest sample spacing.

    ``step`` 0 keeps every source at its scrape interval. Otherwise it is at most half the shortest
    ``$__rate_interval`` of the profile's rate-style sources (4 x their scrape interval), so every
    rate window still holds two samples; the 1 s GPM sampler is the one source thinned beyond that.
    """

    slot: int
    step: float = 0.0
    minutes: int = 10

    @property
    def hours(self) -> float:
        return self.minutes / 60


BACKFILLS: dict[str, Backfill] = {
    "long-context-64": Backfill(0),  # every source at its scrape interval: the reason codes hold too
    "h20-16": Backfill(1),
    "pd-128": Backfill(2, step=10),  # engines scrape every 5 s: rate windows of 20 s
    "video-200": Backfill(3, step=15),  # engines scrape every 15 s
}

CONFIG = "global:\n  scrape_interval: 1m\n  evaluation_interval: 1m\nscrape_configs: []\n"
FLAGS = (
    "--storage.tsdb.retention.time=10y",  # retention counts back from the newest block: keep them all
    "--log.level=warn",
)
PROMTOOL_TIMEOUT = 120.0
STARTUP_TIMEOUT = 60.0


class PrometheusError(RuntimeError):
    """Prometheus or promtool failed; the message carries the tail of their output."""


# -- OpenMetrics ------------------------------------------------------------------------------------


def metric_kinds(models: Iterable[MetricModel]) -> dict[str, tuple[str, str]]:
    """Series name -> (OpenMetrics family, type): counters as ``counter`` (the family drops
    ``_total``), a histogram's ``_bucket``/``_sum``/``_count`` as one ``histogram`` family, gauges and
    ``up`` as ``gauge``. Names not listed are written as ``unknown``."""
    kinds = {"up": ("up", "gauge")}
    for model in models:
        if model.kind == "histogram":
            for suffix in ("_bucket", "_sum", "_count"):
                kinds[model.name + suffix] = (model.name, "histogram")
        elif model.kind == "counter":
            kinds[model.name] = (model.name.removesuffix("_total") or model.name, "counter")
        else:
            kinds[model.name] = (model.name, "gauge")
    return kinds


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def _value(value: float) -> str:
    if math.isfinite(value):
        return repr(float(value))
    return "NaN" if math.isnan(value) else ("+Inf" if value > 0 else "-Inf")


def _seconds(ms: int) -> str:
    """OpenMetrics timestamps are seconds; whole seconds (the demo's grids) print exactly."""
    return str(ms // 1000) if ms % 1000 == 0 else f"{ms / 1000:.3f}"


@dataclass(frozen=True)
class Written:
    """What :func:`write_openmetrics` wrote: sample count and metric names."""

    samples: int
    names: frozenset[str]


Keyed = tuple[str, str, str, str, list[float], list[int]]  # family, name, label text, kind, values, timestamps (ms)


def keyed_series(series: Iterable[Mapping[str, Any]], kinds: Mapping[str, tuple[str, str]]) -> list[Keyed]:
    """The series in the order the OpenMetrics text writes them: by family, name, then label text (escaped)."""
    keyed = []
    for item in series:
        labels = dict(item["metric"])
        name = labels.pop("__name__")
        family, kind = kinds.get(name, (name, "unknown"))
        text = ",".join(f'{key}="{_escape(str(value))}"' for key, value in sorted(labels.items()))
        keyed.append((family, name, text, kind, item["values"], item["timestamps"]))
    keyed.sort(key=lambda entry: entry[:3])
    return keyed


def write_openmetrics(series: Iterable[Mapping[str, Any]], kinds: Mapping[str, tuple[str, str]], path: Path) -> Written:
    """Write VictoriaMetrics import objects (``{"metric", "values", "timestamps" (ms)}``) as the
    OpenMetrics text promtool reads: one ``# TYPE`` per family, families and their series sorted by
    name then labels, each series' samples in time order with timestamps in seconds, ``# EOF``."""
    keyed = keyed_series(series, kinds)
    samples = 0
    current = None
    stamp_texts: dict[tuple[int, ...], list[str]] = {}  # the series of one source share their scrape times
    with open(path, "w", encoding="utf-8") as out:
        for family, name, text, kind, values, stamps in keyed:
            if family != current:
                current = family
                out.write(f"# TYPE {family} {kind}\n")
            prefix = f"{name}{{{text}}} " if text else f"{name} "
            out.write(_sample_lines(prefix, values, stamps, stamp_texts))
            samples += len(stamps)
        out.write("# EOF\n")
    return Written(samples, frozenset(entry[1] for entry in keyed))


def _sample_lines(
    prefix: str, values: list[float], stamps: list[int], stamp_texts: dict[tuple[int, ...], list[str]]
) -> str:
    """``"".join(f"{prefix}{_value(v)} {_seconds(ms)}\n" for v, ms in zip(values, stamps, strict=True))`` without a
    Python call per sample (the Prometheus demo writes 1.6 million): the values' texts by ``repr`` in one pass when
    every one is finite, the timestamps' texts once per distinct list of scrape times, the lines joined in C."""
    if len(values) != len(stamps):
        raise ValueError(f"{prefix.strip()}: {len(values)} values for {len(stamps)} timestamps")
    if not stamps:
        return ""
    floats = list(map(float, values))
    texts = list(map(repr, floats)) if all(map(math.isfinite, floats)) else list(map(_value, floats))
    key = tuple(stamps)
    seconds = stamp_texts.get(key)
    if seconds is None:
        seconds = stamp_texts[key] = list(map(_seconds, stamps))
    return prefix + ("\n" + prefix).join(map(" ".join, zip(texts, seconds, strict=True))) + "\n"


# -- promtool and prometheus --------------------------------------------------------------------------


def find_binary(name: str) -> str | None:
    """``$PROMETHEUS_BIN`` / ``$PROMTOOL_BIN`` when set, else ``prometheus`` / ``promtool`` on PATH."""
    return find_program(f"{name.upper()}_BIN", (name,))


def backfill(promtool: str, openmetrics: Path, blocks: Path, timeout: float = PROMTOOL_TIMEOUT) -> None:
    """``promtool tsdb create-blocks-from openmetrics <file> <dir>`` (2 h blocks); raises PrometheusError."""
    args = [promtool, "tsdb", "create-blocks-from", "openmetrics", "--quiet", str(openmetrics), str(blocks)]
    try:
        done = subprocess.run(args, capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        raise PrometheusError(f"promtool did not finish within {timeout:g}s: {' '.join(args)}") from None
    if done.returncode != 0:
        raise PrometheusError(f"promtool exited with {done.returncode}: {(done.stderr or done.stdout)[-2000:]}")


@dataclass
class Prometheus:
    """A running Prometheus; ``url`` is its HTTP API base URL."""

    binary: str
    port: int
    directory: Path
    process: subprocess.Popen | None = None
    _owns_dir: bool = field(default=False, repr=False)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def log_path(self) -> Path:
        return self.directory / "prometheus.log"

    def log_tail(self, lines: int = 20) -> str:
        return log_tail(self.log_path, lines)

    def stop(self, timeout: float = 10.0) -> None:
        """Terminate, wait up to ``timeout``, kill if still running; remove a temporary directory."""
        process, self.process = self.process, None
        stop_process(process, timeout)
        if self._owns_dir:
            shutil.rmtree(self.directory, ignore_errors=True)


def start(binary: str, directory: Path, startup_timeout: float = STARTUP_TIMEOUT, owns_dir: bool = False) -> Prometheus:
    """Start Prometheus on ``directory/data`` (the blocks there are loaded) with a configuration
    without scrape targets; return once ``/-/ready`` answers 200, raise PrometheusError otherwise."""
    config = directory / "prometheus.yml"
    config.write_text(CONFIG, encoding="utf-8")
    server = Prometheus(binary, free_port(), directory, _owns_dir=owns_dir)
    args = [
        binary,
        f"--config.file={config}",
        f"--storage.tsdb.path={directory / 'data'}",
        f"--web.listen-address=127.0.0.1:{server.port}",
        *FLAGS,
    ]
    try:
        server.process = launch(
            "prometheus", args, server.log_path, f"{server.url}/-/ready", startup_timeout, cwd=directory
        )
    except LaunchError as exc:
        server.stop()
        raise PrometheusError(str(exc)) from None
    return server


# -- the demo, backfilled -------------------------------------------------------------------------------


@dataclass
class DemoPrometheus:
    """The running Prometheus, each profile's healthy window in it and the metric names it holds."""

    server: Prometheus
    windows: dict[str, DemoWindow]
    names: dict[str, frozenset[str]]
    samples: int

    @property
    def url(self) -> str:
        return self.server.url

    def stop(self) -> None:
        self.server.stop()


def binaries_or_skip() -> tuple[str, str]:
    """(prometheus, promtool); skips locally and fails in CI when either is missing."""
    prometheus, promtool = find_binary("prometheus"), find_binary("promtool")
    if prometheus is None or promtool is None:
        missing = " and ".join(name for name, path in (("prometheus", prometheus), ("promtool", promtool)) if not path)
        program_or_skip(
            None,
            f"{missing} not found: install the Debian package 'prometheus' (`make debian-deps`) "
            "or set PROMETHEUS_BIN / PROMTOOL_BIN",
        )
    return prometheus, promtool


def window_end(slot: int, now: float | None = None) -> float:
    """The end of slot ``slot``'s window: 1 h 30 min into its 2 h block range, so its data stays in one block."""
    newest = ((time.time() if now is None else now) // BLOCK_SECONDS - 2) * BLOCK_SECONDS
    return newest - slot * BLOCK_SECONDS + 5400


@dataclass(frozen=True)
class DemoBlocks:
    """Every profile of a backfill's TSDB blocks in ``folder`` (one sub-folder per block), each window's end, the
    metric names written per profile and the sample count."""

    folder: Path
    ends: dict[str, float]
    names: dict[str, frozenset[str]]
    samples: int


# One set of blocks per process and backfill: the query tests and the rule tests read the same demo data
# (generating, writing and backfilling it is ~10 s of CPU); under xdist the first worker to ask builds it into the
# run's shared folder and the others copy it from there.
_BLOCKS: dict[tuple[tuple[str, Backfill], ...], DemoBlocks] = {}


def demo_blocks(backfills: Mapping[str, Backfill] = BACKFILLS) -> DemoBlocks:
    """The blocks of ``backfills``, built once per test run (per process, and once for all xdist workers when
    ``GROUPS_ENV`` names their shared folder); never modified by a caller (:func:`start_demo` starts Prometheus
    on a copy). Skips (fails in CI) without the binaries."""
    key = tuple(sorted(backfills.items()))
    if key in _BLOCKS:
        return _BLOCKS[key]
    _, promtool = binaries_or_skip()
    shared = os.environ.get(GROUPS_ENV)
    if shared is None or not os.path.isdir(shared):
        folder = Path(tempfile.mkdtemp(prefix="dashgen-prom-blocks-"))
        atexit.register(shutil.rmtree, folder, True)
        blocks = _BLOCKS[key] = _build_blocks(promtool, backfills, folder)
        return blocks
    digest = hashlib.sha256(repr(key).encode()).hexdigest()[:16]
    folder = Path(shared) / f"prometheus-demo-{digest}"
    manifest = folder / "manifest.json"
    with (Path(shared) / f"prometheus-demo-{digest}.lock").open("a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # the other workers wait for the blocks; released when the file closes
        if not manifest.exists():
            shutil.rmtree(folder, ignore_errors=True)  # what a worker that failed half way left
            folder.mkdir()
            built = _build_blocks(promtool, backfills, folder)
            text = {
                "ends": built.ends,
                "names": {n: sorted(v) for n, v in built.names.items()},
                "samples": built.samples,
            }
            manifest.write_text(json.dumps(text), encoding="utf-8")
        read = json.loads(manifest.read_text(encoding="utf-8"))
    names = {name: frozenset(values) for name, values in read["names"].items()}
    blocks = _BLOCKS[key] = DemoBlocks(folder / "data", read["ends"], names, read["samples"])
    return blocks


def _build_blocks(promtool: str, backfills: Mapping[str, Backfill], folder: Path) -> DemoBlocks:
    """Render and backfill every profile of ``backfills`` (each promtool run overlapping the next rendering) into
    ``folder / "data"``."""
    (folder / "data").mkdir()
    profiles = {p.name: p for p in load_profiles(sorted(backfills))}
    ends: dict[str, float] = {}
    names: dict[str, frozenset[str]] = {}
    samples = 0
    with ThreadPoolExecutor(max_workers=2) as pool:
        runs = []
        for name, spec in backfills.items():
            profile = profiles[name]
            end = ends[name] = window_end(spec.slot)
            models, _unknown = demo_models(profile)
            text = folder / f"{name}.om"
            plan = demo_plan(profile, SCENARIO, end, spec.hours, spec.step)
            written = write_openmetrics(generate(plan, models), metric_kinds(m for m, _ in models), text)
            samples += written.samples
            names[name] = written.names
            runs.append(pool.submit(backfill, promtool, text, folder / f"{name}.blocks"))
        for run in runs:
            run.result()
    for name in backfills:
        for block in (folder / f"{name}.blocks").iterdir():
            block.rename(folder / "data" / block.name)
        (folder / f"{name}.blocks").rmdir()
        (folder / f"{name}.om").unlink()
    return DemoBlocks(folder / "data", ends, names, samples)


def start_demo(backfills: Mapping[str, Backfill] = BACKFILLS) -> DemoPrometheus:
    """A Prometheus of its own on a copy of :func:`demo_blocks` (it may compact the blocks it loads). Skips (fails
    in CI) without the binaries."""
    binary, _ = binaries_or_skip()
    blocks = demo_blocks(backfills)
    profiles = {p.name: p for p in load_profiles(sorted(backfills))}
    windows = {
        name: DemoWindow(profiles[name], Topology(profiles[name]), SCENARIO, blocks.ends[name], spec.hours)
        for name, spec in backfills.items()
    }
    directory = Path(tempfile.mkdtemp(prefix="dashgen-prom-"))
    try:
        shutil.copytree(blocks.folder, directory / "data")
        server = start(binary, directory, owns_dir=True)
    except BaseException:
        shutil.rmtree(directory, ignore_errors=True)
        raise
    return DemoPrometheus(server, windows, dict(blocks.names), blocks.samples)
