"""Talking to Grafana: the client, the translation of its answers into domain errors, and those errors.

HTTP itself (session, auth, TLS, timeouts, GET-only retries) is ``dashgen.net.http``, shared with
the data-source client.
"""
