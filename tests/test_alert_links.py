"""Every alert links out: ``runbook_url`` (the profile's ``[dashboard] runbook_base`` and the alert's section) and
``dashboard_url`` (the deployment's cluster dashboard, the entity's variables from the alert's labels, a time range
covering the alert's ``for``), on every shipped profile's rule file; bad bases are refused naming the field."""

from __future__ import annotations

import json
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest
from click.testing import CliRunner

from dashgen.cli.app import main
from dashgen.dashboard import dashboard_specs
from dashgen.deployment.profile import load_profile, load_profiles
from dashgen.render import yamlcheck
from dashgen.rules import links, render_rule_files
from dashgen.rules.links import LinkBase, alert_links

ROOT = Path(__file__).resolve().parent.parent
PROFILES = load_profiles(directory=ROOT / "profiles")


def with_dashboard(lines: str) -> str:
    """h20-16's profile with ``lines`` added to its ``[dashboard]`` table."""
    text = (ROOT / "profiles" / "h20-16.toml").read_text(encoding="utf-8")
    assert text.count("[dashboard]\n") == 1
    return text.replace("[dashboard]\n", f"[dashboard]\n{lines}\n", 1)


def alerts(profile) -> list[dict]:
    (data,) = render_rule_files([profile]).values()
    return [r for g in yamlcheck.load(data)["groups"] for r in g["rules"] if "alert" in r]


@pytest.mark.parametrize("profile", PROFILES, ids=lambda p: p.name)
def test_every_alert_links_its_runbook_and_its_dashboard(profile):
    uids = {spec.uid for spec in dashboard_specs(profile)}
    found = alerts(profile)
    assert found
    for rule in found:
        notes = rule["annotations"]
        assert "runbook" not in notes and notes["runbook_url"].startswith("docs/alerts.md#"), rule["alert"]
        url = urlsplit(notes["dashboard_url"].split("{{")[0])
        assert url.path.removeprefix("/d/") in uids, rule["alert"]
        query = parse_qs(url.query)
        assert query["to"] == ["now"] and query["from"][0].startswith("now-")
        node = profile.label("node")
        assert f"{{{{ with $labels.{node} }}}}&var-node={{{{ . | urlquery }}}}{{{{ end }}}}" in notes["dashboard_url"]


def test_the_bases_come_from_the_profile(tmp_path):
    text = with_dashboard(
        'runbook_base = "https://git.example/sre/team/blob/main/docs/alerts.md"\ngrafana_url = "https://grafana.example/"'
    )
    path = tmp_path / "h20-16.toml"
    path.write_text(text, encoding="utf-8")
    found = alerts(load_profile(path))
    assert found
    for rule in found:
        notes = rule["annotations"]
        assert notes["runbook_url"].startswith("https://git.example/sre/team/blob/main/docs/alerts.md#")
        assert notes["dashboard_url"].startswith("https://grafana.example/d/dg-h20-16-cluster?from=now-")


def test_a_label_the_rule_sets_itself_is_written_and_for_widens_the_range():
    base = LinkBase(
        "https://rb.example/doc.md", "https://g.example", "dg-x-cluster", (("node", "node"), ("gpu", "gpu"))
    )
    links = alert_links({"alert": "GPUHot", "for": "10m", "labels": {"node": "n 1/a"}}, base, "gpu-hot")
    assert links["runbook_url"] == "https://rb.example/doc.md#gpu-hot"
    assert links["dashboard_url"] == (
        "https://g.example/d/dg-x-cluster?from=now-4200s&to=now&var-node=n%201%2Fa"
        "{{ with $labels.gpu }}&var-gpu={{ . | urlquery }}{{ end }}"
    )


@pytest.mark.parametrize(
    ("line", "field"),
    [
        ('grafana_url = "grafana.example"', "grafana_url"),
        ('grafana_url = "https://g.example/{{ x }}"', "grafana_url"),
        ('runbook_base = "https://x.example/a b"', "runbook_base"),
        ('runbook_base = "docs/alerts.md#x"', "runbook_base"),
        ('runbook_base = "javascript:fetch(`//evil.example`)//"', "runbook_base"),
        ('runbook_base = "data:text/html;base64,PGI+eDwvYj4="', "runbook_base"),
        ('runbook_base = "docs/alerts.md\\u001b]8;;https://evil.example\\u001b\\\\"', "runbook_base"),
        ('grafana_url = "https://g.example/\\u009b2J"', "grafana_url"),
    ],
)
def test_a_bad_base_is_refused_naming_the_field(tmp_path, line, field):
    text = with_dashboard(line)
    (tmp_path / "h20-16.toml").write_text(text, encoding="utf-8")
    result = CliRunner().invoke(main, ["--profiles-dir", str(tmp_path), "rules", "--out", str(tmp_path / "r")])
    assert result.exit_code == 2, result.output
    assert f"dashboard.{field}" in result.output and "Traceback" not in result.output


def _rendered_panels(profile) -> dict[int, dict]:
    from dashgen.build import build_profile

    found = {}
    for built in build_profile(profile):
        for panel in built.document["panels"]:
            for item in (panel, *panel.get("panels", [])):
                found[item["id"]] = item
    return found


