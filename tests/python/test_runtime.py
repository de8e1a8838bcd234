"""The Python API's run-time behaviour: defaults (the clock, OS entropy,
reseeding after fork), one failure for decide and record_failure, state
round trips, and sharing objects between threads."""

from __future__ import annotations

import json
import os
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

import ojs_retry as o

NOW = 1_770_892_265_000  # 2026-02-12T10:31:05Z


# ------------------------------------------------------------------ defaults


def test_now_defaults_to_the_clock() -> None:
    p = o.RetryPolicy(jitter=False, initial_interval="PT10S")
    before = int(time.time() * 1000)
    d = p.decide(1)
    after = int(time.time() * 1000)
    assert d.next_retry_at is not None
    assert before + 10_000 <= d.next_retry_at <= after + 10_000
    r = o.Reservation(1, 60_000)
    assert before + 60_000 <= r.deadline <= int(time.time() * 1000) + 60_000
    assert not r.is_expired()
    assert r.expiry() is None
    s = o.RetryState()
    s.record_failure(p, type="a.b", message="m")
    ts = s.errors[0]["timestamp_ms"]
    assert before <= ts <= int(time.time() * 1000)
    assert o.parse_timestamp(s.to_dict()["errors"][0]["timestamp"]) == ts


def test_the_same_failure_for_decide_and_record_failure() -> None:
    p = o.RetryPolicy(max_attempts=3, non_retryable_errors=["validation.*"], jitter=False)
    failure: dict[str, Any] = {"type": "net.reset", "message": "peer reset", "details": {"host": "db"}}
    s = o.RetryState()
    for attempt in (1, 2, 3):
        expected = p.decide(attempt, now=NOW, **failure)
        assert s.next_attempt == attempt
        assert s.record_failure(p, now=NOW, **failure) == expected
        assert s.attempt == attempt
    assert s.terminal == "discard" and s.next_retry_at is None
    assert [e["attempt"] for e in s.errors] == [1, 2, 3]
    assert s.errors[0]["details"] == {"host": "db"} and s.errors[0]["message"] == "peer reset"
    # A reservation's expiry is that failure's keywords, timed out.
    r = o.Reservation(1, 1000, now=NOW)
    assert r.heartbeat(NOW + 500) == ("extended", NOW + 1500)
    assert r.is_expired(NOW + 1500) and r.heartbeat(NOW + 1500) == ("expired", None)
    expiry = r.expiry(NOW + 5000)
    assert expiry == {"attempt": 1, "timed_out": True}
    t = o.RetryState()
    d = t.record_failure(p, now=NOW, u=0.5, **expiry, type="validation.x")
    assert d == p.decide(now=NOW, u=0.5, **expiry, type="validation.x")
    assert d.action == "retry" and d.timed_out  # timeouts ignore non_retryable_errors


def test_entropy_is_the_default_jitter_source() -> None:
    p = o.RetryPolicy(initial_interval="PT10S")
    row = p.schedule(1)[0]
    draws = [p.delay(1) for _ in range(200)]
    assert all(row.min_ms <= d <= row.max_ms for d in draws)
    assert len(set(draws)) > 1  # 200 draws from [5 s, 15 s): never all equal
    decisions = {p.decide(1, now=NOW).delay_ms for _ in range(50)}
    assert len(decisions) > 1
    samples = {o.jitter_sample(1) for _ in range(20)}
    assert len(samples) > 1 and all(0 <= k < 2**53 for k in samples)
    # Explicit sources are deterministic.
    assert len({p.delay(1, key="job-1") for _ in range(20)}) == 1
    assert len({p.delay(1, seed=2**64 - 1) for _ in range(20)}) == 1
    assert p.delay(1, u=0) == row.min_ms
    assert p.delay(1, u=0.5) == 10_000


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no os.fork on this platform")
def test_a_forked_child_does_not_repeat_the_parents_entropy() -> None:
    # Entropy comes from a generator per thread, seeded from the OS; fork()
    # copies it, and the package's os.register_at_fork hook drops the
    # child's. Without it the child's next samples would be the parent's.
    o.jitter_sample(1)  # this thread's generator, seeded before the fork
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        try:
            os.write(w, json.dumps([o.jitter_sample(1) for _ in range(8)]).encode())
        finally:
            os._exit(0)
    os.close(w)
    with os.fdopen(r, "rb") as f:
        child = json.loads(f.read())
    os.waitpid(pid, 0)
    parent = [o.jitter_sample(1) for _ in range(8)]
    assert len(child) == 8 and all(0 <= k < 2**53 for k in child)
    assert set(child).isdisjoint(parent), (child, parent)


