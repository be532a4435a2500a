"""Where an alert links out: its ``runbook_url`` and a ``dashboard_url`` that opens the deployment's dashboard on
the alert's entity and time — for any alert record (a rule as written to the rule file: name, ``for``, labels).

* ``runbook_url``: ``[dashboard] runbook_base`` of the profile (the team's runbook document, an absolute URL so that
  Alertmanager and a pager can open it) with the alert's section as the anchor.
* ``dashboard_url``: ``[dashboard] grafana_url`` + ``/d/<uid>``; each dashboard variable whose label the firing
  alert carries is set from it (``var-node`` from the node label, ``var-gpu`` from the GPU label), written as a
  Go template the rule evaluator (Prometheus, vmalert) expands per alert — ``{{ with $labels.x }}`` leaves a
  variable out when the alert has no such label, rather than selecting nothing; the time range ends now and
  starts an hour before the alert could have started (``for`` + 1 h), since a Prometheus template cannot read
  when the alert became active; ``viewPanel=<id>`` opens the panel that shows what the alert reads (Grafana opens
  it even inside a collapsed row; Esc returns to the dashboard there). The panel is the one whose queries read
  the largest share of the alert's metric names (recorded series read through their recording rule), ties going
  to the panel whose row and title share most words with the alert's ``look`` label (the catalogue's "row or
  panel to open"), then to the panel reading fewest other metrics; an alert no panel reads gets no viewPanel.

Pure: a record and the profile's bases (and its dashboards' panels) in, the two annotations out.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

from dashgen.dashboard import dashboard_specs
from dashgen.deployment.profile import Profile
from dashgen.render.ids import dashboard_uid, panel_id
from dashgen.render.scope import metric_names
from dashgen.render.spec import GroupSpec
from dashgen.rules.model import RecordingRule, RuleGroup

LOOK_BACK_SECONDS = 3600  # the dashboard shows this long before the alert's ``for`` window
_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}


@dataclass(frozen=True)
class PanelLink:
    """A panel an alert can open: its id, the words of its row and title, the metric names its queries read."""

    id: int
    words: frozenset[str]
    metrics: frozenset[str]


@dataclass(frozen=True)
class LinkBase:
    runbook_base: str
    grafana_url: str
    dashboard_uid: str
    variables: tuple[tuple[str, str], ...]  # (alert label, dashboard variable)
    panels: tuple[PanelLink, ...] = ()
    recorded: tuple[tuple[str, str], ...] = ()  # (recorded series, its expression)


def _words(text: str) -> frozenset[str]:
    return frozenset(re.findall(r"[a-z0-9]+", text.lower()))


def _panel_links(groups: tuple[GroupSpec, ...], row: str = "") -> list[PanelLink]:
    found = []
    for group in groups:
        title = group.title or row
        for panel in group.panels:
            metrics = frozenset().union(*(metric_names(t.expr) for t in panel.targets))
            if metrics:
                found.append(PanelLink(panel_id(panel.key), _words(f"{title} {panel.title}"), metrics))
        found.extend(_panel_links(group.rows, title))
    return found


def link_base(profile: Profile, groups: tuple[RuleGroup, ...] = ()) -> LinkBase:
    """The profile's link settings: bases from ``[dashboard]``, the cluster dashboard, the entity variables, its
    panels and the recording rules of ``groups`` (how a recorded series an alert reads maps to what panels read)."""
    settings = profile.dashboard
    variables = (
        (profile.label("node"), "node"),
        (profile.label("gpu"), "gpu"),
    )
    (cluster,) = (spec for spec in dashboard_specs(profile) if spec.uid == dashboard_uid(profile.name, "cluster"))
    recorded = tuple((r.record, r.expr) for g in groups for r in g.rules if isinstance(r, RecordingRule))
    return LinkBase(
        settings.runbook_base,
        settings.grafana_url.rstrip("/"),
        cluster.uid,
        variables,
        tuple(_panel_links(cluster.groups)),
        recorded,
    )


def _read_metrics(expr: str, recorded: dict[str, str], depth: int = 0) -> frozenset[str]:
    """The raw metric names ``expr`` reads, recorded series replaced by what their rule reads."""
    found: set[str] = set()
    for name in metric_names(expr):
        if name in recorded and depth < 8:
            found |= _read_metrics(recorded[name], recorded, depth + 1)
        else:
            found.add(name)
    return frozenset(found)


def panel_to_open(alert: Mapping[str, Any], base: LinkBase) -> int | None:
    """The id of the panel the alert's link opens (see the module docstring), or None when no panel reads what the
    alert reads."""
    read = _read_metrics(str(alert.get("expr", "")), dict(base.recorded))
    read = read - {"up"} or read  # ``up`` beside a source's own series says little about which panel shows it
    if not read:
        return None
    labels = alert.get("labels")
    look = _words(str(labels.get("look", ""))) if isinstance(labels, Mapping) else frozenset()

    def score(panel: PanelLink) -> tuple[float, int, int]:
        return (round(len(read & panel.metrics) / len(read), 2), len(look & panel.words), -len(panel.metrics))

    # only the panels reading some of it are scored (a profile's alerts times its panels: 322 x 150 scores at
    # 10,000 GPUs): the first best of those is the first best of all, unless its share rounds to 0 and ties with
    # the panels reading none of it
    reading = [panel for panel in base.panels if not read.isdisjoint(panel.metrics)]
    if not reading:
        return None
    best = max(reading, key=score)
    if score(best)[0] == 0:
        best = max(base.panels, key=score)
    return best.id if read & best.metrics else None


def _seconds(duration: str) -> int:
    total = 0
    for number, unit in re.findall(r"(\d+)([smhdw])", duration or ""):
        total += int(number) * _UNITS[unit]
    return total


def anchor_of(name: str) -> str:
    """GitHub's heading anchor of a section named after the alert."""
    return re.sub(r"[^a-z0-9_-]", "", name.lower().replace(" ", "-"))


def alert_links(alert: Mapping[str, Any], base: LinkBase, anchor: str = "") -> dict[str, str]:
    """``runbook_url`` and ``dashboard_url`` of one alert record (``alert``, ``for``, ``labels``)."""
    name = str(alert.get("alert", ""))
    section = anchor or anchor_of(name)
    window = _seconds(str(alert.get("for", ""))) + LOOK_BACK_SECONDS
    query = f"from=now-{window}s&to=now"
    shown = panel_to_open(alert, base)
    if shown is not None:
        query += f"&viewPanel={shown}"
    labels = alert.get("labels")
    static: Mapping[str, Any] = labels if isinstance(labels, Mapping) else {}
    for label, variable in base.variables:
        if label in static:  # a label the rule sets itself is known now
            query += f"&var-{variable}={quote(str(static[label]), safe='')}"
        else:
            query += f"{{{{ with $labels.{label} }}}}&var-{variable}={{{{ . | urlquery }}}}{{{{ end }}}}"
    return {
        "runbook_url": f"{base.runbook_base}#{section}",
        "dashboard_url": f"{base.grafana_url}/d/{base.dashboard_uid}?{query}",
    }
