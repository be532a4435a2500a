"""``dashgen drift``: what was edited in Grafana since the last release, for a scheduled CI job.

For each dashboard the ledger says dashgen last published to this Grafana instance and organisation
(its newest ``published`` or ``unchanged`` record with a stored SHA), read the live dashboard the way a
release reads it (``dashgen.publish.export``) and compare its content SHA with the stored SHA. Equal:
no drift. Different: diff the release's read-back copy (the ledger's ``published_file``) with the live
dashboard, panel by panel and variable by variable; a difference
that is only what a Grafana UI save adds is reported as such and is not drift. A dashboard deleted
in Grafana, one whose read-back copy is gone (without the diff), and one a Grafana 13 UI save turned
into the v2 schema (not diffable) are drift too; a v2 release is diffed with the live v2
dashboard. Grafana is reached as by ``dashgen publish`` (its connection options and ``--context NAME``
of ``dashgen.toml``, ``dashgen.cli.grafana_opts``).
Exit 0 no drift, 1 drift, 2 usage or input error, or Grafana could not be read (drift unknown).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Literal

import click

from dashgen.cli.grafana_opts import (
    grafana_client,
    ledger_option,
    resolve_release_paths,
    resolve_target,
    target_options,
)
from dashgen.cli.output import emit_json, format_option
from dashgen.diff.comment import Section, render_comment
from dashgen.diff.engine import DashboardDiff, diff_dashboards
from dashgen.diff.render import FileDiff, dashboard_text, diff_to_json
from dashgen.document import is_v2
from dashgen.errors import InputError
from dashgen.escape import inline_text, markdown_code, markdown_text, terminal_lines
from dashgen.grafana.errors import GrafanaError
from dashgen.publish import ledger as ledger_file
from dashgen.publish.backups import backup_dashboard, load_backup
from dashgen.publish.export import Connection, connect, export_one
from dashgen.publish.ledger import LedgerRecord

# ui-save-only: Grafana's own save rewrote the layout or defaults, no query or panel changed
DriftStatus = Literal["clean", "ui-save-only", "edited", "deleted"]


@dataclass(frozen=True)
class Drift:
    """One dashboard's state against its last release."""

    uid: str
    profile: str
    status: DriftStatus
    detail: str
    diff: DashboardDiff | None = None

    @property
    def drifted(self) -> bool:
        return self.status in ("edited", "deleted")


def released(
    records: list[LedgerRecord], instance: ledger_file.Instance, uids: tuple[str, ...]
) -> dict[str, LedgerRecord]:
    """uid → the ledger's last verified release of it to ``instance``; every named uid must have one. Where
    that release kept no read-back copy (a no-op release), ``published_file`` is the copy of the newest
    release that stored the same SHA."""
    mine = ledger_file.of_instance(records, instance)
    wanted = list(uids) or sorted({str(r.uid) for r in mine if r.uid})
    found = {}
    for uid in wanted:
        last = ledger_file.last_stored(mine, uid)
        if last is None:
            continue
        copy = ledger_file.read_back_record(mine, last)
        found[uid] = replace(last, published_file=copy.published_file) if copy else last
    unknown = [uid for uid in uids if uid not in found]
    if unknown:
        raise InputError(f"the ledger has no verified release of {', '.join(unknown)} to {instance.label}")
    return found


def _recorded_copy(record: LedgerRecord) -> dict[str, Any] | None:
    path = Path(record.published_file) if record.published_file else None
    if path is None or not path.exists():
        return None
    try:
        copy = backup_dashboard(load_backup(path))
        if copy is None:
            raise ValueError("neither a dashboard nor a v2 dashboard resource")
        return copy
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise InputError(f"{path}: cannot read the release's read-back copy ({exc})") from None


