"""The grafana-operator ``GrafanaLibraryPanel`` of a library panel (``grafana.integreatly.org/v1beta1``): the
element's model as ``spec.json``, its uid, and the folder by ``folderRef`` or ``folderUID`` (exactly one, the
CRD's rule). ``dashgen export --format grafana-operator`` writes them before the dashboards that reference them.
Grafana has no file provisioning of library panels: the ``provisioning`` and ``configmap`` exports rely on the
elements being published (``dashgen publish`` or the operator)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from dashgen.render.library import LibraryElement


def grafana_library_panel(
    element: LibraryElement,
    metadata: dict[str, Any],
    instance_labels: Mapping[str, str],
    *,
    folder_ref: str | None = None,
    folder_uid: str | None = None,
) -> dict[str, Any]:
    """The custom resource; ``metadata`` as the export writes it for every resource (name, namespace, labels)."""
    spec: dict[str, Any] = {"instanceSelector": {"matchLabels": dict(instance_labels)}, "uid": element.uid}
    if folder_ref:
        spec["folderRef"] = folder_ref
    elif folder_uid:
        spec["folderUID"] = folder_uid
    model = {**element.model, "libraryPanel": {"uid": element.uid, "name": element.name}}
    spec["json"] = json.dumps(model, sort_keys=True, indent=2, ensure_ascii=False)
    return {
        "apiVersion": "grafana.integreatly.org/v1beta1",
        "kind": "GrafanaLibraryPanel",
        "metadata": metadata,
        "spec": spec,
    }
