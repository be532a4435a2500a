"""The label names that usually play each label role of a profile (``[labels]``) in other scrape set-ups and
public dashboards: what ``dashgen doctor`` proposes when the profile's name is not on the store's series, and how
an imported dashboard's label names are read as roles, so its selectors can be rewritten to the profile's names.

``ALIASES`` lists every name seen playing a role; ``IMPORTED`` keeps the ones that mean that role wherever a
public dashboard writes them. Left out there: ``device`` (node_exporter's disk or NIC), ``host``, ``model``,
``GPU`` (a column title as often as a label), ``env`` / ``environment`` — rewriting those would change queries
that mean something else.
"""

from __future__ import annotations

from dashgen.deployment.model import DEFAULT_LABELS

ALIASES: dict[str, tuple[str, ...]] = {
    "deployment": ("cluster", "deployment", "k8s_cluster", "cluster_name", "env", "environment"),
    "node": ("node", "Hostname", "hostname", "host", "kubernetes_node", "nodename", "node_name"),
    "job": ("job",),
    "instance": ("instance",),
    "gpu": ("gpu", "gpu_index", "GPU", "device", "minor_number"),
    "dcgm_uuid": ("UUID", "uuid", "gpu_uuid"),
    "model_name": ("model_name", "model", "served_model_name"),
}
AMBIGUOUS = frozenset({"device", "host", "model", "GPU", "env", "environment", "deployment", "uuid"})


def _imported() -> dict[str, str]:
    roles: dict[str, str] = {}
    for role, name in DEFAULT_LABELS.items():  # dashgen's own default names first: they decide a clash
        roles.setdefault(name, role)
    for role, names in ALIASES.items():
        for name in names:
            if name not in AMBIGUOUS:
                roles.setdefault(name, role)
    return roles


# label name as a public dashboard writes it -> the role it plays
IMPORTED: dict[str, str] = _imported()


def renames(labels: dict[str, str]) -> dict[str, str]:
    """Imported label name -> the profile's name for its role, for the names the profile calls otherwise
    (``labels``: the profile's role -> label name)."""
    return {name: labels[role] for name, role in IMPORTED.items() if role in labels and labels[role] != name}
