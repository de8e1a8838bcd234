"""The Python API beyond the vectors: argument conversion and errors,
defaults (clock, entropy), pickling / equality / hashing, keyword fields,
datetimes, and sharing objects between threads."""

from __future__ import annotations

import copy
import json
import os
import pickle
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any, Callable

import pytest

import ojs_retry as o

NOW = 1_770_892_265_000  # 2026-02-12T10:31:05Z
REPO = Path(__file__).resolve().parents[2]


def raises(fn: Callable[[], Any], code: str, field: str) -> o.PolicyError:
    with pytest.raises(o.PolicyError) as info:
        fn()
    e = info.value
    assert isinstance(e, ValueError)
    assert (e.code, e.field) == (code, field), str(e)
    assert e.faults and e.faults[0][0] == field
    assert all(isinstance(f, str) and isinstance(m, str) and m for f, m in e.faults)
    assert str(e).startswith(code + ":")
    return e


ARG = "validation.invalid_argument"
POLICY = "validation.retry_policy_invalid"
STATE = "validation.state_invalid"


# ------------------------------------------------------------------ package


def test_imports_the_installed_package_when_required() -> None:
    # scripts/test-python sets this: the tests must run against the wheel,
    # not a source tree.
    if os.environ.get("OJS_REQUIRE_INSTALLED") == "1":
        path = Path(o.__file__).resolve()
        assert "site-packages" in path.parts, path
        assert REPO not in path.parents, path
    assert o.__version__
    assert set(o.__all__) <= set(dir(o))


def test_error_codes() -> None:
    assert o.ERROR_CODES == (
        "validation.retry_policy_invalid",
        "validation.duration_invalid",
        "validation.invalid_argument",
        "validation.state_invalid",
    )
    assert issubclass(o.PolicyError, ValueError)


# ------------------------------------------------------------------ errors


def test_policy_errors_carry_code_field_and_every_fault() -> None:
    e = raises(lambda: o.RetryPolicy('{"max_attempts": -1, "jitter": "yes"}'), POLICY, "max_attempts")
    assert [f for f, _ in e.faults] == ["max_attempts", "jitter"]
    assert "jitter" in str(e)
    # Validation applies to the effective policy: the default max_interval.
    e = raises(lambda: o.RetryPolicy(initial_interval="PT10M"), POLICY, "max_interval")
    assert "default" in e.faults[0][1]


@pytest.mark.parametrize(
    "fields, field",
    [
        ({"max_attempts": True}, "max_attempts"),
        ({"max_attempts": 3.5}, "max_attempts"),
        ({"max_attempts": 2**53}, "max_attempts"),
        ({"max_attempts": 2**70}, "max_attempts"),
        ({"max_attempts": -(2**70)}, "max_attempts"),
        ({"max_attempts": "3"}, "max_attempts"),
        ({"max_attempts": None}, "max_attempts"),
        ({"backoff_coefficient": float("nan")}, "backoff_coefficient"),
        ({"backoff_coefficient": float("inf")}, "backoff_coefficient"),
        ({"backoff_coefficient": True}, "backoff_coefficient"),
        ({"jitter": 1}, "jitter"),
        ({"non_retryable_errors": ["a", 3]}, "non_retryable_errors[1]"),
        ({"non_retryable_errors": ["a", float("nan")]}, "non_retryable_errors[1]"),
        ({"non_retryable_errors": "validation.*"}, "non_retryable_errors"),
        ({"non_retryable_errors": {"validation.*"}}, "non_retryable_errors"),
        ({"initial_interval": 1000}, "initial_interval"),
        ({"on_exhaustion": "explode"}, "on_exhaustion"),
        ({"max_atempts": 3}, "max_atempts"),
    ],
)
def test_bad_policy_values_are_typed_errors(fields: dict[str, Any], field: str) -> None:
    raises(lambda: o.RetryPolicy(fields), POLICY, field)
    raises(lambda: o.RetryPolicy(**fields), POLICY, field)