def drift_of(connection: Connection, uid: str, record: LedgerRecord) -> Drift:
    """Compare what Grafana stores now for ``uid`` with the release ``record``."""
    profile = str(record.profile or "")
    version = record.grafana_version
    live = export_one(connection, uid)
    if live is None:
        return Drift(uid, profile, "deleted", f"released as v{version}, no longer in Grafana")
    if live.sha == record.stored_sha:
        return Drift(uid, profile, "clean", f"live v{live.version} is the release (SHA {live.sha[:12]})")
    copy = _recorded_copy(record)
    if live.stored_v2 and not is_v2(copy):  # a v1 release a Grafana 13 UI save turned into v2
        return Drift(
            uid,
            profile,
            "edited",
            f"released as v{version}; saved since in Grafana 13's v2 schema "
            f"(not diffable: {'; '.join(live.v2_losses) or 'v2'})",
        )
    edited = f"live v{live.version} SHA {live.sha[:12]} != released v{version} {str(record.stored_sha)[:12]}"
    if copy is None:
        return Drift(uid, profile, "edited", f"{edited}; the release's read-back copy is gone, so no diff")
    diff = diff_dashboards(copy, live.document)
    if not diff.has_semantic_changes:
        return Drift(
            uid,
            profile,
            "ui-save-only",
            f"{edited}; only what a Grafana UI save adds ({diff.noise} noise differences), no semantic edit",
        )
    return Drift(uid, profile, "edited", f"{edited}: {diff.change_count} semantic change(s)", diff)


def _text(drifts: list[Drift]) -> str:
    lines: list[str] = []
    for d in drifts:
        lines.append(f"{d.status:<13} {inline_text(d.uid)} ({inline_text(d.profile or '?')}): {inline_text(d.detail)}")
        if d.diff is not None:
            lines += dashboard_text(d.diff, indent="    ")
    count = sum(d.drifted for d in drifts)
    lines.append(f"drift: {count} of {len(drifts)} dashboard(s) edited in Grafana since their last release")
    return "\n".join(lines) + "\n"


def _json(drifts: list[Drift], instance: str) -> dict[str, Any]:
    rows = [
        {
            "uid": d.uid,
            "profile": d.profile,
            "status": d.status,
            "drifted": d.drifted,
            "detail": d.detail,
            **({"diff": diff_to_json(d.diff)} if d.diff is not None else {}),
        }
        for d in drifts
    ]
    data = {"grafana": instance, "drift": any(d.drifted for d in drifts), "dashboards": rows}
    return json.loads(json.dumps(data, default=str))


def _markdown(drifts: list[Drift]) -> str:
    files = [FileDiff(f"{d.profile}/{d.uid}.json" if d.profile else d.uid, d.diff) for d in drifts if d.diff]
    preface = [f"- **{markdown_text(d.status)}** {markdown_code(d.uid)}: {markdown_text(d.detail)}" for d in drifts]
    return render_comment(
        [Section("Edited in Grafana since the last release", files)],
        title="dashgen drift",
        preface=preface,
        full_report="`dashgen drift --format text`",
    )


@click.command("drift")
@target_options
@click.argument("uids", nargs=-1, metavar="[UID]...")
@ledger_option()
@format_option("text", "json", "markdown")
@click.pass_context
def drift_command(
    ctx: click.Context, uids: tuple[str, ...], ledger: Path | None, output_format: str, **params: Any
) -> None:
    """Show every dashboard edited in Grafana since dashgen last published it (default: every dashboard the
    ledger has released to this Grafana, or to the --context of dashgen.toml); exit 1 when any was."""
    params["ledger"] = ledger
    resolve_release_paths(params)
    ledger = params["ledger"]
    records = ledger_file.read(ledger)
    target = resolve_target(params)
    try:
        with grafana_client(target, params) as client:
            live = connect(client, target.org_id)
            releases = released(records, live.instance, uids)
            if not releases:
                raise InputError(f"{ledger}: no verified release to {live.instance.label} to compare with")
            drifts = [drift_of(live, uid, record) for uid, record in releases.items()]
    except GrafanaError as exc:  # exit 2 whatever Grafana said: 1 means "edited in Grafana"
        raise exc.said_of("cannot read the live dashboards, drift unknown").as_input_error() from None
    code = 1 if any(d.drifted for d in drifts) else 0
    if output_format == "json":
        emit_json(
            ctx,
            _json(drifts, live.instance.label),
            code,
            [f"{d.uid}: {d.status}: {d.detail}" for d in drifts if d.drifted],
        )
        raise SystemExit(code)
    shown = {"text": _text, "markdown": _markdown}[output_format](drifts)
    click.echo(terminal_lines(shown) if output_format == "text" else shown, nl=False)
    raise SystemExit(code)
