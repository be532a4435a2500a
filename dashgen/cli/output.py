"""What every command's output shares: the one JSON envelope of ``--format json``, tables that fit the
terminal, colour only on a terminal (``NO_COLOR`` respected), a progress bar on stderr when it is a
terminal (quiet otherwise), warnings printed once, and failures summarised by their cause.

The envelope (documented in docs/json-output.md, schema ``dashgen/data/json-envelope.schema.json``)::

    {"command": "lint", "ok": false, "exit_code": 1, "results": <the command's own payload>,
     "errors": [{"message": "..."}]}

A command declares its ``--format`` with :func:`format_option`, which remembers the choice for the exception
boundary of ``dashgen.cli.app``: an error raised with ``--format json`` still prints one envelope on stdout.
A new command wraps its plain results dict with one call: ``emit_json(ctx, results, exit_code)``.

``rich`` is imported only inside the functions that draw, so ``dashgen --version`` never pays for it.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any, NoReturn, cast

import click

from dashgen.errors import redact
from dashgen.escape import report_json, terminal_lines, terminal_text

ENVELOPE_KEYS = ("command", "ok", "exit_code", "results", "errors")
MESSAGE_LINE_LIMIT = 4000  # characters of one line of an error message
LEAST_WRAPPED_COLUMN = 8  # characters a wrapping table column keeps on the narrowest terminal ("sources", "Host/nod")
_WARNED: set[str] = set()


def _root_obj(ctx: click.Context | None) -> dict[str, Any]:
    if ctx is None:
        return {}
    root = ctx.find_root()
    if root.obj is None:
        root.obj = {}
    return root.obj if isinstance(root.obj, dict) else {}


def _remember_format(ctx: click.Context, _param: click.Parameter, value: str) -> str:
    obj = _root_obj(ctx)
    obj["output_format"] = value
    obj["command"] = ctx.info_name or (ctx.command.name if ctx.command else "")
    return value


def format_option(
    *choices: str, default: str = "text", name: str = "output_format", help: str | None = None
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """``--format`` with ``choices`` (``json`` gives the envelope); remembered for the error boundary."""
    return click.option(
        "--format",
        name,
        type=click.Choice(list(choices)),
        default=default,
        show_default=True,
        callback=_remember_format,
        is_eager=True,
        help=help,
    )


def _remember_kinds(ctx: click.Context, param: click.Parameter, values: tuple[str, ...]) -> tuple[str, ...]:
    _remember_format(ctx, param, "json" if "json" in values else "text")
    return values


def kind_format_option(kinds: Sequence[str], what: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """``--format`` of a command that writes files of several kinds (``rules``, ``export``): repeatable, each
    value a file kind or the report format (``text`` / ``json``): ``--format vmalert --format json``."""
    return click.option(
        "--format",
        "formats",
        type=click.Choice([*kinds, "text", "json"]),
        multiple=True,
        callback=_remember_kinds,
        is_eager=True,
        help=f"{what}; json or text: the report on stdout (repeatable).",
    )


def split_kinds(formats: Sequence[str], default: Sequence[str]) -> tuple[list[str], str]:
    """(file kinds, report format) of a :func:`kind_format_option` value; a report format given twice is
    a usage error."""
    reports = [f for f in formats if f in ("text", "json")]
    if len(set(reports)) > 1:
        raise click.UsageError("--format: give text or json, not both")
    kinds = list(dict.fromkeys(f for f in formats if f not in ("text", "json")))
    return kinds or list(default), reports[0] if reports else "text"


def key_values(values: Sequence[str], option: str) -> dict[str, str]:
    """``KEY=VALUE`` arguments (``--label``) as a dict; anything else is a usage error naming the option."""
    out = {}
    for value in values:
        key, sep, item = value.partition("=")
        if not sep or not key.strip():
            raise click.UsageError(f"{option}: expected KEY=VALUE, got {value!r}")
        out[key.strip()] = item.strip()
    return out


def error_items(messages: Sequence[str | dict[str, Any]]) -> list[dict[str, Any]]:
    """``[{"message": ...}]`` from strings (dicts with a message are kept as they are)."""
    return [m if isinstance(m, dict) else {"message": str(m)} for m in messages]


def envelope(
    command: str, results: Any, exit_code: int = 0, errors: Sequence[str | dict[str, Any]] = ()
) -> dict[str, Any]:
    """The one JSON shape of every command: ``ok`` is ``exit_code == 0``."""
    return {
        "command": command,
        "ok": exit_code == 0,
        "exit_code": exit_code,
        "results": results,
        "errors": error_items(errors),
    }


def command_name(ctx: click.Context) -> str:
    names = []
    while ctx.parent is not None:
        names.append(ctx.info_name or "")
        ctx = ctx.parent
    return " ".join(reversed(names)) or (ctx.info_name or "dashgen")


def emit_json(
    ctx: click.Context, results: Any, exit_code: int = 0, errors: Sequence[str | dict[str, Any]] = (), err: bool = False
) -> None:
    """Print the envelope of the current command (once: the error boundary does not print a second one)."""
    obj = _root_obj(ctx)
    obj["json_emitted"] = True
    data = envelope(command_name(ctx), results, exit_code, errors)
    click.echo(report_json(data, indent=2, sort_keys=True, default=str), err=err)


def asked_for_json(args: Sequence[str]) -> bool:
    """Whether the command line asks for ``--format json`` (before any ``--``), read from the words themselves."""
    head = list(args[: args.index("--")] if "--" in args else args)
    return "--format=json" in head or any(
        word == "--format" and head[i + 1 : i + 2] == ["json"] for i, word in enumerate(head)
    )


def emit_error_envelope(ctx: click.Context, message: str, exit_code: int) -> None:
    """On an error under ``--format json``: an envelope on stdout, unless the command printed its own. A usage
    error in the command's own options comes before ``--format`` is read: the typed words tell then."""
    obj = ctx.find_root().obj
    if not isinstance(obj, dict) or obj.get("json_emitted"):
        return
    wants_json = obj["output_format"] == "json" if "output_format" in obj else asked_for_json(obj.get("argv") or [])
    if not wants_json:
        return
    data = envelope(
        str(obj.get("command") or ctx.find_root().invoked_subcommand or "dashgen"), None, exit_code, [message]
    )
    click.echo(report_json(data, indent=2, sort_keys=True))


