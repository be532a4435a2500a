"""A staged release over three Grafana stand-ins (the :func:`grafanas` fixture: a canary, then a fleet of two),
the ``dashgen.toml`` naming them (:func:`configure`), and ``dashgen publish`` run with their tokens
(:func:`publish`, :func:`report`)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from standin import GrafanaStandin

from dashgen.cli.app import main

TOKENS = {
    "CANARY_TOKEN": "glsa_canary_token_0123456789abcdef",
    "EU_TOKEN": "glsa_eu_token_0123456789abcdef0123",
    "US_TOKEN": "glsa_us_token_0123456789abcdef0123",
}

CONTEXTS = {"canary": "CANARY_TOKEN", "prod-eu": "EU_TOKEN", "prod-us": "US_TOKEN"}


@pytest.fixture
def grafanas() -> Iterator[dict[str, GrafanaStandin]]:
    with (
        GrafanaStandin(token=TOKENS["CANARY_TOKEN"]) as canary,
        GrafanaStandin(mode="grafana13", token=TOKENS["EU_TOKEN"]) as eu,
        GrafanaStandin(token=TOKENS["US_TOKEN"]) as us,
    ):
        yield {"canary": canary, "prod-eu": eu, "prod-us": us}


def configure(work: Path, grafanas: dict[str, GrafanaStandin], datasources: dict[str, str] | None = None) -> None:
    text = "".join(
        f'[contexts.{name}]\nurl = "{grafanas[name].url}"\ntoken_env = "{token}"\n'
        + (f'datasource_url = "{datasources[name]}"\n' if name in (datasources or {}) else "")
        for name, token in CONTEXTS.items()
    )
    text += '[stages]\ncanary = ["canary"]\nfleet = ["prod-eu", "prod-us"]\n'
    (work / "dashgen.toml").write_text(text)


def publish(work: Path, *args: str) -> Result:
    argv = ["--profiles-dir", str(work / "profiles"), "publish", "--config", str(work / "dashgen.toml")]
    argv += ["--ledger", str(work / "ledger.jsonl"), "--backup-dir", str(work / "backups"), "--timeout", "2"]
    return CliRunner().invoke(main, [*argv, *args], env={"GRAFANA_TOKEN": "", "GRAFANA_URL": "", **TOKENS})


def report(result: Result) -> dict:
    return json.loads(result.stdout)
