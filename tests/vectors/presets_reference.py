#!/usr/bin/env python3
"""Writes tests/vectors/presets.json: the expected behaviour of every preset.

An independent reference, written from each system's published source (the
file and version are named per system below and in docs/presets.md), never
from the engine's code or output. Each system's random call is replaced by
the documented function of one uniform sample u in [0, 1):

    Ruby rand(n) / Go rand.Intn(n) / Python randrange(n)  = floor(n * u)
    Python random.uniform(a, b)                           = a + (b - a) * u
    JS Math.random() / Erlang :rand.uniform()             = u

The real packages that install here (BullMQ, @smithy/util-retry, Celery, RQ,
Dramatiq, botocore) are compared with the engine by scripts/test-peers.

    python3 tests/vectors/presets_reference.py > tests/vectors/presets.json
"""
import json
import math

U_LOW, U_MID, U_HIGH = 0.0, 0.5, 0.9999999999999999  # k = 0, 2^52, 2^53 - 1
MAX_MS = 2**53 - 1
RETRIES = list(range(1, 31))


def ms(seconds):
    return min(seconds * 1000, MAX_MS)


def floor_mul(n, u):
    """floor(n * u) exactly, u = k / 2^53."""
    k = int(u * 2**53)
    return (n * k) >> 53


# --- each system, delay(n, u) for the n-th failed attempt (1-based) -------

def sidekiq(version):
    # sidekiq lib/sidekiq/job_retry.rb: count = retry_count (0 at the first
    # failure); delay = count**4 + 15; v6.2.2-7.x jitter rand(10) * (count + 1),
    # v8.x rand(10 * (count + 1)); seconds.
    def d(n, u):
        c = n - 1
        j = floor_mul(10, u) * (c + 1) if version == "7" else floor_mul(10 * (c + 1), u)
        return ms(c**4 + 15 + j)
    return d


def faktory(n, u):
    # contribsys/faktory manager/retry.go nextRetry (v1.9.x):
    # count**4 + 15 + rand.Intn(30) * (count + 1) seconds.
    c = n - 1
    return ms(c**4 + 15 + floor_mul(30, u) * (c + 1))


def celery(factor, maximum, jitter):
    # celery/utils/time.py get_exponential_backoff_interval (5.x):
    # countdown = min(maximum, factor * 2**retries); randrange(countdown + 1).
    def d(n, u):
        countdown = min(maximum, factor * 2 ** (n - 1))
        return ms(floor_mul(countdown + 1, u) if jitter else countdown)
    return d


def js_round(x):
    return math.floor(x + 0.5)


def bullmq(kind, delay, jitter):
    # bullmq src/classes/backoffs.ts (6.x): exponential maxDelay =
    # Math.round(2 ** (attemptsMade - 1) * delay); with jitter
    # Math.floor(Math.random() * maxDelay * jitter + maxDelay * (1 - jitter)).
    def d(n, u):
        top = delay if kind == "fixed" else js_round(2.0 ** (n - 1) * delay)
        if jitter > 0:
            return math.floor(u * top * jitter + top * (1 - jitter))
        return top
    return d


def bullmq_python(kind, delay):
    # BullMQ for Python 3.4.4 (PyPI `bullmq`) bullmq/backoffs.py: fixed
    # `delay`; exponential `int(round(pow(2, attempts_made - 1) * delay))`
    # (Python's round: ties to even); no jitter (a `jitter` key is ignored).
    def d(n, u):
        return int(delay) if kind == "fixed" else int(round(pow(2, n - 1) * delay))
    return d


def temporal(initial_ms, coefficient, max_ms):
    # temporalio/temporal common/backoff/retry.go ExponentialBackoffAlgorithm
    # (v1.29+): int64(float64(initial ns) * Pow(coefficient, attempt - 1)),
    # then service/history/workflow/retry.go caps at maximumInterval.
    def d(n, u):
        r = float(initial_ms) * 1e6 * math.pow(coefficient, n - 1)
        ns = 2**63 - 1 if r >= 9.223372036854776e18 else int(r)
        cap = max_ms * 1_000_000
        if ns <= 0 or ns > cap:
            ns = cap
        return ns // 1_000_000
    return d


def erlang_round(x):
    return math.floor(x + 0.5) if x >= 0 else -math.floor(-x + 0.5)


def oban(max_attempts):
    # oban lib/oban/worker.ex backoff/1 (2.15+): clamped attempt (rescaled to
    # 20 when max_attempts > 20), 15 + 2**attempt, then Backoff.jitter(mode: :inc,
    # mult: 0.1): time + trunc(rand * 0.1 * time).
    def d(n, u):
        a = n if max_attempts <= 20 else int(erlang_round(n / max_attempts * 20))
        t = 15 + 2 ** min(a, 100)
        return ms(t + int(u * 0.1 * t))
    return d


