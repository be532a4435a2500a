"""``dashgen import`` and ``dashgen render-module``: from Grafana back to code, and the module back to JSON.

``dashgen import SOURCE -o module.py`` reads a dashboard JSON file (plain, a Grafana export with ``meta``,
or the k8s resource); ``--live UID`` reads what Grafana stores now, with the connection options of
``dashgen diff --live`` and ``drift`` (``dashgen.cli.grafana_opts``). ``--panel KEY`` writes one panel (a
dashgen panel key, the imported key, or the panel id): the way to bring a person's edit in Grafana into
review. It prints the migrations applied and every escape hatch, and proves the round trip (the written
module renders to a dashboard ``dashgen diff`` finds equal to the migrated source): exit 0, 1 when the
round trip finds a change, 2 on bad input.
"""

from __future__ import annotations

import json
import math
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from dashgen.cli.grafana_opts import connection_options, make_client
from dashgen.cli.output import emit_json, format_option
from dashgen.diff.render import dashboard_text
from dashgen.document import NotADashboard, is_v2
from dashgen.document.budget import MAX_FILE_BYTES, file_over_budget
from dashgen.errors import CheckFailed, InputError
from dashgen.escape import inline_text, terminal_lines
from dashgen.files import NotARegularFile, atomic_write, read_regular_text, refuse_special
from dashgen.files.parsers import NestedTooDeeply, parse_json
from dashgen.importer import BadShape, ImportResult, ModuleError, NoSuchPanel, import_dashboard, render_module_file
from dashgen.render.canonical import encode
from dashgen.render.team_fit import fit_imported


def read_source(path: Path) -> Any:
    """The decoded JSON of a dashboard file; one clear line when it cannot be read."""
    try:
        too_large = file_over_budget(path.stat().st_size)
        if too_large is not None:
            raise InputError(f"{path}: {too_large}")
        text = read_regular_text(path, MAX_FILE_BYTES)
    except OSError as exc:
        raise InputError(f"{path}: cannot read ({exc.strerror})") from None
    except UnicodeDecodeError:
        raise InputError(f"{path}: not UTF-8 text") from None
    try:
        doc = parse_json(text, parse_constant=_not_json(path), parse_int=_integer(path), parse_float=_real(path))
    except json.JSONDecodeError as exc:
        raise InputError(f"{path}: not JSON (line {exc.lineno}, column {exc.colno}: {exc.msg})") from None
    except NestedTooDeeply as exc:
        raise InputError(f"{path}: JSON {exc}") from None
    return doc


MAX_DIGITS = 40  # an integer longer than this is no dashboard's (ids, versions, sizes); Python caps at 4,300


def _not_json(path: Path) -> Callable[[str], Any]:
    def refuse(name: str) -> Any:
        raise InputError(f"{path}: {name} is not JSON (a Grafana export never holds it): replace it by a number")

    return refuse


def _integer(path: Path) -> Callable[[str], int]:
    def parse(text: str) -> int:
        if len(text.lstrip("-")) > MAX_DIGITS:
            raise InputError(f"{path}: an integer of {len(text.lstrip('-')):,} digits is no dashboard's value")
        return int(text)

    return parse


def _real(path: Path) -> Callable[[str], float]:
    def parse(text: str) -> float:
        value = float(text)
        if not math.isfinite(value):
            raise InputError(f"{path}: the number {text[:40]} is out of range (not a finite number)")
        return value

    return parse


def first_unencodable(value: Any, where: str = "$") -> str | None:
    """The JSON path of the first string (or key) that is not encodable text (a lone surrogate), else None."""
    stack: list[tuple[str, Any]] = [(where, value)]
    while stack:
        path, item = stack.pop()
        if isinstance(item, str):
            try:
                item.encode("utf-8")
            except UnicodeEncodeError:
                return path
        elif isinstance(item, dict):
            for key, child in item.items():
                try:
                    str(key).encode("utf-8")
                except UnicodeEncodeError:
                    return f"{path} (a key)"
                stack.append((f"{path}.{key}", child))
        elif isinstance(item, list):
            stack.extend((f"{path}[{index}]", child) for index, child in enumerate(item))
    return None


