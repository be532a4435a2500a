"""Synthetic, realistic demo data for a profile's dashboards (``dashgen demo-data``, ``make demo``).

``catalogue`` knows each metric (source, type, scope, value model), ``wanted`` reads which metrics
and label values the rendered dashboards query, ``scenarios`` says which node suffers which
missing-data reason, ``series`` makes the series and ``plan_import`` ties them together.
"""
