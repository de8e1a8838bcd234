"""The Python API beyond the vectors: argument conversion and errors,
pickling / equality / hashing, keyword fields, and Python exceptions while
reading mappings. Defaults and threads: test_runtime.py."""

from __future__ import annotations

import copy
import json
import os
import pickle
from collections.abc import Iterator, Mapping
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable

import pytest

import ojs_retry as o

NOW = 1_770_892_265_000  # 2026-02-12T10:31:05Z
REPO = Path(__file__).resolve().parents[2]


def raises(fn: Callable[[], Any], code: str, field: str | None, path: str | None = None) -> o.PolicyError:
    """`fn` raises a PolicyError with this code, field and path (default:
    the field itself)."""
    with pytest.raises(o.PolicyError) as info:
        fn()
    e = info.value
    assert isinstance(e, ValueError)
    path = field if path is None else path
    assert (e.code, e.field, e.path) == (code, field, path), str(e)
    assert e.faults and (e.faults[0]["field"], e.faults[0]["path"]) == (field, path)
    assert all(set(f) == {"field", "path", "message"} and f["message"] for f in e.faults)
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
    assert [f["field"] for f in e.faults] == ["max_attempts", "jitter"]
    assert "jitter" in str(e)
    e = raises(lambda: o.RetryPolicy({"non_retryable_errors": ["a", 3]}), POLICY, "non_retryable_errors", "non_retryable_errors[1]")
    # Validation applies to the effective policy: the default max_interval.
    e = raises(lambda: o.RetryPolicy(initial_interval="PT10M"), POLICY, "max_interval")
    assert "default" in e.faults[0]["message"]
    # The class has the attributes too (for code that inspects it).
    assert (o.PolicyError.field, o.PolicyError.path, o.PolicyError.faults) == (None, None, [])


@pytest.mark.parametrize(
    "fields, path",
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
        ({"non_retryable_errors": {"k": "validation.*"}}, "non_retryable_errors"),
        ({"initial_interval": 1000}, "initial_interval"),
        ({"on_exhaustion": "explode"}, "on_exhaustion"),
        ({"max_atempts": 3}, "max_atempts"),
    ],
)
def test_bad_policy_values_are_typed_errors(fields: dict[str, Any], path: str) -> None:
    field = path.split("[")[0]
    raises(lambda: o.RetryPolicy(fields), POLICY, field, path)
    raises(lambda: o.RetryPolicy(**fields), POLICY, field, path)


def test_bad_policy_containers() -> None:
    raises(lambda: o.RetryPolicy({1: 2}), POLICY, None)
    raises(lambda: o.RetryPolicy(42), POLICY, None)  # type: ignore[arg-type]
    raises(lambda: o.RetryPolicy("{not json"), POLICY, None)
    raises(lambda: o.RetryPolicy('{"max_attempts": 1, "max_attempts": 2}'), POLICY, None)
    raises(lambda: o.RetryPolicy(object()), POLICY, None)  # type: ignore[arg-type]
    raises(lambda: o.RetryPolicy("\ud800"), POLICY, None)
    raises(lambda: o.RetryPolicy(b'{"jitter": \xff}'), POLICY, None)
    raises(lambda: o.RetryPolicy({"x": object()}), POLICY, "x")
    deep: Any = []
    for _ in range(500):
        deep = [deep]
    # Too deep or cyclic: a fault on the field the value sits in (its path
    # says where inside it the core stopped reading).
    cyclic: list[Any] = []
    cyclic.append(cyclic)
    for doc, field in (({"details": deep}, "details"), ({"x": cyclic}, "x")):
        with pytest.raises(o.PolicyError) as info:
            o.RetryPolicy(doc)
        e = info.value
        assert (e.code, e.field) == (POLICY, field) and (e.path or "").startswith(field), str(e)


class _Raising(Mapping[str, Any]):
    """A mapping whose reading runs Python code that raises `exc`."""

    def __init__(self, exc: BaseException) -> None:
        self.exc = exc

    def __getitem__(self, key: str) -> Any:
        raise self.exc

    def __iter__(self) -> Iterator[str]:
        return iter(["max_attempts"])

    def __len__(self) -> int:
        return 1


