"""A device or a folder where a command reads a file is an input error (exit 2, one line naming the file), and
a FIFO is never a hang: one with no writer blocked ``open`` forever (it now reads as empty, an error naming it),
and ``/dev/zero`` would never end. A pipe with a writer is read (``dashgen import <(git show HEAD:d.json)``).

Each command runs in a thread bounded by :data:`PATIENCE`; a command still blocked on the FIFO after it is let go
(a writer opens and closes the FIFO, so the reader sees an empty file) and the test fails as a hang.
"""

from __future__ import annotations

import errno
import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from dashgen import files, panel_index
from dashgen.cli import main
from dashgen.document import budget
from dashgen.files import NotARegularFile, UnreadablePipe, read_regular_bytes, read_regular_text
from dashgen.render import scope

ROOT = Path(__file__).resolve().parent.parent
PATIENCE = 10.0  # seconds a command may take to refuse the FIFO (each refuses it in well under one)
GRAFANA = ["--grafana-url", "http://127.0.0.1:9"]  # port 9: refused at once, should anything get that far


def _release(fifo: Path) -> None:
    """Open ``fifo`` for writing and close it: a reader blocked in ``open`` goes on and reads an empty file."""
    deadline = time.monotonic() + PATIENCE
    while time.monotonic() < deadline:
        try:
            os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
            return
        except OSError as exc:
            if exc.errno != errno.ENXIO:  # ENXIO: no reader yet
                raise
            time.sleep(0.05)


def bounded(call: Callable[[], Any], fifo: Path, what: str) -> Any:
    """``call()`` in a thread; fails the test when it is still running after :data:`PATIENCE` seconds."""
    results: list[Any] = []
    errors: list[BaseException] = []

    def run() -> None:
        try:
            results.append(call())
        except BaseException as exc:  # handed to the test's thread
            errors.append(exc)

    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    worker.join(PATIENCE)
    if worker.is_alive():
        _release(fifo)
        worker.join(PATIENCE)
        pytest.fail(f"{what} blocked reading the FIFO {fifo}")
    if errors:
        raise errors[0]
    return results[0]


def invoke_bounded(argv: list[str], fifo: Path) -> Result:
    """``dashgen argv``, bounded as :func:`bounded`."""
    return bounded(
        lambda: CliRunner().invoke(main, argv, env={"GRAFANA_TOKEN": "x"}), fifo, f"dashgen {' '.join(argv)}"
    )