def test_threads_draw_entropy_of_their_own() -> None:
    with ThreadPoolExecutor(4) as ex:
        runs = list(ex.map(lambda _: [o.jitter_sample(1) for _ in range(300)], range(4)))
    flat = [k for run in runs for k in run]
    assert len(set(flat)) == len(flat) == 1200


def test_state_round_trip_and_history() -> None:
    p = o.RetryPolicy(max_attempts=30, jitter=False)
    s = o.RetryState()
    assert (s.attempt, s.next_attempt, s.next_retry_at, s.terminal, s.history_limit, s.errors) == (0, 1, None, None, 10, [])
    for i in range(12):
        d = s.record_failure(p, type="net.reset", message=f"try {i}", now=NOW + i, details={"i": i, "tags": ("a", None)})
        assert d.action == "retry"
    assert s.attempt == 12 and s.next_attempt == 13 and len(s.errors) == 10
    assert s.errors[0]["message"] == "try 2" and s.errors[-1]["details"] == {"i": 11, "tags": ["a", None]}
    t = o.RetryState.from_json(s.to_json())
    u = o.RetryState.from_json(s.to_dict())
    assert t.to_json() == u.to_json() == s.to_json()
    assert repr(s).startswith("RetryState.from_json(")
    d = s.record_failure(p, type="x", message="y", code="DEAD_LETTER", now=NOW)
    assert d.action == "dead_letter" and s.terminal == "dead_letter" and s.next_retry_at is None
    with pytest.raises(o.PolicyError) as info:
        s.record_failure(p, timed_out=True, now=NOW)
    assert (info.value.code, info.value.field) == ("validation.invalid_argument", "state")


# ------------------------------------------------------------------ threads


def test_threads_share_a_policy() -> None:
    p = o.RetryPolicy(max_attempts=1_000, initial_interval="PT1S", max_interval="PT1H")
    keys = [f"job-{i}" for i in range(64)]
    expected = {(k, n): p.delay(n, key=k) for k in keys for n in range(1, 9)}

    def work(k: str) -> dict[tuple[str, int], int]:
        out = {}
        for n in range(1, 9):
            out[(k, n)] = p.decide(n, now=NOW, key=k).delay_ms  # type: ignore[assignment]
        return out

    with ThreadPoolExecutor(max_workers=16) as ex:
        got: dict[tuple[str, int], int] = {}
        for part in ex.map(work, keys * 4):
            got.update(part)
    assert got == expected


def test_threads_share_a_state() -> None:
    p = o.RetryPolicy(max_attempts=10_000, jitter=True, max_interval="PT1H")
    shared = o.RetryState(history_limit=50)
    threads, per_thread = 8, 100
    barrier = threading.Barrier(threads)
    results: list[list[o.Decision]] = [[] for _ in range(threads)]

    def work(t: int) -> None:
        barrier.wait()
        for i in range(per_thread):
            results[t].append(shared.record_failure(p, type="net.reset", message=f"{t}:{i}", now=NOW, key="job-1"))

    ts = [threading.Thread(target=work, args=(t,)) for t in range(threads)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    total = threads * per_thread
    # Sequential reference: the same failures, one after another.
    seq = o.RetryState(history_limit=50)
    reference = [seq.record_failure(p, type="net.reset", message="m", now=NOW, key="job-1") for _ in range(total)]
    decisions = sorted((d for r in results for d in r), key=lambda d: d.attempt)
    assert [d.attempt for d in decisions] == list(range(1, total + 1))  # no attempt lost or repeated
    assert decisions == reference
    assert shared.attempt == seq.attempt == total
    assert shared.next_retry_at == seq.next_retry_at
    assert len(shared.errors) == 50
    assert [e["attempt"] for e in shared.errors] == list(range(total - 49, total + 1))


def test_threads_share_a_reservation() -> None:
    r = o.Reservation(1, 1_000, now=0)
    nows = list(range(0, 900, 3))

    def beat(n: int) -> tuple[str, int | None]:
        return r.heartbeat(n)

    with ThreadPoolExecutor(max_workers=8) as ex:
        out = list(ex.map(beat, nows))
    assert all(status == "extended" for status, _ in out)
    assert r.deadline == max(nows) + 1_000  # the deadline never moves back