def test_bad_policy_containers() -> None:
    raises(lambda: o.RetryPolicy({1: 2}), POLICY, "")
    raises(lambda: o.RetryPolicy(42), POLICY, "")  # type: ignore[arg-type]
    raises(lambda: o.RetryPolicy("{not json"), POLICY, "")
    raises(lambda: o.RetryPolicy('{"max_attempts": 1, "max_attempts": 2}'), POLICY, "")
    raises(lambda: o.RetryPolicy(object()), POLICY, "")  # type: ignore[arg-type]
    raises(lambda: o.RetryPolicy("\ud800"), POLICY, "")
    deep: Any = []
    for _ in range(500):
        deep = [deep]
    # Too deep: a fault on the top-level field the value sits in (args::Document::too_deep).
    raises(lambda: o.RetryPolicy({"details": deep}), POLICY, "details")
    cyclic: list[Any] = []
    cyclic.append(cyclic)
    raises(lambda: o.RetryPolicy({"x": cyclic}), POLICY, "x")


@pytest.mark.parametrize(
    "call, field",
    [
        (lambda p: p.delay(True), "retry_number"),
        (lambda p: p.delay(1.0), "retry_number"),
        (lambda p: p.delay("1"), "retry_number"),
        (lambda p: p.delay(-1), "retry_number"),
        (lambda p: p.delay(0), "retry_number"),
        (lambda p: p.delay(2**53), "retry_number"),
        (lambda p: p.delay(2**64), "retry_number"),
        (lambda p: p.delay(1, u=1.0), "u"),
        (lambda p: p.delay(1, u=-0.1), "u"),
        (lambda p: p.delay(1, u=float("nan")), "u"),
        (lambda p: p.delay(1, u=True), "u"),
        (lambda p: p.delay(1, u="0.5"), "u"),
        (lambda p: p.delay(1, seed=-1), "seed"),
        (lambda p: p.delay(1, seed=2**64), "seed"),
        (lambda p: p.delay(1, seed=True), "seed"),
        (lambda p: p.delay(1, seed=1.0), "seed"),
        (lambda p: p.delay(1, key=5), "key"),
        (lambda p: p.delay(1, key="\udc00"), "key"),
        (lambda p: p.delay(1, u=0.5, seed=1), "jitter"),
        (lambda p: p.delay(1, seed=1, key="k"), "jitter"),
        (lambda p: p.schedule(100_001), "count"),
        (lambda p: p.schedule(False), "count"),
        (lambda p: p.decide(0, now=NOW), "attempt"),
        (lambda p: p.decide(True, now=NOW), "attempt"),
        (lambda p: p.decide(1, now=-1), "now"),
        (lambda p: p.decide(1, now=1.5), "now"),
        (lambda p: p.decide(1, now=True), "now"),
        (lambda p: p.decide(1, now="2026-02-12T10:31:05Z"), "now"),
        (lambda p: p.decide(1, now=o.MAX_INSTANT_MS + 1), "now"),
        (lambda p: p.decide(1, now=datetime(2026, 2, 12)), "now"),
        (lambda p: p.decide(1, now=datetime(1969, 12, 31, tzinfo=timezone.utc)), "now"),
        (lambda p: p.decide(1, now=NOW, code="retry"), "code"),
        (lambda p: p.decide(1, now=NOW, code=1), "code"),
        (lambda p: p.decide(1, now=NOW, timed_out=1), "timed_out"),
        (lambda p: p.decide(1, now=NOW, timed_out=True, code="RETRY"), "code"),
        (lambda p: p.decide(1, now=NOW, error_type=3), "error_type"),
    ],
)
def test_bad_arguments_are_invalid_argument_errors(call: Callable[[o.RetryPolicy], Any], field: str) -> None:
    raises(lambda: call(o.RetryPolicy()), ARG, field)


