"""A library panel in a diff: the element file ``dashgen build`` writes (``<profile>/library-panels/<uid>.json``)
compared as a one-panel dashboard, so a change to a shared panel shows once, under the element's name with the
dashboards that use it, while each dashboard only holds the reference (which the semantic diff ignores)."""

from __future__ import annotations

from typing import Any

from dashgen.render.library import is_element_document, model_view


def _users(doc: dict[str, Any]) -> str:
    users = (doc.get("dashgen") or {}).get("dashboards") or []
    return ", ".join(map(str, users)) or "no dashboard of the build"


def as_dashboard(doc: Any) -> Any:
    """An element file as a dashboard holding its panel, titled with the dashboards that use it (what a review
    comment shows of a changed panel); anything else unchanged."""
    if not is_element_document(doc):
        return doc
    model = model_view(doc["model"])
    title = f"library panel {model.get('title', '')} (used by {_users(doc)})"
    panel = {**model, "title": title, "id": 1, "gridPos": {"x": 0, "y": 0, "w": 24, "h": 8}}
    return {"uid": str(doc["uid"]), "title": str(doc.get("name", "")), "panels": [panel], "schemaVersion": 41}


def label(name: str, old: Any, new: Any) -> str:
    """The diff's name of a pair: an element's path gains "library panel used by <dashboards>"."""
    docs = [d for d in (new, old) if is_element_document(d)]
    if not docs:
        return name
    return f"{name} (library panel used by {_users(docs[0])})"