CALLS_READING_A_MAPPING: list[tuple[Callable[[Any], Any], tuple[str, str | None]]] = [
    (lambda m: o.RetryPolicy(m), (POLICY, None)),
    (lambda m: o.RetryPolicy.merge({}, m), (POLICY, None)),
    (lambda m: o.RetryPolicy.preset("sidekiq", m), (POLICY, "preset")),
    (lambda m: o.RetryState.from_json(m), ("validation.state_invalid", None)),
    (lambda m: o.RetryPolicy().decide(1, now=NOW, details=m), ("validation.invalid_argument", "details")),
]


@pytest.mark.parametrize("exc", [KeyboardInterrupt(), SystemExit(), MemoryError()])
def test_an_interrupt_while_reading_a_mapping_propagates(exc: BaseException) -> None:
    # Not a PolicyError: the exception Python code raised, as itself.
    for call, _ in CALLS_READING_A_MAPPING:
        with pytest.raises(type(exc)) as info:
            call(_Raising(exc))
        assert info.value is exc


@pytest.mark.parametrize("exc", [RuntimeError("boom"), KeyError("k")])
def test_a_mappings_own_exception_is_a_typed_error_at_its_field(exc: BaseException) -> None:
    # Any other exception: the value at that field could not be read.
    for call, (code, field) in CALLS_READING_A_MAPPING:
        with pytest.raises(o.PolicyError) as info:
            call(_Raising(exc))
        assert (info.value.code, info.value.field) == (code, field), str(info.value)
        assert type(exc).__name__ in str(info.value)


@pytest.mark.parametrize(
    "call, field",
    [
        (lambda p: p.delay(True), "retry_number"),
        (lambda p: p.delay(1.5), "retry_number"),
        (lambda p: p.delay(None), "retry_number"),
        (lambda p: p.delay([1]), "retry_number"),
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
        (lambda p: p.delay(1, u=0.5, seed=1), "u"),
        (lambda p: p.delay(1, seed=1, key="k"), "u"),
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
        (lambda p: p.decide(1, now=NOW, type=3), "type"),
        (lambda p: p.decide(1, now=NOW, type="\udc00"), "type"),
        (lambda p: p.decide(1, now=NOW, message=1), "message"),
        (lambda p: p.decide(1, now=NOW, details=object()), "details"),
    ],
)
def test_bad_arguments_are_invalid_argument_errors(call: Callable[[o.RetryPolicy], Any], field: str) -> None:
    raises(lambda: call(o.RetryPolicy()), ARG, field)


def test_subclasses_and_integral_floats_are_their_values() -> None:
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
                expected = p.delay(n, u=u)
                assert p.delay(Int(n), u=Float(u)) == expected
                assert p.delay(float(n), u=u) == expected  # an integral float, as in JSON
                if n <= 25:
                    assert p.schedule(n, u=u)[n - 1].delay_ms == expected
            for seed in (0, 42, 2**64 - 1):
                assert p.delay(n, seed=seed) == p.delay(Int(n), seed=Int(seed))
            for key in ("job-8f3a", "", "é-ü-😀"):
                assert p.delay(n, key=key) == p.delay(n, key=Str(key))
    p = policies[0]
    with pytest.raises(TypeError, match=r"takes 1 positional"):
        p.delay(1, 0.5)  # type: ignore[misc]
    with pytest.raises(TypeError, match="unexpected keyword argument 'x'"):
        p.delay(1, x=1)  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        o.RetryPolicy.delay(object(), 1, u=0.5)  # type: ignore[arg-type]
    assert p.delay(retry_number=2, u=0.5) == p.delay(2, u=0.5)
    # None for a jitter keyword is leaving it out.
    assert p.delay(2, u=0.5, seed=None, key=None) == p.delay(2, u=0.5)


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
    raises(lambda: o.format_duration(1.5), ARG, "duration")  # type: ignore[arg-type]
    assert o.format_duration(1000.0) == "PT1S"  # type: ignore[arg-type]
    raises(lambda: o.parse_timestamp("2026-02-30T00:00:00Z"), ARG, "timestamp")
    raises(lambda: o.format_timestamp(o.MAX_INSTANT_MS + 1), ARG, "timestamp")
    raises(lambda: o.matches("a.b", "a.*"), ARG, "patterns")  # type: ignore[arg-type]
    raises(lambda: o.matches("a.b", ["a.*", 3]), ARG, "patterns", "patterns[1]")  # type: ignore[list-item]
    raises(lambda: o.first_match(None, ["a"]), ARG, "error_type")  # type: ignore[arg-type]
    raises(lambda: o.jitter_sample(1, u=2.0), ARG, "u")
    raises(lambda: o.RetryState(9), ARG, "history_limit")
    raises(lambda: o.RetryState(True), ARG, "history_limit")
    raises(lambda: o.RetryState.from_json("{}"), STATE, "attempt")
    raises(lambda: o.RetryState.from_json({"attempt": float("nan")}), STATE, "attempt")
    raises(lambda: o.RetryState.from_json([1]), STATE, None)  # type: ignore[arg-type]
    raises(lambda: o.RetryState.from_json('{"attempt": 0, "errors": []} x'), STATE, None)
    raises(lambda: o.Reservation(1, 0, now=NOW), ARG, "visibility_timeout_ms")
    raises(lambda: o.Reservation(0, 1000, now=NOW), ARG, "attempt")
    raises(lambda: o.Reservation(1, 1000, now=-5), ARG, "now")
    p = o.RetryPolicy()
    s = o.RetryState()
    with pytest.raises(TypeError):
        s.record_failure("policy", type="a", now=NOW)  # type: ignore[arg-type]
    raises(lambda: s.record_failure(p, type="a", now=NOW, details={"x": [1, object()]}), ARG, "details", "details.x[1]")
    raises(lambda: s.record_failure(p, type=1, now=NOW), ARG, "type")  # type: ignore[arg-type]
    # Non-finite numbers are not JSON data: refused, never stored as null.
    raises(lambda: s.record_failure(p, type="a", now=NOW, details={"x": float("inf")}), ARG, "details")
    raises(lambda: p.decide(1, now=NOW, details=[float("nan")]), ARG, "details")
    raises(lambda: s.record_failure(p, type="a", now=NOW, code="NOPE"), ARG, "code")
    raises(lambda: s.record_failure(p, 2, type="a", now=NOW), ARG, "attempt")  # not the next attempt
    # A failed call leaves the state untouched.
    assert s.attempt == 0 and s.next_attempt == 1 and s.errors == []


