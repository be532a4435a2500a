"""``dashgen preview``: dashboards drawn on real data, as Grafana would show them, without a Grafana.

- ``layout``: the grid (24 columns, vertical compaction, collapsed rows folded or expanded);
- ``queries``: the panels' queries expanded as ``validate-queries`` does, run on a bounded pool;
- ``frames``: the answers as Grafana's data frames (step grid with gaps, tables and their transformations);
- ``units`` / ``markdown``: Grafana's value display and the text panels' markdown;
- ``draw`` / ``page``: one panel's HTML and chart spec, the self-contained page (uPlot inlined);
- ``browser``: one headless Chromium over the DevTools pipe (screenshots, the DOM as drawn);
- ``run`` / ``changed``: a dashboard end to end; before/after pictures of changed panels.
"""
