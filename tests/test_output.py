"""Readable output: ``dashgen profiles`` fits the terminal (100 columns, or COLUMNS) and ``--wide`` keeps one line
per profile; colour only on a terminal and never with NO_COLOR; a progress bar only when stderr is a terminal;
repeated warnings printed once."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from click.testing import CliRunner

from dashgen.cli import output
from dashgen.cli.app import main
from dashgen.deployment.profile import load_profiles

ROOT = Path(__file__).resolve().parent.parent
PROFILES = ROOT / "profiles"


def _profiles(*args: str, columns: str | None = "100") -> str:
    env = {"COLUMNS": columns} if columns else {"COLUMNS": ""}
    result = CliRunner().invoke(main, ["--profiles-dir", str(PROFILES), "profiles", *args], env=env)
    assert result.exit_code == 0, result.output
    return result.stdout


@pytest.mark.parametrize("columns", ["100", "72"])
def test_profiles_table_fits_the_terminal_width(columns):
    text = _profiles(columns=columns)
    assert max(len(line) for line in text.splitlines()) <= int(columns), text
    for profile in load_profiles([], PROFILES):
        assert profile.name in text


@pytest.mark.parametrize("columns", ["1", "40", "60"])
def test_a_terminal_narrower_than_the_table_crops_no_number_and_drops_no_column(columns):
    """COLUMNS=40 showed h20-16's 16 GPUs as "1" and left the pools and sources columns out; lines now run past
    a terminal too narrow for the table's unwrapped columns."""
    text = _profiles(columns=columns)
    header = text.splitlines()[0].split()
    assert header == ["profile", "nodes", "GPUs", "pools", "Store/node", "Host/node", "sources"], text
    for profile in load_profiles([], PROFILES):
        (line,) = [row for row in text.splitlines() if row.startswith(profile.name + " ")]
        assert line.split()[1:3] == [str(profile.nodes), str(profile.total_gpus)], text


def test_profiles_table_fits_100_columns_in_a_pipe_without_columns():
    assert max(len(line) for line in _profiles(columns=None).splitlines()) <= 100


def test_profiles_wide_keeps_each_profile_on_one_line_with_every_source():
    text = _profiles("--wide")
    profiles = load_profiles([], PROFILES)
    for profile in profiles:
        (line,) = [row for row in text.splitlines() if row.startswith(profile.name + " ")]
        for source in profile.sources.values():
            if source.exported:
                assert source.name in line
    assert max(len(line) for line in text.splitlines()) > 100, "the wide table is wider than the wrapped one"


def test_no_colour_codes_when_not_a_terminal():
    assert "\x1b[" not in _profiles()


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_colour_only_on_a_terminal_and_never_with_no_color(monkeypatch):
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.setenv("TERM", "xterm")
    assert output.use_color("auto", _Tty()) is True
    assert output.use_color("auto", io.StringIO()) is False
    monkeypatch.setenv("NO_COLOR", "1")
    assert output.use_color("auto", _Tty()) is False
    assert output.use_color("always", io.StringIO()) is True


def test_progress_is_quiet_when_stderr_is_not_a_terminal(monkeypatch, capsys):
    monkeypatch.setattr("sys.stderr", io.StringIO())
    with output.progress("working", 3) as advance:
        for _ in range(3):
            advance(1)
    import sys

    assert sys.stderr.getvalue() == ""


def test_progress_draws_on_a_terminal(monkeypatch):
    tty = _Tty()
    monkeypatch.setattr("sys.stderr", tty)
    monkeypatch.setenv("TERM", "xterm")
    with output.progress("working", 3) as advance:
        advance(3)
    assert "working" in tty.getvalue()


def test_a_warning_is_printed_once(capsys):
    for _ in range(3):
        output.warn_once("the same thing, said by three clients")
    assert capsys.readouterr().err.count("the same thing") == 1


def test_causes_are_summarised_with_counts_most_frequent_first():
    assert output.summarise_causes(["b", "a", "b", "c", "b", "a"]) == ["3 x b", "2 x a", "1 x c"]


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["build", "--profiles-dir", "p", "--out", "o"], ["--profiles-dir", "p", "build", "--out", "o"]),
        (["build", "--profiles-dir=p"], ["--profiles-dir=p", "build"]),
        (["--profiles-dir", "p", "build"], ["--profiles-dir", "p", "build"]),
        (["lint", "--", "--profiles-dir", "x"], ["lint", "--", "--profiles-dir", "x"]),
    ],
)
def test_profiles_dir_is_accepted_after_the_command(args, expected):
    from dashgen.cli.app import hoist_group_options

    assert hoist_group_options(args) == expected


def test_build_with_profiles_dir_after_the_command_reads_that_folder(tmp_path):
    result = CliRunner().invoke(main, ["build", "--profiles-dir", str(tmp_path / "none"), "--out", str(tmp_path)])
    assert result.exit_code == 2 and str(tmp_path / "none") in result.output


@pytest.mark.parametrize("colour", [True, False], ids=["colour", "plain"])
def test_a_table_cell_is_plain_text_not_rich_markup_nor_control_sequences(colour, monkeypatch, capsys):
    monkeypatch.setattr(output, "use_color", lambda *_: colour)
    cells = ["[link=https://evil.example]open[/link] [bold red]ok[/bold red]", "[/bold] \x1b]8;;https://evil\x07\u202e"]
    output.print_table([("a", "left"), ("b", "left")], [cells], wide=True)
    shown = capsys.readouterr().out
    assert "[link=https://evil.example]open[/link]" in shown and "[/bold] \\x1b]8;;https://evil\\x07\\u202e" in shown
    assert "\x1b]8;" not in shown and "\x07" not in shown and "\u202e" not in shown, repr(shown)
