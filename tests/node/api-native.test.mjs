// The API tests through the native addon.
import { createRequire } from 'node:module'

import { apiSuite } from './lib/api-suite.mjs'
import { inputRules } from './lib/input-rules.mjs'
import { transactionSuite } from './lib/transaction-suite.mjs'

delete process.env.OJS_RETRY_FORCE_WASM
const api = createRequire(import.meta.url)('../../bindings-node/index.js')
apiSuite(api, 'native')
inputRules(api, 'native')
transactionSuite(api, 'native')
