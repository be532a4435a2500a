"""``dashgen preview``: dashboards drawn on real data, as Grafana would show them, without a Grafana.

- ``layout``: the grid (24 columns, vertical compaction, collapsed rows folded or expanded);
- ``queries``: the panels' queries expanded as ``validate-queries`` does, run on a bounded pool;
- ``frames``: the answers as the request the page's copy of Grafana's ``@grafana/data`` computes frames from;
- ``markdown``: the text panels' markdown (everything else a panel shows is ``@grafana/data``'s, in the page);
- ``draw`` / ``page``: one panel's box and request, the self-contained page (uPlot and @grafana/data inlined);
- ``browser``: one headless Chromium over the DevTools pipe (screenshots, the DOM as drawn);
- ``run`` / ``changed``: a dashboard end to end; before/after pictures of changed panels.
"""
