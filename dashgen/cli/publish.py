"""``dashgen publish``, ``dashgen rollback`` and ``dashgen history``: the release loop's I/O edge.

Order of a release: export every target dashboard and save each export as a backup (before
anything else) -> rebuild and validate -> plan (diff, guards, approvals) -> validate new queries
-> push (overwrite false, exported version) -> read back and verify the SHA -> ledger.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import click

from dashgen.build import build_all
from dashgen.cli.options import selected_profiles
from dashgen.dashboard import dashboard_specs
from dashgen.errors import CheckFailed, InputError
from dashgen.grafana.client import GrafanaClient
from dashgen.publish import ledger as ledger_file
from dashgen.publish.backups import DEFAULT_BACKUP_DIR, load_backup, save_backup
from dashgen.publish.execute import Outcome, execute_plan, now_stamp
from dashgen.publish.gitinfo import current_commit
from dashgen.publish.plan import LiveState, Plan, PublishTarget, plan_release
from dashgen.render.canonical import content_sha
from dashgen.render.ids import panel_id
from dashgen.render.spec import DashboardSpec


def grafana_options(function):
    """Options shared by every command that talks to Grafana."""
    options = [
        click.option("--grafana-url", envvar="GRAFANA_URL", required=True, help="Grafana base URL (or GRAFANA_URL)."),
        click.option("--token-file", type=click.Path(dir_okay=False, path_type=Path),
                     help="File holding a service-account token (else GRAFANA_TOKEN, else GRAFANA_USER/PASSWORD)."),
        click.option("--org-id", type=int, help="Sends X-Grafana-Org-Id."),
        click.option("--ca-bundle", type=click.Path(dir_okay=False, exists=True), help="CA bundle for TLS."),
        click.option("--insecure", is_flag=True, help="Do not verify TLS certificates (loudly warned)."),
        click.option("--timeout", type=float, default=30.0, show_default=True, help="Read timeout in seconds."),
    ]
    for option in reversed(options):
        function = option(function)
    return function


def release_options(function):
    """Options of the commands that write a release: ledger, backup folder and output format."""
    options = [
        click.option("--ledger", type=click.Path(dir_okay=False, path_type=Path), default=ledger_file.DEFAULT_LEDGER,
                     show_default=True, help="The release ledger (JSON lines)."),
        click.option("--backup-dir", type=click.Path(file_okay=False, path_type=Path), default=DEFAULT_BACKUP_DIR,
                     show_default=True, help="Where exports and read-backs are kept."),
        click.option("--format", "output_format", type=click.Choice(["text", "json"]), default="text",
                     show_default=True),
    ]
    for option in reversed(options):
        function = option(function)
    return function


def make_client(grafana_url: str, token_file: Path | None, org_id: int | None, ca_bundle: str | None,
                insecure: bool, timeout: float) -> GrafanaClient:
    token = None
    basic = None
    if token_file is not None:
        try:
            token = token_file.read_text(encoding="utf-8").strip()
        except OSError as exc:
            raise InputError(f"{token_file}: cannot read the token file ({exc.strerror})") from None
        if not token:
            raise InputError(f"{token_file}: the token file is empty")
    elif os.environ.get("GRAFANA_TOKEN"):
        token = os.environ["GRAFANA_TOKEN"].strip()
    elif os.environ.get("GRAFANA_USER"):
        basic = (os.environ["GRAFANA_USER"], os.environ.get("GRAFANA_PASSWORD", ""))
    else:
        raise InputError("no Grafana credentials: set GRAFANA_TOKEN, use --token-file, or GRAFANA_USER/"
                         "GRAFANA_PASSWORD")
    if insecure:
        click.echo("WARNING: TLS certificate verification is OFF (--insecure)", err=True)
    return GrafanaClient(grafana_url, token=token, basic_auth=basic, org_id=org_id, ca_bundle=ca_bundle,
                         insecure=insecure, read_timeout=timeout)


def export_live(client: GrafanaClient, uids: list[str], backup_dir: Path, stamp: str) -> dict[str, LiveState | None]:
    """Step 1: read every target from Grafana and keep a backup of each before anything else."""
    live: dict[str, LiveState | None] = {}
    for uid in uids:
        exported = client.get_dashboard(uid)
        if exported is None:
            live[uid] = None
            continue
        path = save_backup(backup_dir, uid, exported.version, stamp,
                           {"dashboard": exported.dashboard, "meta": exported.meta})
        live[uid] = LiveState(uid, exported.version, exported.folder_uid, exported.dashboard, str(path),
                              exported.provisioned)
    return live


def recorded_copies(records: list[dict[str, Any]], uids: list[str]) -> dict[str, dict[str, Any]]:
    """The read-back copy of each uid's last release, where the ledger points to one that still exists."""
    copies = {}
    for uid in uids:
        last = ledger_file.last_stored(records, uid)
        path = Path(last["published_file"]) if last and last.get("published_file") else None
        if path is not None and path.exists():
            copies[uid] = load_backup(path)["dashboard"]
    return copies


