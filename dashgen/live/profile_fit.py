"""Does the profile describe this store? The label names and sources a profile states, against what the store's
series carry: each mismatch is a named difference with its likely fix (``dashgen doctor``).

A wrong deployment value or label name leaves most panels empty while every query is valid; the exporter
inference (S35) cannot see it, since it reads metric names only. Three questions, each answered from the store:

* the deployment: does any series carry ``<labels.deployment>="<deployment>"``? If not, which label does carry
  that value (the label name is wrong), or which values does the label have (the value is wrong)?
* each source stated as exported: does the deployment have any series of it?
* each label role the panels select by (``node``, ``gpu``, ``model_name``, ...): does the deployment's data carry
  a label of the profile's name? If not, the label names found that usually play that role are proposed
  (``--write`` sets them in ``[labels]``), the one carried by the most sources that write the role first: a
  name only one exporter writes itself (dcgm-exporter's ``Hostname``) would empty every other source's panels.
* the nodes: are the values of the node label on the deployment's series the profile's node names? A node count
  (or a pool size) that does not match the cluster, or a typo'd ``node_name_format``, builds valid queries whose
  per-node rows are empty or missing. And where DCGM is exported, the GPUs it reports per node against
  ``gpus_per_node``: a node with more, or every node with the same other count (one node with fewer is a GPU
  fault the dashboards show, not the profile's).

Pure: the caller reads the store into a :class:`StoreView`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass

from dashgen.deployment.label_roles import ALIASES
from dashgen.deployment.profile import TEXT, Profile

# Label roles whose label every deployment's data carries when the source that writes it is exported, and the
# label names that usually play the role in other scrape set-ups (the first found is proposed).
ROLE_SOURCES: dict[str, tuple[str, ...]] = {
    "node": (),  # every source's series: () = any exported source
    "job": (),
    "instance": (),
    "gpu": ("dcgm",),
    "dcgm_uuid": ("dcgm",),
    "model_name": ("sglang",),
}
# Roles a pool kind's engine writes (S25): SGLang Diffusion's series carry no model_name
ROLE_KINDS: dict[str, str] = {"model_name": TEXT}
LISTED = 12  # label names or values listed in one message


@dataclass(frozen=True)
class StoreView:
    """What the store holds over the window. ``deployment_matches``: whether any series carries the profile's
    deployment label and value (True when the profile states no deployment); ``label_names``: the label names on
    the deployment's series (the whole store's when it matches none); ``present_sources``: the exporter-table
    sources with series of the deployment; ``deployment_values``: values of the profile's deployment label;
    ``labels_with_value``: labels (among the candidates asked) whose values include the deployment value;
    ``carriers``: for label names that may be proposed for a role, the sources whose series carry them (a name
    not in it counts as carried by every source); ``node_values``: the values of the profile's node label on the
    deployment's series (read only when they carry that label); ``gpus_by_node``: per node, the GPUs with DCGM
    series over the window (read only where DCGM is present)."""

    deployment_matches: bool
    label_names: frozenset[str]
    present_sources: frozenset[str]
    deployment_values: tuple[str, ...] = ()
    labels_with_value: tuple[str, ...] = ()
    carriers: Mapping[str, frozenset[str]] = dataclasses.field(default_factory=dict)
    node_values: tuple[str, ...] = ()
    gpus_by_node: Mapping[str, int] = dataclasses.field(default_factory=dict)


@dataclass(frozen=True)
class Difference:
    field: str  # the profile field at fault: labels.node, sources.gateway, cluster.deployment
    message: str
    fix: str
    proposed: Mapping[str, str] = dataclasses.field(default_factory=dict)  # [labels] role -> label name, for --write

    def line(self) -> str:
        return f"{self.field}: {self.message}; likely fix: {self.fix}"


def _listed(names: object) -> str:
    items = sorted(names)  # type: ignore[call-overload]
    more = f", … ({len(items) - LISTED} more)" if len(items) > LISTED else ""
    return ", ".join(items[:LISTED]) + more if items else "none"


def deployment_difference(profile: Profile, store: StoreView) -> Difference | None:
    if not profile.deployment or store.deployment_matches:
        return None
    label = profile.label("deployment")
    selector = f'{label}="{profile.deployment}"'
    if store.labels_with_value:
        found = store.labels_with_value[0]
        return Difference(
            "labels.deployment",
            f"no series carries {selector}; the value {profile.deployment!r} is on the label {found!r}",
            f'[labels] deployment = "{found}"',
            {"deployment": found},
        )
    if store.deployment_values:
        return Difference(
            "deployment",
            f"no series carries {selector}; the store's {label!r} values are {_listed(store.deployment_values)}",
            "set deployment to one of those values (the name the store gives this cluster)",
        )
    return Difference(
        "labels.deployment",
        f"no series carries {selector}, and no series carries a {label!r} label at all",
        "set [labels] deployment to the label your scrape config adds per cluster (label names found: "
        + _listed(store.label_names)
        + ")",
    )


def source_differences(profile: Profile, store: StoreView, known: set[str]) -> list[Difference]:
    """A source stated as exported, known to the exporter table, with no series of the deployment."""
    if not store.deployment_matches:
        return []  # the deployment difference explains every missing source
    where = f" for deployment {profile.deployment!r}" if profile.deployment else ""
    return [
        Difference(
            f"sources.{name}",
            f"stated as exported, but the store has no series of it{where}",
            f'status = "not-exported" if it is not scraped, else scrape job {source.job!r} (and check its '
            "metric_prefix)",
        )
        for name, source in profile.sources.items()
        if source.exported and name in known and name not in store.present_sources
    ]


def label_differences(profile: Profile, store: StoreView) -> list[Difference]:
    """A label role's name that the deployment's series do not carry, while a source writing it is present."""
    if not store.deployment_matches or not store.present_sources:
        return []
    found = []
    taken = {profile.label(role) for role in ROLE_SOURCES} & store.label_names
    for role, sources in ROLE_SOURCES.items():
        name = profile.label(role)
        writers = [s for s in sources if s in store.present_sources] if sources else list(store.present_sources)
        kind = ROLE_KINDS.get(role)
        if not writers or name in store.label_names or (kind is not None and not profile.has_kind(kind)):
            continue
        candidates = sorted(
            (a for a in ALIASES.get(role, ()) if a in store.label_names and a not in taken),
            key=lambda alias: -len(store.carriers.get(alias, frozenset(writers)) & set(writers)),
        )
        if candidates:
            fix, proposed = f'[labels] {role} = "{candidates[0]}"', {role: candidates[0]}
            taken.add(candidates[0])
        else:
            fix, proposed = f"set [labels] {role} to one of the label names found: {_listed(store.label_names)}", {}
        found.append(
            Difference(
                f"labels.{role}",
                f"{role} = {name!r}, but no series of {', '.join(sorted(writers))} carries a {name!r} label",
                fix,
                proposed,
            )
        )
    return found


def node_differences(profile: Profile, store: StoreView) -> list[Difference]:
    """The profile's node names against the node label's values on the deployment's series, both ways."""
    if not store.deployment_matches or profile.label("node") not in store.label_names:
        return []  # the deployment or label difference explains it
    stated, found = set(profile.node_names), set(store.node_values)
    where = f" of deployment {profile.deployment!r}" if profile.deployment else ""
    differences = []
    if found - stated:
        differences.append(
            Difference(
                "cluster.nodes",
                f"the store has series{where} from {len(found - stated)} node(s) the profile does not name: "
                + _listed(found - stated),
                "name every node of the cluster (cluster.nodes with node_name_format or node_names, and the pools' "
                "replicas x TP x PP to match)",
            )
        )
    if stated - found:
        differences.append(
            Difference(
                "cluster.nodes",
                f"the profile names {len(stated)} node(s); the store has no series{where} from "
                f"{len(stated - found)} of them over the window: {_listed(stated - found)}",
                "if the cluster is smaller, set cluster.nodes and the pools' replicas x TP x PP to what runs "
                "(a node down for the whole window is named here too)",
            )
        )
    return differences