def check_dashboard(doc: Any, where: str) -> None:
    """Refuse what is not a dashboard (classic JSON, or a v2 resource), naming the file and the field."""
    if not isinstance(doc, dict):
        raise InputError(f"{where}: the top-level JSON value is not an object")
    body = doc.get("spec") if "apiVersion" in doc and isinstance(doc.get("spec"), dict) else doc.get("dashboard", doc)
    if not isinstance(body, dict):
        raise InputError(f"{where}: dashboard: not an object")
    if "elements" in body and "layout" in body:
        if is_v2(doc) and not body["elements"]:
            raise InputError(f"{where}: spec.elements: a v2 dashboard without elements: nothing to import")
        if is_v2(doc):
            return  # a v2 resource is read through its classic view (dashgen.document.v2view)
        raise InputError(
            f"{where}: apiVersion: a v2 dashboard spec without its resource; import the whole object "
            '{"apiVersion": "dashboard.grafana.app/v2…", "kind": "Dashboard", "metadata": …, "spec": …}'
        )
    if not any(key in body for key in ("panels", "rows", "templating")):
        raise InputError(f"{where}: no panels, rows or templating: not a Grafana dashboard")
    for key in ("panels", "rows"):
        if key in body and not isinstance(body[key], list):
            raise InputError(f"{where}: {key}: expected a list, found {type(body[key]).__name__}")


def _origin(path: Path | None, live: str | None, url: str | None, doc: Any) -> str:
    if live is not None:
        return f"Grafana {url or '$GRAFANA_URL'}, dashboard uid {live} (live)"
    meta = doc.get("meta") if isinstance(doc, dict) and isinstance(doc.get("meta"), dict) else None
    version = (doc.get("dashboard") or {}).get("version") if meta is not None else None
    return f"{path}" + (f" (a Grafana export with meta, version {version})" if meta is not None else "")


def _report(result: ImportResult, out: str, output_format: str) -> None:
    plan = result.plan
    panels = sum(len(g.panels) for g in plan.groups)
    if output_format == "json":
        changed = result.round_trip.has_semantic_changes
        emit_json(
            click.get_current_context(),
            {
                "module": out,
                "title": plan.title,
                "uid": plan.uid,
                "groups": len(plan.groups),
                "panels": panels,
                "migrations": list(result.migrations),
                "escape_hatches": [
                    {"key": h.key, "title": h.title, "path": h.path, "reason": h.reason} for h in result.hatches
                ],
                "round_trip": {"semantic_changes": result.round_trip.change_count},
            },
            1 if changed else 0,
            [f"round trip: {result.round_trip.change_count} semantic change(s)"] if changed else [],
            err=out == "-",
        )
        return
    where = "stdout" if out == "-" else out
    click.echo(f"wrote {where}: {panels} panel(s) in {len(plan.groups)} group(s) of {plan.title!r}", err=out == "-")
    lines = [
        f"migrations applied: {len(result.migrations)}",
        *[f"  - {inline_text(n)}" for n in result.migrations],
        f"escape hatches (raw JSON, marked TODO(import)): {len(result.hatches)}",
        *[f"  - {inline_text(h.key)}: {inline_text(h.path)}: {inline_text(h.reason)}" for h in result.hatches],
    ]
    if result.round_trip.has_semantic_changes:
        lines += [
            f"round trip: {result.round_trip.change_count} semantic change(s):",
            *dashboard_text(result.round_trip),
        ]
    else:
        lines.append("round trip: import -> render-module -> dashgen diff: no semantic change")
    # the dashboard's keys, paths and titles are foreign: each on its own line, no control sequence of theirs
    report = "\n".join([*lines, *_as_team_panels(plan, Path(out).stem if out != "-" else "module")])
    click.echo(terminal_lines(report), err=out == "-")


def _as_team_panels(plan: Any, module: str) -> list[str]:
    """What listing the module in a profile's ``extra_modules`` changes to fit the build, and what it cannot."""
    fitted = fit_imported(tuple(g.spec() for g in plan.groups), plan.variables, {}, module, plan.title or module)
    return [
        f"as team panels (a profile's extra_modules): {len(fitted.notes)} change(s) made when built:",
        *[f"  - {inline_text(note)}" for note in fitted.notes],
        f"  - a variable dashgen's dashboard defines differently ($node, $gpu, ...) is renamed "
        f"${inline_text(module)}_<name>",
        "  - built for a profile, every query gets the profile's deployment matcher and its label names by role "
        "(node, gpu, instance, job, ...); `dashgen check` and `dashgen doctor` name a query that cannot",
    ]