def _progress(enabled: bool):
    def wrap(items: Iterable[Any]) -> Iterable[Any]:
        items = list(items)
        if not enabled or sum(1 for item in items if item.writes) <= 1:
            return items
        return _bar(items)

    def _bar(items: list[Any]):
        with click.progressbar(items, label="publishing", file=sys.stderr,
                               item_show_func=lambda i: i.target.uid if i else "") as bar:
            yield from bar

    return wrap


def _report(plan: Plan, outcomes: list[Outcome] | None, output_format: str, dry_run: bool) -> None:
    if output_format == "json":
        data = plan.to_dict()
        data["dry_run"] = dry_run
        if outcomes is not None:
            data["outcomes"] = [o.__dict__ for o in outcomes]
        click.echo(json.dumps(data, indent=2, sort_keys=True))
        return
    click.echo(plan.render_text())
    if dry_run:
        click.echo("dry run: nothing was sent to Grafana")
    for outcome in outcomes or []:
        click.echo(f"{outcome.outcome:<14} {outcome.uid}: {outcome.detail}")


def run_release(client: GrafanaClient, targets: list[PublishTarget], live: dict[str, LiveState | None], *,
                approvals: tuple[str, ...], adopt_live: tuple[str, ...], folder_uid: str | None, ledger: Path,
                backup_dir: Path, dry_run: bool, output_format: str, grafana_url: str, validator=None) -> None:
    """Plan, print, and (unless dry-run) execute; raises CheckFailed when anything was refused or failed."""
    records = ledger_file.read(ledger)
    plan = plan_release(targets, live, records, frozenset(approvals), frozenset(adopt_live), folder_uid,
                        recorded_copies(records, [t.uid for t in targets]))
    if dry_run:
        _report(plan, None, output_format, dry_run=True)
        if plan.refused:
            raise CheckFailed("the plan has refusals (see above)")
        return
    outcomes = execute_plan(plan, client, ledger_path=ledger, backup_dir=backup_dir, git_commit=current_commit(),
                            grafana_url=grafana_url, validator=validator,
                            progress=_progress(output_format == "text"))
    _report(plan, outcomes, output_format, dry_run=False)
    failed = [o for o in outcomes if not o.ok]
    if failed:
        raise CheckFailed(f"{len(failed)} of {len(outcomes)} dashboards not published: "
                          + ", ".join(f"{o.uid} ({o.outcome})" for o in failed))


