// ESM entry of ojs-retry/bullmq: the same module as the CommonJS one
// (bullmq.js), so `import` and `require` share one set of classes. BullMQ
// itself is required from there, lazily; BullMQ tells its own errors apart by
// name, so an application importing BullMQ's ES build works with it too.
import { createRequire } from 'node:module'

const require = createRequire(import.meta.url)
const integration = require('./bullmq.js')

export const {
  ATTEMPTS,
  BACKOFF_TYPE,
  POLICY_KEY,
  STALLED_TYPE,
  STALLS_KEY,
  STATE_KEY,
  TIMEOUT_TYPE,
  JobError,
  Processor,
  addJob,
  adoptionText,
  createProcessor,
  createWorker,
  deadLetterKey,
  deadLetters,
  errorTypeOf,
  failureFromError,
  jobOptions,
  layerText,
  workerOptions,
} = integration
export default integration