@click.command("import")
@click.argument("source", required=False, type=click.Path(dir_okay=False, path_type=Path))
@click.option(
    "-o", "--output", "output", required=True, metavar="MODULE.py", help="The Python module to write ('-' for stdout)."
)
@click.option("--live", metavar="UID", help="Import what Grafana stores now under this dashboard uid.")
@click.option(
    "--panel",
    "panel_key",
    metavar="KEY",
    help="Write only this panel: a dashgen panel key, the imported key, or the panel id.",
)
@click.option("--force", is_flag=True, help="Overwrite an existing module.")
@click.option(
    "--migrated-out",
    "migrated_out",
    type=click.Path(dir_okay=False, path_type=Path),
    metavar="FILE.json",
    help="Also write the migrated source the round trip compares against (so anyone can rerun "
    "`dashgen diff FILE.json <render-module output>`).",
)
@format_option("text", "json")
@connection_options
def import_command(
    source: Path | None,
    output: str,
    live: str | None,
    panel_key: str | None,
    force: bool,
    migrated_out: Path | None,
    output_format: str,
    grafana_url: str | None,
    token_file: Path | None,
    org_id: int | None,
    ca_bundle: str | None,
    insecure: bool,
    timeout: float,
    retries: int,
    retry_backoff: float,
) -> None:
    """Turn a Grafana dashboard (SOURCE file or --live UID) into a dashgen panel module."""
    if (source is None) == (live is None):
        raise click.UsageError("give a SOURCE file or --live UID (one of them)")
    if output != "-" and Path(output).exists() and not force:
        raise InputError(f"{output}: exists; use --force to overwrite it")
    written = [Path(output)] if output != "-" else []
    for path in [*written, *([migrated_out] if migrated_out is not None else [])]:
        try:  # refused before the import's work, in the words the write would refuse it with
            refuse_special(path)
        except NotARegularFile as exc:
            raise InputError(f"{path}: cannot write ({exc.strerror})") from None
    if live is not None:
        with make_client(
            grafana_url, token_file, org_id, ca_bundle, insecure, timeout, retries, retry_backoff
        ) as client:
            found = client.get_dashboard(live)
        if found is None:
            raise InputError(f"--live {live}: Grafana has no dashboard with this uid")
        doc: Any = {"dashboard": found.dashboard, "meta": {"version": found.version, "folderUid": found.folder_uid}}
        where = f"--live {live}"
    else:
        assert source is not None
        doc, where = read_source(source), str(source)
    bad = first_unencodable(doc)
    if bad is not None:  # a file's is refused when read; a live answer's here
        raise InputError(f"{where}: {bad}: a lone surrogate (an escape like \\ud800 alone) is not text")
    check_dashboard(doc, where)
    try:
        result = import_dashboard(doc, _origin(source, live, grafana_url, doc), panel=panel_key)
    except NoSuchPanel:
        raise InputError(f"--panel {panel_key}: no panel of {where} has this key or id") from None
    except (NotADashboard, BadShape) as exc:
        raise InputError(f"{where}: {exc}") from None
    if output == "-":
        sys.stdout.write(result.text)
    else:
        try:
            atomic_write(Path(output), result.text.encode("utf-8"))
        except OSError as exc:
            raise InputError(f"{output}: cannot write ({exc.strerror})") from None
    if migrated_out is not None:
        try:
            atomic_write(migrated_out, encode(result.source))
        except OSError as exc:
            raise InputError(f"{migrated_out}: cannot write ({exc.strerror})") from None
    _report(result, output, output_format)
    if result.round_trip.has_semantic_changes:
        raise CheckFailed(
            f"round trip: the written module renders {result.round_trip.change_count} semantic "
            "change(s) away from the source"
        )


@click.command("render-module")
@click.argument("module", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--out", "out", required=True, metavar="FILE.json", help="Where to write the dashboard ('-': stdout).")
def render_module_command(module: Path, out: str) -> None:
    """Render a module written by ``dashgen import`` (its DASHBOARD) to dashboard JSON."""
    try:
        doc = render_module_file(module)
    except ModuleError as exc:
        raise InputError(str(exc)) from None
    data = encode(doc)
    if out == "-":
        sys.stdout.write(data.decode("utf-8"))
        return
    try:
        atomic_write(Path(out), data)
    except OSError as exc:
        raise InputError(f"{out}: cannot write ({exc.strerror})") from None
    click.echo(f"wrote {out}")