def test_delay_fast_entry_agrees_with_the_full_method() -> None:
    # `delay(n, u=…)`, `seed=` and `key=` with exact int / float / str are
    # answered by a hand-written vectorcall entry (bindings-python/src/
    # fastcall.rs); anything else — subclasses, other keywords, errors —
    # goes to the pyo3 method. Subclasses force the full path here, and
    # `schedule` (another route through the core) is a third witness.
    class Int(int):
        pass

    class Float(float):
        pass

    class Str(str):
        pass

    policies = [
        o.RetryPolicy({"initial_interval": "PT3S", "backoff_coefficient": 3}),
        o.RetryPolicy({"backoff_strategy": "linear", "initial_interval": "PT1S"}),
        o.RetryPolicy.preset("sidekiq", {}),
        o.RetryPolicy.preset("bullmq", {"backoff": {"type": "exponential", "delay": 1000}}),
    ]
    for p in policies:
        for n in (1, 2, 7, 25, 2**53 - 1):
            for u in (0.0, 0.25, 0.999):
                expected = p.delay(Int(n), u=Float(u))
                assert p.delay(n, u=u) == expected
                assert p.delay(Int(n), u=u) == expected
                assert p.delay(n, u=Float(u)) == expected
                if n <= 25:
                    assert p.schedule(n, u=u)[n - 1].delay_ms == expected
            for seed in (0, 42, 2**64 - 1):
                assert p.delay(n, seed=seed) == p.delay(Int(n), seed=Int(seed))
            for key in ("job-8f3a", "", "é-ü-😀"):
                assert p.delay(n, key=key) == p.delay(n, key=Str(key))
        # A keyword name built at run time is not the interned one.
        name = "".join(["u"])
        assert p.delay(3, **{name: 0.5}) == p.delay(Int(3), u=0.5)

    p = policies[0]
    # Errors come from the full method, whichever form the call takes.
    def message(call: Callable[[], Any]) -> tuple[str, str | None, str | None, str]:
        with pytest.raises(Exception) as info:
            call()
        e = info.value
        # The message names the argument's type: the subclass on the full path.
        text = str(e).replace("found Int ", "found int ").replace("found Float ", "found float ")
        return (type(e).__name__, getattr(e, "code", None), getattr(e, "field", None), text)

    bad: list[tuple[Callable[[], Any], Callable[[], Any], str]] = [
        (lambda: p.delay(0, u=0.5), lambda: p.delay(Int(0), u=0.5), "retry_number"),
        (lambda: p.delay(2**53, u=0.5), lambda: p.delay(Int(2**53), u=0.5), "retry_number"),
        (lambda: p.delay(-1, u=0.5), lambda: p.delay(Int(-1), u=0.5), "retry_number"),
        (lambda: p.delay(1, u=1.0), lambda: p.delay(1, u=Float(1.0)), "u"),
        (lambda: p.delay(1, u=float("nan")), lambda: p.delay(1, u=Float("nan")), "u"),
        (lambda: p.delay(1, seed=-1), lambda: p.delay(1, seed=Int(-1)), "seed"),
        (lambda: p.delay(1, seed=2**64), lambda: p.delay(1, seed=Int(2**64)), "seed"),
        (lambda: p.delay(1, key="\ud800"), lambda: p.delay(1, key=Str("\ud800")), "key"),
        (lambda: p.delay(True, u=0.5), lambda: p.delay(Int(1), u=True), ""),
    ]
    for fast, full, field in bad:
        if field:
            assert message(fast) == message(full)
            assert message(fast)[2] == field
        else:
            raises(fast, ARG, "retry_number")
            raises(full, ARG, "u")
    raises(lambda: p.delay(1, u=0.5, seed=1), ARG, "jitter")
    with pytest.raises(TypeError, match=r"RetryPolicy\.delay\(\) takes 1 positional"):
        p.delay(1, 0.5)  # type: ignore[misc]
    with pytest.raises(TypeError, match="unexpected keyword argument 'x'"):
        p.delay(1, x=1)  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        o.RetryPolicy.delay(object(), 1, u=0.5)  # type: ignore[arg-type]
    # Keyword forms still work (the full method).
    assert p.delay(retry_number=2, u=0.5) == p.delay(2, u=0.5)
    # `delay(n)` with an exact int is answered there too, with a sample of
    # the entropy generator: within the schedule's bounds for that retry
    # on every kind of policy, and varied; its errors are the full
    # method's (a subclass takes the full path).
    for i, q in enumerate(policies):
        for n in (1, 2, 7, 25):
            row = q.schedule(n)[n - 1]
            drawn = [q.delay(n) for _ in range(200)]
            assert all(type(d) is int and row.min_ms <= d <= row.max_ms for d in drawn), (n, row)
            assert all(row.min_ms <= q.delay(Int(n)) <= row.max_ms for _ in range(20))
            # Plain policies spread over [min, max] (about half of the draws
            # at the cap once it binds); presets have their own jitter
            # (Sidekiq's takes 10 values; this BullMQ one has none).
            if row.max_ms > row.min_ms:
                assert len(set(drawn)) > (50 if i < 2 else 1), (i, n, sorted(set(drawn))[:12])
    for n in (0, -1, 2**53):
        assert message(lambda: p.delay(n)) == message(lambda: p.delay(Int(n)))
    raises(lambda: p.delay(True), ARG, "retry_number")
    raises(lambda: p.delay(1.0), ARG, "retry_number")  # type: ignore[arg-type]