def rq(maximum, intervals, rule):
    # rq rq/job.py (3.0): raised -> Job.get_retry_interval, index =
    # max(len - retries_left, 0); returned -> Retry.get_interval, index =
    # min(len - 1, count).
    def d(n, u):
        if rule == "returned":
            i = min(len(intervals) - 1, n - 1)
        else:
            i = max(len(intervals) - (maximum - (n - 1)), 0)
        return ms(intervals[min(i, len(intervals) - 1)])
    return d


def dramatiq(min_backoff, max_backoff):
    # dramatiq/common.py compute_backoff (2.x) with the retries middleware's
    # factor=min_backoff: int(backoff * uniform(1, 2)), and above the cap
    # int(max_backoff * uniform(0.5, 1)); both draws see the same u here.
    def d(n, u):
        b = min_backoff * 2 ** min(n - 1, 32)
        first = int(b * (1 + (2 - 1) * u))
        if first > max_backoff:
            return int(max_backoff * (0.5 + (1 - 0.5) * u))
        return first
    return d


def aws(base):
    # @smithy/core retry DefaultRetryBackoffStrategy / botocore
    # retries/standard.py ExponentialBackoff: floor(u * min(base * 2**i, 20 s)).
    return lambda n, u: floor_mul(min(base * 2 ** (n - 1), 20_000), u)


# aws-samples/aws-arch-backoff-simulator src/backoff_simulator.py at
# 095a07603079779edc86102ff1d91731a004cd2a (the blog post's simulator):
# Backoff.expo(n) = min(cap, pow(2, n) * base); OccClient.write_rsp does
# `self.attempt += 1` before `backoff(self.attempt)`, so retry n sees
# expo(n) (numbering "simulator"). Numbering "sdk" is the AWS SDKs' retry
# count from 0: expo(n - 1). random.uniform(a, b) = a + (b - a) * u as
# CPython computes it; only the returned float is truncated to whole ms.

def uniform(a, b, u):
    return a + (b - a) * u


def sim_expo(base, cap, n, numbering):
    return min(cap, pow(2, n if numbering == "simulator" else n - 1) * base)


def aws_full(base, cap, numbering="simulator"):
    # ExpoBackoffFullJitter: uniform(0, v).
    return lambda n, u: int(uniform(0, sim_expo(base, cap, n, numbering), u))


def aws_equal(base, cap, numbering="simulator"):
    # ExpoBackoffEqualJitter: v/2 + uniform(0, v/2).
    def d(n, u):
        v = sim_expo(base, cap, n, numbering)
        return int(v / 2 + uniform(0, v / 2, u))
    return d


def aws_decorrelated(base, cap):
    # ExpoBackoffDecorr: sleep = base, then sleep = min(cap, uniform(base,
    # sleep * 3)) each retry; the float is carried, only the delay truncated.
    def d(n, u):
        sleep = base
        for _ in range(n):
            sleep = min(cap, uniform(base, sleep * 3, u))
        return int(sleep)
    return d


def ratchet(policy, base):
    # shared/spec/ratchet-retry-strategies.md BackoffPolicyHandler.computeDelay.
    def d(n, u):
        if policy == "NONE":
            return 0
        if policy == "FIXED":
            return base
        m = 1 << min(n - 1, 20)
        return 86_400_000 if base > 86_400_000 // m else min(base * m, 86_400_000)
    return d


def zzz(strategy, base, maximum, jitter, delay):
    # shared/spec/zzz_jobs-retry-strategies.md: min(base * 2**attempt, max)
    # (attempt 0 at the first retry) + up to 25 % jitter.
    def d(n, u):
        if strategy == "constant":
            return ms(delay)
        raw = base * 2 ** (n - 1) if strategy == "exponential" else base * n
        capped = ms(min(raw, maximum))
        extra = floor_mul(capped, u) // 4 if jitter and strategy == "exponential" else 0
        return capped + extra
    return d


def chasquimq(kind, delay, maximum, mult, jitter):
    # chasquimq 1.3.0 (PyPI; its engine is jotarios/chasquimq
    # chasquimq/src/consumer/retry.rs backoff_ms_from_spec, read at
    # cd30b0889437005a26c482826ecf3435f0960cdf): base = delay (fixed) or
    # delay * multiplier.powi(attempt - 1), attempt = the run that failed
    # (1-based); capped = base.min(max).max(0) as u64; plus
    # fastrand_jitter(jitter) = xorshift % jitter = floor(jitter * u), on top
    # of the cap.
    def d(n, u):
        base = delay if kind == "fixed" else delay * mult ** (n - 1)
        capped = int(max(min(base, maximum), 0))
        return capped + floor_mul(jitter, u) if jitter else capped
    return d


def chasquimq_documented(kind, delay, maximum, mult, jitter):
    # shared/spec/chasquimq-retry-and-backoff.md: min(initial * mult**(attempt-1),
    # max) + uniform(-jitter, +jitter): capped + floor(2 * jitter * u) - jitter,
    # never below 0.
    def d(n, u):
        base = delay if kind == "fixed" else delay * mult ** (n - 1)
        capped = int(max(min(base, maximum), 0))
        return max(0, capped + floor_mul(2 * jitter, u) - jitter) if jitter else capped
    return d


