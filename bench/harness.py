"""Shared benchmark plumbing: timing (interleaved with the baseline), child-process runs with their own
peak RSS, the results table, machine facts and ``bench/results.json``.

Every speed figure is a ratio against a baseline measured in the same run, interleaved run by run
(A B A B ...), because the machines are shared and noisy: the absolute seconds drift, the ratio much less.
"""

from __future__ import annotations

import json
import os
import platform
import selectors
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
BIN = ROOT / ".venv" / "bin"
PYTHON = str(BIN / "python") if (BIN / "python").exists() else sys.executable
DASHGEN = str(BIN / "dashgen")
RESULTS = ROOT / "bench" / "results.json"
GNU_TIME = "/usr/bin/time"


@dataclass
class Row:
    """One line of the table: a measured case, its runs and (optionally) the baseline it is compared with."""

    bench: str
    case: str
    unit: str
    runs: list[float]
    baseline: str | None = None  # the ``case`` of the baseline row in the same bench
    note: str = ""
    ratio: float | None = None

    @property
    def median(self) -> float:
        return statistics.median(self.runs)

    def to_dict(self) -> dict[str, Any]:
        return {
            **asdict(self),
            "median": self.median,
            "min": min(self.runs),
            "max": max(self.runs),
            "n": len(self.runs),
        }


@dataclass
class BenchResult:
    """What one benchmark module returns: table rows plus free-form details for results.json."""

    name: str
    rows: list[Row] = field(default_factory=list)
    details: dict[str, Any] = field(default_factory=dict)
    seconds: float = 0.0

    def add(self, row: Row) -> Row:
        self.rows.append(row)
        return row

    def resolve_ratios(self) -> None:
        by_case = {row.case: row for row in self.rows}
        for row in self.rows:
            if row.baseline and row.baseline in by_case and row.ratio is None:
                base = by_case[row.baseline].median
                row.ratio = row.median / base if base else None


def interleaved(
    cases: Sequence[tuple[str, Callable[[], float | None]]], repeat: int, warmup: int = 1
) -> dict[str, list[float]]:
    """Run each case ``repeat`` times, round-robin, after ``warmup`` unrecorded rounds.

    A case returns its own measured seconds, or None to be timed around the whole call.
    """
    runs: dict[str, list[float]] = {name: [] for name, _ in cases}
    for index in range(warmup + repeat):
        for name, function in cases:
            began = time.perf_counter()
            measured = function()
            elapsed = time.perf_counter() - began if measured is None else measured
            if index >= warmup:
                runs[name].append(elapsed)
    return runs


@dataclass(frozen=True)
class ChildRun:
    """A finished child process: wall seconds, its own peak RSS (MiB, from wait4), exit code, output and CPU."""

    seconds: float
    max_rss_mib: float
    returncode: int
    stdout: str
    stderr: str
    cpu_seconds: float = 0.0  # user + system time of the child and what it waited for (from wait4)