def test_delay_keeps_its_signature_and_docstring() -> None:
    import inspect

    sig = inspect.signature(o.RetryPolicy.delay)
    assert str(sig) == "(self, /, retry_number, *, u=None, seed=None, key=None)"
    assert (o.RetryPolicy.delay.__doc__ or "").startswith("The delay in ms before retry")
    assert o.RetryPolicy.delay.__name__ == "delay"
    assert o.RetryPolicy.delay.__qualname__ == "RetryPolicy.delay"


def test_functions_errors() -> None:
    raises(lambda: o.parse_duration("-PT1S"), "validation.duration_invalid", "duration")
    raises(lambda: o.parse_duration(1000), ARG, "duration")  # type: ignore[arg-type]
    raises(lambda: o.format_duration(-1), ARG, "duration")
    raises(lambda: o.format_duration(2**53), ARG, "duration")
    raises(lambda: o.format_duration(1.0), ARG, "duration")  # type: ignore[arg-type]
    raises(lambda: o.parse_timestamp("2026-02-30T00:00:00Z"), ARG, "timestamp")
    raises(lambda: o.format_timestamp(o.MAX_INSTANT_MS + 1), ARG, "timestamp")
    raises(lambda: o.matches("a.b", "a.*"), ARG, "patterns")  # type: ignore[arg-type]
    raises(lambda: o.matches("a.b", ["a.*", 3]), ARG, "patterns[1]")  # type: ignore[list-item]
    raises(lambda: o.first_match(None, ["a"]), ARG, "error_type")  # type: ignore[arg-type]
    raises(lambda: o.jitter_sample(1, u=2.0), ARG, "u")
    raises(lambda: o.RetryState(9), ARG, "history_limit")
    raises(lambda: o.RetryState(True), ARG, "history_limit")
    raises(lambda: o.RetryState.from_json("{}"), STATE, "attempt")
    raises(lambda: o.RetryState.from_json({"attempt": float("nan")}), STATE, "attempt")
    raises(lambda: o.RetryState.from_json([1]), STATE, "")  # type: ignore[arg-type]
    raises(lambda: o.Reservation(1, 0, now=NOW), ARG, "visibility_timeout_ms")
    raises(lambda: o.Reservation(0, 1000, now=NOW), ARG, "attempt")
    raises(lambda: o.Reservation(1, 1000, now=-5), ARG, "now")
    p = o.RetryPolicy()
    s = o.RetryState()
    raises(lambda: s.record_failure("policy", "a", "b", now=NOW), ARG, "policy")  # type: ignore[arg-type]
    raises(lambda: s.record_failure(p, "a", "b", now=NOW, details={"x": float("inf")}), ARG, "details.x")
    raises(lambda: s.record_failure(p, "a", "b", now=NOW, details={"x": [1, object()]}), ARG, "details.x[1]")
    raises(lambda: s.record_failure(p, 1, "b", now=NOW), ARG, "error_type")  # type: ignore[arg-type]
    raises(lambda: s.record_failure(p, "a", "b", now=NOW, code="NOPE"), ARG, "code")
    # A failed call leaves the state untouched.
    assert s.attempt == 1 and s.errors == []


def test_errors_from_the_core_are_one_class() -> None:
    # Every code the engine has can be raised, all as PolicyError.
    seen = set()
    for fn in [
        lambda: o.RetryPolicy(max_attempts=-1),
        lambda: o.parse_duration("P1W"),
        lambda: o.RetryPolicy().delay(0),
        lambda: o.RetryState.from_json('{"attempt": 0}'),
    ]:
        with pytest.raises(o.PolicyError) as info:
            fn()
        seen.add(info.value.code)
    assert seen == set(o.ERROR_CODES)


# ------------------------------------------------------------------ policy


def test_constructor_forms_agree() -> None:
    doc = {"max_attempts": 5, "initial_interval": "PT30S", "non_retryable_errors": ["validation.*"]}
    a = o.RetryPolicy(doc)
    b = o.RetryPolicy(json.dumps(doc))
    c = o.RetryPolicy(**doc)  # type: ignore[arg-type]
    d = o.RetryPolicy.from_json(json.dumps(doc))
    e = o.RetryPolicy.merge({"max_attempts": 5}, '{"initial_interval": "PT30S"}', {"non_retryable_errors": ("validation.*",)})
    assert a == b == c == d == e
    assert len({a, b, c, d, e}) == 1
    assert a.max_attempts == 5 and a.max_retries == 4
    assert a.initial_interval_ms == 30_000
    assert a.non_retryable_errors == ("validation.*",)
    assert a.backoff_strategy == "exponential" and a.on_exhaustion == "discard"
    assert a.backoff_coefficient == 2.0 and a.max_interval_ms == 300_000 and a.jitter is True


