// dashgen's entry into Grafana's @grafana/data: built by `make grafana-data-bundle` into one IIFE
// (dashgen/data/grafana-data/grafana-data.iife.min.js) that defines the global `DashgenGrafana`. The same
// file runs in the preview's Chromium and, in the tests, in Node.
//
// What is Grafana's code here: every transformation (merge, organize, groupingToMatrix, joinByField, reduce,
// ...), field config defaults and overrides (applyFieldOverrides), display names (getFieldDisplayName), value
// display (getDisplayProcessor: units via getValueFormat, decimals, thresholds, value mappings, colours),
// reducers (reduceField: legend calculations), the values of a stat or bar gauge (getFieldDisplayValues), a table's
// initial sort (sortDataFrame), the null-insert of a time series (applyNullInsertThreshold) and the series colours
// (classic palette of the dark theme).
// What is dashgen's: `prometheusFrames` below, a port of what Grafana's Prometheus data source does to
// an answer before a panel sees it (the Go backend's frames + the frontend's table shaping; Grafana
// publishes neither in @grafana/data), and the choice of what each panel kind reads from the frames.
import {
  applyFieldOverrides,
  applyNullInsertThreshold,
  booleanOverrideProcessor,
  createTheme,
  FieldColorModeId,
  FieldConfigOptionsRegistry,
  FieldType,
  fieldReducers,
  formattedValueToString,
  getActiveThreshold,
  getDisplayProcessor,
  getFieldDisplayName,
  getFieldConfigWithMinMax,
  getFieldDisplayValues,
  getFieldSeriesColor,
  getPanelOptionsWithDefaults,
  getValueFormat,
  guessDecimals,
  identityOverrideProcessor,
  numberOverrideProcessor,
  displayNameOverrideProcessor,
  reduceField,
  roundDecimals,
  sortDataFrame,
  standardTransformers,
  standardTransformersRegistry,
  stringOverrideProcessor,
  thresholdsOverrideProcessor,
  ThresholdsMode,
  transformDataFrame,
  unitOverrideProcessor,
  valueMappingsOverrideProcessor,
} from "@grafana/data";

const VERSION = "@grafana/data " + (typeof __GRAFANA_DATA_VERSION__ === "string" ? __GRAFANA_DATA_VERSION__ : "?");

// as Grafana's app registers them (seriesToColumns is the same transformer as joinByField: once)
standardTransformersRegistry.setInit(() =>
  Array.from(new Set(Object.values(standardTransformers))).map((t) => ({ id: t.id, name: t.name, description: t.description, transformation: t })),
);

const theme = createTheme({ colors: { mode: "dark" } });

// The field options Grafana's panel editor registers for every panel (public/app/features/panel's standard
// options): what applyFieldOverrides may set from fieldConfig.defaults and overrides.
const STANDARD = [
  ["unit", unitOverrideProcessor],
  ["min", numberOverrideProcessor],
  ["max", numberOverrideProcessor],
  ["fieldMinMax", booleanOverrideProcessor],  // min / max of each field, not of all the panel's fields
  ["decimals", numberOverrideProcessor],
  ["displayName", displayNameOverrideProcessor],
  ["noValue", stringOverrideProcessor],
  ["color", identityOverrideProcessor],
  ["thresholds", thresholdsOverrideProcessor],
  ["mappings", valueMappingsOverrideProcessor],
  ["links", identityOverrideProcessor],
  ["filterable", identityOverrideProcessor],
];

function registry(panel) {
  const items = STANDARD.map(([id, process]) => ({ id, path: id, name: id, process, override: null, editor: null, shouldApply: () => true }));
  // the panel's own (custom.*) options: whatever the panel's defaults and overrides name, passed through
  const custom = new Set(Object.keys((panel.fieldConfig && panel.fieldConfig.defaults && panel.fieldConfig.defaults.custom) || {}));
  for (const o of (panel.fieldConfig && panel.fieldConfig.overrides) || []) {
    for (const p of o.properties || []) if (typeof p.id === "string" && p.id.startsWith("custom.")) custom.add(p.id.slice(7));
  }
  for (const name of custom) {
    items.push({ id: "custom." + name, path: name, name, isCustom: true, process: identityOverrideProcessor, override: null, editor: null, shouldApply: () => true });
  }
  return new FieldConfigOptionsRegistry(() => items);
}