@click.command()
@grafana_options
@click.option("--profile", "profile_names", multiple=True, help="Profile to publish (repeatable; default: all).")
@click.option("--folder-uid", help="Folder to publish into (default: where the dashboard is; new ones: root).")
@click.option("--dry-run", is_flag=True, help="Export, back up and print the plan; send no write.")
@click.option("--approve", multiple=True, metavar="KEY", help="Approve a refused change (see the plan).")
@click.option("--adopt-live", multiple=True, metavar="UID", help="Accept edits made in Grafana to this dashboard.")
@click.option("--datasource-url", help="Validate new and changed queries against this Prometheus-compatible API.")
@release_options
@click.pass_context
def publish(ctx: click.Context, grafana_url: str, token_file: Path | None, org_id: int | None,
            ca_bundle: str | None, insecure: bool, timeout: float, profile_names: tuple[str, ...],
            folder_uid: str | None, dry_run: bool, approve: tuple[str, ...], adopt_live: tuple[str, ...],
            datasource_url: str | None, ledger: Path, backup_dir: Path, output_format: str) -> None:
    """Publish the dashboards of the selected profiles to Grafana, guarded and verified.

    Changed queries of existing panels, changed variable definitions, removals and edits made in
    Grafana since the last release are refused unless approved; every push is read back and its
    SHA compared with the build; each dashboard gets a line in the ledger.
    """
    profiles = selected_profiles(ctx, list(profile_names))
    uids = [spec.uid for profile in profiles for spec in dashboard_specs(profile)]
    with make_client(grafana_url, token_file, org_id, ca_bundle, insecure, timeout) as client:
        live = export_live(client, uids, backup_dir, now_stamp())
        built = build_all(profiles)
        targets = [
            PublishTarget(b.profile, b.uid, b.document, b.sha256, keys_by_panel_id(b.spec))
            for b in built
        ]
        validator = _query_validator(datasource_url) if datasource_url else None
        run_release(client, targets, live, approvals=approve, adopt_live=adopt_live, folder_uid=folder_uid,
                    ledger=ledger, backup_dir=backup_dir, dry_run=dry_run, output_format=output_format,
                    grafana_url=grafana_url, validator=validator)


def keys_by_panel_id(spec: DashboardSpec) -> dict[int, str]:
    """Panel id -> stable key; ids derive from keys, so the map also holds for older versions of the panel."""
    return {panel_id(panel.key): panel.key for panel in spec.panels()}


def _panel_keys(ctx: click.Context, profile_name: str, uid: str) -> dict[int, str]:
    """Panel id -> stable key from the current build of the profile (ids derive from keys, so they still match)."""
    try:
        (profile,) = selected_profiles(ctx, [profile_name])
    except (InputError, ValueError):
        return {}
    return next((keys_by_panel_id(spec) for spec in dashboard_specs(profile) if spec.uid == uid), {})


def _query_validator(datasource_url: str):
    from dashgen.publish.query_validation import make_validator

    return make_validator(datasource_url)


def _find_backup(uid: str, to: str, ledger: list[dict[str, Any]], backup_dir: Path,
                 client: GrafanaClient) -> tuple[dict[str, Any], str]:
    """The dashboard JSON to roll back to: a release (build SHA prefix) or a Grafana version number."""
    records = [r for r in ledger if r.get("uid") == uid]
    if not to.isdigit():
        for record in reversed(records):
            if str(record.get("build_sha", "")).startswith(to) and record.get("published_file"):
                return load_backup(Path(record["published_file"]))["dashboard"], f"release {to}"
        raise InputError(f"{uid}: no published release with build SHA starting {to!r} in the ledger")
    version = int(to)
    for record in reversed(records):
        if record.get("grafana_version") == version and record.get("published_file"):
            return load_backup(Path(record["published_file"]))["dashboard"], f"release v{version}"
    for path in sorted((backup_dir / uid).glob(f"*-v{version}.json")):
        return load_backup(path)["dashboard"], f"backup {path}"
    kept = client.get_version(uid, version)
    if kept.data:
        return kept.data, f"Grafana version {version}"
    raise InputError(f"{uid}: no backup and no Grafana history for version {version}")