def gpu_differences(profile: Profile, store: StoreView) -> list[Difference]:
    """``gpus_per_node`` against the GPUs DCGM reports per node: more on any node, or the same other count on all."""
    stated, counts = profile.gpus_per_node, store.gpus_by_node
    more = sorted(node for node, count in counts.items() if count > stated)
    uniform = len(set(counts.values())) == 1 and next(iter(counts.values()), stated) != stated
    if not more and not uniform:
        return []
    shown = more or sorted(counts)
    found = ", ".join(f"{node}: {counts[node]}" for node in shown[:LISTED])
    found += f", … ({len(shown) - LISTED} more)" if len(shown) > LISTED else ""
    return [
        Difference(
            "cluster.gpus_per_node",
            f"gpus_per_node = {stated}, but DCGM reports other GPU counts per node ({found})",
            "set cluster.gpus_per_node to the GPUs each node has, and the pools' replicas x TP x PP to match",
        )
    ]


def proposable_aliases(profile: Profile, label_names: frozenset[str]) -> list[str]:
    """The label names found that :func:`label_differences` may propose for a role whose profile name is missing."""
    missing = [role for role in ROLE_SOURCES if profile.label(role) not in label_names]
    return sorted({alias for role in missing for alias in ALIASES.get(role, ()) if alias in label_names})


def profile_differences(profile: Profile, store: StoreView, known_sources: set[str]) -> list[Difference]:
    """Every way the profile does not describe the store, the deployment first."""
    first = deployment_difference(profile, store)
    return [
        *([first] if first else []),
        *source_differences(profile, store, known_sources),
        *label_differences(profile, store),
        *node_differences(profile, store),
        *gpu_differences(profile, store),
    ]