@pytest.mark.parametrize("profile", PROFILES, ids=lambda p: p.name)
def test_the_dashboard_link_opens_a_panel_that_reads_what_the_alert_reads(profile):
    from dashgen.render.scope import metric_names
    from dashgen.rules import rule_groups

    recorded = {r.record: r.expr for g in rule_groups(profile) for r in g.rules if hasattr(r, "record")}

    def reads(expr: str) -> set[str]:
        return {m for name in metric_names(expr) for m in (reads(recorded[name]) if name in recorded else {name})}

    panels = _rendered_panels(profile)
    found = alerts(profile)
    opened = {}
    for rule in found:
        query = parse_qs(urlsplit(rule["annotations"]["dashboard_url"].split("{{")[0]).query)
        if "viewPanel" not in query:
            continue
        panel = panels[int(query["viewPanel"][0])]  # a panel of the dashboard the link opens
        shown = set().union(*(reads(t["expr"]) for t in panel["targets"]))
        assert reads(rule["expr"]) & shown, (rule["alert"], panel["title"])
        opened[rule["alert"]] = panel["title"]
    assert len(opened) >= 0.85 * len(found), sorted({r["alert"] for r in found} - set(opened))
    expected = {  # the panel an on-call would open first, where the profile has the alert
        "GpuXidFatal": "Xid and row remapping per GPU",
        "HostCpuSaturated": "CPU busy per node",
        "CollectorMemoryNearLimit": "Collector resident memory against its limit",
        "GatewayCircuitBreakerOpen": "Gateway: circuit breaker state per backend",
        "StoreAllocFailing": "Store allocation failures",
    }
    checked = 0
    for name, title in expected.items():
        if name in opened:
            assert opened[name].startswith(title), (name, opened[name])
            checked += 1
    assert checked >= 2 or profile.name == "video-200", opened


def test_an_alert_no_panel_reads_opens_the_dashboard_without_a_panel():
    base = LinkBase("https://rb.example/doc.md", "https://g.example", "dg-x-cluster", ())
    links = alert_links({"alert": "X", "for": "5m", "expr": "nothing_on_any_panel > 0"}, base)
    assert "viewPanel" not in links["dashboard_url"]


def test_the_links_metric_names_are_read_from_the_cache_folder_on_the_next_run(tmp_path, monkeypatch) -> None:
    """The rule files' links remember each query's metric names in the cache folder: a later run reads them
    without parsing; a broken cache file is read afresh and rewritten; a run with nothing new writes nothing."""
    import promql_parser

    from dashgen.render import scope

    real_parse = promql_parser.parse
    monkeypatch.setenv("DASHGEN_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(scope, "_KNOWN", scope._KnownNames())
    scope.metric_names.cache_clear()
    exprs = ['sum by (node) (rate(dashgen_links_cache_a_total{job="x"}[5m]))', 'dashgen_links_cache_b{node=~"$node"}']
    first = [scope.metric_names(e) for e in exprs]
    assert first == [frozenset({"dashgen_links_cache_a_total"}), frozenset({"dashgen_links_cache_b"})]
    scope.save_known_names()
    (written,) = tmp_path.glob("metric-names-*.json")

    def refused(text: str):
        raise AssertionError(f"parsed again: {text}")

    monkeypatch.setattr(scope, "_KNOWN", scope._KnownNames())  # a new process: nothing in memory
    scope.metric_names.cache_clear()
    monkeypatch.setattr(scope.pp, "parse", refused)
    assert [scope.metric_names(e) for e in exprs] == first
    stamp = written.stat().st_mtime_ns
    scope.save_known_names()
    assert written.stat().st_mtime_ns == stamp  # nothing new: not rewritten

    written.write_text("{not json", encoding="utf-8")
    monkeypatch.setattr(scope, "_KNOWN", scope._KnownNames())
    scope.metric_names.cache_clear()
    monkeypatch.setattr(scope.pp, "parse", real_parse)
    assert [scope.metric_names(e) for e in exprs] == first
    scope.save_known_names()
    assert len(json.loads(written.read_text(encoding="utf-8"))) == 2
    scope.metric_names.cache_clear()


def _panel_to_open_scoring_every_panel(alert, base):
    """panel_to_open as first written: every panel scored, the best kept only if it reads some of the alert."""
    read = links._read_metrics(str(alert.get("expr", "")), dict(base.recorded))
    read = read - {"up"} or read
    if not read or not base.panels:
        return None
    look = links._words(str(alert["labels"].get("look", "")))

    def score(panel):
        return (round(len(read & panel.metrics) / len(read), 2), len(look & panel.words), -len(panel.metrics))

    best = max(base.panels, key=score)
    return best.id if read & best.metrics else None


def test_scoring_only_the_panels_that_read_the_alert_opens_the_panel_scoring_every_panel_opens() -> None:
    """Random panels and alerts, among them alerts reading over 200 metrics (a share of one rounds to 0 and ties
    with the panels that read none) and panels tied on every score: the same panel, or none."""
    import random

    rng = random.Random(5)
    pool = [f"m{i}" for i in range(300)]
    words = ["gpu", "queue", "cache", "node", "health", "rate"]
    chosen = 0
    for _ in range(400):
        count = rng.choice([1, 2, 3, 250])
        most = 1 if count == 250 else 4  # one metric of 250 read: a share of 0.004, rounded to 0
        panels = tuple(
            links.PanelLink(
                i, frozenset(rng.sample(words, rng.randint(0, 3))), frozenset(rng.sample(pool, rng.randint(1, most)))
            )
            for i in range(rng.randint(0, 30))
        )
        base = links.LinkBase("https://r", "https://g", "uid", (), panels)
        alert = {
            "expr": " + ".join(rng.sample(pool, count)),
            "labels": {"look": " ".join(rng.sample(words, rng.randint(0, 2)))},
        }
        expected = _panel_to_open_scoring_every_panel(alert, base)
        assert links.panel_to_open(alert, base) == expected, alert
        chosen += expected is not None
    assert chosen > 50
