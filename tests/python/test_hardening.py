"""Hostile Python values (issue 20): mappings that repeat a key, Python
exceptions raised while an argument is read, datetimes whose tzinfo raises,
int subclasses that lie about their value."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from datetime import datetime, timedelta, tzinfo
from typing import Any, Callable

import pytest

import ojs_retry as o

NOW = 1_770_892_265_000  # 2026-02-12T10:31:05Z
ARG = "validation.invalid_argument"
POLICY = "validation.retry_policy_invalid"
STATE = "validation.state_invalid"

RECORD = {"attempt": 1, "type": "a.b", "message": "m", "code": "RETRY", "timestamp": "2026-02-12T10:31:05Z"}


def error_of(fn: Callable[[], Any]) -> tuple[str, str | None, str | None]:
    return located(raised(fn))


def raised(fn: Callable[[], Any]) -> o.PolicyError:
    with pytest.raises(o.PolicyError) as info:
        fn()
    return info.value


def located(e: o.PolicyError) -> tuple[str, str | None, str | None]:
    return (e.code, e.field, e.path)


# ------------------------------------------------------- a key given twice


class Pairs(Mapping[str, Any]):
    """A mapping over a list of pairs, which may repeat a key: `keys()`,
    `__iter__`, `items()` and `values()` all yield every pair."""

    def __init__(self, *pairs: tuple[str, Any]) -> None:
        self.pairs = list(pairs)

    def __getitem__(self, key: str) -> Any:
        for k, v in reversed(self.pairs):
            if k == key:
                return v
        raise KeyError(key)

    def __iter__(self) -> Iterator[str]:
        return iter([k for k, _ in self.pairs])

    def __len__(self) -> int:
        return len(self.pairs)

    def keys(self) -> Any:
        return [k for k, _ in self.pairs]

    def values(self) -> Any:
        return [v for _, v in self.pairs]

    def items(self) -> Any:
        return list(self.pairs)


def as_text(v: Any) -> str:
    """`v` as JSON text, a `Pairs` written with its repeated keys."""
    if isinstance(v, Pairs):
        return "{" + ",".join(f"{json.dumps(k)}:{as_text(x)}" for k, x in v.pairs) + "}"
    if isinstance(v, dict):
        return as_text(Pairs(*v.items()))
    if isinstance(v, list):
        return "[" + ",".join(as_text(x) for x in v) + "]"
    return json.dumps(v)


TWICE = [
    # (document with a repeated key, reader of a document, its code)
    (Pairs(("max_attempts", 1), ("max_attempts", 2)), o.RetryPolicy, POLICY),
    (Pairs(("jitter", False), ("max_attempts", 5), ("max_attempts", 5)), o.RetryPolicy, POLICY),
    (Pairs(("max_attempts", 1), ("max_attempts", 2)), lambda d: o.RetryPolicy.merge({"jitter": False}, d), POLICY),
    ({"non_retryable_errors": ["a"], "x": Pairs(("k", 1), ("k", 2))}, o.RetryPolicy, POLICY),
    (Pairs(("attempt", 1), ("attempt", 2)), o.RetryState.from_json, STATE),
    ({"attempt": 1, "errors": [Pairs(*RECORD.items(), ("type", "x.y"))]}, o.RetryState.from_json, STATE),
    (
        {"attempt": 1, "errors": [{**RECORD, "details": Pairs(("k", 1), ("k", 1))}]},
        o.RetryState.from_json,
        STATE,
    ),
]


@pytest.mark.parametrize("doc, read, code", TWICE)
def test_a_mapping_repeating_a_key_is_refused_as_json_text_is(doc: Any, read: Callable[[Any], Any], code: str) -> None:
    from_text = raised(lambda: read(as_text(doc)))
    from_mapping = raised(lambda: read(doc))
    assert from_text.code == from_mapping.code == code
    assert "duplicate key" in str(from_text) and "duplicate key" in str(from_mapping), (str(from_text), str(from_mapping))
    # Located where the text's reader locates it, or more precisely (a
    # host value is read member by member).
    if located(from_text) != located(from_mapping):
        assert from_text.field is None and from_mapping.field is not None, (str(from_text), str(from_mapping))


def test_a_repeated_key_in_failure_details_and_preset_options() -> None:
    twice = Pairs(("k", 1), ("k", 2))
    p = o.RetryPolicy()
    assert error_of(lambda: p.decide(1, now=NOW, details=twice)) == (ARG, "details", "details.k")
    assert error_of(lambda: o.RetryState().record_failure(p, now=NOW, details=twice)) == (ARG, "details", "details.k")
    # The same key once is fine: the refusal is of the repetition.
    assert p.decide(1, now=NOW, details=Pairs(("k", 1))).action == "retry"
    opts = Pairs(("max_retries", 1), ("max_retries", 2))
    expected = (POLICY, "preset", "preset.max_retries")
    assert error_of(lambda: o.RetryPolicy.preset("sidekiq", opts)) == expected
    # Options and keywords together are merged: the repetition is still seen.
    assert error_of(lambda: o.RetryPolicy.preset("sidekiq", opts, retry_interval=5)) == expected
    assert o.RetryPolicy.preset("sidekiq", Pairs(("max_retries", 1)), max_retries=2).max_retries == 2


# ------------------------------------- Python exceptions while reading


class Raising(Mapping[str, Any]):
    """A mapping whose `where` method raises `exc`; records what was called."""

    def __init__(self, exc: BaseException, where: str, key: str = "max_attempts") -> None:
        self.exc, self.where, self.key = exc, where, key
        self.called: set[str] = set()

    def _enter(self, name: str) -> None:
        self.called.add(name)
        if name == self.where:
            raise self.exc

    def __getitem__(self, key: str) -> Any:
        self._enter("__getitem__")
        return 1

    def __iter__(self) -> Iterator[str]:
        self._enter("__iter__")
        return iter([self.key])

    def __len__(self) -> int:
        self._enter("__len__")
        return 1

    def keys(self) -> Any:
        self._enter("keys")
        return [self.key]

    def values(self) -> Any:
        self._enter("values")
        return [self[self.key]]

    def items(self) -> Any:
        self._enter("items")
        return [(self.key, self[self.key])]


WHERE = ["__getitem__", "__iter__", "__len__", "keys", "values", "items"]
FATAL = [KeyboardInterrupt, SystemExit, MemoryError]

# Every way a mapping reaches the engine: as the document, nested in it, as
# preset options, as a failure's details, as a keyword field.
USES: list[tuple[str, Callable[[Any], Any]]] = [
    ("policy", lambda m: o.RetryPolicy(m)),
    ("policy field", lambda m: o.RetryPolicy({"non_retryable_errors": [m]})),
    ("keyword field", lambda m: o.RetryPolicy(non_retryable_errors=m)),
    ("merge", lambda m: o.RetryPolicy.merge({"jitter": False}, m)),
    ("preset", lambda m: o.RetryPolicy.preset("sidekiq", m)),
    ("preset + keywords", lambda m: o.RetryPolicy.preset("sidekiq", m, max_retries=3)),
    ("preset option", lambda m: o.RetryPolicy.preset("bullmq", {"backoff": m})),
    ("state", lambda m: o.RetryState.from_json(m)),
    ("state record", lambda m: o.RetryState.from_json({"attempt": 1, "errors": [m]})),
    ("details", lambda m: o.RetryPolicy().decide(1, now=NOW, details=m)),
    ("nested details", lambda m: o.RetryPolicy().decide(1, now=NOW, details={"a": [m]})),
    ("recorded details", lambda m: o.RetryState().record_failure(o.RetryPolicy(), now=NOW, details=m)),
]


@pytest.mark.parametrize("use", [u for _, u in USES], ids=[n for n, _ in USES])
@pytest.mark.parametrize("where", WHERE)
@pytest.mark.parametrize("kind", FATAL)
def test_an_interrupt_in_a_mappings_methods_propagates(kind: type[BaseException], where: str, use: Callable[[Any], Any]) -> None:
    exc = kind()
    m = Raising(exc, where)
    try:
        use(m)
    except o.PolicyError:
        pass
    except BaseException as e:
        assert e is exc, repr(e)
        return
    # Not raised: the engine never called that method.
    assert where not in m.called, f"{where} raised {exc!r}, which was lost"


def test_the_engine_reads_mappings_through_their_items() -> None:
    # So that the test above cannot pass by never calling anything: a
    # mapping is read through one call of items(), nothing else.
    for _, use in USES:
        m = Raising(KeyboardInterrupt(), "none")
        try:
            use(m)
        except o.PolicyError:
            pass
        assert m.called == {"items", "__getitem__"}, m.called  # our items() calls self[key]


# Where each use reports a fault of the mapping itself: (code, field, path).
WHERE_FAULT = {
    "policy": (POLICY, None, None),
    "policy field": (POLICY, "non_retryable_errors", "non_retryable_errors[0]"),
    "keyword field": (POLICY, "non_retryable_errors", "non_retryable_errors"),
    "merge": (POLICY, None, None),
    "preset": (POLICY, "preset", "preset"),
    "preset + keywords": (POLICY, "preset", "preset"),
    "preset option": (POLICY, "preset", "preset.backoff"),
    "state": (STATE, None, None),
    "state record": (STATE, "errors", "errors[0]"),
    "details": (ARG, "details", "details"),
    "nested details": (ARG, "details", "details.a[0]"),
    "recorded details": (ARG, "details", "details"),
}


@pytest.mark.parametrize("kind", [ValueError, TypeError, OverflowError, UnicodeEncodeError, IndexError, RuntimeError, Exception])
@pytest.mark.parametrize("name, use", USES, ids=[n for n, _ in USES])
def test_a_mappings_own_exception_is_a_typed_fault_at_its_field(name: str, use: Callable[[Any], Any], kind: type[Exception]) -> None:
    # Whatever it raises (but an interrupt, an exit or a MemoryError), it is
    # the value at that field that could not be read.
    exc = kind("utf-8", "x", 0, 1, "own") if kind is UnicodeEncodeError else kind("own")
    e = raised(lambda: use(Raising(exc, "items")))
    assert located(e) == WHERE_FAULT[name], str(e)
    assert kind.__name__ in str(e)


@pytest.mark.parametrize("kind", FATAL)
def test_entries_after_a_fault_are_skipped_unread(kind: type[BaseException]) -> None:
    # `object()` is a fault; the entries after it are skipped without being
    # read (serde's IgnoredAny), so nothing they could raise is swallowed
    # behind the first fault: the mapping is never touched.
    later = Raising(kind(), "keys")
    with pytest.raises(o.PolicyError) as info:
        o.RetryPolicy({"x": object(), "y": later})
    assert info.value.field == "x"
    assert later.called == set()


@pytest.mark.parametrize("kind", FATAL)
def test_an_interrupt_in_a_later_entry_propagates(kind: type[BaseException]) -> None:
    exc = kind()
    with pytest.raises(kind) as info:
        o.RetryPolicy({"max_attempts": 2, "y": Raising(exc, "items")})
    assert info.value is exc


class Repr:
    """An argument of no accepted type whose `__repr__` raises, once (so
    that pytest can show it in a report)."""

    def __init__(self, exc: BaseException) -> None:
        self.exc: BaseException | None = exc

    def __repr__(self) -> str:
        exc, self.exc = self.exc, None
        if exc is not None:
            raise exc
        return "Repr()"


OPTIONS: list[tuple[str, Callable[[Any], Any]]] = [
    ("retry_number", lambda v: o.RetryPolicy().delay(v)),
    ("count", lambda v: o.RetryPolicy().schedule(v)),
    ("attempt", lambda v: o.RetryPolicy().decide(v, now=NOW)),
    ("now", lambda v: o.RetryPolicy().decide(1, now=v)),
    ("u", lambda v: o.RetryPolicy().delay(1, u=v)),
    ("seed", lambda v: o.RetryPolicy().delay(1, seed=v)),
    ("key", lambda v: o.RetryPolicy().delay(1, key=v)),
    ("history_limit", lambda v: o.RetryState(v)),
    ("attempt", lambda v: o.RetryState().record_failure(o.RetryPolicy(), v, now=NOW)),
    ("now", lambda v: o.Reservation(1, 1000, now=v)),
    ("visibility_timeout_ms", lambda v: o.Reservation(1, v, now=NOW)),
    ("now", lambda v: o.Reservation(1, 1000, now=NOW).heartbeat(v)),
    ("patterns", lambda v: o.matches("a", v)),
    ("patterns[0]", lambda v: o.matches("a", [v])),
    ("error_type", lambda v: o.first_match(v, ["a"])),
    ("duration", lambda v: o.format_duration(v)),
    ("timestamp", lambda v: o.parse_timestamp(v)),
    ("retry_number", lambda v: o.jitter_sample(v, u=0.5)),
]


@pytest.mark.parametrize("field, call", OPTIONS)
def test_an_argument_whose_repr_raises(field: str, call: Callable[[Any], Any]) -> None:
    # An ordinary exception from the repr is still the argument's fault...
    assert error_of(lambda: call(Repr(RuntimeError("repr")))) == (ARG, field.split("[")[0], field)
    # ...an interrupt is the caller's, as itself.
    for kind in FATAL:
        exc = kind()
        with pytest.raises(kind) as info:
            call(Repr(exc))
        assert info.value is exc


class BigInt(int):
    """An int subclass whose float conversion and comparisons raise."""

    def __float__(self) -> float:
        raise KeyboardInterrupt

    def __lt__(self, other: object) -> bool:
        raise KeyboardInterrupt

    def __gt__(self, other: object) -> bool:
        raise KeyboardInterrupt


class Liar(int):
    """An int subclass whose float conversion gives another number."""

    def __float__(self) -> float:
        return 5.0

    def __lt__(self, other: object) -> bool:
        return False


@pytest.mark.parametrize("field, call", [x for x in OPTIONS if x[0] in ("retry_number", "now", "attempt", "u", "history_limit")])
def test_int_subclasses_are_read_by_their_int_value(field: str, call: Callable[[Any], Any]) -> None:
    for n in (2**70, -(2**70), 2**2000, -(2**2000)):
        # Out of range whatever the subclass says: its methods are not asked.
        assert error_of(lambda: call(BigInt(n)))[:2] == (ARG, field)
        assert error_of(lambda: call(Liar(n)))[:2] == (ARG, field)
    assert o.RetryPolicy(jitter=False).delay(Liar(2)) == 2000


# -------------------------------------------------- datetimes and tzinfo


class BadZone(tzinfo):
    """A time zone every method of which raises `exc`; counts the calls."""

    def __init__(self, exc: BaseException) -> None:
        self.exc, self.calls = exc, 0

    def _raise(self) -> None:
        self.calls += 1
        if self.calls == 1:  # once only, so that pytest can show it
            raise self.exc

    def utcoffset(self, dt: datetime | None) -> timedelta:
        self._raise()
        return timedelta(0)

    def dst(self, dt: datetime | None) -> timedelta:
        self._raise()
        return timedelta(0)

    def tzname(self, dt: datetime | None) -> str:
        self._raise()
        return "bad"

    def __repr__(self) -> str:
        self._raise()
        return "BadZone()"


WHEN: list[tuple[str, Callable[[Any], Any]]] = [
    ("now", lambda d: o.RetryPolicy().decide(1, now=d)),
    ("now", lambda d: o.RetryState().record_failure(o.RetryPolicy(), now=d)),
    ("now", lambda d: o.Reservation(1, 1000, now=d)),
    ("now", lambda d: o.Reservation(1, 1000, now=NOW).is_expired(d)),
    ("now", lambda d: o.Reservation(1, 1000, now=NOW).expiry(d)),
    ("timestamp", lambda d: o.parse_timestamp(d)),
    ("details", lambda d: o.RetryPolicy().decide(1, now=NOW, details={"at": d})),
    ("max_attempts", lambda d: o.RetryPolicy({"max_attempts": d})),
    ("next_retry_at", lambda d: o.RetryState.from_json({"attempt": 1, "next_retry_at": d})),
]


@pytest.mark.parametrize("field, call", WHEN)
def test_a_datetime_whose_tzinfo_raises_is_a_typed_error(field: str, call: Callable[[Any], Any]) -> None:
    d = datetime(2026, 2, 12, tzinfo=BadZone(RuntimeError("utcoffset")))
    code, got, _ = error_of(lambda: call(d))
    assert got == field and code in (ARG, POLICY, STATE)


@pytest.mark.parametrize("field, call", WHEN)
@pytest.mark.parametrize("kind", FATAL)
def test_an_interrupt_from_a_datetimes_tzinfo_propagates(kind: type[BaseException], field: str, call: Callable[[Any], Any]) -> None:
    exc = kind()
    zone = BadZone(exc)
    try:
        call(datetime(2026, 2, 12, tzinfo=zone))
    except o.PolicyError as e:
        # Only if the engine never ran the zone's code (a datetime is
        # refused by its type, which needs no method of its zone).
        assert e.field == field
        assert zone.calls == 0, f"{exc!r} from the zone was lost: {e}"
        return
    except BaseException as e:
        assert e is exc
        assert zone.calls > 0
        return
    pytest.fail("a datetime was accepted")


# ------------------------- issue 26: a mapping is read once, its own pairs


class ZeroLen(dict):  # type: ignore[type-arg]
    """A dict that says it is empty."""

    def __len__(self) -> int:
        return 0


class LyingLen(Mapping[str, Any]):
    """A mapping whose `__len__` claims more pairs than it has."""

    def __init__(self, **pairs: Any) -> None:
        self.pairs = pairs

    def __getitem__(self, key: str) -> Any:
        return self.pairs[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self.pairs)

    def __len__(self) -> int:
        return len(self.pairs) + 5

    def items(self) -> Any:
        return list(self.pairs.items())


class Swapped(Mapping[str, Any]):
    """A mapping whose `keys()` and `values()` come in different orders:
    only `items()` pairs each key with its own value."""

    def __init__(self, **pairs: Any) -> None:
        self.pairs = pairs

    def __getitem__(self, key: str) -> Any:
        return self.pairs[key]

    def __iter__(self) -> Iterator[str]:
        return iter(sorted(self.pairs))

    def __len__(self) -> int:
        return len(self.pairs)

    def keys(self) -> Any:
        return sorted(self.pairs)

    def values(self) -> Any:
        return [self.pairs[k] for k in sorted(self.pairs, reverse=True)]

    def items(self) -> Any:
        return list(self.pairs.items())


def test_a_dict_whose_len_is_zero_is_read_by_its_pairs() -> None:
    p = o.RetryPolicy(ZeroLen(max_attempts=7))
    assert p.max_attempts == 7


def test_a_lying_len_is_not_an_index_error() -> None:
    assert o.RetryPolicy(LyingLen(max_attempts=4)).max_attempts == 4
    assert o.RetryPolicy().decide(1, now=NOW, details=LyingLen(a=1), u=0.5).action == "retry"


def test_keys_and_values_in_different_orders_do_not_swap_values() -> None:
    doc = Swapped(max_attempts=2, backoff_coefficient=5)
    p = o.RetryPolicy(doc)
    assert (p.max_attempts, p.backoff_coefficient) == (2, 5)
    from ojs_retry.integrations import resolve_policy

    assert resolve_policy(None, doc).max_attempts == 2


def test_validate_job_policy_of_a_dataclass_is_a_typed_error() -> None:
    import dataclasses

    from ojs_retry.integrations import validate_job_policy

    @dataclasses.dataclass
    class Job:
        max_attempts: int = 3

    e = raised(lambda: validate_job_policy(Job()))  # type: ignore[arg-type]
    assert (e.code, e.field) == (POLICY, None)


def test_validate_job_policy_keeps_only_accepted_layers() -> None:
    from ojs_retry.integrations import validate_job_policy

    defaults = {"max_interval": "PT3S"}
    layer = {"initial_interval": "PT1S"}
    # Accepted pairs are kept; the same text comes back each time.
    assert validate_job_policy(layer, defaults) == validate_job_policy(dict(layer), defaults) \
        == '{"initial_interval":"PT1S"}'
    # A refusal is not kept: the second call refuses again, typed, unchained.
    for _ in range(2):
        e = raised(lambda: validate_job_policy({"initial_interval": "PT5S"}, defaults))
        assert (e.code, e.field, e.__context__) == (POLICY, "max_interval", None)
    # The same layer over other defaults is checked over those.
    assert validate_job_policy({"initial_interval": "PT5S"}, {"max_interval": "PT9S"}) is not None
    assert validate_job_policy({"initial_interval": "PT5S"}, o.RetryPolicy()) is not None
    # Values JSON has not are the engine's typed errors, as it reads the mapping.
    for bad in ({"max_attempts": {1, 2}}, {"backoff_coefficient": float("nan")}):
        e = raised(lambda: validate_job_policy(bad, defaults))
        assert (e.code, e.field, e.__context__) == (POLICY, next(iter(bad)), None)


def test_merge_counts_its_layers_before_reading_them() -> None:
    d = {"non_retryable_errors": ["x" * 60_000] * 10}
    assert error_of(lambda: o.RetryPolicy.merge(*[d] * 200)) == (ARG, "layers", "layers")
    assert error_of(lambda: o.RetryPolicy.merge(*[{}] * 17)) == (ARG, "layers", "layers")
    assert o.RetryPolicy.merge(*[{}] * 16).max_attempts == 3
    # One value passed twice counts twice: 2 x ~600 000 is over 1 MiB.
    assert error_of(lambda: o.RetryPolicy.merge(d, d)) == (POLICY, None, None)


class Counting(Mapping[str, Any]):
    """A mapping that counts how many of its pairs were taken."""

    def __init__(self, n: int) -> None:
        self.n, self.taken = n, 0

    def __getitem__(self, key: str) -> Any:
        return 1

    def __iter__(self) -> Iterator[str]:
        return iter(f"k{i}" for i in range(self.n))

    def __len__(self) -> int:
        return self.n

    def items(self) -> Any:
        for i in range(self.n):
            self.taken += 1
            yield (f"k{i}", 1)


def test_an_over_long_mapping_is_refused_without_reading_it_all() -> None:
    m = Counting(1_000_000)
    assert error_of(lambda: o.RetryPolicy().decide(1, now=NOW, details=m))[:2] == (ARG, "details")
    assert m.taken == 10_001


def test_matches_holds_its_arguments_to_the_limits() -> None:
    assert error_of(lambda: o.matches("x" * 65_537, ["a"])) == (ARG, "error_type", "error_type")
    assert error_of(lambda: o.matches("a", ["a"] * 10_001)) == (ARG, "patterns", "patterns")
    assert error_of(lambda: o.matches("a", ["p" * 1_000_000])) == (ARG, "patterns", "patterns[0]")
    assert o.matches("x" * 65_536, ["x" * 65_536])


def test_a_failure_is_one_document_of_at_most_1_mib() -> None:
    # Details just under the budget: the message is where it runs out (the
    # fields are read in name order, as the core keeps an object's keys).
    details = ["d" * 65_536] * 15 + ["e" * 65_000]
    p = o.RetryPolicy()
    assert p.decide(1, now=NOW, u=0.5, details=details).action == "retry"
    assert error_of(lambda: p.decide(1, now=NOW, u=0.5, details=details, message="m" * 500)) == (ARG, "message", "message")


def test_details_nested_64_deep_is_the_limit() -> None:
    def nest(n: int) -> Any:
        x: Any = []
        for _ in range(n):
            x = [x]
        return x

    p = o.RetryPolicy()
    assert p.decide(1, now=NOW, u=0.5, details=nest(63)).action == "retry"
    # Located at the value too deep: 64 levels below details.
    assert error_of(lambda: p.decide(1, now=NOW, u=0.5, details=nest(64))) == (ARG, "details", "details" + "[0]" * 64)


def test_integers_beyond_64_bits_are_refused_not_rounded() -> None:
    p = o.RetryPolicy()
    for n in (2**64, -(2**63) - 1, 2**200):
        assert error_of(lambda: p.decide(1, now=NOW, u=0.5, details={"n": n})) == (ARG, "details", "details.n")
    d = p.decide(1, now=NOW, u=0.5, details={"n": 2**64 - 1, "m": -(2**63)})
    assert d.action == "retry"
    s = o.RetryState()
    s.record_failure(p, now=NOW, u=0.5, details={"n": 2**64 - 1})
    assert s.to_dict()["errors"][0]["details"] == {"n": 2**64 - 1}
