"""The v2 dashboard resource (``dashboard.grafana.app/v2`` and ``v2beta1``), rendered from the same
rendered v1 panels: ``elements`` (one element per panel, keyed by its stable key), ``layout`` (tabs by question,
rows, grids), ``variables``, ``links``, ``annotations`` and ``timeSettings``, validated against the copies of
the Foundation SDK's v2 schemas in ``dashgen/render/schema``. Pure."""

from dashgen.render.v2.resource import API_GROUP, render_v2
from dashgen.render.v2.validate import validate_v2

__all__ = ["API_GROUP", "render_v2", "validate_v2"]
