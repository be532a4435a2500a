"""The live data source: its client, query expansion as Grafana does it, and validate-queries.

``datasource`` is the HTTP client; ``expand`` turns a panel target into the queries Grafana would
send (Grafana's variable values over ``dashgen.document``'s substitution core); ``sources`` says
which profile source exports which metric; ``selectors`` reads the PromQL facts the checks need;
``query_check`` plans and runs the checks, ``reasons`` explains empty results, ``results`` holds
what is reported and ``report`` renders it.
"""
