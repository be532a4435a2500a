"""``dashgen preview`` on a real VictoriaMetrics filled with every shipped profile's demo data, drawn in a real
headless Chromium: what the page drew (``data-series``, ``data-points``, ``data-y-min`` / ``data-y-max``) is
compared with what the queries returned, run independently through ``validate-queries``' expansion."""

from __future__ import annotations

import copy
import html
import json
import re
import time
import zlib
from pathlib import Path

import pytest
from click.testing import CliRunner
from gitrepo import commit_all, git
from grafana_node import call
from victoriametrics import program_or_skip, start_or_skip

from dashgen.build import build_all
from dashgen.cli import main, preview_cmd
from dashgen.demo import recorder
from dashgen.demo.run import import_demo
from dashgen.deployment.profile import load_profiles
from dashgen.deployment.topology import Topology
from dashgen.document import iter_panels
from dashgen.live.datasource import Datasource
from dashgen.live.expand import Window
from dashgen.live.query_check import DashboardInput, plan
from dashgen.preview.browser import Browser, find_browser
from dashgen.preview.layout import layout
from dashgen.preview.run import Settings, Source, draw_dashboard, screenshot, write_drawing
from dashgen.render.ids import panel_id

PROFILES = sorted(p.stem for p in (Path(__file__).resolve().parent.parent / "profiles").glob("*.toml"))
HOURS = 1.0
STEP = 30.0  # demo samples thinned to one per 30 s: the preview draws the same panels, the import is quicker