@click.command()
@grafana_options
@click.argument("uid")
@click.option("--to", "to", required=True, metavar="VERSION_OR_RELEASE",
              help="A Grafana version number, or a release's build SHA prefix from the ledger.")
@click.option("--approve", multiple=True, metavar="KEY")
@click.option("--adopt-live", multiple=True, metavar="UID")
@click.option("--dry-run", is_flag=True)
@release_options
@click.pass_context
def rollback(ctx: click.Context, grafana_url: str, token_file: Path | None, org_id: int | None,
             ca_bundle: str | None, insecure: bool, timeout: float, uid: str, to: str, approve: tuple[str, ...],
             adopt_live: tuple[str, ...], dry_run: bool,
             ledger: Path, backup_dir: Path, output_format: str) -> None:
    """Republish a recorded backup of UID through the same guarded path as publish."""
    with make_client(grafana_url, token_file, org_id, ca_bundle, insecure, timeout) as client:
        live = export_live(client, [uid], backup_dir, now_stamp())
        document, source = _find_backup(uid, to, ledger_file.read(ledger), backup_dir, client)
        document = {k: v for k, v in document.items() if k not in ("id", "version")}
        profile = next((r.get("profile", "") for r in reversed(ledger_file.read(ledger)) if r.get("uid") == uid), "")
        click.echo(f"rolling {uid} back to {source}", err=True)
        target = PublishTarget(profile, uid, document, content_sha(document), _panel_keys(ctx, profile, uid))
        run_release(client, [target], live, approvals=approve, adopt_live=adopt_live, folder_uid=None, ledger=ledger,
                    backup_dir=backup_dir, dry_run=dry_run, output_format=output_format, grafana_url=grafana_url)


@click.command()
@grafana_options
@click.argument("uid")
@click.option("--ledger", type=click.Path(dir_okay=False, path_type=Path), default=ledger_file.DEFAULT_LEDGER,
              show_default=True)
@click.option("--format", "output_format", type=click.Choice(["text", "json"]), default="text", show_default=True)
def history(grafana_url: str, token_file: Path | None, org_id: int | None, ca_bundle: str | None, insecure: bool,
            timeout: float, uid: str, ledger: Path, output_format: str) -> None:
    """Show the ledger's releases of UID beside Grafana's own versions (Grafana keeps only 20)."""
    records = [r for r in ledger_file.read(ledger) if r.get("uid") == uid]
    with make_client(grafana_url, token_file, org_id, ca_bundle, insecure, timeout) as client:
        versions = client.list_versions(uid)
    by_version = {r.get("grafana_version"): r for r in records if r.get("outcome") == "published"}
    rows = []
    for version in sorted({v.version for v in versions} | set(k for k in by_version if k is not None)):
        grafana = next((v for v in versions if v.version == version), None)
        record = by_version.get(version)
        rows.append({
            "version": version,
            "in_grafana": grafana is not None,
            "grafana_message": grafana.message if grafana else None,
            "grafana_created": grafana.created if grafana else None,
            "grafana_created_by": grafana.created_by if grafana else None,
            "release_time": record.get("time") if record else None,
            "build_sha": record.get("build_sha") if record else None,
            "git_commit": record.get("git_commit") if record else None,
        })
    if output_format == "json":
        click.echo(json.dumps({"uid": uid, "versions": rows, "ledger": records}, indent=2, sort_keys=True))
        return
    click.echo(f"{'version':>7}  {'grafana':<8} {'released by dashgen':<22} {'build':<13} message")
    for row in rows:
        released = row["release_time"] or "-"
        build = (row["build_sha"] or "-")[:12]
        note = row["grafana_message"] or ("(pruned from Grafana's history)" if not row["in_grafana"] else "")
        click.echo(f"{row['version']:>7}  {'yes' if row['in_grafana'] else 'no':<8} {released:<22} {build:<13} {note}")


