// Every conformance vector through the installed npm package, as a user
// imports it (scripts/test-wasm installs the packed tarball here).
import { test } from "node:test";
import assert from "node:assert/strict";
import * as api from "ojs-retry-wasm";
import { runVectors, summary } from "../js-common/vectors.mjs";
import { loadVectors, countCases } from "../js-common/load-vectors-node.mjs";
import { WASM_NOT_APPLICABLE } from "../js-common/not-applicable.mjs";

const vectors = loadVectors();
const total = countCases(vectors);

test(`conformance vectors (${total} cases in ${vectors.length} files)`, () => {
  assert.ok(total > 0, "no vector cases found in tests/vectors");
  const report = runVectors(api, { vectors, runtime: "wasm-node", notApplicable: WASM_NOT_APPLICABLE });
  console.log(summary(report));
  const failures = report.results.filter((r) => r.status === "failed");
  assert.equal(
    failures.length,
    0,
    `${failures.length} case(s) failed:\n` + failures.map((r) => `  ${r.file} ${r.id}: ${r.message}`).join("\n"),
  );
  assert.equal(report.cases, total);
  assert.equal(report.passed + report.notApplicable, total);
});

// One node:test test per file, so a failure names its file in the summary.
for (const file of vectors) {
  test(`vectors: ${file.file}`, () => {
    const report = runVectors(api, { vectors: [file], runtime: "wasm-node", notApplicable: pick(file) });
    const failures = report.results.filter((r) => r.status === "failed");
    assert.deepEqual(failures.map((r) => `${r.id}: ${r.message}`), []);
  });
}

function pick(file) {
  const ids = new Set(file.cases.map((c) => c.id));
  return Object.fromEntries(Object.entries(WASM_NOT_APPLICABLE).filter(([id]) => ids.has(id)));
}