# --- cases --------------------------------------------------------------

cases = []


def spec_of(system):
    return "PRESET-" + system


def delays(id_, system, config, fn, note, retries=RETRIES, canonical=None):
    for name, u in (("low", U_LOW), ("mid", U_MID), ("high", U_HIGH)):
        expect = {"delays": [min(fn(n, u), MAX_MS) for n in retries], "round_trip": True}
        if canonical is not None and name == "low":
            expect["policy"] = {"preset": canonical}
        cases.append({
            "id": f"preset-{id_}-u-{name}",
            "spec": spec_of(system),
            "note": note,
            "op": "preset",
            "input": {"system": system, "config": config, "u": u, "retry_numbers": retries},
            "expect": expect,
        })


def decisions(id_, system, config, failures, outcomes, note, u=U_MID):
    cases.append({
        "id": f"preset-{id_}-decide",
        "spec": spec_of(system),
        "note": note,
        "op": "preset",
        "input": {"system": system, "config": config, "u": u, "failures": failures},
        "expect": {"decisions": outcomes},
    })


def retry(delay=None):
    d = {"action": "retry", "reason": "retryable"}
    if delay is not None:
        d["delay_ms"] = delay
    return d


def term(action, reason="exhausted", pattern=None):
    d = {"action": action, "reason": reason}
    if pattern is not None:
        d["matched_pattern"] = pattern
    return d


def error(id_, system, config, path, note):
    # The error's field is the policy field (`preset`); `path` locates the option.
    cases.append({
        "id": f"preset-{id_}-error",
        "spec": spec_of(system),
        "note": note + " Issue 16: the error's field is the policy field; the path inside it is `path`.",
        "op": "preset",
        "input": {"system": system, "config": config},
        "error": {"code": "validation.retry_policy_invalid", "field": "preset", "path": path},
    })


# Sidekiq
delays("sidekiq-8", "sidekiq", {}, sidekiq("8"),
       "Sidekiq 8.x job_retry.rb: (count**4 + 15) s + rand(10 * (count + 1)) s; count = attempt - 1; rand(n) = floor(n u)",
       canonical={"system": "sidekiq", "version": "8", "retry": True, "max_retries": 25,
                  "dead": True, "kill": [], "discard": []})
delays("sidekiq-7", "sidekiq", {"version": "7", "retry": 30}, sidekiq("7"),
       "Sidekiq 6.2.2-7.x job_retry.rb: (count**4 + 15) s + rand(10) * (count + 1) s")
decisions("sidekiq-retry-5", "sidekiq", {"retry": 5},
          [{"attempt": 1}, {"attempt": 5}, {"attempt": 6}, {"attempt": 1, "code": "DISCARD"}],
          [retry(20_000), retry(ms(4**4 + 15 + 25)), term("dead_letter"), term("discard", "handler_code")],
          "retry: 5: retry_count 0..4 retry (count < 5), the sixth failure (count 5) goes to the morgue; u = 0.5: rand(10) = 5, rand(50) = 25")
decisions("sidekiq-retry-0", "sidekiq", {"retry": 0}, [{"attempt": 1}], [term("dead_letter")],
          "retry: 0: count 0 < 0 is false: straight to the dead set")
decisions("sidekiq-retry-false", "sidekiq", {"retry": False}, [{"attempt": 1}], [term("discard")],
          "retry: false: `raise e unless msg['retry']`: no retry, no morgue")
decisions("sidekiq-dead-false", "sidekiq", {"retry": 1, "dead": False}, [{"attempt": 2}], [term("discard")],
          "dead: false: retries_exhausted skips send_to_morgue")
decisions("sidekiq-kill-discard", "sidekiq", {"retry": 3, "kill": ["PoisonError"], "discard": ["GoneError"]},
          [{"attempt": 1, "type": "PoisonError"}, {"attempt": 1, "type": "GoneError"},
           {"attempt": 4, "type": "GoneError"}],
          [term("dead_letter", "non_retryable", "PoisonError"), term("discard", "non_retryable", "GoneError"),
           term("dead_letter")],
          "sidekiq_retry_in returning :kill -> retries_exhausted (dead set), :discard -> dropped; the limit is checked first (count >= max -> morgue)")
error("sidekiq-version", "sidekiq", {"version": "9"}, "preset.version", "versions 7 (6.2.2-7.x) and 8")
error("sidekiq-unknown", "sidekiq", {"retries": 3}, "preset.retries", "unknown option")

# Faktory
delays("faktory", "faktory", {}, faktory,
       "Faktory manager/retry.go: count**4 + 15 + rand.Intn(30) * (count + 1) s",
       canonical={"system": "faktory", "retry": 25})
