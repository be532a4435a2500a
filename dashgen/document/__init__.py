"""Any Grafana dashboard JSON, read one way: the loader, the panel walker and Grafana's variable syntax.

- ``walk``: :func:`unwrap` (plain, ``{dashboard, meta}`` export, k8s ``{apiVersion, spec}``),
  :func:`iter_panels` (top level, collapsed rows, legacy ``rows[]``) and :func:`raw_variables`;
- ``model``: :func:`load_dashboard`, the typed view (:class:`Dashboard`, :class:`Panel`,
  :class:`Target`, :class:`Variable`, :class:`DatasourceRef`);
- ``v2view``: :func:`classic_view`, how a v2 resource (``dashboard.grafana.app/v2…``) reads as v1;
- ``variables``: the one substitution core (:func:`substitute`, :class:`Reference`) that lint's
  placeholder expander and the live data source's Grafana expander both call.

Imports only the standard library (layer 2: nothing of dashgen above ``dashgen.errors``).
"""

from dashgen.document.model import (
    BUILTIN_DATASOURCE_UIDS,
    Dashboard,
    DatasourceRef,
    Panel,
    Target,
    Variable,
    datasource_ref,
    load_dashboard,
)
from dashgen.document.v2view import classic_view, is_v2
from dashgen.document.variables import REFERENCE_RE, Policy, Reference, substitute, variable_name
from dashgen.document.walk import NotADashboard, PanelSite, iter_panel_objects, iter_panels, raw_variables, unwrap

__all__ = [
    "BUILTIN_DATASOURCE_UIDS",
    "REFERENCE_RE",
    "Dashboard",
    "DatasourceRef",
    "NotADashboard",
    "Panel",
    "PanelSite",
    "Policy",
    "Reference",
    "Target",
    "Variable",
    "classic_view",
    "datasource_ref",
    "is_v2",
    "iter_panel_objects",
    "iter_panels",
    "load_dashboard",
    "raw_variables",
    "substitute",
    "unwrap",
    "variable_name",
]
