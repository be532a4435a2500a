/* dashgen preview: every data panel's request (#dg-panels) goes through Grafana's own @grafana/data
   (DashgenGrafana.applyPanels: the Prometheus data source's frames, the panel's transformations, field config,
   overrides, units, thresholds, mappings, display names, legend calculations); this script draws what comes
   back: tables, stats, bar gauges and state timelines as DOM text (textContent, never markup from data), time
   series with uPlot (the library and version Grafana draws them with) and Grafana's axis formatter. It writes
   what a test reads into the panel box (data-points, data-columns, data-y-*, data-legend-more) and marks the
   page ready (document.body.dataset.ready = "1") for the screenshot. No network: everything is in the page. */
(function () {
  "use strict";
  var G = window.DashgenGrafana;
  var specs = JSON.parse(document.getElementById("dg-panels").textContent);
  var MAX_TABLE_ROWS = 200;
  var failed = [];
  var pending = [];

  function el(tag, cls, text) {
    var node = document.createElement(tag);
    if (cls) node.className = cls;
    if (text !== undefined && text !== null) node.textContent = String(text);
    return node;
  }

  function swatch(color) {
    var i = el("i");
    i.style.background = color;
    return i;
  }

  function rgba(color, alpha) {
    var m = /^#([0-9a-f]{2})([0-9a-f]{2})([0-9a-f]{2})$/i.exec(color);
    if (!m) return color;
    return "rgba(" + parseInt(m[1], 16) + "," + parseInt(m[2], 16) + "," + parseInt(m[3], 16) + "," + alpha + ")";
  }

  // Grafana's empty panel: the panel's noValue text, "No data", or the first query error when one failed
  function noData(host, request) {
    var errors = request.answers.filter(function (a) { return a.error; }).map(function (a) { return a.error; });
    var defaults = (request.panel.fieldConfig || {}).defaults || {};
    if (errors.length) {
      var node = el("div", "nodata error", errors[0].slice(0, 300));
      node.title = errors[0];
      host.appendChild(node);
    } else {
      host.appendChild(el("div", "nodata", defaults.noValue || "No data"));
    }
  }

  // -- table ------------------------------------------------------------------------------------------------

  // The columns past the panel's edge on a 1920 px screen: Grafana's computeColWidths (every column not fixed
  // gets max(floor, its share)), with the widths and floor dashgen.render.clipping computed for this panel.
  function clippedColumns(names, rule) {
    if (!rule) return [];
    var fixedWidth = function (name) {
      if (Object.prototype.hasOwnProperty.call(rule.fixed, name)) return rule.fixed[name];
      return rule.width;
    };
    var defined = 0, auto = 0;
    names.forEach(function (n) { var w = fixedWidth(n); if (w === null || w === undefined) auto++; else defined += w; });
    var share = auto ? (rule.available - defined) / auto : 0;
    var edge = 0, out = [];
    names.forEach(function (n) {
      var w = fixedWidth(n);
      edge += (w === null || w === undefined) ? Math.max(rule.minWidth, share) : w;
      if (edge > rule.available + 0.5) out.push(n);
    });
    return out;
  }

  function table(host, box, result, request, spec) {
    box.dataset.points = String(result.rows.length);
    box.dataset.columns = String(result.columns.length);
    box.dataset.frames = String(result.frames);
    box.dataset.clippedColumns = "0";  // an empty table clips nothing
    if (!result.rows.length) return noData(host, request);
    var past = clippedColumns(result.columns.map(function (c) { return c.name; }), spec && spec.clip);
    box.dataset.clippedColumns = String(past.length);
    if (past.length) box.dataset.clipped = past.join(" | ");
    var wrap = el("div", "table");
    var t = el("table");
    var head = el("tr");
    result.columns.forEach(function (c) {
      var th = head.appendChild(el("th", c.type === "number" ? "num" : "", c.name));
      if (past.indexOf(c.name) >= 0) th.classList.add("clipped");
    });
    t.appendChild(el("thead")).appendChild(head);
    var body = t.appendChild(el("tbody"));
    result.rows.slice(0, MAX_TABLE_ROWS).forEach(function (row) {
      var tr = el("tr");
      row.forEach(function (cell, i) {
        var column = result.columns[i];
        var td = el("td", column.type === "number" ? "num" : "", cell.text);
        if (cell.color && cell.text !== "") {
          if (column.cell === "color-background") {
            td.style.background = cell.color;
            td.style.color = "#fff";
          } else if (column.cell === "color-text") {
            td.style.color = cell.color;
          }
        }
        tr.appendChild(td);
      });
      body.appendChild(tr);
    });
    wrap.appendChild(t);
    if (result.rows.length > MAX_TABLE_ROWS) wrap.appendChild(el("div", "more", (result.rows.length - MAX_TABLE_ROWS) + " more rows"));
    host.appendChild(wrap);
    if (past.length) host.appendChild(el("div", "clipped-note", "past the edge at " + spec.clip.screen + " px: " + past.join(", ")));
  }

  // -- stat, bar gauge ------------------------------------------------------------------------------------

  function sparkline(values, tint) {
    var ns = "http://www.w3.org/2000/svg";
    var points = values.filter(function (v) { return v !== null; });
    if (points.length < 2) return null;
    var low = Math.min.apply(null, points), high = Math.max.apply(null, points);
    var span = (high - low) || 1, last = Math.max(values.length - 1, 1);
    var svg = document.createElementNS(ns, "svg");
    svg.setAttribute("class", "spark");
    svg.setAttribute("viewBox", "0 0 100 30");
    svg.setAttribute("preserveAspectRatio", "none");
    var run = [];
    function flush() {
      if (run.length > 1) {
        var line = document.createElementNS(ns, "polyline");
        line.setAttribute("points", run.join(" "));
        line.setAttribute("fill", "none");
        line.setAttribute("stroke", tint);
        line.setAttribute("stroke-width", "1.5");
        line.setAttribute("vector-effect", "non-scaling-stroke");
        svg.appendChild(line);
      }
      run = [];
    }
    values.forEach(function (v, i) {
      if (v === null) return flush();
      run.push((i / last * 100).toFixed(2) + "," + (30 - (v - low) / span * 28).toFixed(2));
    });
    flush();
    return svg;
  }

  function stat(host, box, result, request) {
    var values = result.values.filter(function (v) { return v.numeric !== null || v.text !== ""; });
    box.dataset.points = String(values.length);
    box.dataset.series = String(values.length);
    if (!values.length) return noData(host, request);
    var options = request.panel.options || {};
    var mode = options.colorMode || "value";
    var named = options.textMode === "value_and_name" || options.textMode === "name" || values.length > 1;
    var wrap = el("div", "stat");
    values.forEach(function (v) {
      var tint = v.color || G.colour("green");
      var tile = el("div", "tile");
      if (mode === "background") { tile.style.background = tint; tile.style.color = "#fff"; } else if (mode !== "none") tile.style.color = tint;
      if (named) tile.appendChild(el("div", "name", v.name));
      tile.appendChild(el("div", "big", v.text));
      if (options.graphMode === "area") {
        var spark = sparkline(v.values, mode === "background" ? "#ffffff" : tint);
        if (spark) tile.appendChild(spark);
      }
      wrap.appendChild(tile);
    });
    host.appendChild(wrap);
    // Grafana's big value sizes its text to the tile (BigValue's calculateFontSize): shrink until it fits, and
    // report any value still wider than its tile (data-cut-values), since a cut number reads as another number
    var cut = 0;
    Array.prototype.forEach.call(wrap.querySelectorAll(".big"), function (big) {
      var room = big.parentNode.clientWidth - 4;
      for (var size = 30; size > 9 && big.scrollWidth > room; size--) big.style.fontSize = (size - 1) + "px";
      if (big.scrollWidth > room) cut++;
    });
    box.dataset.cutValues = String(cut);
  }

  function bars(host, box, result, request) {
    var values = result.values.filter(function (v) { return v.numeric !== null; });
    box.dataset.points = String(values.length);
    box.dataset.series = String(values.length);
    if (!values.length) return noData(host, request);
    var wrap = el("div", "bars");
    values.forEach(function (v) {
      // Grafana's bar gauge fills (value - min) / (max - min) of the bar, with each value's min and max from
      // @grafana/data (the field's, else the data's range), else grafana-ui's gauge defaults 0 and 100
      var low = v.min != null ? v.min : 0, high = v.max != null ? v.max : 100;
      var share = high <= low ? 0 : Math.max(0, Math.min(1, (v.numeric - low) / (high - low)));
      var row = el("div", "bar");
      row.appendChild(el("span", "name", v.name));
      var track = row.appendChild(el("span", "track"));
      var fill = track.appendChild(el("span", "fill"));
      fill.style.width = (share * 100).toFixed(1) + "%";
      fill.style.background = v.color;
      var text = row.appendChild(el("span", "value", v.text));
      text.style.color = v.color;
      wrap.appendChild(row);
    });
    host.appendChild(wrap);
  }

  // -- state timeline -------------------------------------------------------------------------------------

  function timeline(host, box, result, request) {
    var series = result.series.filter(function (s) { return s.values.some(function (v) { return v !== null; }); });
    box.dataset.series = String(series.length);
    box.dataset.points = String(series.reduce(function (n, s) { return n + s.values.filter(function (v) { return v !== null; }).length; }, 0));
    if (!series.length) return noData(host, request);
    var wrap = el("div", "timeline");
    series.forEach(function (s) {
      var lane = el("div", "lane");
      lane.appendChild(el("span", "name", s.name));
      var band = lane.appendChild(el("span", "band"));
      // equal consecutive values merge into one segment; merged by threshold, equal labels do (Grafana's timeline)
      var key = s.mergedByThreshold ? function (i) { return s.texts[i] ? s.texts[i].text : null; } : function (i) { return s.values[i]; };
      var count = Math.max(s.values.length, 1), start = 0;
      for (var i = 1; i <= s.values.length; i++) {
        if (i === s.values.length || key(i) !== key(start)) {
          if (s.values[start] !== null && s.texts[start]) {
            var shown = s.texts[start];
            var seg = band.appendChild(el("span", "seg", shown.text));
            seg.title = shown.text;
            seg.style.left = (start / count * 100).toFixed(2) + "%";
            seg.style.width = ((i - start) / count * 100).toFixed(2) + "%";
            seg.style.background = shown.color;
          }
          start = i;
        }
      }
      wrap.appendChild(lane);
    });
    host.appendChild(wrap);
  }

  // -- time series ----------------------------------------------------------------------------------------

  function legend(host, box, series, request) {
    var options = (request.panel.options || {}).legend || {};
    if (options.showLegend === false) return null;
    var calcs = (series[0] && series[0].calcs) || [];
    var node;
    if (options.displayMode === "table" && calcs.length) {
      node = el("div", "legend table-legend");
      var t = node.appendChild(el("table"));
      var head = t.appendChild(el("thead")).appendChild(el("tr"));
      head.appendChild(el("th"));
      calcs.forEach(function (c) { head.appendChild(el("th", "", c.name)); });
      var body = t.appendChild(el("tbody"));
      series.forEach(function (s) {
        var tr = body.appendChild(el("tr"));
        var name = tr.appendChild(el("th"));
        name.appendChild(swatch(s.color));
        name.appendChild(document.createTextNode(s.name));
        s.calcs.forEach(function (c) { tr.appendChild(el("td", "", c.text)); });
      });
    } else {
      node = el("div", "legend");
      series.forEach(function (s) {
        var item = node.appendChild(el("span", "item"));
        item.appendChild(swatch(s.color));
        item.appendChild(document.createTextNode(s.name));
      });
    }
    host.appendChild(node);
    return node;
  }

  // Grafana's legend scrolls; a picture cannot, so the rows that do not fit become one "+N more" line. Two
  // phases so that a page of charts lays out once: measure every legend, then hide rows in all of them.
  var MORE_LINE = 16;  // px: the "+N more" line's own height
  function legendFit(node) {
    if (!node || node.scrollHeight <= node.clientHeight + 1) return null;
    var rows = Array.prototype.slice.call(node.querySelectorAll("tbody tr, .item"));
    var top = node.getBoundingClientRect().top, room = node.clientHeight - MORE_LINE;
    var shown = rows.filter(function (r) { return r.getBoundingClientRect().bottom - top <= room; }).length;
    return { rows: rows, hidden: rows.length - shown };
  }

  function limitLegend(node, box, fit) {
    if (!fit || !fit.hidden) return;
    fit.rows.slice(fit.rows.length - fit.hidden).forEach(function (r) { r.style.display = "none"; });
    node.appendChild(el("div", "legend-more", "+" + fit.hidden + " more"));
    box.dataset.legendMore = String(fit.hidden);
  }

  function thresholdsHook(mode, steps) {
    if (mode === "off" || !steps.length) return [];
    return [function (u) {
      var ctx = u.ctx, left = u.bbox.left, width = u.bbox.width;
      ctx.save();
      for (var i = 0; i < steps.length; i++) {
        var low = steps[i].value === null ? u.scales.y.min : steps[i].value;
        var high = i + 1 < steps.length ? steps[i + 1].value : u.scales.y.max;
        var y0 = u.valToPos(Math.max(low, u.scales.y.min), "y", true);
        var y1 = u.valToPos(Math.min(high, u.scales.y.max), "y", true);
        if (mode.indexOf("area") >= 0 && y0 > y1) {
          ctx.fillStyle = rgba(steps[i].color, 0.12);
          ctx.fillRect(left, y1, width, y0 - y1);
        }
        if (mode.indexOf("line") >= 0 && steps[i].value !== null && low >= u.scales.y.min && low <= u.scales.y.max) {
          ctx.strokeStyle = steps[i].color;
          ctx.setLineDash([8, 6]);
          ctx.lineWidth = 1;
          ctx.beginPath();
          ctx.moveTo(left, y0);
          ctx.lineTo(left + width, y0);
          ctx.stroke();
        }
      }
      ctx.restore();
    }];
  }

  function timeseries(host, box, result, request) {
    var series = result.series.filter(function (s) { return s.values.some(function (v) { return v !== null; }); });
    box.dataset.series = String(series.length);
    box.dataset.points = String(series.reduce(function (n, s) { return n + s.values.filter(function (v) { return v !== null; }).length; }, 0));
    if (!series.length) return noData(host, request);
    var first = series[0];
    box.dataset.unit = first.unit;
    var chart = host.appendChild(el("div", "chart"));
    var legendNode = legend(host, box, series, request);
    pending.push({ measure: function () { return legendFit(legendNode); }, limit: function (fit) { limitLegend(legendNode, box, fit); }, size: function () {
      return [Math.max(host.clientWidth, 50), Math.max(host.clientHeight - (legendNode ? legendNode.offsetHeight : 0) - 6, 40)];
    }, draw: function (size) {
      var width = size[0], height = size[1];
      var custom = first.custom || {};
      var distribution = custom.scaleDistribution || {};
      var log = distribution.type === "log" ? distribution.log || 2 : 0;
      var fieldConfig = { unit: first.unit, decimals: first.decimals };
      var ticks = [];
      // one x grid: the union of the series' times (each series' nulls inserted by @grafana/data on its step)
      var times = result.times.map(function (t) { return t / 1000; });
      var index = {};
      times.forEach(function (t, i) { index[t] = i; });
      var data = [times].concat(series.map(function (s) {
        var values = new Array(times.length).fill(null);
        s.times.forEach(function (t, i) { var at = index[t / 1000]; if (at !== undefined) values[at] = s.values[i]; });
        return values;
      }));
      var y = log ? { distr: 3, log: log } : {};
      var fixedMin = first.min, fixedMax = first.max;
      if (!log) {
        // Grafana's scale builder: uPlot's rangeNum around the data (or the fixed side), fixed sides kept
        y.range = function (u, dataMin, dataMax) {
          var auto = uPlot.rangeNum(fixedMin != null ? fixedMin : dataMin, fixedMax != null ? fixedMax : dataMax, 0.1, true);
          return [fixedMin != null ? fixedMin : auto[0], fixedMax != null ? fixedMax : auto[1]];
        };
      }
      var grid = { stroke: "rgba(204,204,220,0.07)", width: 1 };
      var font = "11px Inter, Helvetica, Arial, sans-serif";
      var steps = ((first.thresholds || {}).steps || []).map(function (s) { return { value: s.value === null || s.value === undefined ? null : s.value, color: G.colour(s.color) }; });
      var opts = {
        width: width,
        height: height,
        legend: { show: false },
        tzDate: function (ts) { return uPlot.tzDate(new Date(ts * 1e3), "Etc/UTC"); },  // the header says UTC
        cursor: { show: false },
        scales: { x: { time: true }, y: y },
        axes: [
          { stroke: "#8e8e8e", grid: grid, ticks: { show: false }, font: font },
          {
            stroke: "#8e8e8e", grid: grid, ticks: { show: false }, font: font, size: 60,
            // Grafana's axis builder: 30 px between ticks (15 px on a plot 150 px high or less), whole numbers
            // only when the field has 0 decimals, uPlot's splits (log ones on a log scale) formatted by the
            // field's display processor with decimals guessed from the tick step
            space: function (u, axisIdx, scaleMin, scaleMax, plotDim) { return plotDim <= 150 ? 15 : 30; },
            values: function (u, splits, axisIdx, space, incr) {
              ticks = G.axisLabels(fieldConfig, splits, incr);
              return ticks;
            }
          }
        ],
        series: [{}].concat(series.map(function (s) {
          return {
            label: s.name, stroke: s.color, width: custom.lineWidth || 1, spanGaps: false,
            fill: custom.fillOpacity > 0 ? rgba(s.color, custom.fillOpacity / 100) : undefined,
            points: { show: false }
          };
        })),
        hooks: {
          drawClear: thresholdsHook(((custom.thresholdsStyle || {}).mode) || "off", steps),
          draw: [function (u) {
            // the axis as drawn (uPlot commits its scales on a microtask, so they are read at draw time)
            box.dataset.yMin = String(u.scales.y.min);
            box.dataset.yMax = String(u.scales.y.max);
            box.dataset.yTicks = ticks.filter(function (t) { return t !== null; }).join("|");
          }]
        }
      };
      if (first.decimals === 0 && !log) {
        opts.axes[1].filter = function (u, splits) { return splits.map(function (v) { return Number.isInteger(v) ? v : null; }); };
      }
      new uPlot(opts, data, chart);
    } });
  }

  // -- the page -------------------------------------------------------------------------------------------

  var DRAW = { table: table, stat: stat, bargauge: bars, "state-timeline": timeline, timeseries: timeseries };
  var results;
  try {
    results = G.applyPanels(specs.map(function (s) { return s.request; }));
  } catch (e) {
    failed.push("@grafana/data: " + e);
    results = [];
  }
  specs.forEach(function (spec, i) {
    var host = document.getElementById(spec.id);
    var box = host.closest(".panel");
    var result = results[i];
    try {
      if (!result) return;
      if (result.kind === "error") {
        // a panel @grafana/data refuses is shown as Grafana shows a panel error, not hidden
        box.dataset.grafanaError = result.error;
        if (spec.clip) box.dataset.clippedColumns = "0";  // an error, no column drawn
        host.appendChild(el("div", "nodata error", "@grafana/data: " + result.error));
        return;
      }
      DRAW[spec.request.panel.type](host, box, result, spec.request, spec);
    } catch (e) {
      failed.push(spec.id + ": " + e);
    }
  });
  // layout reads and writes in batches: legends measured, legends cut, charts sized, charts drawn
  function each(step) {
    return pending.map(function (p, i) {
      try { return step(p, i); } catch (e) { failed.push("chart: " + e); return null; }
    });
  }
  var fits = each(function (p) { return p.measure(); });
  each(function (p, i) { p.limit(fits[i]); });
  var sizes = each(function (p) { return p.size(); });
  each(function (p, i) { if (sizes[i]) p.draw(sizes[i]); });
  setTimeout(function () {  // after uPlot's first draws (microtasks run before timers)
    var charts = document.querySelectorAll(".panel .chart");
    Array.prototype.forEach.call(charts, function (c) {
      if (!c.closest(".panel").dataset.yMax) failed.push(c.closest(".panel").dataset.panelKey + ": not drawn");
    });
    if (failed.length) document.body.dataset.failed = failed.join("\n");
    document.body.dataset.ready = "1";
  }, 0);
})();
