// Micro-benchmark of the per-row expression path: toCelRow + filter + expectations + a measure
// condition, as the engine runs them. Not a test; run with:
//   npx tsx packages/pipeline-spec/bench/expressions.ts
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { compileSpec, parseSpecOrThrow } from "../src/index";

const spec = parseSpecOrThrow(
  readFileSync(join(import.meta.dirname, "..", "examples", "merchant-settlements.yaml"), "utf8"),
);
const compiled = compileSpec(spec);
const types = ["authorization", "settlement", "refund", "dispute"];
const currencies = ["USD", "EUR", "GBP", "CAD"];
const rows = Array.from({ length: 10_000 }, (_, i) => ({
  event_id: `evt-${i}`,
  type: types[i % 4],
  merchant_id: `m-${i % 300}`,
  amount: ((i % 5000) / 100 - 1).toFixed(2),
  currency: currencies[i % 4],
  event_time: new Date(1_735_689_600_000 + i * 250).toISOString(),
  seq: i,
}));

function pass(): number {
  let kept = 0;
  for (const raw of rows) {
    const row = compiled.toCelRow(raw);
    let ok = true;
    for (const e of compiled.expectations) if (!e.test(row) && e.action === "drop") ok = false;
    if (ok && compiled.filter?.test(row) !== false) {
      for (const m of compiled.measures) if (m.condition?.test(row)) kept++;
      kept++;
    }
  }
  return kept;
}

for (let i = 0; i < 20; i++) pass(); // warm up
const rounds = 100;
const started = performance.now();
let sink = 0;
for (let i = 0; i < rounds; i++) sink += pass();
const seconds = (performance.now() - started) / 1000;
const perRow =
  compiled.expectations.length +
  (compiled.filter ? 1 : 0) +
  compiled.measures.filter((m) => m.condition).length;
console.log(
  `${Math.round((rows.length * rounds) / seconds).toLocaleString("en-US")} rows/s ` +
    `(toCelRow + ${perRow} expressions per row; ${Math.round((rows.length * rounds * perRow) / seconds).toLocaleString("en-US")} evaluations/s) [${sink}]`,
);
