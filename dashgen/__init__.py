"""dashgen: Grafana dashboards as code for LLM inference clusters.

The package owns the engine (profiles, topology, rendering, validation, lint, diff,
the Grafana client and the publish pipeline). Panel definitions live in the top-level
``panels`` package and PromQL builders in ``queries``.
"""

__version__ = "0.1.0"