@pytest.fixture(scope="module")
def store():
    """A VictoriaMetrics with the healthy demo of every shipped profile in one window (each profile its own
    cluster label), ending at a whole minute ``end``, and the Now row's records (the layer-health and now groups,
    vmalert -replay over the window's last minutes): what the first screen reads."""
    server = start_or_skip()
    try:
        end = (time.time() // 60) * 60 - 60
        datasource = Datasource(server.url, timeout=120)
        profiles = load_profiles(PROFILES)
        for profile in profiles:
            import_demo(datasource, profile, "healthy", end, HOURS, STEP)
        datasource.flush()
        program_or_skip(recorder.find_vmalert(), "vmalert not found (Debian package 'victoria-metrics')")
        recorder.replay(server.url, profiles, end - recorder.REPLAY_SECONDS, end)
        datasource.flush()
        yield server.url, end
    finally:
        server.stop()


@pytest.fixture(scope="module")
def chromium() -> str:
    return program_or_skip(find_browser(), "chromium not installed (Debian package 'chromium'; make debian-deps)")


@pytest.fixture(scope="module")
def previews(store, chromium, tmp_path_factory):
    """``dashgen preview --expand-rows`` of every profile (every panel drawn): the JSON report, the folder, the
    seconds it took, and per written page the DOM as Chromium drew it for the command's screenshot."""
    url, end = store
    out = tmp_path_factory.mktemp("preview")
    doms: dict[str, str] = {}

    def kept(browser, html_path, png_path, height, *args):
        doms[str(html_path)] = dom = screenshot(browser, html_path, png_path, height, *args)
        return dom

    began = time.monotonic()
    with pytest.MonkeyPatch.context() as patch:  # the command's own screenshot, its DOM kept: not a second Chromium
        patch.setattr(preview_cmd, "screenshot", kept)
        result = CliRunner().invoke(
            main,
            ["preview", "--datasource-url", url, "--at", str(end), "--out", str(out), "--format", "json"]
            + ["--expand-rows"],
        )
    assert result.exit_code == 0, result.output
    return json.loads(result.output), out, time.monotonic() - began, doms


@pytest.fixture(scope="module")
def drawn(previews, chromium):
    """Per dashboard uid: the panel boxes of the page as Chromium drew it (attributes and inner HTML), from the
    DOM of the command's whole-page screenshot (the page at its full height, 1,632 CSS pixels wide: the layout
    depends on the width only)."""
    report, _out, _seconds, doms = previews
    pages = {item["uid"]: boxes(doms[item["html"]]) for item in report["results"]["dashboards"]}
    assert len(pages) == len(PROFILES) == len(doms)
    return pages


def boxes(dom: str) -> dict[str, dict]:
    """``data-panel-key`` -> {attribute: value, "inner": the HTML up to the next box} for every panel and row."""
    starts = list(re.finditer(r'<div class="(?:panel|row[^"]*)"([^>]*)>', dom))
    found = {}
    for index, match in enumerate(starts):
        attributes = dict(re.findall(r'([\w-]+)="([^"]*)"', match.group(1)))
        stop = starts[index + 1].start() if index + 1 < len(starts) else len(dom)
        attributes["inner"] = dom[match.end() : stop]
        found[attributes["data-panel-key"]] = attributes
    return found


def returned_series(url: str, end: float) -> dict[str, dict[str, int]]:
    """Dashboard uid -> panel key -> the number of series its queries return, by validate-queries' expansion
    and a plain client."""
    datasource = Datasource(url, timeout=60)
    window = Window(end=end, length=HOURS * 3600)
    counts = {}
    profiles = {p.name: p for p in load_profiles(PROFILES)}
    for built in build_all(list(profiles.values())):
        by_id = {panel_id(panel.key): panel.key for panel in built.spec.panels()}
        counts[built.uid] = {}
        for planned in plan([DashboardInput(built.uid, built.document, profiles[built.profile])], window):
            total = 0
            for query in planned.queries:
                if query.kind == "range":
                    total += datasource.query_range(query.expr, query.start, query.end, query.step).series
                else:
                    total += datasource.query(query.expr, query.end).series
            counts[built.uid][by_id.get(planned.raw.get("id"), f"panel:{planned.raw.get('id')}")] = total
    return counts


def test_every_shipped_profile_is_previewed_as_html_and_png(previews):
    report, out, _seconds, _doms = previews
    expected = {b.uid for b in build_all(load_profiles(PROFILES))}
    assert {d["uid"] for d in report["results"]["dashboards"]} == expected
    for uid in expected:
        assert (out / f"{uid}.html").read_text(encoding="utf-8").startswith("<!DOCTYPE html>")
        png = (out / f"{uid}.png").read_bytes()
        assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 50_000


def test_the_page_needs_no_network(previews):
    _report, out, _seconds, _doms = previews
    pages = sorted(out.glob("*.html"))
    for page in pages:
        text = page.read_text(encoding="utf-8")
        assert not re.search(r'<(?:script|link)[^>]+(?:src|href)="', text), page.name
        assert "uPlot" in text
    assert len(pages) == len(PROFILES)


def test_every_panel_of_the_first_row_is_drawn(drawn):
    checked = 0
    for profile in load_profiles(PROFILES):
        for built in build_all([profile]):
            items = layout(built.document)
            first_row = items[0].row
            keys = {panel.key for panel in built.spec.panels()}
            by_id = {panel_id(key): key for key in keys}
            wanted = [by_id[i.raw["id"]] for i in items if not i.is_row and i.row == first_row]
            assert wanted, built.uid
            page = drawn[built.uid]
            for key in wanted:
                box = page[key]
                assert box["data-panel-type"], key
                assert "not queried" not in box["inner"], key
                if box["data-panel-type"] != "text":
                    assert "data-series" in box, key
                    has_data = int(box["data-series"]) > 0
                    # drawn data, or Grafana's empty-panel text: never a blank box
                    assert has_data or 'class="nodata' in box["inner"], key
                checked += 1
    assert checked >= 4 * len(PROFILES)


def _first_screen_boxes(drawn, panel_type: str):
    """(dashboard uid, panel title, drawn box) of every ``panel_type`` panel on each profile's first screen (the
    rows above the first collapsed row)."""
    for profile in load_profiles(PROFILES):
        for built in build_all([profile]):
            by_id = {panel_id(panel.key): panel.key for panel in built.spec.panels()}
            items = layout(built.document)
            folded = next((i for i, item in enumerate(items) if item.folded), len(items))
            for item in items[:folded]:
                if not item.is_row and item.raw.get("type") == panel_type:
                    yield built.uid, item.raw["title"], drawn[built.uid][by_id[item.raw["id"]]]


def test_no_table_of_any_first_screen_has_a_column_past_its_edge_at_1920_px(drawn):
    """The preview reports the columns past a table's edge (``data-clipped-columns``, from the columns the data
    brought): on every profile's first screen (the rows above the first collapsed row) there are none."""
    checked = 0
    for uid, title, box in _first_screen_boxes(drawn, "table"):
        assert box["data-clipped-columns"] == "0", (uid, title, box.get("data-clipped"))
        checked += 1
    assert checked >= 5 * len(PROFILES)


def test_no_stat_of_any_first_screen_cuts_its_value(drawn):
    """A stat's value fits its tile on every profile's first screen (``data-cut-values``): "99.95%" cut at the
    tile's edge reads "9.95%"."""
    checked = 0
    for uid, title, box in _first_screen_boxes(drawn, "stat"):
        if "data-cut-values" not in box:  # no value: Grafana's empty-panel text
            continue
        assert box["data-cut-values"] == "0", (uid, title)
        checked += 1
    assert checked >= 3 * len(PROFILES)


WARNING_TINTS = {"#fade2a": "yellow", "#ff9830": "orange"}  # Grafana's yellow and orange, as the preview paints
# The SLO and burn-rate panels colour what the demo's latencies measure against each profile's objective, and the
# healthy demo's latency distributions do not meet every profile's objective (e.g. 98.7 % of requests within
# long-context-64's 6 s TTFT against 99 %): a calibration of the demo, not a colour of the panels. Left out here.
MEASURED_SLO = ("first_screen.slo", "slo_health.", "video_slo.")


def test_a_healthy_cluster_paints_no_yellow_or_orange_on_an_open_row(drawn):
    """The healthy demo of every profile: no stat or table cell of a row that opens with the dashboard is yellow
    or orange (a warning colour on a healthy cluster teaches the on-call to ignore it)."""
    painted = []
    for profile in load_profiles(PROFILES):
        for built in build_all([profile]):
            by_id = {panel_id(panel.key): panel.key for panel in built.spec.panels()}
            open_rows = {item.row for item in layout(built.document) if item.is_row and not item.folded}
            for item in layout(built.document):
                if item.is_row or item.row not in open_rows or item.raw.get("type") not in ("stat", "table"):
                    continue
                key = by_id[item.raw["id"]]
                if key.startswith(MEASURED_SLO):
                    continue
                inner = drawn[built.uid][key]["inner"].lower()
                painted += [
                    (built.uid, item.raw["title"], name) for tint, name in WARNING_TINTS.items() if tint in inner
                ]
    assert painted == [], "\n".join(map(str, painted))


def test_data_series_equals_the_series_the_queries_returned(store, drawn):
    url, end = store
    checked = 0
    counts = returned_series(url, end)
    for uid, page in drawn.items():
        for key, box in page.items():
            if box.get("data-panel-type") == "timeseries":
                assert int(box["data-series"]) == counts[uid][key], (uid, key)
                checked += 1
    assert checked > 40


def page_specs(page: Path) -> tuple[str, list[dict]]:
    """The @grafana/data minor a written preview page carries and the panels' requests it hands to it."""
    text = page.read_text()
    found = re.search(r'<script id="dg-panels" type="application/json">(.*?)</script>', text, re.S)
    minor = re.search(r'<body [^>]*data-grafana-data="([^"]+)"', text)
    assert found and minor, page
    return minor.group(1), json.loads(found.group(1).replace("<\\/script", "</script"))


def drawn_cells(inner: str) -> list[list[str]]:
    """The text of a drawn table's body cells, row by row."""
    body = inner.split("<tbody>", 1)[1].split("</tbody>", 1)[0] if "<tbody>" in inner else ""
    return [
        [html.unescape(cell) for cell in re.findall(r"<td(?:\s[^>]*)?>(.*?)</td>", row, re.S)]
        for row in re.findall(r"<tr>(.*?)</tr>", body, re.S)
    ]


@pytest.fixture(scope="module")
def grafana_tables(previews):
    """Per dashboard uid: (panel box id, title, @grafana/data's answer in Node) for every table panel, from the
    same requests the written pages computed in Chromium."""
    report, _out, _seconds, _doms = previews
    found = {}
    for item in report["results"]["dashboards"]:
        minor, every = page_specs(Path(item["html"]))
        specs = [s for s in every if s["request"]["panel"]["type"] == "table"]
        answers = call("applyPanels", [s["request"] for s in specs], timeout=300, minor=minor)
        found[item["uid"]] = [(s["id"], s["request"]["panel"]["title"], a) for s, a in zip(specs, answers, strict=True)]
    return found


def test_every_table_panel_draws_the_rows_columns_and_text_grafana_s_code_computes(drawn, grafana_tables):
    """0 table panels whose preview differs from @grafana/data's output on the same frames (every profile,
    every row expanded)."""
    checked = 0
    for uid, tables in grafana_tables.items():
        by_body = {
            re.search(r'id="([^"]+)"', box["inner"]).group(1): box
            for box in drawn[uid].values()
            if 'class="dg-draw"' in box["inner"]
        }
        for body_id, title, answer in tables:
            assert answer["kind"] == "table", (uid, title, answer)
            box = by_body[body_id]
            assert int(box["data-points"]) == len(answer["rows"]), (uid, title)
            assert int(box["data-columns"]) == len(answer["columns"]), (uid, title)
            if answer["rows"]:
                heads = [
                    html.unescape(h)
                    for h in re.findall(r"<th(?:\s[^>]*)?>(.*?)</th>", box["inner"].split("<tbody>")[0])
                ]
                assert heads == [c["name"] for c in answer["columns"]], (uid, title)
                assert drawn_cells(box["inner"]) == [[c["text"] for c in row] for row in answer["rows"][:200]], title
            checked += 1
    assert checked >= 50


def test_tables_named_per_node_gpu_or_replica_have_one_row_each(grafana_tables):
    """The shapes the rules name, from Grafana's own transformations: one row per node (S3's tier occupancy
    table: 8 on long-context-64), per GPU, per replica."""
    checked = 0
    for profile in load_profiles(PROFILES):
        topology = Topology(profile)
        nodes, gpus = len(topology.nodes), sum(n.gpus for n in topology.nodes)
        expected = {"per node": nodes, "per GPU (": gpus, "serving state": len(topology.replicas)}
        (built,) = build_all([profile])
        for _body, title, answer in grafana_tables[built.uid]:
            for words, count in expected.items():
                if words in title:
                    assert len(answer["rows"]) == count, (profile.name, title, len(answer["rows"]), count)
                    checked += 1
            if profile.name == "long-context-64" and title == "Tier occupancy at window end, per node":
                assert len(answer["rows"]) == 8 and all(c["text"] for row in answer["rows"] for c in row), answer
                checked += 1
    assert checked >= 25


def test_legend_and_stat_text_is_grafana_s(drawn, previews):
    """Every time-series legend row (name and calculations) and every stat value drawn equals @grafana/data's
    answer in Node for the same request."""
    report, _out, _seconds, _doms = previews
    checked = 0
    for item in report["results"]["dashboards"]:
        minor, every = page_specs(Path(item["html"]))
        specs = [s for s in every if s["request"]["panel"]["type"] in ("timeseries", "stat")]
        answers = call("applyPanels", [s["request"] for s in specs], timeout=300, minor=minor)
        by_body = {
            re.search(r'id="([^"]+)"', box["inner"]).group(1): box
            for box in drawn[item["uid"]].values()
            if 'class="dg-draw"' in box["inner"]
        }
        for spec, answer in zip(specs, answers, strict=True):
            inner = by_body[spec["id"]]["inner"]
            if spec["request"]["panel"]["type"] == "stat":
                shown = [v["text"] for v in answer["values"] if v["numeric"] is not None or v["text"]]
                assert [html.unescape(t) for t in re.findall(r'<div class="big"[^>]*>(.*?)</div>', inner)] == shown
                checked += len(shown)
                continue
            drawn_series = [s for s in answer["series"] if any(v is not None for v in s["values"])]
            rows = re.findall(r"<tr[^>]*><th><i[^>]*></i>(.*?)</th>(.*?)</tr>", inner, re.S)
            if not rows:  # a list legend: names only
                rows = [(n, "") for n in re.findall(r'<span class="item"><i[^>]*></i>(.*?)</span>', inner, re.S)]
                drawn_series = [{**s, "calcs": []} for s in drawn_series] if rows else []
            for (name, cells), series in zip(rows, drawn_series, strict=True):
                assert html.unescape(name) == series["name"]
                assert [html.unescape(c) for c in re.findall(r"<td>(.*?)</td>", cells)] == [
                    c["text"] for c in series["calcs"]
                ]
                checked += 1
    assert checked > 500


def test_legends_that_do_not_fit_say_how_many_more(drawn, previews):
    """A 64-series legend shows what fits and "+N more" (Grafana's legend scrolls; a picture cannot)."""
    more = [box for page in drawn.values() for box in page.values() if "data-legend-more" in box]
    assert more
    for box in more:
        hidden = int(box["data-legend-more"])
        assert f"+{hidden} more" in box["inner"] and hidden < int(box["data-series"]), box["data-panel-key"]


def _defaults_by_key() -> dict[tuple[str, str], dict]:
    """(uid, panel key) -> the panel's fieldConfig defaults, from the build."""
    found = {}
    for built in build_all(load_profiles(PROFILES)):
        by_id = {panel_id(panel.key): panel.key for panel in built.spec.panels()}
        for site in iter_panels(built.document):
            key = by_id.get(site.raw.get("id"), "")
            found[(built.uid, key)] = (site.raw.get("fieldConfig") or {}).get("defaults") or {}
    return found


def test_a_ratio_panel_axis_reads_0_to_100_percent(drawn):
    defaults = _defaults_by_key()
    ratio = [
        box
        for uid, page in drawn.items()
        for key, box in page.items()
        if box.get("data-unit") == "percentunit"
        if (defaults[(uid, key)].get("min"), defaults[(uid, key)].get("max")) == (0, 1)
    ]
    assert len(ratio) > 10
    for box in ratio:
        assert float(box["data-y-min"]) == 0 and float(box["data-y-max"]) == 1, box["data-panel-key"]
        ticks = box["data-y-ticks"].split("|")
        assert ticks[0] == "0%" and ticks[-1] == "100%", box["data-panel-key"]
        assert "<canvas" in box["inner"]


def test_a_panel_whose_query_returns_nothing_shows_no_data_not_a_zero_line(store, chromium, tmp_path):
    """A ratio panel of the build with its query pointed at a metric no one writes: "No data", no chart."""
    url, end = store
    (built,) = build_all(load_profiles(["h20-16"]))
    panel = next(s.raw for s in iter_panels(built.document) if s.raw.get("type") == "timeseries")
    target = {**panel["targets"][0], "expr": "dashgen_preview_never_written_total"}
    document = {**built.document, "uid": "empty", "panels": [{**panel, "targets": [target]}]}
    settings = Settings(Window(end=end, length=HOURS * 3600))
    drawing = draw_dashboard(Datasource(url), Source("empty", document), settings)
    path = write_drawing(drawing, tmp_path)
    with Browser(chromium) as browser:
        (box,) = [b for b in boxes(browser.render(path, None, 1632, 800)).values() if b["data-panel-type"] != "row"]
    assert box["data-series"] == "0" and box["data-points"] == "0"
    assert '<div class="nodata">No data</div>' in box["inner"] and "<canvas" not in box["inner"]
    assert drawing.empty == [f"panel:{panel['id']}"]


def test_the_long_context_64_preview_is_fast(store, chromium, tmp_path):
    url, end = store
    began = time.monotonic()
    result = CliRunner().invoke(
        main,
        ["preview", "--profile", "long-context-64", "--datasource-url", url, "--at", str(end), "--out", str(tmp_path)],
    )
    assert result.exit_code == 0, result.output
    assert time.monotonic() - began < 30
    # exactly the queries of the panels shown on open (54 when the issue was written): collapsed rows not queried
    (built,) = build_all(load_profiles(["long-context-64"]))
    shown = {item.raw.get("id") for item in layout(built.document) if not item.is_row}
    window = Window(end=end, length=HOURS * 3600)
    on_open = sum(
        len(p.queries) for p in plan([DashboardInput(built.uid, built.document)], window) if p.raw["id"] in shown
    )
    every = sum(len(p.queries) for p in plan([DashboardInput(built.uid, built.document)], window))
    assert f" {on_open} queries" in result.output and on_open < every


def test_expand_rows_queries_and_draws_the_collapsed_rows_too(store, chromium, tmp_path):
    url, end = store
    args = ["preview", "--profile", "h20-16", "--datasource-url", url, "--at", str(end), "--format", "json"]
    folded = CliRunner().invoke(main, [*args, "--out", str(tmp_path / "a"), "--no-png"])
    opened = CliRunner().invoke(main, [*args, "--out", str(tmp_path / "b"), "--no-png", "--expand-rows"])
    (a,) = json.loads(folded.output)["results"]["dashboards"]
    (b,) = json.loads(opened.output)["results"]["dashboards"]
    assert b["panels"] > a["panels"] and b["queries"] > a["queries"]


def test_without_chromium_the_error_names_the_package(store, monkeypatch, tmp_path):
    url, end = store
    monkeypatch.setenv("DASHGEN_CHROMIUM", str(tmp_path / "no-such-browser"))
    args = ["preview", "--profile", "h20-16", "--datasource-url", url, "--out", str(tmp_path)]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 2
    assert "chromium" in result.output and "apt-get install" in result.output
    assert not list(tmp_path.glob("*.html"))


# -- changed panels: before / after ---------------------------------------------------------------


def png_pixels(data: bytes) -> bytes:
    """The decompressed image data of a PNG (its IDAT chunks), to compare pictures pixel by pixel."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    at, idat = 8, b""
    while at < len(data):
        length = int.from_bytes(data[at : at + 4], "big")
        if data[at + 4 : at + 8] == b"IDAT":
            idat += data[at + 8 : at + 8 + length]
        at += 12 + length
    return zlib.decompress(idat)


def one_query_changed(document: dict) -> tuple[dict, int]:
    """A copy of ``document`` whose first drawn ratio panel reads half its value; the panel's id."""
    changed = copy.deepcopy(document)
    for site in iter_panels(changed):
        defaults = (site.raw.get("fieldConfig") or {}).get("defaults") or {}
        if site.raw.get("type") == "timeseries" and defaults.get("unit") == "percentunit" and site.row:
            target = site.raw["targets"][0]
            target["expr"] = f"({target['expr']}) * 0.5"
            return changed, site.raw["id"]
    raise AssertionError("no ratio time series panel")


def test_diff_draws_exactly_the_changed_panel_before_and_after_and_the_pixels_differ(store, chromium, tmp_path):
    url, end = store
    (built,) = build_all(load_profiles(["long-context-64"]))
    changed, changed_id = one_query_changed(built.document)
    key = {panel_id(p.key): p.key for p in built.spec.panels()}[changed_id]
    for side, document in (("old", built.document), ("new", changed)):
        (tmp_path / side / "long-context-64").mkdir(parents=True)
        (tmp_path / side / "long-context-64" / f"{built.uid}.json").write_text(json.dumps(document))
    pictures = tmp_path / "pictures"
    result = CliRunner().invoke(
        main,
        [
            "diff",
            str(tmp_path / "old"),
            str(tmp_path / "new"),
            "--format",
            "markdown",
            "--preview-dir",
            str(pictures),
            "--datasource-url",
            url,
            "--preview-at",
            str(end),
        ],
    )
    assert result.exit_code == 1, result.output  # 1: the dashboards differ
    pngs = sorted(p.relative_to(pictures).as_posix() for p in pictures.rglob("*.png"))
    assert pngs == [f"long-context-64/{key}.after.png", f"long-context-64/{key}.before.png"]
    before, after = (
        png_pixels((pictures / "long-context-64" / f"{key}.{s}.png").read_bytes()) for s in ("before", "after")
    )
    assert len(before) == len(after) and before != after
    assert f"{key}.before.png" in result.output and f"{key}.after.png" in result.output


def test_diff_preview_dir_without_a_datasource_is_a_usage_error(tmp_path):
    (tmp_path / "a.json").write_text("{}")
    result = CliRunner().invoke(
        main, ["diff", str(tmp_path / "a.json"), str(tmp_path / "a.json"), "--preview-dir", "x"]
    )
    assert result.exit_code == 2 and "--datasource-url" in result.output


def test_check_base_links_the_changed_panel_pictures_in_the_comment(store, chromium, tmp_path):
    url, end = store
    profiles = str(Path(__file__).resolve().parent.parent / "profiles")
    runner = CliRunner()
    for command, folder in (("build", "d"), ("rules", "r")):
        made = runner.invoke(main, ["--profiles-dir", profiles, command, "--out", str(tmp_path / folder)])
        assert made.exit_code == 0, made.output
    git(tmp_path, "init", "-q")
    commit_all(tmp_path, "base")
    path = tmp_path / "d" / "long-context-64" / "dg-long-context-64-cluster.json"
    changed, changed_id = one_query_changed(json.loads(path.read_text()))
    path.write_text(json.dumps(changed, indent=2))
    (built,) = build_all(load_profiles(["long-context-64"]))
    key = {panel_id(p.key): p.key for p in built.spec.panels()}[changed_id]
    pictures = tmp_path / "pictures"
    args = [
        "--profiles-dir",
        profiles,
        "check",
        "--dashboards",
        str(tmp_path / "d"),
        "--rules-dir",
        str(tmp_path / "r"),
    ]
    args += ["--base", "HEAD", "--format", "markdown", "--datasource-url", url, "--preview-at", str(end)]
    result = runner.invoke(main, [*args, "--preview-dir", str(pictures)])
    assert result.exit_code == 1, result.output  # the edited file is stale against a fresh build
    assert sorted(p.name for p in pictures.rglob("*.png")) == [f"{key}.after.png", f"{key}.before.png"]
    assert "Changed panels, before / after" in result.output and f"long-context-64/{key}.after.png" in result.output


def test_a_failing_query_is_shown_on_its_panel_and_the_command_would_exit_1(store, tmp_path):
    url, end = store
    (built,) = build_all(load_profiles(["h20-16"]))
    panel = next(s.raw for s in iter_panels(built.document) if s.raw.get("type") == "timeseries")
    target = {**panel["targets"][0], "expr": "sum(rate(up[5m]"}  # not PromQL: the data source answers 400
    document = {**built.document, "uid": "broken", "panels": [{**panel, "targets": [target]}]}
    drawing = draw_dashboard(Datasource(url), Source("broken", document), Settings(Window(end=end, length=3600)))
    (box,) = [b for b in boxes(drawing.html).values() if b["data-panel-type"] != "row"]
    assert drawing.errors == 1 and box["data-errors"] == "1" and 'class="nodata error"' in box["inner"]
    assert "HTTP 4" in box["inner"] and 'class="err"' in box["inner"]


def test_a_variable_given_with_var_narrows_the_series_drawn(store, tmp_path):
    url, end = store
    (profile,) = load_profiles(["h20-16"])
    node = Topology(profile).nodes[0].name
    args = ["preview", "--profile", "h20-16", "--datasource-url", url, "--at", str(end), "--no-png"]
    every = CliRunner().invoke(main, [*args, "--out", str(tmp_path / "all")])
    one = CliRunner().invoke(main, [*args, "--out", str(tmp_path / "one"), "--var", f"node={node}"])
    assert every.exit_code == 0 and one.exit_code == 0, every.output + one.output
    (page_all,) = (tmp_path / "all").glob("*.html")
    (page_one,) = (tmp_path / "one").glob("*.html")
    wide, narrow = boxes(page_all.read_text()), boxes(page_one.read_text())
    series = {k: (int(b["data-series"]), int(narrow[k]["data-series"])) for k, b in wide.items() if "data-series" in b}
    assert all(n <= a for a, n in series.values())
    assert any(n < a for a, n in series.values())
    assert f"node={node}" in page_one.read_text()
