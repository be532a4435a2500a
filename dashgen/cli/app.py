"""The ``dashgen`` command group: one explicit command table, and the one exception boundary that
turns dashgen's errors into a message and the exit code of the contract (0 ok, 1 a check failed
or a publish was refused, 2 usage or input error).

Each command family is one module of ``dashgen.cli``; a module is imported only when its command
runs (or ``--help`` lists them all), so ``dashgen diff`` does not pay for the publish machinery.
"""

from __future__ import annotations

import difflib
import importlib
import os
import sys
import traceback
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NoReturn

import click

from dashgen import __version__
from dashgen.cli.output import emit_error_envelope, report_error
from dashgen.errors import DashgenError, redact
from dashgen.grafana.errors import BadResponse, BrokenAnswer, GrafanaUnreachable
from dashgen.render.collector import heap_left_at_exit

# said after an error of a Grafana that gave no answer, or no answer of Grafana's: where its URL comes from
GRAFANA_URL_HINT = "check GRAFANA_URL (or --grafana-url, or the context's url in dashgen.toml)"

# command name -> "module:attribute" of dashgen.cli, in the order ``--help`` lists them
COMMANDS: dict[str, str] = {
    "init": "init_cmd:init_command",
    "build": "build_cmd:build",
    "profiles": "build_cmd:profiles_command",
    "rules": "rules:rules_command",
    "export": "export_cmd:export_command",
    "index": "index_cmd:index_command",
    "lint": "lint_cmd:lint_command",
    "diff": "diff_cmd:diff_command",
    "check": "check:check_command",
    "validate-queries": "validate_queries:validate_queries",
    "preview": "preview_cmd:preview_command",
    "cost": "cost:cost_command",
    "doctor": "doctor:doctor_command",
    "demo-data": "demo_data:demo_data",
    "publish": "publish:publish",
    "rollback": "history:rollback",
    "history": "history:history",
    "drift": "drift:drift_command",
    "import": "import_cmd:import_command",
    "render-module": "import_cmd:render_module_command",
}


def load_command(name: str) -> click.Command:
    module, attribute = COMMANDS[name].split(":")
    return getattr(importlib.import_module(f"dashgen.cli.{module}"), attribute)


