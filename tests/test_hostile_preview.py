"""The preview is inert: a page built from a hostile dashboard (titles, types, colours, mappings, markdown,
legends) and a hostile data source (every label value a payload, malformed samples) is opened in real
headless Chromium; no payload runs, nothing is fetched (a beacon on 127.0.0.1 counts 0 requests) and the page
still draws every panel. One Chromium for the module."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from hostile import MARK, beacon_server, colours, hostile_datasource, payloads
from victoriametrics import program_or_skip

from dashgen.live.datasource import Datasource
from dashgen.live.expand import Window
from dashgen.preview.browser import Browser, find_browser
from dashgen.preview.run import Settings, Source, draw_dashboard, write_drawing

# What the page may hold once drawn: the page's four scripts (its panels as JSON, uPlot, @grafana/data,
# preview.js), no element a payload could bring.
PROBE = """(() => {
  const all = [...document.querySelectorAll('*')];
  return {
    pwned: document.documentElement.getAttribute('data-pwned'),
    scripts: document.scripts.length,
    handlers: all.filter(e => [...e.attributes].some(a => a.name.startsWith('on'))).length,
    foreign: document.querySelectorAll('img,iframe,base,link,meta[http-equiv=refresh],svg[onload],object,embed')
      .length,
    badLinks: [...document.querySelectorAll('a')].filter(a => !/^https?:/.test(a.href)).length,
    styles: document.querySelectorAll('style').length,
    panels: document.querySelectorAll('.panel').length,
    rows: document.querySelectorAll('.row').length,
    charts: document.querySelectorAll('.chart canvas').length,
    ready: document.body.dataset.ready || '',
    failed: document.body.dataset.failed || '',
    hidden: getComputedStyle(document.body).display === 'none',
    series: [...document.querySelectorAll('.panel')].map(p => p.dataset.series || ''),
    points: [...document.querySelectorAll('.panel')].map(p => p.dataset.points || ''),
    legend: [...document.querySelectorAll('.panel .legend')].map(l => l.textContent),
  };
})()"""


@pytest.fixture(scope="module")
def chromium():
    binary = program_or_skip(find_browser(), "chromium not installed (Debian package 'chromium')")
    with Browser(binary, timeout=60) as browser:
        yield browser


@pytest.fixture(scope="module")
def beacon():
    with beacon_server() as server:
        yield server


def _panel(index: int, kind: str, title: str, **extra) -> dict:
    grid = {"x": (index % 3) * 8, "y": (index // 3) * 8, "w": 8, "h": 8}
    return {"id": index + 1, "type": kind, "title": title, "gridPos": grid, **extra}


def hostile_dashboard(texts: list[str], tints: list[str]) -> dict:
    """Every panel type the preview draws, each carrying payloads where a dashboard can put text or colour."""
    steps = [{"value": None, "color": tints[0]}, *({"value": i, "color": c} for i, c in enumerate(tints[1:]))]
    mappings = [
        {"type": "value", "options": {"3": {"text": texts[0], "color": tints[1]}}},
        {"type": "range", "options": {"from": 0, "to": 2, "result": {"text": texts[1], "color": tints[2]}}},
    ]
    field = {"defaults": {"thresholds": {"mode": "absolute", "steps": steps}, "mappings": mappings}}
    field_colour_cells = {
        "defaults": {
            "thresholds": {"mode": "absolute", "steps": steps},
            "custom": {"cellOptions": {"type": "color-background"}},
        }
    }
    target = [{"refId": "A", "expr": "up", "legendFormat": "{{pod}}"}]
    instant = [{"refId": "A", "expr": "up", "instant": True, "format": "table"}]
    panels = []
    for i, text in enumerate(texts):
        panels.append(
            _panel(
                len(panels),
                "timeseries",
                text,
                targets=target if i % 2 else [{"refId": "A", "expr": "up"}],
                description=text,
                fieldConfig={
                    "defaults": {
                        "unit": text,
                        "thresholds": {"mode": "absolute", "steps": steps},
                        "custom": {"thresholdsStyle": {"mode": "line+area"}},
                    }
                },
                options={"legend": {"displayMode": "table" if i % 2 else "list", "calcs": ["mean", "max"]}},
            )
        )
    panels += [
        _panel(len(panels), "stat", texts[2], targets=instant, fieldConfig=field, options={"graphMode": "area"}),
        _panel(
            len(panels) + 1, "stat", texts[3], targets=target, fieldConfig=field, options={"colorMode": "background"}
        ),
        _panel(len(panels) + 2, "table", texts[4], targets=instant, fieldConfig=field_colour_cells),
        _panel(len(panels) + 3, "bargauge", texts[5], targets=target, fieldConfig=field),
        _panel(len(panels) + 4, "state-timeline", texts[6], targets=target, fieldConfig=field),
        _panel(len(panels) + 5, "text", texts[7], options={"mode": "markdown", "content": "\n\n".join(texts)}),
        _panel(len(panels) + 6, "text", texts[8], options={"mode": "html", "content": "\n".join(texts)}),
        _panel(len(panels) + 7, texts[0], texts[9], targets=target),
        {
            "id": 900,
            "type": "row",
            "title": texts[1],
            "collapsed": True,
            "gridPos": {"x": 0, "y": 900, "w": 24, "h": 1},
        },
    ]
    variables = [{"name": "pod", "type": "custom", "query": ",".join(texts[:3]), "current": {"text": texts[0]}}]
    return {"uid": "hostile", "title": texts[0], "panels": panels, "templating": {"list": variables}}


def _open(browser: Browser, path: Path) -> dict:
    """Open the page like :meth:`Browser.render` and probe what it holds once its script said it is ready."""
    target = browser.send("Target.createTarget", {"url": "about:blank"})["targetId"]
    session = browser.send("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
    try:
        browser.send("Page.navigate", {"url": path.resolve().as_uri()}, session)
        browser._wait_ready(session)
        time.sleep(0.3)  # an image error handler or a timer of a payload would have fired by now
        return browser.evaluate(PROBE, session)
    finally:
        browser.send("Target.closeTarget", {"targetId": target})


def test_a_preview_of_a_hostile_dashboard_and_data_source_is_inert_and_draws(chromium, beacon, tmp_path):
    texts = payloads(beacon.url)
    document = hostile_dashboard(texts, colours(beacon.url))
    end = (time.time() // 60) * 60
    with hostile_datasource(texts) as url:
        settings = Settings(Window(end=end, length=3600), variables={"pod": texts[0]}, workers=2, timeout=20)
        drawing = draw_dashboard(Datasource(url, timeout=20), Source("hostile", document), settings)
    path = write_drawing(drawing, tmp_path, "hostile")
    seen = _open(chromium, path)
    assert seen["ready"] == "1" and seen["failed"] == "", seen
    assert seen["pwned"] is None and beacon.hits == [], (seen, beacon.hits)
    assert seen["scripts"] == 4 and seen["handlers"] == 0 and seen["foreign"] == 0 and seen["badLinks"] == 0, seen
    assert seen["styles"] == 2 and not seen["hidden"], seen
    drawn_panels = len([p for p in document["panels"] if p["type"] != "row"])
    assert seen["panels"] == drawn_panels and seen["rows"] == 1, seen
    assert seen["charts"] == len(texts), seen  # every time series drawn by uPlot despite its labels
    assert drawing.errors == 0


def test_the_page_carries_a_policy_of_its_own_script_hashes_only(chromium, beacon, tmp_path):
    """The page's CSP (checked by the browser): a script the page did not ship never runs, even one put into the
    file after it was written."""
    texts = payloads(beacon.url)
    end = (time.time() // 60) * 60
    with hostile_datasource(texts[:2]) as url:
        settings = Settings(Window(end=end, length=600), workers=1, timeout=20)
        drawing = draw_dashboard(
            Datasource(url, timeout=20), Source("x", hostile_dashboard(texts, ["red"] * 3)), settings
        )
    html = drawing.html
    assert "default-src 'none'" in html and "'unsafe-inline'" not in html.split("script-src")[1].split(";")[0]
    head, tail = html.rsplit("</body>", 1)  # the page's own end tag: its bundled scripts may spell "</body>" too
    injected = f"{head}<script>{MARK};fetch('{beacon.url}/late')</script><img src={beacon.url}/i></body>{tail}"
    path = tmp_path / "tampered.html"
    path.write_text(injected, encoding="utf-8")
    seen = _open(chromium, path)
    assert seen["ready"] == "1" and seen["pwned"] is None and beacon.hits == [], (seen, beacon.hits)


def test_chromium_reaches_no_network_even_from_a_page_without_a_policy(chromium, beacon, tmp_path):
    """The browser's own flags: a page with no CSP that fetches, loads an image and posts to 127.0.0.1 and a
    host name reaches nothing (the proxy to nowhere covers loopback too)."""
    page = tmp_path / "open.html"
    page.write_text(
        "<!DOCTYPE html><html><body>"
        f"<img src='{beacon.url}/img'><img src='http://localhost:{beacon.url.rsplit(':', 1)[1]}/host'>"
        "<script>"
        f"fetch('{beacon.url}/fetch').catch(() => 0);"
        f"navigator.sendBeacon('{beacon.url}/beacon');"
        "setTimeout(() => { document.body.dataset.ready = '1'; }, 800);"
        "</script></body></html>",
        encoding="utf-8",
    )
    target = chromium.send("Target.createTarget", {"url": "about:blank"})["targetId"]
    session = chromium.send("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
    try:
        chromium.send("Page.navigate", {"url": page.resolve().as_uri()}, session)
        chromium._wait_ready(session)
        time.sleep(0.5)
    finally:
        chromium.send("Target.closeTarget", {"targetId": target})
    assert beacon.hits == []


def test_a_preview_answer_with_string_timestamps_and_words_for_values_draws_gaps(chromium, tmp_path):
    """The data source's malformed samples (a string timestamp, ``"not a number"``) are gaps, not a crash: the page
    draws, and the malformed series contributes no point."""
    end = (time.time() // 60) * 60
    with hostile_datasource(["a"]) as url:
        document = {
            "uid": "u",
            "title": "t",
            "panels": [_panel(0, "timeseries", "x", targets=[{"refId": "A", "expr": "up"}])],
        }
        settings = Settings(Window(end=end, length=600), workers=1, timeout=20)
        drawing = draw_dashboard(Datasource(url, timeout=20), Source("u", document), settings)
    assert drawing.panels == 1 and drawing.errors == 0
    seen = _open(chromium, write_drawing(drawing, tmp_path, "u"))
    assert seen["ready"] == "1" and seen["failed"] == "" and seen["charts"] == 1, seen
    assert seen["series"] == ["1"] and int(seen["points"][0]) > 0, seen  # the malformed series has no point to draw
    assert "odd" not in seen["legend"][0], seen


def test_the_page_script_writes_no_html_and_evaluates_no_text():
    """The page's own script builds nothing from markup: data reaches the DOM only as attributes and canvas."""
    from dashgen.preview.page import asset

    script = asset("preview/preview.js")
    sinks = ("innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval(", "new Function", 'setTimeout("')
    assert [sink for sink in sinks if sink in script] == []
