/* dashgen preview: draw each time series panel with uPlot from the chart specs in #dg-charts, write the
   y axis uPlot drew into data-y-min / data-y-max of the panel box, then mark the page ready
   (document.body.dataset.ready = "1") for the screenshot. No network: everything is in the page. */
(function () {
  "use strict";
  var specs = JSON.parse(document.getElementById("dg-charts").textContent);

  function rgba(hex, alpha) {
    var m = /^#([0-9a-f]{2})([0-9a-f]{2})([0-9a-f]{2})$/i.exec(hex);
    if (!m) return hex;
    return "rgba(" + parseInt(m[1], 16) + "," + parseInt(m[2], 16) + "," + parseInt(m[3], 16) + "," + alpha + ")";
  }

  function thresholdsHook(spec) {
    var mode = spec.thresholds.mode, steps = spec.thresholds.steps;
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

  function draw(spec) {
    var el = document.getElementById(spec.id);
    var body = el.parentNode;
    var legend = body.querySelector(".legend");
    var width = Math.max(body.clientWidth - 16, 50);
    var height = Math.max(body.clientHeight - (legend ? legend.offsetHeight : 0) - 6, 40);
    var y = spec.y;
    var data = [spec.times].concat(spec.series.map(function (s) { return s.values; }));
    var grid = { stroke: "rgba(204,204,220,0.07)", width: 1 };
    var font = "11px Inter, Helvetica, Arial, sans-serif";
    var opts = {
      width: width,
      height: height,
      legend: { show: false },
      tzDate: function (ts) { return uPlot.tzDate(new Date(ts * 1e3), "Etc/UTC"); },  // the header says UTC
      cursor: { show: false },
      scales: {
        x: { time: true },
        y: y.log ? { distr: 3, log: y.log, range: [y.min, y.max] } : { range: [y.min, y.max] }
      },
      axes: [
        { stroke: "#8e8e8e", grid: grid, ticks: { show: false }, font: font },
        {
          stroke: "#8e8e8e", grid: grid, ticks: { show: false }, font: font, size: 60,
          splits: function () { return y.ticks; },
          values: function () { return y.labels; }
        }
      ],
      series: [{}].concat(spec.series.map(function (s) {
        return {
          label: s.name, stroke: s.color, width: spec.width, spanGaps: false,
          fill: spec.fill > 0 ? rgba(s.color, spec.fill) : undefined,
          points: { show: false }
        };
      })),
      hooks: {
        drawClear: thresholdsHook(spec),
        draw: [function (u) {
          // the axis as drawn (uPlot commits its scales on a microtask, so they are read at draw time)
          var box = el.closest(".panel");
          box.dataset.yMin = String(u.scales.y.min);
          box.dataset.yMax = String(u.scales.y.max);
          box.dataset.yTicks = y.labels.join("|");
        }]
      }
    };
    new uPlot(opts, data, el);
  }

  var failed = [];
  specs.forEach(function (spec) {
    try { draw(spec); } catch (e) { failed.push(spec.id + ": " + e); }
  });
  setTimeout(function () {  // after uPlot's first draws (microtasks run before timers)
    var undrawn = specs.filter(function (s) { return !document.getElementById(s.id).closest(".panel").dataset.yMax; });
    undrawn.forEach(function (s) { failed.push(s.id + ": not drawn"); });
    if (failed.length) document.body.dataset.failed = failed.join("\n");
    document.body.dataset.ready = "1";
  }, 0);
})();
