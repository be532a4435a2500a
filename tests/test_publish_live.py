"""The publish loop against a real Grafana: ``make test-live`` with GRAFANA_URL and GRAFANA_TOKEN set.

Skipped otherwise. Uses a throw-away profile (uid ``dg-livetest-<random>-cluster``) in a throw-away
folder and deletes both afterwards, so it never touches an existing dashboard. What the stand-in
simulates (a person saving in the UI, a save between export and push) is done here through the
same HTTP API, which is what a second writer does.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from dashgen.cli.app import main
from dashgen.grafana.client import GrafanaClient
from dashgen.render.canonical import content_sha

pytestmark = [
    pytest.mark.live,
    pytest.mark.skipif(not os.environ.get("GRAFANA_URL"), reason="set GRAFANA_URL and GRAFANA_TOKEN (make test-live)"),
]
ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def live(tmp_path_factory):
    name = f"livetest-{secrets.token_hex(3)}"
    work = tmp_path_factory.mktemp("live")
    profiles = work / "profiles"
    profiles.mkdir()
    text = (ROOT / "profiles" / "h20-16.toml").read_text().replace('name = "h20-16"', f'name = "{name}"')
    (profiles / f"{name}.toml").write_text(text)
    client = GrafanaClient(
        os.environ["GRAFANA_URL"],
        token=os.environ.get("GRAFANA_TOKEN"),
        basic_auth=(os.environ["GRAFANA_USER"], os.environ.get("GRAFANA_PASSWORD", ""))
        if os.environ.get("GRAFANA_USER") and not os.environ.get("GRAFANA_TOKEN")
        else None,
    )
    folder = client.create_folder(f"dashgen {name}", uid=name)
    yield {"name": name, "uid": f"dg-{name}-cluster", "work": work, "client": client, "folder": folder.uid}
    try:
        client.delete_dashboard(f"dg-{name}-cluster")
    finally:
        client.close()
    shutil.rmtree(work, ignore_errors=True)


def publish(live, *args):
    argv = [
        "--profiles-dir",
        str(live["work"] / "profiles"),
        "publish",
        "--folder-uid",
        live["folder"],
        "--ledger",
        str(live["work"] / "ledger.jsonl"),
        "--backup-dir",
        str(live["work"] / "backups"),
        *args,
    ]
    return CliRunner().invoke(main, argv, env={k: v for k, v in os.environ.items() if k.startswith("GRAFANA_")})


def records(live):
    return [json.loads(line) for line in (live["work"] / "ledger.jsonl").read_text().splitlines()]


def test_live_first_publish_is_verified(live):
    result = publish(live)
    assert result.exit_code == 0, result.output
    assert records(live)[-1]["outcome"] == "published"
    stored = live["client"].get_dashboard(live["uid"])
    assert content_sha(stored.dashboard) == records(live)[-1]["build_sha"]


def test_live_republish_unchanged_writes_nothing(live):
    before = live["client"].get_dashboard(live["uid"]).version
    assert publish(live).exit_code == 0
    assert live["client"].get_dashboard(live["uid"]).version == before
    assert records(live)[-1]["outcome"] == "unchanged"


def test_live_edit_is_refused_then_overwritten(live):
    client = live["client"]
    current = client.get_dashboard(live["uid"])
    edited = dict(current.dashboard, title="edited by a person")
    client.save_dashboard(edited, live["folder"], "a person's edit")
    refused = publish(live)
    assert refused.exit_code == 1 and "--overwrite-live" in refused.output
    assert client.get_dashboard(live["uid"]).dashboard["title"] == "edited by a person"
    overwritten = publish(live, "--overwrite-live", live["uid"])
    assert overwritten.exit_code == 0, overwritten.output


def test_live_dry_run_sends_no_write(live):
    before = live["client"].get_dashboard(live["uid"]).version
    assert publish(live, "--dry-run").exit_code == 0
    assert live["client"].get_dashboard(live["uid"]).version == before
