// Compares the presets with the real BullMQ and @smithy/util-retry (the
// AWS SDK for JavaScript v3 standard retry strategy). Run by
// scripts/test-peers: argv[2] is the scratch folder with the pinned npm
// packages, argv[3] the ojs-retry-wasm package to test.
//
// For attempts 1..30 and Math.random pinned low, middle and high, the
// peer's own code computes the delay and the retry decision, and the preset
// must agree. JS `Math.random()` = u (docs/presets.md).
import { createRequire } from "node:module";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const [peerDir, pkgDir] = process.argv.slice(2);
const req = createRequire(join(peerDir, "package.json"));
const { Backoffs, Job, UnrecoverableError } = req("bullmq");
const { StandardRetryStrategy } = req("@smithy/util-retry");
const versions = ["bullmq", "@smithy/util-retry", "@smithy/core"].map((n) => `${n} ${req(`${n}/package.json`).version}`);
const api = await import(pathToFileURL(join(pkgDir, "node.js")).href);
const { RetryPolicy } = api;

const US = [0, 0.5, 0.9999999999999999];
const realRandom = Math.random;
let checked = 0;
const failures = [];
const check = (what, peer, ours) => {
  checked++;
  const a = JSON.stringify(peer);
  const b = JSON.stringify(ours);
  if (a !== b) failures.push(`${what}: peer ${a}, preset ${b}`);
};
const decide = (p, n, u, type) => {
  const d = p.decide(type ? { attempt: n, type } : { attempt: n }, { now: 0, u });
  return d.action === "retry" ? ["retry", d.delayMs] : [d.action, null];
};

// ---------------------------------------------------------------- BullMQ
const bullConfigs = [
  { attempts: 31, backoff: { type: "exponential", delay: 1000 } },
  { attempts: 31, backoff: { type: "exponential", delay: 300, jitter: 0.5 } },
  { attempts: 31, backoff: { type: "fixed", delay: 5000, jitter: 0.2 } },
  { attempts: 31, backoff: { type: "exponential", delay: 7, jitter: 1 } },
  { attempts: 5, backoff: 250 },
  { attempts: 3 },
];
for (const cfg of bullConfigs) {
  const p = RetryPolicy.preset("bullmq", cfg);
  for (const u of US) {
    Math.random = () => u;
    for (let n = 1; n <= 30; n++) {
      const fake = {
        queue: { opts: {} },
        opts: { attempts: cfg.attempts, backoff: Backoffs.normalize(cfg.backoff) },
        attemptsMade: n - 1,
        attemptsStarted: n,
      };
      const [retry, delay] = await Job.prototype.shouldRetryJob.call(fake, new Error("boom"));
      check(`bullmq ${JSON.stringify(cfg)} u=${u} n=${n}`, retry ? ["retry", delay ?? 0] : ["dead_letter", null], decide(p, n, u));
      const [r2] = await Job.prototype.shouldRetryJob.call(fake, new UnrecoverableError("no"));
      check(`bullmq unrecoverable n=${n}`, r2 ? "retry" : "dead_letter", decide(p, n, u, "UnrecoverableError")[0]);
    }
  }
}

// ---------------------------------------------------------------- @smithy
for (const maxAttempts of [3, 31]) {
  for (const throttling of [false, true]) {
    const p = RetryPolicy.preset("aws", { max_attempts: maxAttempts, throttling });
    const s = new StandardRetryStrategy(maxAttempts);
    const errorType = throttling ? "THROTTLING" : "TRANSIENT";
    for (const u of US) {
      Math.random = () => u;
      for (let n = 1; n <= 30; n++) {
        const token = { getRetryCount: () => n - 1 };
        const retry = s.retryCode(token, { errorType }, maxAttempts) === 0;
        // refreshRetryTokenForRetry: setDelayBase by error type, then
        // computeNextBackoffDelay(token.getRetryCount()).
        s.retryBackoffStrategy.setDelayBase(throttling ? 1000 : s.baseDelay);
        const delay = s.retryBackoffStrategy.computeNextBackoffDelay(n - 1);
        check(`smithy max=${maxAttempts} ${errorType} u=${u} n=${n}`, retry ? ["retry", delay] : ["discard", null], decide(p, n, u));
      }
    }
  }
}
Math.random = realRandom;

console.log(`peers-node (${versions.join(", ")}): ${checked - failures.length} passed, ${failures.length} failed`);
for (const f of failures.slice(0, 40)) console.log(`  ${f}`);
process.exit(failures.length || checked < 500 ? 1 : 0);
