// Run dashgen's shipped @grafana/data bundle in Node for the tests: one JSON call per stdin line
// ({"call": "applyPanels" | "formatValue" | "axisLabels" | "display" | "colour", "args": [...]}), one JSON answer
// per stdout line ({"answer": ...} or {"error": "..."}), until stdin closes.
// Node has no window or navigator; the bundle reads both (feature flags, locale), so they are given as a
// browser's defaults (en-US, no Grafana boot data).
"use strict";
const fs = require("fs");
const readline = require("readline");
const vm = require("vm");
globalThis.window = globalThis;
globalThis.navigator = { language: "en-US", languages: ["en-US"], userAgent: "node" };
vm.runInThisContext(fs.readFileSync(process.argv[2], "utf8"), { filename: "grafana-data.iife.min.js" });
const lines = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });
lines.on("line", (line) => {
  let reply;
  try {
    const request = JSON.parse(line);
    reply = { version: globalThis.DashgenGrafana.version, answer: globalThis.DashgenGrafana[request.call](...request.args) };
  } catch (e) {
    reply = { error: String((e && e.stack) || e) };
  }
  process.stdout.write(JSON.stringify(reply) + "\n");
});
