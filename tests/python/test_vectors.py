"""Every conformance vector in tests/vectors/*.json, run through the public
Python API of the installed ``ojs_retry`` package.

Files are discovered at collection time, so new vector files are picked up
without touching this runner. A case whose op this runner does not know
fails; nothing is skipped silently (a case restricted to other runtimes by
its ``runtimes`` list must be named in ``NOT_APPLICABLE`` below, and is then
reported as skipped with the reason).
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import Any, Callable

import pytest

import ojs_retry as o

VECTORS_DIR = Path(
    os.environ.get(
        "OJS_VECTORS_DIR", Path(__file__).resolve().parent.parent / "vectors"
    )
)

# Cases whose `runtimes` list excludes Python, by id, with the reason.
_BIGINT = "BigInt is a JavaScript type; Python ints are covered by the number cases"
NOT_APPLICABLE: dict[str, str] = {
    "hostile-bigint-retry-number": _BIGINT,
    "hostile-bigint-attempt": _BIGINT,
    "hostile-bigint-now": _BIGINT,
    "hostile-bigint-in-policy": _BIGINT,
    "hostile-bigint-in-policy-2pow53": _BIGINT,
    "hostile-bigint-in-policy-2pow64": _BIGINT,
    "hostile-bigint-coefficient": _BIGINT,
}


def _load_cases() -> list[tuple[str, str, dict[str, Any]]]:
    files = sorted(VECTORS_DIR.glob("*.json"))
    cases = []
    for f in files:
        doc = json.loads(f.read_text(encoding="utf-8"))
        for case in doc["cases"]:
            cases.append((f.name, case["id"], case))
    return cases


CASES = _load_cases()


def test_vectors_are_there() -> None:
    files = sorted(VECTORS_DIR.glob("*.json"))
    assert len(files) >= 1, f"no vector files in {VECTORS_DIR}"
    ids = [cid for _, cid, _ in CASES]
    assert len(ids) == len(set(ids)), "duplicate case ids"
    assert len(CASES) > 0
    for name in NOT_APPLICABLE:
        assert name in ids, f"NOT_APPLICABLE names an unknown case {name}"


# ------------------------------------------------------------------ compare


def subset(expected: Any, actual: Any, path: str = "expect") -> None:
    """Every key of `expected` is in `actual` and equal (recursively);
    lists compare by length and element-wise; numbers by value; a bool is
    never a number."""
    if isinstance(expected, dict):
        assert isinstance(actual, dict), f"{path}: expected an object, found {actual!r}"
        for k, ev in expected.items():
            assert k in actual, f"{path}.{k}: missing in {actual!r}"
            subset(ev, actual[k], f"{path}.{k}")
    elif isinstance(expected, list):
        assert isinstance(actual, list), f"{path}: expected a list, found {actual!r}"
        assert len(expected) == len(actual), (
            f"{path}: expected {len(expected)} items, found {len(actual)}: {actual!r}"
        )
        for i, (ev, av) in enumerate(zip(expected, actual)):
            subset(ev, av, f"{path}[{i}]")
    elif isinstance(expected, bool) or expected is None or isinstance(expected, str):
        assert type(actual) is type(expected) and actual == expected, (
            f"{path}: expected {expected!r}, found {actual!r}"
        )
    elif isinstance(expected, (int, float)):
        assert isinstance(actual, (int, float)) and not isinstance(actual, bool), (
            f"{path}: expected the number {expected!r}, found {actual!r}"
        )
        assert not (isinstance(actual, float) and math.isnan(actual)), f"{path}: NaN"
        assert actual == expected, f"{path}: expected {expected!r}, found {actual!r}"
    else:  # pragma: no cover - the vectors are JSON
        raise AssertionError(f"{path}: unexpected expectation {expected!r}")


# ------------------------------------------------------------------ inputs


_SPECIAL = {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf, "-0": -0.0}


def expand(v: Any) -> Any:
    """The vector input with the hostile-input encodings (README
    "Hostile-input encodings") turned into the Python values they denote."""
    if isinstance(v, list):
        return [expand(x) for x in v]
    if not isinstance(v, dict):
        return v
    if "$special" in v:
        return _SPECIAL[v["$special"]]
    if "$repeat" in v:
        return v["$repeat"] * v["times"]
    if "$array" in v:
        return [expand(v["$array"]) for _ in range(v["times"])]
    if "$keys" in v:
        value = expand(v["value"])
        return {f"k{i:07d}": value for i in reversed(range(v["$keys"]))}
    if "$concat" in v:
        parts = [expand(p) for p in v["$concat"]]
        assert all(isinstance(p, str) for p in parts), "$concat parts are strings"
        return "".join(parts)
    if "$bytes" in v:
        return bytes.fromhex(v["$bytes"])
    if "$lone_surrogate" in v:
        return chr(int(v["$lone_surrogate"], 16))
    if "$nest" in v:
        out: Any = []
        for _ in range(v["$nest"]):
            out = {"a": out} if v.get("kind") == "object" else [out]
        return out
    if "$object" in v:
        return {expand(k): expand(x) for k, x in v["$object"]}
    unknown = [k for k in v if k.startswith("$")]
    if unknown:
        raise AssertionError(f"the Python runner cannot express {unknown}")
    return {k: expand(x) for k, x in v.items()}


def still_answers() -> None:
    """A good call after every case: the module still answers correctly."""
    p = o.RetryPolicy({"jitter": False})
    assert p.delay(3, u=0.0) == 4000, "a good call after this case answered wrongly"
    assert o.parse_duration("PT1.5S") == 1500


def jitter(j: dict[str, Any] | None, *, absent: str = "u0") -> dict[str, Any]:
    """Keyword arguments for a vector's jitter source. `absent="none"`
    passes no source (schedule: bounds only)."""
    if j is None:
        return {} if absent == "none" else {"u": 0.0}
    if "u" in j:
        return {"u": j["u"]}
    if "seed" in j:
        return {"seed": int(j["seed"])}
    if "key" in j:
        return {"key": j["key"]}
    if "none" in j:
        return {"u": 0.0}
    raise AssertionError(f"unknown jitter source {j!r}")


def make_policy(inp: dict[str, Any]) -> o.RetryPolicy:
    p = inp.get("policy")
    if isinstance(p, dict):
        return o.RetryPolicy(p)
    # Not a mapping (or absent): merge() hands it to the core as a layer.
    return o.RetryPolicy.merge(p)


def decision_dict(d: o.Decision) -> dict[str, Any]:
    out = d.to_dict()
    # The attributes and to_dict() agree.
    for k, v in out.items():
        assert getattr(d, k) == v, k
    return out


class StateError(Exception):
    def __init__(self, err: o.PolicyError, event: int | None, partial: Any):
        super().__init__(str(err))
        self.err, self.event, self.partial = err, event, partial


# ------------------------------------------------------------------ ops


def op_parse_duration(i: dict[str, Any]) -> Any:
    return {"ms": o.parse_duration(i["text"])}


def op_format_duration(i: dict[str, Any]) -> Any:
    return {"text": o.format_duration(i["ms"])}


def op_parse_timestamp(i: dict[str, Any]) -> Any:
    return {"ms": o.parse_timestamp(i["text"])}


def op_format_timestamp(i: dict[str, Any]) -> Any:
    return {"text": o.format_timestamp(i["ms"])}


def op_policy(i: dict[str, Any]) -> Any:
    layers = i["layers"] if "layers" in i else i["json"]
    p = o.RetryPolicy.merge(*layers)
    # One dict / one text: the constructor and from_json agree with merge().
    if len(layers) == 1 and isinstance(layers[0], (dict, str)):
        assert o.RetryPolicy(layers[0]) == p
        if "json" in i:
            assert o.RetryPolicy.from_json(layers[0]) == p
    # The canonical JSON round-trips: a policy whose JSON would pass the
    # document limit is refused when it is built.
    assert o.RetryPolicy.from_json(p.to_json()) == p
    return {"policy": p.to_dict(), "canonical_json": p.to_json()}


def op_delay(i: dict[str, Any]) -> Any:
    p = make_policy(i)
    return {"delay_ms": p.delay(i["retry_number"], **jitter(i.get("jitter")))}


def op_schedule(i: dict[str, Any]) -> Any:
    p = make_policy(i)
    rows = p.schedule(i["count"], **jitter(i.get("jitter"), absent="none"))
    out = []
    for r in rows:
        d = r.to_dict()
        for k, v in d.items():
            assert getattr(r, k) == v, k
        out.append(d)
    return {"rows": out}


def op_decide(i: dict[str, Any]) -> Any:
    p = make_policy(i)
    f = i["failure"]
    # Every field of the failure, as decide's keywords.
    fields = {k: v for k, v in f.items() if k != "attempt"}
    d = p.decide(f["attempt"], now=i["now"], **fields, **jitter(i.get("jitter")))
    return {"decision": decision_dict(d)}


def op_matches(i: dict[str, Any]) -> Any:
    m = o.first_match(i["error_type"], i["patterns"])
    assert o.matches(i["error_type"], i["patterns"]) == (m is not None)
    return {"matches": m is not None, "pattern": m}


def op_jitter_sample(i: dict[str, Any]) -> Any:
    return {"bits": o.jitter_sample(i["retry_number"], **jitter(i.get("jitter")))}


def op_state(i: dict[str, Any]) -> Any:
    try:
        p = make_policy(i)
        limit = i.get("history_limit", 10)
        if "initial" in i:
            s = o.RetryState.from_json(i["initial"], limit)
            # The text form gives the same state.
            assert o.RetryState.from_json(json.dumps(i["initial"]), limit).to_json() == s.to_json()
        else:
            s = o.RetryState(limit)
    except o.PolicyError as e:
        raise StateError(e, None, None) from e
    decisions = []
    for n, ev in enumerate(i["events"]):
        kw = jitter(ev.get("jitter"))
        try:
            if "fail" in ev:
                # The failure's keys are record_failure's keywords (those of
                # decide); its attempt is the state's next one.
                d = s.record_failure(p, now=ev["now"], **kw, **ev["fail"])
            elif "timeout" in ev:
                d = s.record_failure(p, timed_out=True, now=ev["now"], **kw)
            else:
                raise AssertionError(f"unknown state event {ev!r}")
        except o.PolicyError as e:
            raise StateError(e, n, {"decisions": decisions}) from e
        decisions.append(decision_dict(d))
    state = s.to_dict()
    assert state == json.loads(s.to_json())
    # The getters agree with the document (instants as epoch ms there).
    assert [e["attempt"] for e in state["errors"]] == [e["attempt"] for e in s.errors]
    assert [o.parse_timestamp(e["timestamp"]) for e in state["errors"]] == [e["timestamp_ms"] for e in s.errors]
    assert state["attempt"] == s.attempt and s.next_attempt == s.attempt + 1
    assert state["terminal"] == s.terminal
    nra = state.get("next_retry_at")
    assert (None if nra is None else o.parse_timestamp(nra)) == s.next_retry_at
    return {"decisions": decisions, "state": state}


def op_reservation(i: dict[str, Any]) -> Any:
    r = o.Reservation(i["attempt"], i["visibility_timeout_ms"], now=i["now"])
    results: list[Any] = []
    for ev in i["events"]:
        if "heartbeat" in ev:
            status, deadline = r.heartbeat(ev["heartbeat"])
            if status == "extended":
                assert deadline == r.deadline
                results.append({"extended": deadline})
            else:
                assert status == "expired" and deadline is None
                results.append("expired")
        elif "is_expired" in ev:
            results.append(r.is_expired(ev["is_expired"]))
        elif "expiry" in ev:
            results.append(r.expiry(ev["expiry"]))
        else:
            raise AssertionError(f"unknown reservation event {ev!r}")
    return {"results": results, "deadline": r.deadline}


def op_preset(i: dict[str, Any]) -> Any:
    p = o.RetryPolicy.preset(i["system"], i["config"])
    doc = p.to_dict()
    q = o.RetryPolicy(doc)
    out: dict[str, Any] = {"policy": doc, "round_trip": q == p and q.to_json() == p.to_json()}
    u = i.get("u", 0.0)
    if "retry_numbers" in i:
        out["delays"] = [q.delay(n, u=u) for n in i["retry_numbers"]]
    if "failures" in i:
        out["decisions"] = [
            decision_dict(
                q.decide(
                    f["attempt"],
                    type=f.get("type"),
                    ancestors=f.get("ancestors"),
                    code=f.get("code"),
                    timed_out=f.get("timed_out"),
                    now=0,
                    u=u,
                )
            )
            for f in i["failures"]
        ]
    return out


def op_transaction(i: dict[str, Any]) -> Any:
    f = i["failure"]
    out = o.run_transaction(
        i["attempt"],
        key=i["key"],
        defaults=list(i["defaults"]),
        layer=i.get("layer_json", i.get("layer")),
        state=i.get("state_json", i.get("state")),
        type=f.get("type"),
        ancestors=f.get("ancestors"),
        code=f.get("code"),
        timed_out=f.get("timed_out", False),
        message=f.get("message"),
        details=f.get("details"),
        now=i["now"],
        history_limit=i.get("history_limit", 10),
        queue=i.get("queue", ""),
        job=i.get("job"),
    )
    # What the transaction writes, it reads back.
    assert o.RetryState.from_json(out.state_json, i.get("history_limit", 10)).to_json() == out.state_json
    return {
        "decision": decision_dict(out.decision),
        "state": json.loads(out.state_json),
        "notes": [kind for kind, _ in out.notes],
        "dead_letter": None if out.dead_letter is None else json.loads(out.dead_letter),
    }


OPS: dict[str, Callable[[dict[str, Any]], Any]] = {
    "transaction": op_transaction,
    "preset": op_preset,
    "parse_duration": op_parse_duration,
    "format_duration": op_format_duration,
    "parse_timestamp": op_parse_timestamp,
    "format_timestamp": op_format_timestamp,
    "policy": op_policy,
    "delay": op_delay,
    "schedule": op_schedule,
    "decide": op_decide,
    "matches": op_matches,
    "jitter_sample": op_jitter_sample,
    "state": op_state,
    "reservation": op_reservation,
}


def check_error(err: o.PolicyError, want: dict[str, Any]) -> None:
    assert isinstance(err, ValueError)
    assert err.code == want["code"], f"expected code {want['code']}, found {err.code} ({err})"
    assert err.field == want["field"], f"expected field {want['field']!r}, found {err.field!r} ({err})"
    path = want.get("path", want["field"])
    assert err.path == path, f"expected path {path!r}, found {err.path!r} ({err})"
    assert isinstance(err.faults, list) and err.faults, err
    first = err.faults[0]
    assert (first["field"], first["path"]) == (err.field, err.path)
    if "paths" in want:
        got = [f["path"] for f in err.faults]
        assert got == want["paths"], f"expected paths {want['paths']}, found {got} ({err})"
    for f in err.faults:
        assert set(f) == {"field", "path", "message"}, f
        assert isinstance(f["message"], str) and f["message"], "empty fault message"
        # The field is the path's first segment.
        if f["path"] is None:
            assert f["field"] is None, f
        else:
            assert f["path"].startswith(f["field"]), f
    assert str(err), "empty error message"
    assert err.code in o.ERROR_CODES


@pytest.mark.parametrize(
    "case", [c for _, _, c in CASES], ids=[f"{f}::{cid}" for f, cid, _ in CASES]
)
def test_vector(case: dict[str, Any]) -> None:
    cid = case["id"]
    runtimes = case.get("runtimes")
    if runtimes is not None and "python" not in runtimes:
        if cid not in NOT_APPLICABLE:
            pytest.fail(
                f"{cid} is restricted to {runtimes}; list it in NOT_APPLICABLE with a reason"
            )
        pytest.skip(f"NOT APPLICABLE to Python: {cid}: {NOT_APPLICABLE[cid]}")
    op = case["op"]
    if op not in OPS:
        pytest.fail(f"unknown op {op!r} in case {cid}: this runner must learn it")
    has_expect, has_error = "expect" in case, "error" in case
    assert has_expect != has_error, "a case needs exactly one of expect / error"
    fn = OPS[op]
    try:
        run_case(case, fn, expand(case["input"]))
    finally:
        still_answers()


def run_case(case: dict[str, Any], fn: Callable[[dict[str, Any]], Any], inp: dict[str, Any]) -> None:
    if "expect" in case:
        subset(expand(case["expect"]), fn(inp))
        return
    want = case["error"]
    try:
        actual = fn(inp)
    except StateError as se:
        check_error(se.err, want)
        if "event" in want:
            assert se.event == want["event"], f"expected the error at event {want['event']}, found {se.event}"
        if "expect_before_error" in case:
            subset(case["expect_before_error"], se.partial, "expect_before_error")
        return
    except o.PolicyError as e:
        check_error(e, want)
        assert "event" not in want
        return
    pytest.fail(f"expected error {want}, got {actual!r}")
