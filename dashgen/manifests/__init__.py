"""Deployment manifests of the built dashboards (``dashgen export``): a grafana-operator ``GrafanaDashboard``,
a ConfigMap for the kube-prometheus-stack Grafana sidecar, or Grafana file provisioning (a provider YAML
and the dashboard JSON). Pure: built dashboards in, ``{relative path: bytes}`` out."""

from dashgen.manifests.dashboards import FORMATS, ExportOptions, export_files

__all__ = ["FORMATS", "ExportOptions", "export_files"]
