// Build dashgen/data/grafana-data/<minor>/grafana-data.iife.min.js from one pinned folder's node_modules:
// `node build.mjs 12.3` after `npm ci` in bundles/grafana-data/12.3 (what `make grafana-data-bundle` runs for
// every folder). entry.mjs is the same for every version. Two changes to Grafana's code, both checked here so that a new
// @grafana/data version that moves them fails the build instead of slipping through:
// - joinDataFrames (12.x) compiles its row copy with `new Function`, which a Content-Security-Policy without
//   'unsafe-eval' refuses; it becomes the same loops as a closure (same arrays, same order, same nulls).
// - moment-timezone is taken without its zone database (700 KiB): the preview and the tests show UTC only.
import { createHash } from "node:crypto";
import { readdirSync, readFileSync, writeFileSync, mkdirSync } from "node:fs";
import { createRequire } from "node:module";
import { basename, dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
const entry = join(dirname(fileURLToPath(import.meta.url)), "entry.mjs");
if (!process.argv[2]) throw new Error("usage: node build.mjs <pinned folder, e.g. 12.3> [output file]");
const here = resolve(dirname(entry), process.argv[2]);  // the pinned folder: package.json, package-lock.json, node_modules
const require = createRequire(join(here, "package.json"));
const esbuild = require("esbuild");
const version = JSON.parse(readFileSync(join(here, "node_modules/@grafana/data/package.json"), "utf8")).version;
const out = process.argv[3] || join(dirname(entry), "../../dashgen/data/grafana-data", basename(here), "grafana-data.iife.min.js");

const MATERIALIZE = /let materialize = new Function\([\s\S]*?\n {4}\);\n/;
const CLOSURE = `let materialize = (matched, unmatchedLeft, unmatchedRight, ltable, rtable) => {
      const L = ltable.length, R = rtable.length;
      const joined = Array.from({ length: L + R - 1 }, () => Array(count));
      let rowIdx = 0;
      for (let i = 0; i < matched.length; i++) {
        let [lidx, ridxs] = matched[i];
        for (let j = 0; j < ridxs.length; j++, rowIdx++) {
          let ridx = ridxs[j];
          for (let c = 0; c < L; c++) joined[c][rowIdx] = ltable[c][lidx];
          for (let c = 1; c < R; c++) joined[L + c - 1][rowIdx] = rtable[c][ridx];
        }
      }
      for (let i = 0; i < unmatchedLeft.length; i++, rowIdx++) {
        let lidx = unmatchedLeft[i];
        for (let c = 0; c < L; c++) joined[c][rowIdx] = ltable[c][lidx];
        for (let c = 1; c < R; c++) joined[L + c - 1][rowIdx] = null;
      }
      for (let i = 0; i < unmatchedRight.length; i++, rowIdx++) {
        let ridx = unmatchedRight[i];
        for (let c = 0; c < L; c++) joined[c][rowIdx] = c === 0 ? rtable[0][ridx] : null;
        for (let c = 1; c < R; c++) joined[L + c - 1][rowIdx] = rtable[c][ridx];
      }
      return joined;
    };
`;

const noEval = {
  name: "no-eval",
  setup(build) {
    build.onLoad({ filter: /joinDataFrames\.mjs$/ }, (args) => {
      const text = readFileSync(args.path, "utf8");
      if (!text.includes("new Function")) return { contents: text, loader: "js" };  // older versions copy rows in loops
      if (!MATERIALIZE.test(text)) throw new Error("joinDataFrames.mjs: the `new Function` row copy was not found; check the patch");
      return { contents: text.replace(MATERIALIZE, CLOSURE), loader: "js" };
    });
    build.onResolve({ filter: /^moment-timezone$/ }, () => ({ path: require.resolve("moment-timezone/moment-timezone.js") }));
  },
};

const result = await esbuild.build({
  entryPoints: [entry],
  nodePaths: [join(here, "node_modules")],
  bundle: true,
  format: "iife",
  globalName: "DashgenGrafana",
  minify: true,
  platform: "browser",
  target: "es2020",
  legalComments: "none",
  define: { __GRAFANA_DATA_VERSION__: JSON.stringify(version), "process.env.NODE_ENV": '"production"' },
  banner: { js: `/* @grafana/data ${version} (Apache-2.0, Grafana Labs) and its dependencies, bundled by dashgen: see LICENSE and VERSION */` },
  plugins: [noEval],
  write: false,
  metafile: true,
});
const code = result.outputFiles[0].text;
for (const banned of ["new Function", "eval("]) {
  if (code.includes(banned)) throw new Error(`the bundle contains ${banned}: a hash-based Content-Security-Policy would refuse it`);
}
mkdirSync(dirname(out), { recursive: true });
writeFileSync(out, code);
const sizes = {};
for (const [path, info] of Object.entries(Object.values(result.metafile.outputs)[0].inputs)) {
  if (!path.includes("node_modules/")) continue;  // entry.mjs: dashgen's own
  const parts = path.split("node_modules/").pop().split("/");
  const pkg = parts[0].startsWith("@") ? parts.slice(0, 2).join("/") : parts[0];
  sizes[pkg] = (sizes[pkg] || 0) + info.bytesInOutput;
}
// LICENSE: Grafana's Apache-2.0 text, then each bundled package's own licence; VERSION: what was built from what
const folder = dirname(out);
const lock = readFileSync(join(here, "package-lock.json"));
const notices = [];
for (const pkg of Object.keys(sizes).sort()) {
  const root = join(here, "node_modules", pkg);
  const meta = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));
  const file = readdirSync(root).find((f) => /^(licen[cs]e|copying)/i.test(f));
  // a public-domain dedication (CC0) needs no text; any other licence must ship its file
  if (!file && meta.license !== "CC0-1.0") throw new Error(`${pkg}: no licence file to ship`);
  const text = file ? readFileSync(join(root, file), "utf8").trim() : `${meta.license}: no licence text is required`;
  notices.push(`${"=".repeat(78)}\n${pkg} ${meta.version} (${meta.license || "see below"})\n${"=".repeat(78)}\n${text}\n`);
}
writeFileSync(join(folder, "LICENSE"), notices.join("\n"));
const esbuildVersion = JSON.parse(readFileSync(join(here, "node_modules/esbuild/package.json"), "utf8")).version;
writeFileSync(
  join(folder, "VERSION"),
  `@grafana/data ${version}\n` +
    `source: npm registry, bundles/grafana-data/${basename(here)}/package.json + package-lock.json (sha256 ${createHash("sha256").update(lock).digest("hex")})\n` +
    `built: make grafana-data-bundle (esbuild ${esbuildVersion}, IIFE, global DashgenGrafana; entry bundles/grafana-data/entry.mjs)\n` +
    `bundled: ${Object.keys(sizes).sort().join(", ")}\n` +
    `sha256 of grafana-data.iife.min.js: ${createHash("sha256").update(code).digest("hex")}\n`,
);
console.log(`${out}: ${code.length} bytes, @grafana/data ${version}`);
for (const [pkg, size] of Object.entries(sizes).sort((a, b) => b[1] - a[1]).slice(0, 8)) console.log(`  ${(size / 1024).toFixed(0)} KiB ${pkg}`);