def test_kwargs_layer_over_the_document() -> None:
    p = o.RetryPolicy({"max_attempts": 5, "jitter": True}, max_attempts=9, backoff_strategy="constant")
    assert p.max_attempts == 9 and p.jitter is True and p.backoff_strategy == "none"
    p = o.RetryPolicy('{"max_attempts": 5}', on_exhaustion="dead_letter")
    assert (p.max_attempts, p.on_exhaustion) == (5, "dead_letter")
    # A merged layer may fix what another layer alone could not.
    p = o.RetryPolicy({"initial_interval": "PT10M"}, max_interval="PT1H")
    assert p.initial_interval_ms == 600_000
    # The policy argument is positional-only: a field named "policy" is a field.
    raises(lambda: o.RetryPolicy(policy={"max_attempts": 3}), POLICY, "policy")


def test_defaults_and_merge() -> None:
    assert o.RetryPolicy() == o.RetryPolicy(None) == o.RetryPolicy({}) == o.RetryPolicy.merge()
    assert o.RetryPolicy().to_json() == (
        '{"max_attempts":3,"initial_interval":"PT1S","backoff_coefficient":2.0,'
        '"max_interval":"PT5M","jitter":true,"non_retryable_errors":[],"on_exhaustion":"discard"}'
    )
    p = o.RetryPolicy.merge({"max_attempts": 5}, {"max_attempts": 7})
    assert p.max_attempts == 7


def test_to_dict_to_json_and_repr() -> None:
    p = o.RetryPolicy(max_attempts=4, backoff_strategy="polynomial")
    d = p.to_dict()
    assert list(d) == [
        "max_attempts", "initial_interval", "backoff_coefficient", "max_interval",
        "jitter", "non_retryable_errors", "on_exhaustion", "backoff_strategy",
    ]
    assert json.loads(p.to_json()) == d
    assert o.RetryPolicy(d) == p
    assert eval(repr(p), {"RetryPolicy": o.RetryPolicy}) == p
    d["max_attempts"] = 99  # a copy: the policy is unchanged
    assert p.max_attempts == 4


def test_immutable() -> None:
    p = o.RetryPolicy()
    with pytest.raises(AttributeError):
        p.max_attempts = 10  # type: ignore[misc]
    with pytest.raises((AttributeError, TypeError)):
        p.extra = 1  # type: ignore[attr-defined]


def test_pickle_equality_hash() -> None:
    p = o.RetryPolicy({"max_attempts": 6, "non_retryable_errors": ["a.*"]}, jitter=False)
    for proto in range(pickle.HIGHEST_PROTOCOL + 1):
        q = pickle.loads(pickle.dumps(p, protocol=proto))
        assert q == p and hash(q) == hash(p) and q is not p
    assert copy.copy(p) == p and copy.deepcopy(p) == p
    assert p != o.RetryPolicy() and p != p.to_json() and p != 3
    assert {p: 1}[o.RetryPolicy(p.to_dict())] == 1

    s = o.RetryState(12)
    s.record_failure(p, "net.reset", "peer reset", now=NOW, details={"n": 1})
    t = pickle.loads(pickle.dumps(s))
    assert t.to_json() == s.to_json() and t.history_limit == 12 and t is not s