// -- the Prometheus data source's frames --------------------------------------------------------------------

const LEGEND = /\{\{\s*(.+?)\s*\}\}/g;

// the backend's name of a series without a legend: metric{a="b", c="d"}, labels sorted, %q-quoted
function metricName(labels) {
  const name = labels.__name__;
  const rest = Object.keys(labels).filter((k) => k !== "__name__").sort().map((k) => k + "=" + JSON.stringify(labels[k]));
  if (!rest.length) return name !== undefined ? name : "{}";
  return (name || "") + "{" + rest.join(", ") + "}";
}

function seriesName(answer, labels) {
  let legend = metricName(labels);
  const format = answer.legendFormat;
  if (format === "__auto") {
    if (Object.keys(labels).length) legend = "";
  } else if (format) {
    legend = format.replace(LEGEND, (_, key) => (key in labels ? labels[key] : ""));
  }
  return legend === "{}" ? answer.expr : legend;
}

function sampleValue(raw) {
  if (raw === "+Inf") return Infinity;
  if (raw === "-Inf") return -Infinity;
  return typeof raw === "string" || typeof raw === "number" ? Number(raw) : NaN;  // "not a number" -> NaN (a gap)
}

// one answer -> the frames the backend sends: a frame per series with a Time and a Value field (the series'
// labels on the Value field, the legend as its displayNameFromDS), times in ms, the step as the interval
// a [timestamp, value] pair with a numeric timestamp; anything else a data source sends is left out (a gap)
function isSample(raw) {
  return Array.isArray(raw) && raw.length === 2 && raw[0] !== null && raw[0] !== "" && Number.isFinite(Number(raw[0]));
}

function seriesFrames(answer) {
  const items =
    answer.resultType === "scalar" || answer.resultType === "string"
      ? [{ metric: {}, value: answer.result }]
      : Array.isArray(answer.result) ? answer.result : [];
  return items.filter((item) => item && typeof item === "object").map((item) => {
    const labels = {};
    const metric = item.metric && typeof item.metric === "object" ? item.metric : {};
    for (const [k, v] of Object.entries(metric)) labels[k] = String(v);
    const samples = (Array.isArray(item.values) ? item.values : [item.value]).filter(isSample);
    const name = seriesName(answer, labels);
    const valueConfig = name ? { displayNameFromDS: name } : {};
    return {
      refId: answer.refId,
      name: answer.refId,
      length: samples.length,
      fields: [
        { name: "Time", type: FieldType.time, config: { interval: answer.stepMs || undefined }, values: samples.map((s) => Math.round(Number(s[0]) * 1000)) },
        { name: "Value", type: FieldType.number, labels, config: valueConfig, values: samples.map((s) => sampleValue(s[1])) },
      ],
    };
  });
}

// the frontend's table shaping of format=table answers (transformDFToTable): one frame per refId with Time,
// the label columns (sorted, first seen first) and "Value" ("Value #<refId>" when several refIds answered)
function tableFrames(frames, refIds) {
  const several = refIds.length > 1;
  return refIds.map((refId) => {
    const mine = frames.filter((f) => f.refId === refId);
    const labelNames = [];
    for (const f of mine) for (const k of Object.keys(f.fields[1].labels).sort()) if (!labelNames.includes(k)) labelNames.push(k);
    const time = { name: "Time", type: FieldType.time, config: {}, values: [] };
    const value = { name: several ? "Value #" + refId : "Value", type: FieldType.number, config: {}, values: [] };
    const labelFields = labelNames.map((k) => ({ name: k, type: k === "le" ? FieldType.number : FieldType.string, config: { filterable: true }, values: [] }));
    for (const f of mine) {
      f.fields[0].values.forEach((t) => time.values.push(t));
      f.fields[1].values.forEach((v) => {
        value.values.push(v);
        labelFields.forEach((lf) => {
          const raw = f.fields[1].labels[lf.name];
          // a series without the label gets "" (the data source's getLabelValue), not a null
          lf.values.push(raw === undefined ? "" : lf.type === FieldType.number ? parseFloat(raw) : raw);
        });
      });
    }
    return { refId, fields: [time, ...labelFields, value], length: time.values.length, meta: { preferredVisualisationType: "rawPrometheus" } };
  });
}