def run_child(
    argv: Sequence[str], cwd: Path = ROOT, env: dict[str, str] | None = None, timeout: float = 300.0
) -> ChildRun:
    """Run one process to the end: wall seconds, exit code, output and the child's own peak RSS."""
    # Linux carries a process's peak RSS across fork+exec, so a child forked from this (large) process reports
    # at least our size. GNU time forks the measured program from its own small image: its %M is the child's.
    rss_file = None
    if Path(GNU_TIME).exists():
        handle, rss_file = tempfile.mkstemp(prefix="dashgen-bench-rss-")
        os.close(handle)
        argv = [GNU_TIME, "-f", "%M", "-o", rss_file, *argv]
    began = time.perf_counter()
    process = subprocess.Popen(list(argv), cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    chunks: dict[int, list[bytes]] = {process.stdout.fileno(): [], process.stderr.fileno(): []}
    deadline = time.monotonic() + timeout
    with selectors.DefaultSelector() as selector:
        for stream in (process.stdout, process.stderr):
            selector.register(stream, selectors.EVENT_READ)
        while selector.get_map():
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                process.kill()
                process.wait()
                raise subprocess.TimeoutExpired(list(argv), timeout)
            for key, _ in selector.select(timeout=remaining):
                chunk = os.read(key.fd, 1 << 16)
                if chunk:
                    chunks[key.fd].append(chunk)
                else:
                    selector.unregister(key.fileobj)
    # Reap the child ourselves: wait4 returns this child's own peak RSS.
    _, status, usage = os.wait4(process.pid, 0)
    process.returncode = os.waitstatus_to_exitcode(status)
    seconds = time.perf_counter() - began
    out = b"".join(chunks[process.stdout.fileno()]).decode(errors="replace")
    err = b"".join(chunks[process.stderr.fileno()]).decode(errors="replace")
    process.stdout.close()
    process.stderr.close()
    max_rss = usage.ru_maxrss / 1024.0
    if rss_file is not None:
        text = Path(rss_file).read_text().strip().splitlines()
        os.unlink(rss_file)
        if text and text[-1].isdigit():
            max_rss = int(text[-1]) / 1024.0
    return ChildRun(seconds, max_rss, process.returncode, out, err, usage.ru_utime + usage.ru_stime)


def peak_rss_mib() -> float:
    """This process's own peak RSS since exec (VmHWM), unlike ru_maxrss which may hold the parent's."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024.0
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def checked(run: ChildRun, what: str) -> ChildRun:
    if run.returncode != 0:
        raise RuntimeError(f"{what} exited {run.returncode}:\n{run.stderr[-2000:]}\n{run.stdout[-1000:]}")
    return run


# -- machine and commit ---------------------------------------------------------------------------


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def memory_gib() -> float | None:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                return round(int(line.split()[1]) / (1 << 20), 1)
    except OSError:
        pass
    return None


def commit() -> dict[str, Any]:
    def git(*args: str) -> str:
        try:
            return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True, timeout=10).stdout.strip()
        except (OSError, subprocess.TimeoutExpired):
            return ""

    dirty = git("status", "--porcelain", "--untracked-files=no", "--", "dashgen", "panels", "queries", "profiles")
    return {
        "sha": git("rev-parse", "HEAD"),
        "subject": git("log", "-1", "--format=%s"),
        "dirty_product_files": [line[3:] for line in dirty.splitlines()],
    }


def machine() -> dict[str, Any]:
    return {
        "platform": platform.platform(),
        "cpu": cpu_model(),
        "cores": os.cpu_count(),
        "memory_gib": memory_gib(),
        "python": platform.python_version(),
        "loadavg_at_start": [round(x, 2) for x in os.getloadavg()],
        "date": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
    }


# -- output ---------------------------------------------------------------------------------------


def fmt(value: float, unit: str) -> str:
    if unit == "s":
        return f"{value * 1000:.1f} ms" if value < 1 else f"{value:.2f} s"
    if unit == "MiB":
        return f"{value:.0f} MiB"
    if unit in ("requests", "count"):
        return f"{value:g}"
    return f"{value:.3g} {unit}"


def table(results: Sequence[BenchResult]) -> str:
    header = ("bench", "case", "median", "min", "max", "n", "ratio", "vs baseline / note")
    lines: list[tuple[str, ...]] = [header]
    for result in results:
        for row in result.rows:
            ratio = f"{row.ratio:.2f}x" if row.ratio is not None else ""
            against = f"vs {row.baseline}" if row.baseline else ""
            note = "; ".join(x for x in (against, row.note) if x)
            lines.append(
                (
                    result.name,
                    row.case,
                    fmt(row.median, row.unit),
                    fmt(min(row.runs), row.unit),
                    fmt(max(row.runs), row.unit),
                    str(len(row.runs)),
                    ratio,
                    note,
                )
            )
    widths = [max(len(line[i]) for line in lines) for i in range(len(header) - 1)]
    out = []
    for index, line in enumerate(lines):
        cells = [cell.ljust(widths[i]) if i < 2 else cell.rjust(widths[i]) for i, cell in enumerate(line[:-1])]
        out.append("  ".join(cells) + "  " + line[-1])
        if index == 0:
            out.append("  ".join("-" * w for w in widths) + "  " + "-" * 18)
    return "\n".join(out)


def markdown_table(results: Sequence[BenchResult]) -> str:
    lines = [
        "| bench | case | median | min | max | n | ratio | vs baseline / note |",
        "|---|---|---:|---:|---:|---:|---:|---|",
    ]
    for result in results:
        for row in result.rows:
            ratio = f"{row.ratio:.2f}x" if row.ratio is not None else ""
            against = f"vs *{row.baseline}*" if row.baseline else ""
            note = "; ".join(x for x in (against, row.note) if x)
            lines.append(
                f"| {result.name} | {row.case} | {fmt(row.median, row.unit)} | {fmt(min(row.runs), row.unit)}"
                f" | {fmt(max(row.runs), row.unit)} | {len(row.runs)} | {ratio} | {note} |"
            )
    return "\n".join(lines)


def markdown_from_results(path: Path = RESULTS) -> str:
    data = json.loads(path.read_text())
    results = []
    for name, entry in data["benchmarks"].items():
        result = BenchResult(name)
        for row in entry["rows"]:
            result.add(
                Row(row["bench"], row["case"], row["unit"], row["runs"], row["baseline"], row["note"], row["ratio"])
            )
        results.append(result)
    m, c = data["machine"], data["commit"]
    head = (
        f"Ran {m['date']} on {m['cpu']} ({m['cores']} cores, {m['memory_gib']} GiB), {m['platform']}, "
        f"Python {m['python']}; commit {c['sha'][:12]}"
        + (
            f" with uncommitted changes in {len(c['dirty_product_files'])} product files"
            if c["dirty_product_files"]
            else ""
        )
    )
    return head + "\n\n" + markdown_table(results)


def write_results(results: Sequence[BenchResult], path: Path = RESULTS) -> dict[str, Any]:
    """Write results.json; benchmarks not run this time (``--only``) keep their previous entry."""
    previous: dict[str, Any] = {}
    if path.exists():
        try:
            previous = json.loads(path.read_text()).get("benchmarks", {})
        except (OSError, ValueError):
            previous = {}
    benchmarks = dict(previous)
    for result in results:
        benchmarks[result.name] = {
            "seconds": round(result.seconds, 1),
            "rows": [r.to_dict() for r in result.rows],
            "details": result.details,
        }
    data = {"machine": machine(), "commit": commit(), "benchmarks": benchmarks}
    path.write_text(json.dumps(data, indent=2, sort_keys=False, default=str) + "\n")
    return data
