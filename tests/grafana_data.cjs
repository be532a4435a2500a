// Run dashgen's shipped @grafana/data bundle in Node for the tests: one JSON call on stdin
// ({"call": "applyPanels" | "formatValue" | "axisLabels" | "display", "args": [...]}), its JSON answer on stdout.
// Node has no window or navigator; the bundle reads both (feature flags, locale), so they are given as a
// browser's defaults (en-US, no Grafana boot data).
"use strict";
const fs = require("fs");
const vm = require("vm");
globalThis.window = globalThis;
globalThis.navigator = { language: "en-US", languages: ["en-US"], userAgent: "node" };
vm.runInThisContext(fs.readFileSync(process.argv[2], "utf8"), { filename: "grafana-data.iife.min.js" });
const request = JSON.parse(fs.readFileSync(0, "utf8"));
const answer = globalThis.DashgenGrafana[request.call](...request.args);
process.stdout.write(JSON.stringify({ version: globalThis.DashgenGrafana.version, answer }));