decisions("faktory-limits", "faktory", {"retry": 2}, [{"attempt": 2}, {"attempt": 3}],
          [retry(ms(1 + 15 + 15 * 2)), term("dead_letter")],
          "RetryCount < Retry retries, else sendToMorgue; u = 0.5: rand.Intn(30) = 15")
decisions("faktory-zero", "faktory", {"retry": 0}, [{"attempt": 1}], [term("discard")],
          "retry 0: 'no retry, no death, completely ephemeral'")
decisions("faktory-minus-one", "faktory", {"retry": -1}, [{"attempt": 1}], [term("dead_letter")],
          "retry -1: RetryCount 0 < -1 is false: straight to the dead set")
error("faktory-minus-two", "faktory", {"retry": -2}, "preset.retry", "below -1 is not a documented value")

# Celery
delays("celery-backoff", "celery", {"retry_backoff": True, "max_retries": 40}, celery(1, 600, True),
       "celery autoretry: factor int(max(1.0, retry_backoff)) = 1, countdown min(600, 2**retries), randrange(countdown + 1)")
delays("celery-backoff-3-nojitter", "celery", {"retry_backoff": 3, "retry_jitter": False, "retry_backoff_max": 100, "max_retries": None},
       celery(3, 100, False), "factor 3, cap 100 s, no jitter")
delays("celery-default", "celery", {}, lambda n, u: 180_000,
       "without retry_backoff the countdown is default_retry_delay (180 s)",
       canonical={"system": "celery", "max_retries": 3, "retry_backoff": False, "retry_backoff_max": 600,
                  "retry_jitter": True, "default_retry_delay": 180.0, "dont_autoretry_for": [],
                  "autoretry_for": None})
decisions("celery-limits", "celery", {"max_retries": 3, "dont_autoretry_for": ["ValueError"]},
          [{"attempt": 3}, {"attempt": 4}, {"attempt": 1, "type": "ValueError"}],
          [retry(180_000), term("discard"), term("discard", "non_retryable", "ValueError")],
          "Task.retry: request.retries + 1 > max_retries raises MaxRetriesExceededError (FAILURE state, message acked)")
# celery/app/autoretry.py: `except dont_autoretry_for: raise`, then
# `except autoretry_for as exc: task.retry(...)`; any other exception
# propagates (FAILURE). Both are `except` clauses: isinstance, so a subclass
# (a failure whose ancestors name the class) matches. Task.retry then checks
# max_retries. A timed-out or untyped failure is matched by no rule (§9.2).
NOT_LISTED = {"action": "discard", "reason": "non_retryable", "matched_pattern": None}
OS_ANCESTORS = ["OSError", "Exception", "BaseException"]
decisions("celery-autoretry-for", "celery",
          {"autoretry_for": ["OSError"], "dont_autoretry_for": ["FileNotFoundError"], "max_retries": 2},
          [{"attempt": 1, "type": "OSError"},
           {"attempt": 1, "type": "ConnectionError", "ancestors": OS_ANCESTORS},
           {"attempt": 1, "type": "ConnectionError"},
           {"attempt": 1, "type": "ValueError", "ancestors": ["Exception", "BaseException"]},
           {"attempt": 1, "type": "FileNotFoundError", "ancestors": OS_ANCESTORS},
           {"attempt": 2, "type": "OSError"},
           {"attempt": 3, "type": "OSError"},
           {"attempt": 3, "type": "ValueError"},
           {"attempt": 1, "type": "ValueError", "timed_out": True},
           {"attempt": 1}],
          [retry(180_000), retry(180_000), NOT_LISTED, NOT_LISTED,
           term("discard", "non_retryable", "FileNotFoundError"), retry(180_000), term("discard"),
           NOT_LISTED, retry(180_000), retry(180_000)],
          "autoretry_for retries only the listed classes and their subclasses (ancestors); "
          "dont_autoretry_for first; any other exception propagates (FAILURE, discard) before "
          "Task.retry's max_retries check; a timeout or an untyped failure matches no rule (spec §9.2)")
decisions("celery-autoretry-for-empty", "celery", {"autoretry_for": []},
          [{"attempt": 1, "type": "Exception", "ancestors": ["BaseException"]}], [NOT_LISTED],
          "autoretry_for=() wraps nothing: every exception propagates (FAILURE)")
error("celery-autoretry-for-not-list", "celery", {"autoretry_for": "OSError"}, "preset.autoretry_for",
      "autoretry_for is a tuple of exception classes: an array of error types here")
error("celery-autoretry-for-empty-type", "celery", {"autoretry_for": ["OSError", ""]}, "preset.autoretry_for[1]",
      "an error type is non-empty")
decisions("celery-unlimited", "celery", {"max_retries": None}, [{"attempt": 1000}], [retry(180_000)],
          "max_retries None: never exhausted")

