// Registers the conformance vectors as node:test tests, through the shared
// JS runner (tests/js-common/vectors.mjs): one test per case (so the counts
// and failures name cases), plus one test that every discovered case ran.
import assert from 'node:assert/strict'
import { test } from 'node:test'

import { countCases, loadVectors } from '../../js-common/load-vectors-node.mjs'
import { runVectors, summary } from '../../js-common/vectors.mjs'

export function vectorTests(api, runtime, notApplicable = {}) {
  const vectors = loadVectors()
  const total = countCases(vectors)
  let ran = 0

  for (const file of vectors) {
    for (const c of file.cases) {
      test(`${file.file} ${c.id}`, () => {
        const na = c.id in notApplicable ? { [c.id]: notApplicable[c.id] } : {}
        const report = runVectors(api, { vectors: [{ file: file.file, cases: [c] }], runtime, notApplicable: na })
        ran += 1
        const failures = report.results.filter((r) => r.status === 'failed')
        assert.deepEqual(
          failures.map((r) => r.message),
          [],
        )
        assert.equal(report.passed + report.notApplicable, 1)
      })
    }
  }

  test(`every vector ran (${total} cases in ${vectors.length} files, ${runtime})`, () => {
    assert.ok(total > 0, 'no vector cases found in tests/vectors')
    assert.equal(ran, total)
    // And the whole set at once, as the other JS runtimes run it (this also
    // fails on an id listed as not applicable that no vector has).
    const report = runVectors(api, { vectors, runtime, notApplicable })
    console.log(summary(report))
    assert.equal(report.failed, 0)
    assert.equal(report.cases, total)
  })
}
