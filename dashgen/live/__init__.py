"""The live data source: its client, query expansion as Grafana does it, and validate-queries."""