# BullMQ
delays("bullmq-exp", "bullmq", {"attempts": 40, "backoff": {"type": "exponential", "delay": 1000}},
       bullmq("exponential", 1000, 0), "Math.round(2**(attemptsMade-1) * delay)")
delays("bullmq-exp-jitter", "bullmq", {"attempts": 40, "backoff": {"type": "exponential", "delay": 300, "jitter": 0.5}},
       bullmq("exponential", 300, 0.5), "jitter 0.5: floor(r * maxDelay * 0.5 + maxDelay * 0.5)")
delays("bullmq-fixed-jitter", "bullmq", {"attempts": 40, "backoff": {"type": "fixed", "delay": 5000, "jitter": 0.2}},
       bullmq("fixed", 5000, 0.2), "fixed: floor(r * delay * jitter + delay * (1 - jitter))")
delays("bullmq-number", "bullmq", {"attempts": 3, "backoff": 250}, lambda n, u: 250,
       "Backoffs.normalize: a number is {type: fixed, delay}",
       canonical={"system": "bullmq", "attempts": 3, "backoff": {"type": "fixed", "delay": 250, "jitter": 0},
                  "unrecoverable": ["UnrecoverableError"]})
decisions("bullmq-limits", "bullmq", {"attempts": 3, "backoff": {"type": "exponential", "delay": 1000}},
          [{"attempt": 2}, {"attempt": 3}, {"attempt": 1, "type": "UnrecoverableError"}],
          [retry(2000), term("dead_letter"), term("dead_letter", "non_retryable", "UnrecoverableError")],
          "shouldRetryJob: attemptsMade + 1 < attempts and not UnrecoverableError, else the failed set")
decisions("bullmq-default", "bullmq", {}, [{"attempt": 1}], [term("dead_letter")], "attempts defaults to 1: no retry")
error("bullmq-jitter", "bullmq", {"backoff": {"type": "fixed", "delay": 1, "jitter": 2}}, "preset.backoff.jitter",
      "jitter is a fraction in [0, 1]")
BMQPY = "BullMQ for Python 3.4.4 (PyPI bullmq) backoffs.py"
delays("bullmq-python-exp", "bullmq",
       {"runtime": "python", "attempts": 40, "backoff": {"type": "exponential", "delay": 1.25}},
       bullmq_python("exponential", 1.25),
       f"{BMQPY}: int(round(pow(2, attemptsMade - 1) * delay)), ties to even: 2.5 -> 2 (Node: 3)",
       canonical={"system": "bullmq", "runtime": "python", "attempts": 40,
                  "backoff": {"type": "exponential", "delay": 1.25, "jitter": 0},
                  "unrecoverable": ["UnrecoverableError"]})
delays("bullmq-python-half", "bullmq",
       {"runtime": "python", "attempts": 40, "backoff": {"type": "exponential", "delay": 0.5}},
       bullmq_python("exponential", 0.5), f"{BMQPY}: round(0.5) = 0, an immediate retry (Node: 1)",
       retries=[1, 2, 3])
delays("bullmq-python-no-jitter", "bullmq",
       {"runtime": "python", "attempts": 40, "backoff": {"type": "exponential", "delay": 300, "jitter": 0.5}},
       bullmq_python("exponential", 300), f"{BMQPY}: no jitter; the key is ignored")
delays("bullmq-python-fixed", "bullmq",
       {"runtime": "python", "attempts": 40, "backoff": {"type": "fixed", "delay": 5000, "jitter": 0.2}},
       bullmq_python("fixed", 5000), f"{BMQPY}: fixed delay, no jitter", retries=[1, 2, 3])
decisions("bullmq-python-limits", "bullmq",
          {"runtime": "python", "attempts": 3, "backoff": {"type": "exponential", "delay": 1000}},
          [{"attempt": 2}, {"attempt": 3}, {"attempt": 1, "type": "UnrecoverableError"}],
          [retry(2000), term("dead_letter"), term("dead_letter", "non_retryable", "UnrecoverableError")],
          "BullMQ for Python job.py moveToFailed: attemptsMade + 1 < attempts and not UnrecoverableError, else failed")
error("bullmq-runtime", "bullmq", {"runtime": "ruby"}, "preset.runtime", "runtimes node and python")

# Temporal
delays("temporal-default", "temporal", {}, temporal(1000, 2.0, 100_000),
       "defaults: 1 s, coefficient 2, maximumInterval 100 x initial, unlimited attempts",
       canonical={"system": "temporal", "initialInterval": 1000, "backoffCoefficient": 2.0,
                  "maximumInterval": 100_000, "maximumAttempts": 0, "nonRetryableErrorTypes": []})
delays("temporal-1.5", "temporal", {"initialInterval": 200, "backoffCoefficient": 1.5, "maximumInterval": 60_000},
       temporal(200, 1.5, 60_000), "coefficient 1.5: 200 ms * 1.5**(attempt-1) truncated in ns, capped at 60 s")