# command line -> where its FIFO goes ({fifo} in the words is replaced by that path)
CASES: dict[str, tuple[list[str], str]] = {
    "profile": (["--profiles-dir", "{dir}", "profiles"], "x.toml"),
    "lint-file": (["lint", "{fifo}"], "board.json"),
    "lint-config": (["lint", "--config", "{fifo}", str(ROOT / "dashboards")], "lint.toml"),
    "import": (["import", "{fifo}", "-o", "{dir}/out.py"], "board.json"),
    "render-module": (["render-module", "{fifo}", "--out", "{dir}/out.json"], "module.py"),
    "diff": (["diff", "{fifo}", "{fifo}"], "board.json"),
    "publish-config": (["publish", *GRAFANA, "--config", "{fifo}", "--dry-run"], "dashgen.toml"),
    "publish-bundle": (["publish", *GRAFANA, "--bundle", "{fifo}", "--dry-run"], "bundle.json"),
    "publish-approved-plan": (["publish", *GRAFANA, "--approved-plan", "{fifo}", "--dry-run"], "plan.json"),
    "history-ledger": (["history", "u", *GRAFANA, "--ledger", "{fifo}"], "ledger.jsonl"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_fifo_where_a_file_is_read_is_an_input_error_not_a_hang(case, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    words, name = CASES[case]
    fifo = tmp_path / name
    os.mkfifo(fifo)
    argv = [w.replace("{fifo}", str(fifo)).replace("{dir}", str(tmp_path)) for w in words]
    result = invoke_bounded(argv, fifo)
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output and "internal error" not in result.output, result.output
    assert str(fifo) in result.output and "a pipe that gave nothing" in result.output, result.output
    assert sorted(p.name for p in tmp_path.iterdir()) == [name]  # nothing written


@pytest.mark.parametrize("path", ["/dev/zero", "/dev/null", "{folder}"])
def test_the_reader_refuses_devices_and_folders_before_reading(path, tmp_path):
    path = path.replace("{folder}", str(tmp_path))
    for read in (read_regular_bytes, read_regular_text):
        with pytest.raises(NotARegularFile) as caught:
            read(path)
        assert caught.value.filename == path and "not a regular file" in caught.value.strerror


def test_a_fifo_with_no_writer_reads_as_empty_at_once_an_error_naming_it(tmp_path):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    for read in (read_regular_bytes, read_regular_text):
        began = time.monotonic()
        with pytest.raises(UnreadablePipe) as caught:
            bounded(lambda: read(fifo), fifo, "reading a FIFO with no writer")  # noqa: B023 - called at once
        assert caught.value.filename == str(fifo) and "gave nothing" in caught.value.strerror
        assert time.monotonic() - began < files.PIPE_WAIT_SECONDS / 10  # no wait for a writer that never comes


def test_a_pipe_whose_writer_is_slow_but_finishes_is_read_whole(tmp_path):
    """The writer is there from the start (as bash's ``<(...)`` is) but writes its parts 0.3 s apart."""
    fifo = tmp_path / "plan.toml"
    os.mkfifo(fifo)
    opener = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)  # so the writer's open below does not wait for a reader
    writer = os.open(fifo, os.O_WRONLY)

    def write_slowly() -> None:
        for part in (b"a = 1\r\n", b"b = '\xc3", b"\xa9'\n"):
            time.sleep(0.3)
            os.write(writer, part)
        os.close(writer)

    threading.Thread(target=write_slowly, daemon=True).start()
    try:
        began = time.monotonic()
        assert bounded(lambda: read_regular_text(fifo), fifo, "reading a slow pipe") == "a = 1\nb = '\u00e9'\n"
        assert time.monotonic() - began > 0.8  # it did wait for the last part
    finally:
        os.close(opener)


def test_a_pipe_past_its_reader_s_budget_is_an_error_naming_it(tmp_path):
    """A pipe's size is unknown before it is read (its stat says 0): a reader whose files have a budget (a dashboard's
    64 MiB) passes it, and a pipe giving more is refused as it is read, not read whole first."""
    from dashgen.document.budget import MAX_FILE_BYTES

    fifo = tmp_path / "board.json"
    os.mkfifo(fifo)
    opener = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
    writer = os.open(fifo, os.O_WRONLY)
    os.write(writer, b"[" + b" " * 40 + b"]")
    os.close(writer)
    try:
        with pytest.raises(UnreadablePipe) as caught:
            bounded(lambda: read_regular_bytes(fifo, 32), fifo, "reading a pipe past its budget")
        assert caught.value.filename == str(fifo) and "more than 32 bytes" in caught.value.strerror
    finally:
        os.close(opener)
    # every dashboard reader passes the dashboard budget to it
    for module in (
        "dashgen/lint/runner.py",
        "dashgen/cli/import_cmd.py",
        "dashgen/cli/validate_queries.py",
        "dashgen/cli/diff_sources.py",
    ):
        assert "MAX_FILE_BYTES)" in (ROOT / module).read_text(encoding="utf-8"), module
    assert MAX_FILE_BYTES < files.PIPE_BYTE_LIMIT


def test_a_pipe_whose_writer_never_finishes_is_an_error_naming_it_after_the_wait(tmp_path, monkeypatch):
    monkeypatch.setattr(files, "PIPE_WAIT_SECONDS", 1.0)
    fifo = tmp_path / "plan.toml"
    os.mkfifo(fifo)
    keep = os.open(fifo, os.O_RDWR)  # a writer that holds the pipe open and never writes its end
    try:
        os.write(keep, b"a = ")
        began = time.monotonic()
        with pytest.raises(UnreadablePipe) as caught:
            bounded(lambda: read_regular_bytes(fifo), fifo, "reading a pipe that never ends")
        assert caught.value.filename == str(fifo) and "did not finish within 1 seconds" in caught.value.strerror
        assert 0.9 < time.monotonic() - began < PATIENCE
    finally:
        os.close(keep)


def test_process_substitution_is_read_as_the_file_it_stands_for(tmp_path):
    """``dashgen import <(cat d.json)`` and ``lint <(...)`` worked before FIFOs were refused: bash's ``<(...)`` is a
    pipe (``/dev/fd/63``), read through the same reader as every file."""
    board = ROOT / "dashboards" / "h20-16" / sorted(os.listdir(ROOT / "dashboards" / "h20-16"))[0]
    dashgen = f"{sys.executable} -m dashgen"
    script = (
        f"{dashgen} import <(cat '{board}') -o '{tmp_path}/m.py' && "
        f"{dashgen} lint --rule S5 <(cat '{board}') && "
        f"{dashgen} import <(true) -o '{tmp_path}/n.py'"
    )
    done = subprocess.run(["bash", "-c", script], capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert (tmp_path / "m.py").is_file(), done.stderr[-2000:]
    assert done.returncode == 2 and "/dev/fd/" in done.stderr and "a pipe that gave nothing" in done.stderr, (
        done.stdout[-1000:],
        done.stderr[-2000:],
    )
    assert "Traceback" not in done.stderr and not (tmp_path / "n.py").exists()


def test_the_reader_follows_a_symlink_to_a_regular_file_and_reads_text_as_path_read_text(tmp_path):
    target = tmp_path / "profile.toml"
    target.write_bytes(b"a = 1\r\nb = '\xc3\xa9'\n")
    (tmp_path / "link.toml").symlink_to(target)
    assert read_regular_bytes(tmp_path / "link.toml") == target.read_bytes()
    assert read_regular_text(tmp_path / "link.toml") == target.read_text(encoding="utf-8")


# the cache files of the panel index and of the metric names, and how each is read
CACHES: dict[str, tuple[Callable[[], Path | None], Callable[[Path], Any]]] = {
    "index-queries": (lambda: panel_index._cache_file("queries"), lambda _: panel_index._QueryCalls().cached),
    "index-selectors": (lambda: panel_index._cache_file(), panel_index._read_cache),
    "index-skips": (lambda: panel_index._cache_file("skips"), panel_index._read_skips),
    "metric-names": (scope._KnownNames.file, lambda _: scope._KnownNames().known()),
}


@pytest.mark.parametrize("poison", ["fifo", "deep"])
@pytest.mark.parametrize("cache", sorted(CACHES))
def test_a_cache_file_that_is_a_fifo_or_nested_too_deeply_is_no_cache(cache, poison, tmp_path, monkeypatch):
    """A cache is only ever faster: a FIFO in its place (it blocked every build) or JSON nested past the recursion
    limit (a RecursionError out of ``build``) reads as no cache."""
    monkeypatch.setenv("DASHGEN_CACHE_DIR", str(tmp_path))
    where, read = CACHES[cache]
    path = where()
    assert path is not None and path.parent == tmp_path
    if poison == "fifo":
        os.mkfifo(path)
    else:
        path.write_text("[" * 100_000 + "]" * 100_000)
    assert bounded(lambda: read(path), path, f"reading the {cache} cache") == {}


def _board(panels: int) -> dict[str, Any]:
    return {"uid": "u", "title": "t", "panels": [{"type": "stat", "title": f"p{i}"} for i in range(panels)]}


@pytest.mark.parametrize("command", ["import", "diff", "validate-queries"])
def test_a_dashboard_past_the_panel_budget_is_refused_at_once(command, tmp_path):
    """``dashgen import`` of a million panels never ended (50,000 took a minute and 2 GB); a dashboard of more
    than MAX_PANELS panels is now refused, by import, diff and validate-queries, before any per-panel work."""
    (tmp_path / "board.json").write_text(json.dumps(_board(budget.MAX_PANELS + 1)))
    argv = {
        "import": ["import", str(tmp_path / "board.json"), "-o", str(tmp_path / "board.py")],
        "diff": ["diff", str(tmp_path / "board.json"), str(tmp_path / "board.json")],
        "validate-queries": [
            "validate-queries",
            "--datasource-url",
            "http://127.0.0.1:9",
            "--dashboards",
            str(tmp_path),
        ],
    }[command]
    began = time.monotonic()
    result = CliRunner().invoke(main, argv)
    assert result.exit_code == 2, result.output[-500:]
    assert f"board.json: more than {budget.MAX_PANELS} panels" in result.output, result.output[-500:]
    assert time.monotonic() - began < 10 and not (tmp_path / "board.py").exists()


def test_the_panel_budget_counts_nested_and_legacy_row_panels_and_allows_the_budget_itself():
    assert budget.panels_over_budget(_board(budget.MAX_PANELS)) is None
    nested = {"panels": [{"type": "row", "panels": _board(budget.MAX_PANELS)["panels"]}]}  # the row is one more
    assert budget.panels_over_budget(nested) is not None
    legacy = {"rows": [{"panels": _board(budget.MAX_PANELS + 1)["panels"]}]}
    assert budget.panels_over_budget(legacy) is not None
    assert budget.panels_over_budget("not a dashboard") is None


def test_a_dashboard_file_past_the_byte_budget_is_refused_before_it_is_read(tmp_path, monkeypatch):
    monkeypatch.setattr(budget, "MAX_FILE_BYTES", 1000)
    (tmp_path / "board.json").write_text(json.dumps(_board(100)))
    for argv in (
        ["import", "board.json", "-o", "board.py"],
        ["diff", "board.json", "board.json"],
        ["lint", "board.json"],
    ):
        monkeypatch.chdir(tmp_path)
        result = CliRunner().invoke(main, argv)
        assert result.exit_code == 2 and "bytes, over the budget of 1000 bytes" in result.output, (argv, result.output)


DEEP_JSON = "[" * 100_000 + "]" * 100_000
DEEP_TOML = "a = " + DEEP_JSON + "\n"
GOOD_LEDGER_LINE = (
    '{"uid": "u", "outcome": "published", "time": "t", "git_commit": "c", "profile": "p", "build_sha": "s"}'
)

# command line -> (file name, its text): each file nests past the parser's recursion limit
DEEP_CASES: dict[str, tuple[list[str], str, str]] = {
    "profile": (["--profiles-dir", "{dir}", "profiles"], "x.toml", DEEP_TOML),
    "lint-config": (["lint", "--config", "{file}", str(ROOT / "dashboards")], "lint.toml", DEEP_TOML),
    "publish-config": (["publish", *GRAFANA, "--config", "{file}", "--dry-run"], "dashgen.toml", DEEP_TOML),
    "approved-plan": (["publish", *GRAFANA, "--approved-plan", "{file}", "--dry-run"], "plan.toml", DEEP_TOML),
    "bundle": (["publish", *GRAFANA, "--bundle", "{file}", "--dry-run"], "bundle.json", DEEP_JSON),
    "ledger": (["history", "u", *GRAFANA, "--ledger", "{file}"], "ledger.jsonl", f"{DEEP_JSON}\n{GOOD_LEDGER_LINE}\n"),
}


@pytest.mark.parametrize("case", sorted(DEEP_CASES))
def test_a_file_nested_too_deeply_is_an_input_error_naming_it(case, tmp_path, monkeypatch):
    """These said only "input nested too deeply to process" (the boundary's RecursionError), naming no file."""
    monkeypatch.chdir(tmp_path)
    words, name, text = DEEP_CASES[case]
    (tmp_path / name).write_text(text)
    argv = [w.replace("{file}", str(tmp_path / name)).replace("{dir}", str(tmp_path)) for w in words]
    result = CliRunner().invoke(main, argv, env={"GRAFANA_TOKEN": "x"})
    assert result.exit_code == 2, result.output
    assert str(tmp_path / name) in result.output and "internal error" not in result.output, result.output


def test_a_release_state_lock_or_backup_nested_too_deeply_is_named_or_unknown(tmp_path):
    from dashgen.errors import InputError
    from dashgen.project import read_settings
    from dashgen.publish import backups, lock, stages

    release = "r-20261208T010203Z-abcdef"
    state = stages.state_path(tmp_path / "ledger.jsonl", release)
    state.parent.mkdir(parents=True, exist_ok=True)
    for path in (state, tmp_path / "lock.json", tmp_path / "backup.json", tmp_path / "not-json.json"):
        path.write_text("{" if path.name == "not-json.json" else DEEP_JSON)
    with pytest.raises(InputError, match="nested too deeply"):
        stages.load_state(tmp_path / "ledger.jsonl", release)
    assert (lock.read_holder(tmp_path / "lock.json") or {}).get("user") == "unknown"  # a holder of its own
    for name in ("backup.json", "not-json.json"):
        with pytest.raises(InputError, match=f"{name}: not a backup dashgen wrote"):
            backups.load_backup(tmp_path / name)
    (tmp_path / "dashgen.toml").write_text(DEEP_TOML)
    with pytest.raises(InputError, match="dashgen.toml: not valid TOML .nested too deeply"):
        read_settings(tmp_path)


# command -> (arguments, the last target it writes, made a folder beforehand)
SETS = {
    "build": (["build", "--out", "{out}"], "pd-128/dg-pd-128-cluster.json"),
    "rules": (["rules", "--out", "{out}"], "video-200.yml"),
    "export": (["export", "--format", "grafana-operator", "--out", "{out}"], "grafana-operator/video-200.yaml"),
}


@pytest.mark.parametrize("command", sorted(SETS))
def test_a_target_that_cannot_be_written_leaves_the_whole_set_unwritten(command, tmp_path):
    """A folder in the place of one profile's file: build, rules and export wrote the profiles before it, then
    stopped; every target is now checked first, so nothing is written."""
    words, blocked = SETS[command]
    (tmp_path / "out" / blocked).mkdir(parents=True)
    argv = ["--profiles-dir", str(ROOT / "profiles"), *(w.replace("{out}", str(tmp_path / "out")) for w in words)]
    result = CliRunner().invoke(main, argv)
    assert result.exit_code == 2 and f"{blocked}: is a folder, not a regular file" in result.output, result.output
    assert [p for p in (tmp_path / "out").rglob("*") if not p.is_dir()] == []