def report_error(ctx: click.Context, message: str, exit_code: int) -> None:
    """The one way an error is shown, by the group's boundary and by :func:`fail_input` alike; credentials of any
    URL in ``message`` redacted in both forms. Under ``--format json`` the envelope carries the message as it is,
    a JSON string (``report_json`` writes its controls as ``\\u`` escapes); on stderr ``error: `` and its lines,
    each shown as text (a server's or a file name's control sequences never reach the terminal, and a line
    break in it starts no line a CI runner reads as a command)."""
    message = redact(message)
    emit_error_envelope(ctx, message, exit_code)
    given = [line for line in message.splitlines() if line.strip()]
    lines = terminal_lines("\n".join(given), MESSAGE_LINE_LIMIT).split("\n") if given else []
    lines = lines or [terminal_text(message, MESSAGE_LINE_LIMIT)]
    click.echo("\n".join([f"error: {lines[0]}", *lines[1:]]), err=True)


def fail_input(ctx: click.Context, message: str) -> NoReturn:
    """An input error a command reports itself (tests and scripts may invoke it without the group's boundary):
    :func:`report_error`, exit 2."""
    report_error(ctx, message, 2)
    raise SystemExit(2)


def use_color(choice: str = "auto", stream: Any = None) -> bool:
    """``--color``: always, never, or auto (a terminal, and neither NO_COLOR nor TERM=dumb)."""
    if choice != "auto":
        return choice == "always"
    stream = sys.stdout if stream is None else stream
    return stream.isatty() and "NO_COLOR" not in os.environ and os.environ.get("TERM") != "dumb"


def terminal_width(default: int = 100) -> int:
    """``COLUMNS`` when set, else the terminal's width, else ``default`` (a pipe)."""
    try:
        columns = int(os.environ.get("COLUMNS", ""))
        if columns > 0:
            return columns
    except ValueError:
        pass
    if sys.stdout.isatty():
        return os.get_terminal_size().columns
    return default


def print_table(columns: Sequence[tuple[Any, ...]], rows: Sequence[Sequence[str]], wide: bool = False) -> None:
    """A table that fits the terminal: long cells wrap inside their column; ``wide`` never wraps.

    ``columns`` is ``(header, "left" | "right"[, min_width])``; the first column and the right-aligned (numeric)
    ones never wrap, and a ``min_width`` is kept on terminals of 100 columns or more. Colour and bold only on a
    terminal without NO_COLOR.
    """
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    color = use_color()
    width = 100_000 if wide else terminal_width()
    console = Console(
        width=width,
        no_color=not color,
        highlight=False,
        color_system="auto" if color else None,
        force_terminal=color,
        soft_wrap=wide,
    )
    table = Table(
        box=None, padding=(0, 1), pad_edge=False, header_style="bold underline" if color else "", expand=False
    )
    for index, (header, justify, *wish) in enumerate(columns):
        # the first column (the row's name) and numbers never wrap; a text column may wish for a width it keeps
        # while the terminal allows (the others wrap first)
        table.add_column(
            header,
            justify="right" if justify == "right" else "left",
            no_wrap=wide or index == 0 or justify == "right",
            overflow="fold",
            min_width=wish[0] if wish and width >= 100 else None,
        )
    for row in rows:
        # each cell plain text: rich reads a str as its markup ("[link=…]" an OSC 8 link, "[/x]" an error), and a
        # cell may hold a Grafana message or a name from a file; its control sequences shown as text
        table.add_row(*(Text(terminal_lines(cell)) for cell in row))
    console.width = max(width, least_table_width(columns, rows))
    console.print(table)


