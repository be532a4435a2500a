"""Talking to Grafana: one HTTP transport (auth, TLS, timeouts, retry), the client, and the domain errors."""