export function prometheusFrames(answers) {
  const ok = answers.filter((a) => !a.error);
  const tables = ok.filter((a) => a.format === "table");
  const series = ok.filter((a) => a.format !== "table");
  const out = series.flatMap(seriesFrames);
  if (tables.length) {
    const frames = tables.flatMap(seriesFrames);
    out.push(...tableFrames(frames, tables.map((a) => a.refId)));
  }
  return out;
}

// -- transformations, field config, display ----------------------------------------------------------------

function transform(panel, frames) {
  const steps = (panel.transformations || []).filter((t) => t && !t.disabled);
  if (!steps.length) return frames;
  let out = null;
  let failure = null;
  const sub = transformDataFrame(steps, frames).subscribe({ next: (v) => (out = v), error: (e) => (failure = e) });
  sub.unsubscribe();
  if (failure) throw failure;
  if (out === null) throw new Error("a transformation did not answer synchronously");
  return out;
}

function withConfig(panel, frames, nowMs) {
  return applyFieldOverrides({
    data: frames,
    fieldConfig: { defaults: (panel.fieldConfig && panel.fieldConfig.defaults) || {}, overrides: (panel.fieldConfig && panel.fieldConfig.overrides) || [] },
    fieldConfigRegistry: registry(panel),
    replaceVariables: (s) => s,
    theme,
    timeZone: "utc",
    dataLinkPostProcessor: undefined,
  });
}

function shown(display) {
  return { text: formattedValueToString(display), color: display.color || null, numeric: Number.isFinite(display.numeric) ? display.numeric : null };
}

function hidden(field) {
  const c = field.config.custom || {};
  return c.hidden === true || (c.hideFrom && c.hideFrom.viz === true);
}

// -- per panel kind --------------------------------------------------------------------------------------------

// The table's initial sort (options.sortBy: [{displayName, desc}], the first entry the primary key): Grafana's
// table sorts by the raw values of the named columns, ties broken by the next entry. Each key is one pass of
// Grafana's sortDataFrame (its field comparers; a stable sort), the last key first, so that the earlier keys
// decide and the later ones only order their ties. A name no column has is skipped, as the table skips it.
function sortedRows(panel, frame, frames) {
  const sortBy = (panel.options && panel.options.sortBy) || [];
  let sorted = frame;
  for (const key of (Array.isArray(sortBy) ? sortBy : []).slice().reverse()) {
    if (!key || typeof key.displayName !== "string") continue;
    const index = sorted.fields.findIndex((f) => getFieldDisplayName(f, sorted, frames) === key.displayName);
    if (index >= 0) sorted = sortDataFrame(sorted, index, key.desc === true);
  }
  return sorted;
}

function tablePanel(panel, frames) {
  const index = (panel.options && panel.options.frameIndex) || 0;
  const shownFrame = frames[index] || frames[0];
  if (!shownFrame) return { kind: "table", frames: 0, columns: [], rows: [] };
  const frame = sortedRows(panel, shownFrame, frames);
  const fields = frame.fields.filter((f) => !hidden(f));
  const columns = fields.map((f) => ({
    name: getFieldDisplayName(f, frame, frames),
    type: f.type,
    cell: ((f.config.custom || {}).cellOptions || {}).type || "auto",
    width: (f.config.custom || {}).width || null,
    minWidth: (f.config.custom || {}).minWidth || null,
  }));
  const rows = [];
  // every cell through its field's display, nulls too, as Grafana's cells do: a null or empty cell shows the
  // field's noValue or the text of a null / empty value mapping
  for (let r = 0; r < frame.length; r++) rows.push(fields.map((f) => shown(f.display(f.values[r]))));
  return { kind: "table", frames: frames.length, columns, rows };
}

