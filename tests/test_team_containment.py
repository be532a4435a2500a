"""A team's module cannot fake a green check: exiting (``sys.exit(0)``, ``SystemExit`` from ``build()``) or
raising any ``BaseException`` at import or in ``build()`` is an input error naming the module (exit 2) for
``build``, ``check`` and ``export``, and so is a ``build()`` giving anything but GroupSpec rows; a module that hangs
at import is stopped by the time bound, named; and ``panels_dir`` must lie inside the repository."""

from __future__ import annotations

import json
import time

import pytest
from team_init import dashgen, list_module, team  # noqa: F401 - the team fixture

COMMANDS = (("build",), ("check",), ("export", "--out", "deploy-out"))

EXITS = {
    "exit-at-import": "import sys\nsys.exit(0)\n",
    "systemexit-in-build": "def build(profile, topology):\n    raise SystemExit(0)\n",
    "baseexception-at-import": "class Odd(BaseException):\n    pass\n\nraise Odd('quiet')\n",
    "generatorexit-in-build": "def build(profile, topology):\n    raise GeneratorExit()\n",
}


@pytest.mark.parametrize("source", sorted(EXITS))
def test_a_module_that_exits_or_raises_a_base_exception_is_an_input_error_naming_it(team, source):  # noqa: F811
    (team / "panels" / "sneaky.py").write_text(EXITS[source])
    list_module(team, "h20-16", "sneaky")
    results = {command: dashgen(team, *command) for command in COMMANDS}
    assert {command: r.exit_code for command, r in results.items()} == dict.fromkeys(COMMANDS, 2), results
    named = [c for c, r in results.items() if "sneaky.py" in r.output and "extra_modules: sneaky" in r.output]
    assert named == list(COMMANDS), {c: r.output[-1500:] for c, r in results.items()}


WRONG_ROWS = {
    "a-number": ("    return 42\n", "it returned int"),
    "a-string": ("    return 'rows'\n", "it returned str"),
    "a-dict": ("    return {'row': 1}\n", "it returned dict"),
    "a-number-among-rows": ("    return [1]\n", "it gave a int among its rows"),
    "endless": ("    import itertools\n    return itertools.repeat(None)\n", "more than 10000 rows"),
    "a-generator-that-raises": ("    yield from ()\n    raise ValueError('half built')\n", "ValueError: half built"),
}


@pytest.mark.parametrize("case", sorted(WRONG_ROWS))
def test_a_build_that_returns_no_rows_is_an_input_error_naming_it(team, case):  # noqa: F811
    """What build() returns or yields is read inside the bound: not a traceback, not an endless build."""
    body, says = WRONG_ROWS[case]
    (team / "panels" / "odd.py").write_text("def build(profile, topology):\n" + body)
    list_module(team, "h20-16", "odd")
    result = dashgen(team, "build")
    assert result.exit_code == 2 and "odd.py" in result.output and says in result.output, result.output[-1500:]
    assert "internal error" not in result.output


def test_a_module_that_hangs_at_import_is_stopped_and_named(team):  # noqa: F811
    (team / "panels" / "sleepy.py").write_text("import time\ntime.sleep(3600)\n")
    list_module(team, "h20-16", "sleepy")
    began = time.monotonic()
    result = dashgen(team, "build", env={"DASHGEN_MODULE_TIMEOUT": "2"})
    assert time.monotonic() - began < 30
    assert result.exit_code == 2 and "sleepy.py" in result.output and "did not finish within 2s" in result.output


@pytest.mark.parametrize("where", ["/tmp", "../elsewhere", "panels/../../outside"])
def test_panels_dir_outside_the_repository_is_refused(team, where):  # noqa: F811
    settings = team / "dashgen.toml"
    text = settings.read_text()
    settings.write_text(
        f'panels_dir = "{where}"\n' + "\n".join(line for line in text.splitlines() if not line.startswith("panels_dir"))
    )
    list_module(team, "h20-16", "example_panels")
    result = dashgen(team, "build")
    assert result.exit_code == 2 and "panels_dir" in result.output and "outside the repository" in result.output


@pytest.mark.parametrize("command", [c[0] for c in COMMANDS])
def test_a_typo_d_top_level_key_of_dashgen_toml_is_refused_by_the_build_as_by_publish(team, command):  # noqa: F811
    """``panel_dir`` for ``panels_dir``: the build used to ignore it (and the default folder), its check passing
    where the publish job then refused the same file."""
    settings = team / "dashgen.toml"
    settings.write_text('panel_dir = "team/boards"\n' + settings.read_text())
    list_module(team, "h20-16", "example_panels")
    result = dashgen(team, *next(c for c in COMMANDS if c[0] == command))
    assert result.exit_code == 2, result.output[-2000:]
    assert "dashgen.toml: unknown top-level key 'panel_dir'" in result.output and "panels_dir" in result.output


