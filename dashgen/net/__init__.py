"""Networking shared by every service dashgen talks to (Grafana, the Prometheus-compatible data source)."""