def least_table_width(columns: Sequence[tuple[Any, ...]], rows: Sequence[Sequence[str]]) -> int:
    """The narrowest a :func:`print_table` table may be drawn: its unwrapped columns (the first, the numbers) at
    their widest cell, each other column :data:`LEAST_WRAPPED_COLUMN` wide, two spaces between columns. A narrower
    terminal (COLUMNS=1, a split pane) gets lines that run past its edge rather than a table cropping digits off
    a number ("16" shown as "1") or dropping whole columns."""
    from rich.cells import cell_len

    def widest(cells: Sequence[object]) -> int:
        return max(cell_len(line) for cell in cells for line in str(cell).split("\n"))

    widths = [
        widest([header, *(row[i] for row in rows if i < len(row))])
        if i == 0 or justify == "right"
        else LEAST_WRAPPED_COLUMN
        for i, (header, justify, *_) in enumerate(columns)
    ]
    return sum(widths) + 2 * max(len(widths) - 1, 0)  # padding=(0, 1) without the edges: two spaces a gap


def warn_once(message: str) -> None:
    """``warning: message`` on stderr, once per command run (per process outside one) whatever the number of
    clients asking."""
    ctx = click.get_current_context(silent=True)
    warned = _root_obj(ctx).setdefault("warned", set()) if ctx is not None else _WARNED
    if message in warned:
        return
    warned.add(message)
    click.echo(message if message.upper().startswith("WARNING") else f"warning: {message}", err=True)


class _DropTlsOff:
    """A logging filter dropping the client's own "verification is OFF" record: the CLI has said it once."""

    def filter(self, record: Any) -> bool:
        return "TLS certificate verification is OFF" not in str(record.getMessage())


def insecure_warned_once() -> None:
    """``--insecure``: print one warning, and silence the library's copies of it (its ``InsecureTLSWarning``,
    its log record, and urllib3's ``InsecureRequestWarning`` on every request)."""
    import logging
    import warnings

    warn_once(
        "WARNING: TLS certificate verification is OFF (--insecure): anyone on the network path can read "
        "the credentials and change what is published"
    )
    from urllib3.exceptions import InsecureRequestWarning  # urllib3 comes with requests, a declared dependency

    from dashgen.net.http import InsecureTLSWarning

    saved_filters = list(warnings.filters)
    warnings.filterwarnings("ignore", category=InsecureTLSWarning)
    warnings.filterwarnings("ignore", category=InsecureRequestWarning)
    added: list[tuple[logging.Logger, _DropTlsOff]] = []
    for name in ("dashgen.net", "dashgen.grafana", "dashgen.live"):
        logger = logging.getLogger(name)
        if not any(isinstance(f, _DropTlsOff) for f in logger.filters):
            drop = _DropTlsOff()
            logger.addFilter(drop)
            added.append((logger, drop))

    def restore() -> None:
        # The silencing belongs to this command only: a program that runs the CLI in-process and then uses
        # the library itself must still hear about its own unverified connections.
        cast(list[Any], warnings.filters)[:] = saved_filters  # typeshed says Sequence; it is the live list
        getattr(warnings, "_filters_mutated", lambda: None)()  # CPython caches the filter list's version
        for logger, drop in added:
            logger.removeFilter(drop)

    ctx = click.get_current_context(silent=True)
    if ctx is not None:
        ctx.find_root().call_on_close(restore)


def summarise_causes(causes: Sequence[str]) -> list[str]:
    """One line per distinct cause, with its count, most frequent first: ``"12 x connection refused"``."""
    counts: dict[str, int] = {}
    for cause in causes:
        counts[cause] = counts.get(cause, 0) + 1
    return [f"{n} x {cause}" for cause, n in sorted(counts.items(), key=lambda item: (-item[1], item[0]))]


@contextmanager
def progress(label: str, total: int | None, enabled: bool = True) -> Iterator[Callable[[int], None]]:
    """A progress bar on stderr while the body runs, when stderr is a terminal (else a no-op callback).

    The callback advances the bar by its argument; ``total=None`` shows a counter without an end.
    """
    if not enabled or not sys.stderr.isatty() or os.environ.get("TERM") == "dumb":

        def skip(_n: int = 1) -> None:
            """No bar: nothing to advance."""

        yield skip
        return
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    console = Console(stderr=True, no_color="NO_COLOR" in os.environ)
    columns = [TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn()]
    with Progress(*columns, console=console, transient=True) as bar:
        task = bar.add_task(label, total=total)

        def advance(n: int = 1) -> None:
            bar.advance(task, n)

        yield advance