def test_panels_dir_inside_the_repository_is_fine(team):  # noqa: F811
    settings = team / "dashgen.toml"
    (team / "team" / "boards").mkdir(parents=True)
    (team / "panels" / "example_panels.py").rename(team / "team" / "boards" / "example_panels.py")
    text = settings.read_text()
    settings.write_text(
        'panels_dir = "team/boards"\n'
        + "\n".join(line for line in text.splitlines() if not line.startswith("panels_dir"))
    )
    list_module(team, "h20-16", "example_panels")
    result = dashgen(team, "build")
    assert result.exit_code == 0, result.output[-2000:]


def test_render_module_of_a_module_that_exits_is_an_input_error_naming_it(tmp_path):
    from click.testing import CliRunner

    from dashgen.cli.app import main

    module = tmp_path / "board.py"
    module.write_text("import sys\nsys.exit(0)\n")
    result = CliRunner().invoke(main, ["render-module", str(module), "--out", str(tmp_path / "board.json")])
    assert result.exit_code == 2 and "board.py" in result.output and "exit(0)" in result.output, result.output
    assert not (tmp_path / "board.json").exists()


PRINTS = 'print("HELLO \\x1b]52;c;ZXZpbA==\\x07 \\u202e")\nimport sys\nsys.stderr.write("to stderr\\n")\n'


def test_what_a_module_prints_never_reaches_stdout_and_is_shown_as_text(tmp_path):
    """``render-module --out -`` writes the dashboard on stdout: a module's print went there too (no JSON any
    more) and its control sequences reached the terminal; now each line is on stderr, named and shown as text."""
    from click.testing import CliRunner

    from dashgen.cli.app import main

    board = {"uid": "u", "title": "t", "panels": [{"id": 1, "type": "stat", "title": "p", "targets": []}]}
    (tmp_path / "board.json").write_text(json.dumps(board))
    made = CliRunner().invoke(main, ["import", str(tmp_path / "board.json"), "-o", str(tmp_path / "board.py")])
    assert made.exit_code == 0, made.output
    module = tmp_path / "board.py"
    module.write_text(PRINTS + module.read_text())
    result = CliRunner().invoke(main, ["render-module", str(module), "--out", "-"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["uid"] == "u"
    assert f"{module}: printed: HELLO \\x1b]52;c;ZXZpbA==\\x07 \\u202e" in result.stderr, result.stderr
    assert f"{module}: printed: to stderr" in result.stderr and "\x1b" not in result.stderr


def test_a_team_module_that_prints_leaves_the_json_envelope_whole(team):  # noqa: F811
    source = (team / "panels" / "example_panels.py").read_text()
    (team / "panels" / "noisy.py").write_text(
        PRINTS + source.replace("    node =", "    print('in build')\n    node =", 1)
    )
    list_module(team, "h20-16", "noisy")
    result = dashgen(team, "build", "--format", "json")
    assert result.exit_code == 0, result.output[-2000:]
    assert json.loads(result.stdout)["ok"] is True
    assert "extra_modules: noisy" in result.stderr and "noisy.py): printed: in build" in result.stderr
    assert "\x1b" not in result.stderr


def test_what_a_call_prints_after_its_time_ran_out_never_reaches_the_command_s_output(monkeypatch):
    """The call runs on in its thread when the command stops: what it prints then must not land in the command's
    stdout (a ``--format json`` envelope written after the error), while the command's own writes still do."""
    import io
    import sys
    import threading

    from dashgen.errors import InputError
    from dashgen.team_panels import contained

    out = io.StringIO()
    monkeypatch.setattr(sys, "stdout", out)
    monkeypatch.setenv("DASHGEN_MODULE_TIMEOUT", "0.05")
    release, printed = threading.Event(), threading.Event()

    def call() -> None:
        release.wait(10)
        print("LATE PRINT")
        printed.set()

    with pytest.raises(InputError, match="did not finish"):
        contained(call, "slow.py", "build()")
    release.set()
    assert printed.wait(10)
    print('{"ok": false}')  # the command's own envelope, after the error
    assert out.getvalue() == '{"ok": false}\n'


@pytest.mark.parametrize("given", ["abc", "0", "-1", "nan", "inf", "86400"])
def test_a_module_time_bound_that_is_no_number_of_seconds_is_an_input_error_naming_it(monkeypatch, given):
    from dashgen.errors import InputError
    from dashgen.team_panels import TIME_LIMIT, time_limit

    monkeypatch.setenv("DASHGEN_MODULE_TIMEOUT", given)
    with pytest.raises(InputError, match=f"DASHGEN_MODULE_TIMEOUT={given}: not a number of seconds"):
        time_limit()
    monkeypatch.setenv("DASHGEN_MODULE_TIMEOUT", "2.5")
    assert time_limit() == 2.5
    monkeypatch.setenv("DASHGEN_MODULE_TIMEOUT", "")
    assert time_limit() == TIME_LIMIT
