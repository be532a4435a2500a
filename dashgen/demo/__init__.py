"""Synthetic, realistic demo data for a profile's dashboards (``dashgen demo-data``, ``make demo``).

``catalogue`` knows each metric (type, scope, value model; its source from ``dashgen.live.sources``),
``wanted`` reads which metrics and label values the rendered dashboards and rules query, ``scenarios``
says which node suffers which missing-data reason (and where each incident drill strikes: ``entity``),
``incidents`` reshapes the drills' series as the real exporters show the fault, ``scopes`` gives
every series its labels, ``values`` its samples, ``series`` applies the scenario and streams them, and
``run`` ties them together.
"""