def test_errors_from_the_core_are_one_class() -> None:
    # Every code the engine has can be raised, all as PolicyError.
    seen = set()
    for fn in [
        lambda: o.RetryPolicy(max_attempts=-1),
        lambda: o.parse_duration("P1W"),
        lambda: o.RetryPolicy().delay(0),
        lambda: o.RetryState.from_json('{"attempt": "0", "errors": []}'),
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
    assert o.RetryPolicy.merge({"max_attempts": 6}, p.to_json()) == o.RetryPolicy(p.to_dict())
    for proto in range(pickle.HIGHEST_PROTOCOL + 1):
        q = pickle.loads(pickle.dumps(p, protocol=proto))
        assert q == p and hash(q) == hash(p) and q is not p
    assert copy.copy(p) == p and copy.deepcopy(p) == p
    assert p != o.RetryPolicy() and p != p.to_json() and p != 3
    assert {p: 1}[o.RetryPolicy(p.to_dict())] == 1

    s = o.RetryState(12)
    s.record_failure(p, type="net.reset", message="peer reset", now=NOW, details={"n": 1})
    t = pickle.loads(pickle.dumps(s))
    assert t.to_json() == s.to_json() and t.history_limit == 12 and t is not s


def test_decision_and_rows_objects() -> None:
    p = o.RetryPolicy(max_attempts=3, non_retryable_errors=["validation.*"], on_exhaustion="dead_letter")
    d = p.decide(1, type="validation.email", now=NOW)
    assert (d.action, d.reason, d.matched_pattern) == ("dead_letter", "non_retryable", "validation.*")
    assert d.delay_ms is None and d.next_retry_at is None and d.retry_number is None
    assert d == p.decide(1, type="validation.email", now=NOW + 5)
    assert hash(d) == hash(p.decide(1, type="validation.email", now=NOW))
    assert "validation.*" in d.explain() and "dead letter" in d.explain()
    assert "action='dead_letter'" in repr(d)
    with pytest.raises(AttributeError):
        d.action = "retry"  # type: ignore[misc]
    r = p.decide(2, type="net.reset", now=NOW, key="job-1")
    assert r.action == "retry" and r.retry_number == 2
    assert r.next_retry_at == NOW + r.delay_ms  # type: ignore[operator]
    assert r.delay_ms == p.delay(2, key="job-1")
    assert r != d
    t = p.decide(1, timed_out=True, type="validation.x", now=NOW, u=0.5)
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
