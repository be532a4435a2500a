"""Where an alert links out: its ``runbook_url`` and a ``dashboard_url`` that opens the deployment's dashboard on
the alert's entity and time — for any alert record (a rule as written to the rule file: name, ``for``, labels).

* ``runbook_url``: ``[dashboard] runbook_base`` of the profile (the team's runbook document, an absolute URL so that
  Alertmanager and a pager can open it) with the alert's section as the anchor.
* ``dashboard_url``: ``[dashboard] grafana_url`` + ``/d/<uid>``; each dashboard variable whose label the firing
  alert carries is set from it (``var-node`` from the node label, ``var-gpu`` from the GPU label), written as a
  Go template the rule evaluator (Prometheus, vmalert) expands per alert — ``{{ with $labels.x }}`` leaves a
  variable out when the alert has no such label, rather than selecting nothing; the time range ends now and
  starts an hour before the alert could have started (``for`` + 1 h), since a Prometheus template cannot read
  when the alert became active.

Pure: a record and the profile's bases in, the two annotations out.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

from dashgen.deployment.profile import Profile
from dashgen.render.ids import dashboard_uid

LOOK_BACK_SECONDS = 3600  # the dashboard shows this long before the alert's ``for`` window
_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}


@dataclass(frozen=True)
class LinkBase:
    runbook_base: str
    grafana_url: str
    dashboard_uid: str
    variables: tuple[tuple[str, str], ...]  # (alert label, dashboard variable)


def link_base(profile: Profile) -> LinkBase:
    """The profile's link settings: bases from ``[dashboard]``, the cluster dashboard, the entity variables."""
    settings = profile.dashboard
    variables = (
        (profile.label("node"), "node"),
        (profile.label("gpu"), "gpu"),
    )
    return LinkBase(
        settings.runbook_base,
        settings.grafana_url.rstrip("/"),
        dashboard_uid(profile.name, "cluster"),
        variables,
    )


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
