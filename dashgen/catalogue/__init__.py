"""The failure-mode catalogue (S36): one typed row (``FailureMode``) per way a component of an LLM inference cluster
fails, and the one place alerts, node x layer health cells, the first screen's problem list, the runbooks
(docs/alerts.md) and the demo fault scenarios derive from.

Rows live in ``dashgen.catalogue.rows`` (``ROWS``); series no row reads are listed with a reason in
``dashgen.catalogue.signals`` (``NOT_SIGNALS``). ``dashgen.rules`` writes every alert from a row (an alert without
a row is refused) and the health recording rules from the rows' ``paints``.

Contract for the first screen (and anything reading ``ALERTS``, which carries labels only)
--------------------------------------------------------------------------------------------
Every alert written from the catalogue carries these LABELS:

- ``severity``: ``critical`` | ``warning`` (at most ``warning`` for a retired deployment);
- ``component``: the row's component (``model.COMPONENTS``: gpu, host, disk, engine, kv_pool, hicache, ...);
- ``layer``: the node x layer health column it paints (``model.LAYERS``; ``gpu`` = the per-GPU sources' columns),
  or ``none`` (``NO_LAYER``) for a row that paints no column, so the label is always present;
- ``failure``: the row's stable id (``FailureMode.id``, e.g. ``kv-pool-exhausted``);
- ``cause``: the likely cause, a short phrase (``FailureMode.cause``);
- ``look``: the dashboard row / panel title to open first (``FailureMode.look``);
- the entity labels the row names (``FailureMode.entity``, as label roles: ``node``, ``gpu``, ``device``,
  ``mountpoint``, ``pp_rank``, ``instance``, ``worker``, ``policy``, ``master``, ``job`` ...; a role the profile's
  ``[labels]`` maps is written with the profile's label name, :func:`entity_labels`), kept by the expression;
- the deployment label (S21).

and the ANNOTATIONS ``summary``, ``description`` and ``runbook`` (the first steps, and a link to the row's section in
docs/alerts.md). Rows with ``scope == "cluster"`` name no node: list them once for the deployment.

Typed API::

    from dashgen.catalogue import ROWS, by_id, by_alert, rows_for, entity_labels, alert_labels, painted_layers
    rows_for(profile)          # the rows that apply to a profile (its exported sources, kinds, field lists)
    by_alert("GatewayShedding").cause
    alert_labels(row)          # (("component", ...), ("layer", ...), ("failure", ...), ("cause", ...), ("look", ...))
"""

from __future__ import annotations

from dashgen.catalogue.model import (
    COMPONENTS,
    ENTITIES,
    LAYERS,
    SEVERITIES,
    DemoFault,
    FailureMode,
    NotASignal,
    Paint,
    Read,
)
from dashgen.catalogue.rows import ROWS
from dashgen.deployment.profile import Profile

NO_LAYER = "none"  # the ``layer`` label of a row that paints no column

_BY_ID = {row.id: row for row in ROWS}
_BY_ALERT = {row.alert: row for row in ROWS}


def by_id(row_id: str) -> FailureMode:
    """The row with this id; KeyError naming the id when there is none."""
    try:
        return _BY_ID[row_id]
    except KeyError:
        raise KeyError(f"{row_id}: no failure mode with this id in dashgen/catalogue/rows.py") from None


def by_alert(alert: str) -> FailureMode:
    """The row whose alert is ``alert``; KeyError naming it when no row writes that alert."""
    try:
        return _BY_ALERT[alert]
    except KeyError:
        raise KeyError(
            f"{alert}: no failure mode in dashgen/catalogue/rows.py writes this alert; add its row"
        ) from None


def rows_for(profile: Profile) -> tuple[FailureMode, ...]:
    """The rows that apply to ``profile`` (what it exports and collects), in catalogue order."""
    return tuple(row for row in ROWS if row.applies(profile))


def entity_labels(profile: Profile, row: FailureMode) -> tuple[str, ...]:
    """The label names of the row's entity on ``profile`` (its ``[labels]`` mapping for the roles it maps)."""
    return tuple(profile.labels.get(role, role) for role in row.entity)


def alert_labels(row: FailureMode) -> tuple[tuple[str, str], ...]:
    """The catalogue labels every alert of ``row`` carries (besides ``severity`` and the entity's own labels)."""
    return (
        ("component", row.component),
        ("layer", row.layer or NO_LAYER),
        ("failure", row.id),
        ("cause", row.cause),
        ("look", row.look),
    )


def painted_layers(profile: Profile) -> frozenset[str]:
    """The layer keys the profile's rows paint (``gpu`` expanded by the caller to the per-GPU sources)."""
    return frozenset(row.layer for row in rows_for(profile) if row.paints and row.layer)


__all__ = [
    "COMPONENTS",
    "ENTITIES",
    "LAYERS",
    "NO_LAYER",
    "ROWS",
    "SEVERITIES",
    "DemoFault",
    "FailureMode",
    "NotASignal",
    "Paint",
    "Read",
    "alert_labels",
    "by_alert",
    "by_id",
    "entity_labels",
    "painted_layers",
    "rows_for",
]