// What a state timeline shows for each value. Grafana's state timeline (prepareTimelineFields and
// mergeThresholdValues in its public/app/core/components/TimelineChart/utils.ts, not published in
// @grafana/data) merges by threshold when options.mergeValues (default true) and the field is coloured by
// thresholds: each value becomes its threshold step's legend label ("< 80" for the base step below the next,
// "80+" otherwise; the step value in the field's unit, or percent in percentage mode) in the step's colour,
// and value mappings are not read. Otherwise each value is the field's display (mappings, unit, colour).
function mergedByThreshold(panel, field) {
  const thresholds = field.config.thresholds;
  const merging = (panel.options || {}).mergeValues !== false && (field.config.color || {}).mode === FieldColorModeId.Thresholds;
  return merging && Boolean(thresholds && thresholds.steps && thresholds.steps.length);
}

function timelineTexts(panel, field) {
  if (!mergedByThreshold(panel, field)) return Array.from(field.values, (v) => (v == null ? null : shown(field.display(v))));
  const thresholds = field.config.thresholds;
  const percent = thresholds.mode === ThresholdsMode.Percentage;
  const format = getValueFormat(percent ? "percent" : field.config.unit || "");
  const steps = thresholds.steps;
  const labels = new Map(
    steps.map((step, i) => {
      const below = step.value === -Infinity && i < steps.length - 1;
      const value = below ? steps[i + 1].value : step.value;
      const text = (below ? "< " : "") + formattedValueToString(format(value, field.config.decimals ?? undefined)) + (below ? "" : "+");
      return [step, { text, color: theme.visualization.getColorByName(step.color), numeric: null }];
    }),
  );
  const { min, max } = percent ? getFieldConfigWithMinMax(field) : {};
  return Array.from(field.values, (v) => {
    if (v == null) return null;
    return labels.get(getActiveThreshold(percent ? ((v - min) / (max - min)) * 100 : v, steps));
  });
}

const CALC_ORDER = ["mean", "max", "min", "lastNotNull", "last", "sum", "firstNotNull", "first", "count", "range", "delta", "diff"];

function seriesPanel(panel, frames, request) {
  const legend = (panel.options && panel.options.legend) || {};
  const calcs = legend.calcs || [];
  const out = [];
  let times = [];
  for (const frame0 of frames) {
    const frame =
      request.stepMs && frame0.fields.some((f) => f.type === FieldType.time)
        ? applyNullInsertThreshold({ frame: frame0, refFieldPseudoMin: request.startMs, refFieldPseudoMax: request.endMs })
        : frame0;
    const time = frame.fields.find((f) => f.type === FieldType.time);
    for (const field of frame.fields) {
      if (field.type !== FieldType.number || hidden(field)) continue;
      const reduced = reduceField({ field, reducers: Array.from(new Set(["lastNotNull", ...calcs])) });
      out.push({
        name: getFieldDisplayName(field, frame, frames),
        color: getFieldSeriesColor(field, theme).color,
        times: time ? Array.from(time.values) : [],
        values: Array.from(field.values, (v) => (Number.isFinite(v) ? v : null)),
        last: shown(field.display(reduced.lastNotNull)),
        calcs: calcs.filter((c) => fieldReducers.getIfExists(c)).map((c) => ({ id: c, name: fieldReducers.get(c).name, value: reduced[c], ...shown(field.display(reduced[c])) })),
        unit: field.config.unit || "",
        decimals: field.config.decimals,
        min: field.config.min,
        max: field.config.max,
        thresholds: field.config.thresholds || null,
        custom: field.config.custom || {},
        texts: panel.type === "state-timeline" ? timelineTexts(panel, field) : undefined,
        mergedByThreshold: panel.type === "state-timeline" && mergedByThreshold(panel, field),
      });
      if (time && time.values.length > times.length) times = Array.from(time.values);
    }
  }
  if (legend.sortBy) {
    const id = CALC_ORDER.concat(calcs).find((c) => fieldReducers.getIfExists(c) && fieldReducers.get(c).name === legend.sortBy) || legend.sortBy;
    const key = (s) => {
      const c = s.calcs.find((x) => x.id === id);
      return c && Number.isFinite(c.value) ? c.value : -Infinity;
    };
    out.sort((a, b) => (legend.sortDesc ? key(b) - key(a) : key(a) - key(b)));
  }
  return { kind: "series", series: out, times };
}

