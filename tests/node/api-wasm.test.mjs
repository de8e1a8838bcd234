// The API tests through the wasm fallback (OJS_RETRY_FORCE_WASM=1; node --test
// runs each file in its own process).
import { createRequire } from 'node:module'

import { apiSuite } from './lib/api-suite.mjs'
import { inputRules } from './lib/input-rules.mjs'
import { transactionSuite } from './lib/transaction-suite.mjs'

process.env.OJS_RETRY_FORCE_WASM = '1'
const api = createRequire(import.meta.url)('../../bindings-node/index.js')
apiSuite(api, 'wasm')
inputRules(api, 'wasm')
transactionSuite(api, 'wasm')
