"""The raw shape of any Grafana dashboard JSON: the one unwrapper and the one panel walker.

:func:`unwrap` accepts a plain dashboard, a Grafana export or API answer ``{dashboard, meta}`` and
the k8s ``{apiVersion, spec}`` resource (a v2 one as its classic view, ``v2view``).
:func:`iter_panels` visits every panel object in reading
order: top-level ``panels``, the nested ``panels`` of collapsed rows (and of any panel that carries
a ``panels`` list), and legacy ``rows[].panels``. :func:`raw_variables` is the ``templating.list``.
Pure: decoded JSON in, the same mappings out.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from dashgen.document.v2view import classic_view, is_v2


class NotADashboard(ValueError):
    """The JSON document is not a Grafana dashboard."""


def unwrap(doc: Any) -> Mapping[str, Any]:
    """Return the dashboard body: unwraps ``{apiVersion, spec}`` and ``{dashboard: ...}``; a v2 resource
    (``dashboard.grafana.app/v2…``) reads as its classic view (``v2view.classic_view``)."""
    if not isinstance(doc, Mapping):
        raise NotADashboard("top-level JSON value is not an object")
    if is_v2(doc):
        try:
            return classic_view(doc)
        except (TypeError, AttributeError, ValueError, KeyError, IndexError) as exc:  # a malformed v2 file
            raise NotADashboard(f"a v2 dashboard of an unexpected shape ({type(exc).__name__}: {exc})") from None
    if "spec" in doc and "apiVersion" in doc and isinstance(doc["spec"], Mapping):
        return doc["spec"]
    if "dashboard" in doc and isinstance(doc["dashboard"], Mapping) and "panels" not in doc:
        return doc["dashboard"]
    return doc


def _title(raw: Mapping[str, Any]) -> str | None:
    title = raw.get("title")
    return title if isinstance(title, str) and title else None


@dataclass(frozen=True)
class PanelSite:
    """A panel object and where it sits.

    ``row`` is the title of the object whose ``panels`` list holds it: a collapsed row (an untitled
    one passes its own row's title on), a legacy ``rows[]`` entry, or a panel with nested panels;
    None at top level. ``section`` is the row it is read under on screen: for a top-level panel the
    last row above it (an expanded row owns the panels that follow it), for a row its enclosing
    section, for a nested panel its row's own title (None when untitled).
    """

    raw: Mapping[str, Any]
    row: str | None
    section: str | None
    path: str = "$"  # JSON path of the panel object, e.g. ``$.panels[3].panels[1]``


def iter_panels(body: Mapping[str, Any]) -> Iterator[PanelSite]:
    """Every panel object of a dashboard body (see :func:`unwrap`) in reading order, rows included."""

    def walk(panels: Any, row: str | None, section: str | None, at: str) -> Iterator[PanelSite]:
        if not isinstance(panels, list):
            return
        current = section
        for index, raw in enumerate(panels):
            if not isinstance(raw, Mapping):
                continue
            is_row = raw.get("type") == "row"
            path = f"{at}[{index}]"
            yield PanelSite(raw, row, section if is_row else current, path)
            if is_row:
                current = _title(raw)
            if is_row or "panels" in raw:
                yield from walk(
                    raw.get("panels"), _title(raw) or row, _title(raw) if is_row else current, f"{path}.panels"
                )

    yield from walk(body.get("panels"), None, None, "$.panels")
    rows = body.get("rows")
    if isinstance(rows, list):
        for index, legacy in enumerate(rows):
            if isinstance(legacy, Mapping):
                yield from walk(legacy.get("panels"), _title(legacy), _title(legacy), f"$.rows[{index}].panels")


def iter_panel_objects(body: Mapping[str, Any]) -> Iterator[Mapping[str, Any]]:
    """The panel objects :func:`iter_panels` visits, in its order, without their places: for a caller that looks
    panels up by id (the publish plan finds the changed panels of 50 dashboards; building each place was most
    of that)."""

    def walk(panels: Any) -> Iterator[Mapping[str, Any]]:
        if not isinstance(panels, list):
            return
        for raw in panels:
            if type(raw) is not dict and not isinstance(raw, Mapping):
                continue
            yield raw
            if "panels" in raw or raw.get("type") == "row":
                yield from walk(raw.get("panels"))

    yield from walk(body.get("panels"))
    rows = body.get("rows")
    if isinstance(rows, list):
        for legacy in rows:
            if isinstance(legacy, Mapping):
                yield from walk(legacy.get("panels"))


def raw_variables(body: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The templating variables of a dashboard body, in order (entries that are not objects skipped)."""
    templating = body.get("templating")
    found = templating.get("list") if isinstance(templating, Mapping) else None
    return [v for v in found if isinstance(v, Mapping)] if isinstance(found, list) else []