decisions("temporal-limits", "temporal", {"maximumAttempts": 3, "nonRetryableErrorTypes": ["BadInput"]},
          [{"attempt": 2}, {"attempt": 3}, {"attempt": 1, "type": "BadInput"}],
          [retry(2000), term("discard"), term("discard", "non_retryable", "BadInput")],
          "currentAttempt >= maxAttempts: MAXIMUM_ATTEMPTS_REACHED; non-retryable type: NON_RETRYABLE_FAILURE")

# Oban
delays("oban-20", "oban", {}, oban(20), "max_attempts 20: 15 + 2**attempt s, + trunc(rand * 0.1 * time)",
       canonical={"system": "oban", "max_attempts": 20})
delays("oban-40", "oban", {"max_attempts": 40}, oban(40),
       "max_attempts 40 > 20: attempt rescaled to round(attempt / 40 * 20)")
decisions("oban-limits", "oban", {"max_attempts": 3}, [{"attempt": 2}, {"attempt": 3}],
          [retry(ms(19 + int(0.5 * 0.1 * 19))), term("discard")],
          "attempt >= max_attempts: discarded")

# RQ
delays("rq-raised", "rq", {"max": 5, "interval": [10, 30, 60]}, rq(5, [10, 30, 60], "raised"),
       "raised: index max(len - retries_left, 0): 10, 10, 10, 30, 60", retries=[1, 2, 3, 4, 5])
delays("rq-returned", "rq", {"max": 5, "interval": [10, 30, 60], "rule": "returned"},
       rq(5, [10, 30, 60], "returned"), "returned: index min(len - 1, count): 10, 30, 60, 60, 60",
       retries=[1, 2, 3, 4, 5])
delays("rq-int", "rq", {"max": 3, "interval": 7}, lambda n, u: 7000, "an int interval", retries=[1, 2, 3],
       canonical={"system": "rq", "max": 3, "interval": 7, "rule": "raised"})
decisions("rq-limits", "rq", {"max": 2}, [{"attempt": 2}, {"attempt": 3}], [retry(0), term("dead_letter")],
          "retries_left > 0 retries; then the FailedJobRegistry")
error("rq-empty", "rq", {"max": 2, "interval": []}, "preset.interval", "an empty list crashes RQ's raised rule")

# Dramatiq
delays("dramatiq", "dramatiq", {"max_retries": 40}, dramatiq(15_000, 604_800_000),
       "compute_backoff(retries, factor=15000, max_backoff=7 days)")
delays("dramatiq-small-cap", "dramatiq", {"min_backoff": 100, "max_backoff": 5000, "max_retries": 40},
       dramatiq(100, 5000), "above the cap: int(max_backoff * uniform(0.5, 1))")
decisions("dramatiq-limits", "dramatiq", {"max_retries": 2, "throws": ["Fatal"]},
          [{"attempt": 2}, {"attempt": 3}, {"attempt": 1, "type": "Fatal"}],
          [retry(int(30_000 * 1.5)), term("dead_letter"), term("dead_letter", "non_retryable", "Fatal")],
          "retries >= max_retries: message.fail() (dead letters); throws: fail at once")
decisions("dramatiq-throws-subclass", "dramatiq", {"throws": ["ValueError"]},
          [{"attempt": 1, "type": "UnicodeDecodeError", "ancestors": ["UnicodeError", "ValueError", "Exception", "BaseException"]}],
          [term("dead_letter", "non_retryable", "ValueError")],
          "dramatiq/middleware/retries.py: isinstance(exception, throws) fails the message (dead letter); a subclass matches")


# AWS SDK standard mode
delays("aws", "aws", {"max_attempts": 40}, aws(50), "floor(u * min(50 ms * 2**i, 20 s))")
delays("aws-throttling", "aws", {"max_attempts": 40, "throttling": True}, aws(1000), "throttling base 1 s")
decisions("aws-limits", "aws", {}, [{"attempt": 2}, {"attempt": 3}], [retry(50), term("discard")],
          "attempts < max_attempts (3); the error is raised to the caller")

# AWS jitters: the simulator (see aws_full above for the file and commit).
SIM = "aws-arch-backoff-simulator src/backoff_simulator.py @095a076"
delays("aws-full", "aws_jitter", {"jitter": "full", "max_attempts": 40}, aws_full(100, 20_000),
       f"{SIM} ExpoBackoffFullJitter: uniform(0, min(cap, 2**attempt * base)), attempt 1 at the first retry",
       canonical={"system": "aws_jitter", "jitter": "full", "base_ms": 100, "cap_ms": 20_000,
                  "max_attempts": 40, "non_retryable": [], "numbering": "simulator"})
delays("aws-equal", "aws_jitter", {"jitter": "equal", "max_attempts": 40}, aws_equal(100, 20_000),
       f"{SIM} ExpoBackoffEqualJitter: v/2 + uniform(0, v/2)")