class DashgenGroup(click.Group):
    """Commands from the table, loaded on use, and the one exception boundary of the command line.

    No traceback reaches a user: a ``DashgenError`` becomes ``error: <one line>`` and its exit code
    (2 input, 1 a failed check); so every command that talks to Grafana exits alike: 2 when Grafana gave no
    answer or one not Grafana's (the message then says where its URL comes from), 1 when it answered and
    refused. An ``OSError`` or decoding error is an input error (2); anything else
    is reported as an internal error in one line (exit 2). Every message is redacted (no credentials of
    any URL). ``dashgen --debug <command>`` (or ``DASHGEN_DEBUG=1``) prints the traceback as well.
    """

    def main(self, args: Sequence[str] | None = None, *rest: Any, **extra: Any) -> Any:
        """As ``click.Group.main``; run on the process's own command line (``args`` None: the ``dashgen`` script,
        ``python -m dashgen``), the process exits next, and its heap is left out of the exit's collections
        (``heap_left_at_exit``). A caller passing the words (a test's ``CliRunner``) goes on: nothing changes."""
        try:
            return super().main(args, *rest, **extra)
        finally:
            if args is None and extra.get("standalone_mode", True):  # only a process that exits next
                heap_left_at_exit()

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        args = hoist_group_options(args)
        # the words as typed: a usage error inside the command's own options comes before its --format callback
        ctx.ensure_object(dict)["argv"] = list(args)
        return super().parse_args(ctx, args)

    def list_commands(self, ctx: click.Context) -> list[str]:
        return list(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        return load_command(cmd_name) if cmd_name in COMMANDS else None

    def resolve_command(
        self, ctx: click.Context, args: list[str]
    ) -> tuple[str | None, click.Command | None, list[str]]:
        name = args[0] if args else ""
        if name and not name.startswith("-") and name not in COMMANDS:
            close = difflib.get_close_matches(name, list(COMMANDS), n=1, cutoff=0.6)
            if close:
                ctx.fail(f"No such command {name!r}. Did you mean {close[0]!r}?")
        return super().resolve_command(ctx, args)

    def invoke(self, ctx: click.Context) -> Any:  # as click.Group.invoke: the command callback's return value
        try:
            return super().invoke(ctx)
        except click.ClickException as exc:
            emit_error_envelope(ctx, redact(exc.format_message()), exc.exit_code)
            raise
        except (click.exceptions.Exit, click.Abort, SystemExit):
            raise
        except DashgenError as exc:
            self._fail(ctx, exc, _message(exc), exc.exit_code)
        except KeyboardInterrupt as exc:
            self._fail(ctx, exc, "interrupted", 130)
        except (OSError, UnicodeError) as exc:
            self._fail(ctx, exc, _os_message(exc), 2)
        except RecursionError as exc:
            self._fail(ctx, exc, "input nested too deeply to process", 2)
        except MemoryError as exc:
            self._fail(ctx, exc, "input too large: out of memory", 2)
        except Exception as exc:
            self._fail(
                ctx,
                exc,
                f"internal error: {type(exc).__name__}: {exc} (rerun with --debug for the traceback and report it)",
                2,
            )

    @staticmethod
    def _fail(ctx: click.Context, exc: BaseException, message: str, code: int) -> NoReturn:
        obj = ctx.find_root().obj
        if (isinstance(obj, dict) and obj.get("debug")) or os.environ.get("DASHGEN_DEBUG") == "1":
            text = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
            click.echo(redact(text), err=True, nl=False)
        report_error(ctx, message or type(exc).__name__, code)  # the envelope too, under --format json
        sys.exit(code)


def hoist_group_options(args: list[str]) -> list[str]:
    """``dashgen build --profiles-dir DIR`` as ``dashgen --profiles-dir DIR build``: the group's folder option is
    accepted after the command too (before any ``--``)."""
    args = list(args)
    end = args.index("--") if "--" in args else len(args)
    for i, arg in enumerate(args[:end]):
        if arg == "--profiles-dir" and i + 1 < end and i > 0:
            return [arg, args[i + 1], *args[:i], *args[i + 2 :]]
        if arg.startswith("--profiles-dir=") and i > 0:
            return [arg, *args[:i], *args[i + 1 :]]
    return args


def _message(exc: DashgenError) -> str:
    # no answer of Grafana's (not its own JSON cut short, whatever exit code a reading command gives it): the URL
    if isinstance(exc, GrafanaUnreachable | BadResponse) and not isinstance(exc, BrokenAnswer):
        return f"{exc}; {GRAFANA_URL_HINT}"
    return str(exc)


def _os_message(exc: OSError | UnicodeError) -> str:
    if isinstance(exc, UnicodeError):
        return f"not UTF-8 text: {exc}"
    where = f"{exc.filename}: " if getattr(exc, "filename", None) else ""
    return f"{where}{exc.strerror or exc}"


@click.group(cls=DashgenGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="dashgen")
@click.option(
    "--profiles-dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Folder of deployment profiles (default: ./profiles).",
)
@click.option("--debug", is_flag=True, help="On an error, print the traceback as well (or DASHGEN_DEBUG=1).")
@click.pass_context
def main(ctx: click.Context, profiles_dir: Path | None, debug: bool) -> None:
    """dashgen: Grafana dashboards as code for LLM inference clusters.

    Exit codes: 0 ok, 1 a check failed or a publish was refused, 2 usage or input error.
    """
    ctx.ensure_object(dict)
    ctx.obj["profiles_dir"] = profiles_dir
    ctx.obj["debug"] = debug
