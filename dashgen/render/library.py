"""Shared panels as Grafana library panels (pure): a rendered dashboard with each shared panel replaced by its
library reference, and the library elements themselves.

A panel is shared when its spec says so (``PanelSpec.shared``, the kit's ``shared=True``) or its profile lists
its key in ``[dashboard] library_panels``. The element's uid derives from the profile and the panel key (stable
across retitling, like panel ids), its name from the title, profile and key (Grafana refuses two elements of one
name in a folder). Its model is the v1 panel JSON dashgen rendered, without ``id`` and ``gridPos`` (they belong
to each dashboard that places it).

References (grafana-api.md §14): a v1 dashboard holds ``{"id", "gridPos", "libraryPanel": {"uid", "name"}}``;
a v2 dashboard holds the element ``{"kind": "LibraryPanel", "spec": {"id", "title", "libraryPanel": {...}}}``
under the panel's key, placed by the layout like any panel.

The element's SHA (:func:`element_sha`) is taken of its name and model without the keys a dashboard owns, so the
same element read back from Grafana, whatever id or position it stores, proves the same content. A key Grafana's
``librarypanels`` resource gives back empty when the model lacks it (``description: ""``, ``pluginVersion: ""``,
``datasource: null``...) or drops when false (``transparent``) counts as absent, so the element proves the same on
a Grafana that keeps library panels there (the flag ``libraryelementsKubernetesLibraryPanels``) as on the legacy
table. :func:`element_sha_before_empties` is the SHA without that reading, which older ledger lines recorded.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

LIBRARY_UID_PREFIX = "dgl-"
# Keys of a panel that each dashboard owns; an element's model is compared without them.
PLACEMENT_KEYS = frozenset({"id", "gridPos", "libraryPanel"})


@dataclass(frozen=True)
class LibraryElement:
    """One library panel a build wants Grafana to store, and the dashboards (uids) of the build that use it."""

    uid: str
    name: str
    key: str
    profile: str
    model: dict[str, Any]
    dashboards: tuple[str, ...] = ()

    @property
    def sha(self) -> str:
        return element_sha(self.name, self.model)

    @property
    def title(self) -> str:
        return str(self.model.get("title", ""))

    def document(self) -> dict[str, Any]:
        """The element as ``dashgen build`` writes it and a PR diff reads it (the create body of Grafana's API)."""
        return {
            "uid": self.uid,
            "name": self.name,
            "kind": 1,
            "model": self.model,
            "dashgen": {"key": self.key, "profile": self.profile, "dashboards": list(self.dashboards)},
        }


def element_uid(profile: str, key: str) -> str:
    """A stable uid within Grafana's 40 characters of ``[a-zA-Z0-9-_]``."""
    return LIBRARY_UID_PREFIX + hashlib.sha256(f"{profile}/{key}".encode()).hexdigest()[:24]


def element_name(title: str, profile: str, key: str) -> str:
    return f"{title} [{profile}:{key}]"


def model_view(model: dict[str, Any]) -> dict[str, Any]:
    """The element's model without what each dashboard owns (shallow)."""
    return {k: v for k, v in model.items() if k not in PLACEMENT_KEYS}


# What Grafana's librarypanels resource answers for a key the model lacks (or drops: transparent when false)
EMPTY_AS_ABSENT: dict[str, Any] = {
    "description": "",
    "pluginVersion": "",
    "datasource": None,
    "transparent": False,
    "options": None,
    "fieldConfig": None,
    "links": [],
    "targets": [],
}


def canonical_view(model: dict[str, Any]) -> dict[str, Any]:
    """The model as compared: placement keys left out, and an empty value of ``EMPTY_AS_ABSENT`` read as absent."""
    return {
        k: v
        for k, v in model_view(model).items()
        if not (k in EMPTY_AS_ABSENT and type(v) is type(EMPTY_AS_ABSENT[k]) and v == EMPTY_AS_ABSENT[k])
    }


def _sha(name: str, view: dict[str, Any]) -> str:
    encoded = json.dumps({"name": name, "model": view}, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(encoded.encode("utf-8")).hexdigest()


def element_sha(name: str, model: dict[str, Any]) -> str:
    """SHA-256 of the canonical encoding of the name and the model (:func:`canonical_view`)."""
    return _sha(name, canonical_view(model))


def element_sha_before_empties(name: str, model: dict[str, Any]) -> str:
    """The SHA ledger lines recorded before empty values counted as absent (placement keys left out only)."""
    return _sha(name, model_view(model))


def is_element_document(data: Any) -> bool:
    """Whether ``data`` is a library element as :meth:`LibraryElement.document` writes it."""
    return isinstance(data, dict) and data.get("kind") == 1 and isinstance(data.get("model"), dict) and "uid" in data


def v1_reference(panel: dict[str, Any], element: LibraryElement) -> dict[str, Any]:
    return {
        "id": panel.get("id"),
        "gridPos": panel.get("gridPos"),
        "libraryPanel": {"uid": element.uid, "name": element.name},
    }


def v2_reference(panel_id: int, element: LibraryElement) -> dict[str, Any]:
    return {
        "kind": "LibraryPanel",
        "spec": {"id": panel_id, "title": element.title, "libraryPanel": {"name": element.name, "uid": element.uid}},
    }


def _elements_of_panels(
    panels: list[dict[str, Any]], shared: dict[int, str], profile: str, uid: str, found: dict[int, LibraryElement]
) -> list[dict[str, Any]]:
    out = []
    for panel in panels:
        if panel.get("type") == "row" and isinstance(panel.get("panels"), list):
            panel = {**panel, "panels": _elements_of_panels(panel["panels"], shared, profile, uid, found)}
        pid = panel.get("id")
        key = shared.get(pid) if isinstance(pid, int) else None
        if key is None:
            out.append(panel)
            continue
        model = model_view(panel)
        element = LibraryElement(
            element_uid(profile, key),
            element_name(str(model.get("title", "")), profile, key),
            key,
            profile,
            model,
            (uid,),
        )
        found[panel["id"]] = element
        out.append(v1_reference(panel, element))
    return out


def share_v1(
    document: dict[str, Any], shared: dict[int, str], profile: str
) -> tuple[dict[str, Any], dict[int, LibraryElement]]:
    """The v1 dashboard with each panel whose id is in ``shared`` (id -> panel key) replaced by its reference, and
    the elements by panel id. The input is not changed."""
    found: dict[int, LibraryElement] = {}
    panels = _elements_of_panels(list(document.get("panels") or []), shared, profile, str(document["uid"]), found)
    return ({**document, "panels": panels} if found else document), found


def share_v2(resource: dict[str, Any], elements: dict[str, tuple[int, LibraryElement]]) -> dict[str, Any]:
    """The v2 resource with the element of each shared panel key (key -> (panel id, element)) a LibraryPanel."""
    if not elements:
        return resource
    spec = dict(resource["spec"])
    spec["elements"] = {
        key: v2_reference(*elements[key]) if key in elements else element for key, element in spec["elements"].items()
    }
    return {**resource, "spec": spec}


def merge_elements(elements: Iterable[LibraryElement]) -> tuple[list[LibraryElement], list[str]]:
    """One element per uid with every dashboard that uses it, and a problem for each uid whose models differ."""
    by_uid: dict[str, LibraryElement] = {}
    problems: list[str] = []
    for element in elements:
        known = by_uid.get(element.uid)
        if known is None:
            by_uid[element.uid] = element
        elif known.sha != element.sha:
            problems.append(
                f"{element.profile}: shared panel {element.key!r} renders differently in dashboards "
                f"{', '.join(known.dashboards)} and {', '.join(element.dashboards)}; one library panel holds one model"
            )
        else:
            dashboards = tuple(dict.fromkeys((*known.dashboards, *element.dashboards)))
            by_uid[element.uid] = LibraryElement(
                known.uid, known.name, known.key, known.profile, known.model, dashboards
            )
    return list(by_uid.values()), problems


def _inline(panels: list[Any], models: dict[str, dict[str, Any]], fallback: dict[Any, dict[str, Any]]) -> list[Any]:
    out = []
    for panel in panels:
        if isinstance(panel, dict) and isinstance(panel.get("panels"), list):
            panel = {**panel, "panels": _inline(panel["panels"], models, fallback)}
        ref = panel.get("libraryPanel") if isinstance(panel, dict) else None
        if isinstance(ref, dict):
            model = models.get(str(ref.get("uid"))) or fallback.get(panel.get("id"))
            if model is not None:
                panel = {**model_view(model), "id": panel.get("id"), "gridPos": panel.get("gridPos")}
        out.append(panel)
    return out


def with_models(
    live: dict[str, Any], target: dict[str, Any], elements: Iterable[LibraryElement]
) -> tuple[dict[str, Any], dict[str, Any]]:
    """Both v1 dashboards with each library reference replaced by the build's model of its element, for the
    dashboard diff: a panel that becomes (or stops being) shared is not a change of the dashboard, and a change of
    the element is planned once, as the element's. A live reference the build no longer has takes the build's
    panel of the same id (the element's own clean-up is planned with the library panels)."""
    models = {e.uid: e.model for e in elements}
    if not models and not any(isinstance(p, dict) and "libraryPanel" in p for p in live.get("panels") or []):
        return live, target
    panels = _inline(list(target.get("panels") or []), models, {})
    by_id = {p.get("id"): p for p in panels if isinstance(p, dict) and p.get("id") is not None}
    return {**live, "panels": _inline(list(live.get("panels") or []), models, by_id)}, {**target, "panels": panels}
