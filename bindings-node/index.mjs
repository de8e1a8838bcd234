// ESM entry of ojs-retry: the same module as the CommonJS loader (index.js),
// so `import` and `require` share one backend and one set of classes.
import { createRequire } from 'node:module'

const require = createRequire(import.meta.url)
const ojs = require('./index.js')

export const {
  backend,
  RetryPolicy,
  RetryState,
  Reservation,
  OjsRetryError,
  matches,
  firstMatch,
  parseDuration,
  formatDuration,
  parseTimestamp,
  formatTimestamp,
  jitterSample,
  presetSystems,
  runTransaction,
} = ojs
export default ojs