// A stat, gauge or bar gauge: Grafana's getFieldDisplayValues, as those panels call it: which fields
// (reduceOptions.fields, else the numeric ones), every calculation or every row (reduceOptions.values, limit),
// the names, texts and colours, and each value's min and max (the field's own, else the range of the data
// applyFieldOverrides found: a bar gauge without min starts its bars at the smallest value, not at 0). Its
// "no values" entry becomes no value here: the page draws the panel's noValue or "No data" itself.
const VALUE_PANEL_REDUCE = { values: false, calcs: ["lastNotNull"], fields: "" };  // the panels' option defaults

function valuePanel(panel, frames) {
  const reduceOptions = { ...VALUE_PANEL_REDUCE, ...((panel.options && panel.options.reduceOptions) || {}) };
  const displays = getFieldDisplayValues({
    reduceOptions,
    fieldConfig: { defaults: {}, overrides: [], ...(panel.fieldConfig || {}) },
    replaceVariables: (s) => s,
    theme,
    data: frames,
    timeZone: "utc",
    sparkline: true,
  });
  const values = displays
    .filter((v) => v.colIndex !== undefined)
    .map((v) => ({
      name: v.display.title || "",
      ...shown(v.display),
      min: Number.isFinite(v.field.min) ? v.field.min : null,
      max: Number.isFinite(v.field.max) ? v.field.max : null,
      values: v.sparkline ? Array.from(v.sparkline.y.values, (x) => (Number.isFinite(x) ? x : null)) : [],
    }));
  return { kind: "values", values };
}

/** One panel: its answers (see prometheusFrames) in, what the panel shows out. */
// The panel's field config as Grafana's dashboard loads it (getPanelOptionsWithDefaults): options no registered
// field option names are dropped and every thresholds' first step becomes the base step, -Infinity (the JSON's
// null). The plugins' own field config defaults are not known here (none: the panel's JSON as written).
function loaded(panel) {
  const fieldConfig = JSON.parse(JSON.stringify(panel.fieldConfig || {}));
  const plugin = { defaults: {}, fieldConfigDefaults: { defaults: {}, overrides: [] }, fieldConfigRegistry: registry(panel) };
  const options = getPanelOptionsWithDefaults({ plugin, currentOptions: {}, currentFieldConfig: { defaults: fieldConfig.defaults || {}, overrides: fieldConfig.overrides || [] }, isAfterPluginChange: false });
  return { ...panel, fieldConfig: options.fieldConfig };
}

export function applyPanel(request) {
  const panel = loaded(request.panel || {});
  const frames = withConfig(panel, transform(panel, prometheusFrames(request.answers || [])), request.nowMs);
  if (panel.type === "table") return tablePanel(panel, frames);
  if (panel.type === "stat" || panel.type === "bargauge" || panel.type === "gauge") return valuePanel(panel, frames);
  return seriesPanel(panel, frames, request);
}

/** Every request of a page; a panel whose computation throws gets {error} instead of stopping the others. */
export function applyPanels(requests) {
  return requests.map((r) => {
    try {
      return applyPanel(r);
    } catch (e) {
      return { kind: "error", error: String((e && e.message) || e) };
    }
  });
}

/** getValueFormat(unit)(value, decimals) as text. */
export function formatValue(unit, value, decimals) {
  return formattedValueToString(getValueFormat(unit || "none")(value, decimals == null ? undefined : decimals));
}

/** The y axis labels Grafana's time series draws: its axis builder guesses decimals from the tick step and
 * formats each split with the field's display processor (which trims the zeros those decimals leave). */
export function axisLabels(fieldConfig, splits, incr) {
  const guessed = guessDecimals(roundDecimals(incr, 6));
  const field = { name: "Value", type: FieldType.number, config: fieldConfig || {}, values: [] };
  const processor = getDisplayProcessor({ field, theme, timeZone: "utc" });
  return splits.map((v) => (v == null ? null : formattedValueToString(processor(v, guessed > 0 ? guessed : undefined))));
}

/** A field's display of values, as a table cell or stat would show it (for the tests). */
export function display(fieldConfig, values) {
  const field = { name: "Value", type: FieldType.number, config: fieldConfig || {}, values };
  const processor = getDisplayProcessor({ field, theme, timeZone: "utc" });
  return values.map((v) => shown(processor(v)));
}

export const version = VERSION;

/** A Grafana colour name (or CSS colour) as the dark theme draws it. */
export function colour(name) {
  return theme.visualization.getColorByName(name);
}