delays("aws-decorrelated", "aws_jitter", {"jitter": "decorrelated", "max_attempts": 40},
       aws_decorrelated(100, 20_000),
       f"{SIM} ExpoBackoffDecorr: sleep = min(cap, uniform(base, sleep * 3)) carried as a float, same u each step")
delays("aws-decorrelated-base3", "aws_jitter", {"jitter": "decorrelated", "base_ms": 3, "cap_ms": 20_000, "max_attempts": 40},
       aws_decorrelated(3, 20_000),
       f"{SIM} ExpoBackoffDecorr, base 3: the carried float reaches 728 ms at retry 5 with u near 1 (rounding each step would give 608)",
       retries=[1, 2, 3, 4, 5, 6, 7, 8])
delays("aws-full-5-2000", "aws_jitter", {"jitter": "full", "base_ms": 5, "cap_ms": 2000, "max_attempts": 40},
       aws_full(5, 2000), f"{SIM} setup_sim's own ExpoBackoffFullJitter(5, 2000)", retries=list(range(1, 12)))
delays("aws-equal-odd", "aws_jitter", {"jitter": "equal", "base_ms": 7, "cap_ms": 1001, "max_attempts": 40},
       aws_equal(7, 1001), f"{SIM} ExpoBackoffEqualJitter with an odd cap: v/2 is a float", retries=list(range(1, 12)))
delays("aws-full-sdk", "aws_jitter", {"jitter": "full", "numbering": "sdk", "max_attempts": 40},
       aws_full(100, 20_000, "sdk"),
       "numbering sdk (the AWS SDKs' retry count from 0): uniform(0, min(cap, 2**(attempt-1) * base))")
delays("aws-equal-sdk", "aws_jitter", {"jitter": "equal", "numbering": "sdk", "max_attempts": 40},
       aws_equal(100, 20_000, "sdk"), "numbering sdk: v/2 + uniform(0, v/2) over min(cap, 2**(attempt-1) * base)")
error("aws-numbering", "aws_jitter", {"numbering": "blog"}, "preset.numbering", "numbering is simulator or sdk")

# Ratchet
delays("ratchet-exp", "ratchet", {"maxRetries": 30, "backoffPolicy": "EXPONENTIAL", "backoffDelayMs": 1000},
       ratchet("EXPONENTIAL", 1000), "base * 2**min(attempts-1, 20), 24 h cap")
delays("ratchet-exp-50", "ratchet", {"maxRetries": 30, "backoffPolicy": "EXPONENTIAL", "backoffDelayMs": 50},
       ratchet("EXPONENTIAL", 50), "exponent capped at 20: 50 ms * 2**20 from retry 21 on")
delays("ratchet-fixed", "ratchet", {"maxRetries": 5, "backoffPolicy": "FIXED", "backoffDelayMs": 10_000},
       ratchet("FIXED", 10_000), "FIXED", retries=[1, 2, 3])
decisions("ratchet-limits", "ratchet", {"maxRetries": 2, "doNotRetry": ["AuthenticationException"]},
          [{"attempt": 2}, {"attempt": 3}, {"attempt": 1, "type": "AuthenticationException"}],
          [retry(0), term("dead_letter"), term("dead_letter", "non_retryable", "AuthenticationException")],
          "attempt <= maxRetries retries, else DLQ; @DoNotRetry -> DLQ")
decisions("ratchet-default", "ratchet", {}, [{"attempt": 1}], [term("dead_letter")],
          "maxRetries defaults to 0: any failure goes to the DLQ")

# zzz_jobs
delays("zzz-exp", "zzz_jobs", {"max_attempts": 40}, zzz("exponential", 15, 3600, True, 10),
       "min(15 * 2**attempt, 3600) s + up to 25 %")
delays("zzz-constant", "zzz_jobs", {"strategy": "constant", "delay_seconds": 10}, zzz("constant", 15, 3600, True, 10),
       "constant 10 s", retries=[1, 2, 3])
decisions("zzz-limits", "zzz_jobs", {"max_attempts": 3, "jitter": False},
          [{"attempt": 2}, {"attempt": 3}], [retry(30_000), term("discard")],
          "attempt >= max_attempts: discarded")

# ChasquiMQ 1.3.0: the numbers of runs, terminal places and every scheduled
# backoff are also compared with its real worker on a real Redis 8.6 by
# scripts/test-peers (tests/peers/peers_chasquimq.py).
CHQ = "chasquimq 1.3.0 retry.rs backoff_ms_from_spec"
delays("chasquimq", "chasquimq", {"max_attempts": 40}, chasquimq("exponential", 100, 30_000, 2.0, 100),
       f"{CHQ}: min(100 * 2.0.powi(attempt-1), 30000) ms + floor(100 u) on top of the cap",
       canonical={"system": "chasquimq", "version": "1.3", "runtime": "rust", "max_attempts": 40,
                  "kind": "exponential", "delay_ms": 100, "max_delay_ms": 30_000, "multiplier": 2.0,
                  "jitter_ms": 100, "unrecoverable": ["UnrecoverableError"]})
