// One worker of tests/node/workers.test.mjs: rebuilds the policies from
// their canonical JSON (documents are what crosses a thread boundary), waits
// at the shared start line so that every worker runs at once, computes its
// share of the workload and posts the results back.
import { createRequire } from 'node:module'
import { parentPort, workerData } from 'node:worker_threads'

import { workload } from './workload.mjs'

const api = createRequire(import.meta.url)('../../../bindings-node/index.js')
const { policies, jobs, start } = workerData
const gate = new Int32Array(start)
Atomics.add(gate, 1, 1) // ready
Atomics.wait(gate, 0, 0) // until the main thread opens the gate
parentPort.postMessage({ backend: api.backend, results: workload(api, policies, jobs) })
