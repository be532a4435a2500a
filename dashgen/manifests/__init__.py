"""Deployment manifests of the built dashboards (``dashgen export``): a grafana-operator ``GrafanaDashboard``,
a ConfigMap for the kube-prometheus-stack Grafana sidecar, or Grafana file provisioning (a provider YAML
and the dashboard JSON); a v2 profile's in v2 (``v2_files``: a ``GrafanaManifest``, the enveloped v2beta1 file).
Pure: built dashboards in, ``{relative path: bytes}`` out."""

from dashgen.manifests.dashboards import FORMATS, ExportOptions, export_files

__all__ = ["FORMATS", "ExportOptions", "export_files"]