delays("chasquimq-fixed", "chasquimq", {"max_attempts": 40, "kind": "fixed", "delay_ms": 30, "jitter_ms": 10},
       chasquimq("fixed", 30, 30_000, 2.0, 10), f"{CHQ}: fixed 30 ms + floor(10 u)", retries=[1, 2, 3])
delays("chasquimq-cap", "chasquimq",
       {"max_attempts": 40, "delay_ms": 50, "max_delay_ms": 120, "multiplier": 2.0, "jitter_ms": 25},
       chasquimq("exponential", 50, 120, 2.0, 25), f"{CHQ}: the jitter goes above the 120 ms cap",
       retries=[1, 2, 3, 4, 5])
delays("chasquimq-mult-1.5", "chasquimq",
       {"max_attempts": 40, "delay_ms": 7, "max_delay_ms": 100_000, "multiplier": 1.5, "jitter_ms": 0},
       chasquimq("exponential", 7, 100_000, 1.5, 0), f"{CHQ}: multiplier 1.5, truncated after the cap, no jitter")
delays("chasquimq-documented", "chasquimq", {"version": "documented", "max_attempts": 40},
       chasquimq_documented("exponential", 100, 30_000, 2.0, 100),
       "version documented (shared/spec/chasquimq-retry-and-backoff.md): min(100 * 2**(attempt-1), 30000) ms, +/- 100 ms",
       canonical={"system": "chasquimq", "version": "documented", "runtime": "rust", "max_attempts": 40,
                  "kind": "exponential", "delay_ms": 100, "max_delay_ms": 30_000, "multiplier": 2.0,
                  "jitter_ms": 100, "unrecoverable": ["UnrecoverableError", "panic"]})
decisions("chasquimq-limits", "chasquimq", {},
          [{"attempt": 2}, {"attempt": 3}, {"attempt": 1, "type": "UnrecoverableError"},
           {"attempt": 1, "type": "panic"}],
          [retry(250), term("dead_letter"), term("dead_letter", "non_retryable", "UnrecoverableError"),
           retry(150)],
          "chasquimq 1.3.0 worker.rs on_handler_failure: next_attempt >= max_attempts (3) -> DLQ retries_exhausted; "
          "UnrecoverableError -> DLQ unrecoverable; a panic is retried like any failure; u = 0.5: + 50 ms")
decisions("chasquimq-zero", "chasquimq", {"max_attempts": 0}, [{"attempt": 1}], [term("dead_letter")],
          "chasquimq 1.3.0 reader.rs: attempt 1 > max_attempts 0 sends the job to the DLQ (retries_exhausted) "
          "before it runs; the preset's max_attempts is 0 and any failure is exhausted")
decisions("chasquimq-python", "chasquimq", {"runtime": "python"}, [{"attempt": 24}, {"attempt": 25}],
          [retry(30_050), term("dead_letter")],
          "chasquimq 1.3.0 Python Worker(max_attempts=25) by default (the Rust ConsumerConfig and the Node shim: 3)")
decisions("chasquimq-documented", "chasquimq", {"version": "documented"},
          [{"attempt": 1, "type": "panic"}, {"attempt": 2}],
          [term("dead_letter", "non_retryable", "panic"), retry(200)],
          "version documented: panics go to the DLQ at once; +/- 100 ms at u = 0.5 is 0")
error("chasquimq-version", "chasquimq", {"version": "1.2"}, "preset.version", "versions 1.3 and documented")
error("chasquimq-runtime", "chasquimq", {"runtime": "go"}, "preset.runtime", "runtimes rust, node, python")

error("unknown-system", "nope", {}, "preset.system", "not a preset")

# Documents: a preset is a whole policy; plain OJS documents stay strict.
for id_, layers, field in (
    ("beside", [{"preset": {"system": "oban"}, "max_attempts": 3}], "max_attempts"),
    ("layered", [{"max_attempts": 2}, {"preset": {"system": "oban"}}], "preset"),
    ("not-object", [{"preset": "sidekiq"}], "preset"),
):
    cases.append({"id": f"preset-document-{id_}", "spec": "PRESET-document", "op": "policy",
                  "note": "a preset document holds only `preset` and is the only layer",
                  "input": {"layers": layers},
                  "error": {"code": "validation.retry_policy_invalid", "field": field}})
cases.append({"id": "preset-document-round-trip", "spec": "PRESET-document", "op": "policy",
              "note": "the canonical preset document fills in every default",
              "input": {"layers": [{"preset": {"system": "rq", "max": 2}}]},
              "expect": {"policy": {"preset": {"system": "rq", "max": 2, "interval": 0, "rule": "raised"}},
                         "canonical_json": '{"preset":{"interval":0,"max":2,"rule":"raised","system":"rq"}}'}})

print(json.dumps({"title": "presets: existing queues' retry behaviour", "cases": cases}, indent=1))