def test_decision_and_rows_objects() -> None:
    p = o.RetryPolicy(max_attempts=3, non_retryable_errors=["validation.*"], on_exhaustion="dead_letter")
    d = p.decide(1, error_type="validation.email", now=NOW)
    assert (d.action, d.reason, d.matched_pattern) == ("dead_letter", "non_retryable", "validation.*")
    assert d.delay_ms is None and d.next_retry_at is None and d.retry_number is None
    assert d == p.decide(1, error_type="validation.email", now=NOW + 5)
    assert hash(d) == hash(p.decide(1, error_type="validation.email", now=NOW))
    assert "validation.*" in d.explain() and "dead letter" in d.explain()
    assert "action='dead_letter'" in repr(d)
    with pytest.raises(AttributeError):
        d.action = "retry"  # type: ignore[misc]
    r = p.decide(2, error_type="net.reset", now=NOW, key="job-1")
    assert r.action == "retry" and r.retry_number == 2
    assert r.next_retry_at == NOW + r.delay_ms  # type: ignore[operator]
    assert r.delay_ms == p.delay(2, key="job-1")
    assert r != d
    t = p.decide(1, timed_out=True, error_type="validation.x", now=NOW, u=0.5)
    assert t.action == "retry" and t.timed_out  # timeouts ignore non_retryable_errors
    h = p.decide(1, code="FAIL", now=NOW)
    assert (h.action, h.reason, h.handler_code) == ("discard", "handler_code", "FAIL")

    rows = p.schedule(3)
    assert [r.retry_number for r in rows] == [1, 2, 3][: len(rows)]
    assert all(r.delay_ms is None for r in rows)
    keyed = p.schedule(3, key="job-1")
    assert [r.delay_ms for r in keyed] == [p.delay(n, key="job-1") for n in (1, 2, 3)]
    assert keyed[2].cumulative_ms == sum(p.delay(n, key="job-1") for n in (1, 2, 3))
    assert keyed[0] == p.schedule(1, key="job-1")[0] and keyed[0] != rows[0]
    assert hash(keyed[0]) == hash(p.schedule(1, key="job-1")[0])
    assert keyed[0].to_dict()["delay_ms"] == keyed[0].delay_ms
    assert repr(keyed[0]).startswith("ScheduleRow(retry_number=1, ")
    assert p.schedule(0) == []


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
    s.record_failure(p, "a.b", "m")
    ts = o.parse_timestamp(s.errors[0]["timestamp"])
    assert before <= ts <= int(time.time() * 1000)


def test_datetime_now() -> None:
    p = o.RetryPolicy(jitter=False)
    aware = datetime(2026, 2, 12, 10, 31, 5, 250_999, tzinfo=timezone.utc)
    assert p.decide(1, now=aware) == p.decide(1, now=NOW + 250)  # floor to ms
    cet = aware.astimezone(timezone(timedelta(hours=1)))
    assert p.decide(1, now=cet) == p.decide(1, now=NOW + 250)
    r = o.Reservation(1, 1000, now=aware)
    assert r.deadline == NOW + 1250
    assert r.heartbeat(aware + timedelta(milliseconds=500)) == ("extended", NOW + 1750)
    assert r.is_expired(NOW + 1750) and r.heartbeat(NOW + 1750) == ("expired", None)
    assert r.expiry(aware + timedelta(seconds=5)) == {"attempt": 1, "timed_out": True}
    s = o.RetryState()
    s.record_timeout(p, now=aware)
    assert s.errors[0]["timestamp"] == "2026-02-12T10:31:05.250Z"
    assert s.errors[0]["type"] == "reservation.timeout"


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
    assert (s.attempt, s.next_retry_at, s.terminal, s.history_limit, s.errors) == (1, None, None, 10, [])
    for i in range(12):
        d = s.record_failure(p, "net.reset", f"try {i}", now=NOW + i, details={"i": i, "tags": ("a", None)})
        assert d.action == "retry"
    assert s.attempt == 13 and len(s.errors) == 10
    assert s.errors[0]["message"] == "try 2" and s.errors[-1]["details"] == {"i": 11, "tags": ["a", None]}
    t = o.RetryState.from_json(s.to_json())
    u = o.RetryState.from_json(s.to_dict())
    assert t.to_json() == u.to_json() == s.to_json()
    assert repr(s).startswith("RetryState.from_json(")
    d = s.record_failure(p, "x", "y", code="DEAD_LETTER", now=NOW)
    assert d.action == "dead_letter" and s.terminal == "dead_letter" and s.next_retry_at is None
    raises(lambda: s.record_timeout(p, now=NOW), ARG, "state")


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
            results[t].append(shared.record_failure(p, "net.reset", f"{t}:{i}", now=NOW, key="job-1"))

    ts = [threading.Thread(target=work, args=(t,)) for t in range(threads)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    total = threads * per_thread
    # Sequential reference: the same failures, one after another.
    seq = o.RetryState(history_limit=50)
    reference = [seq.record_failure(p, "net.reset", "m", now=NOW, key="job-1") for _ in range(total)]
    decisions = sorted((d for r in results for d in r), key=lambda d: d.attempt)
    assert [d.attempt for d in decisions] == list(range(1, total + 1))  # no attempt lost or repeated
    assert decisions == reference
    assert shared.attempt == seq.attempt == total + 1
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
