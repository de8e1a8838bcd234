"""``run_transaction``: total on runtime data, and what it writes reads back.

The outcomes themselves are pinned by ``tests/vectors/transaction.json``;
these tests cover what only Python can pass (surrogate-escaped text, engine
objects, pickling) and the round trips of what the engine writes.
"""

from __future__ import annotations

import copy
import json
import pickle

import ojs_retry as o

NOW = 1_770_892_265_000


def test_a_surrogate_escaped_message_and_key_are_recorded() -> None:
    raw = b"caf\xe9 au lait".decode("utf-8", "surrogateescape")
    out = o.run_transaction(1, key=raw, type="io.decode", message=raw, now=NOW)
    assert out.action == "retry"
    assert json.loads(out.state_json)["errors"][0]["message"] == "caf\ufffd au lait"
    assert out.notes == []


def test_engine_objects_are_carried_as_they_are() -> None:
    queue = o.RetryPolicy(max_attempts=4, jitter=False)
    first = o.run_transaction(1, key="j", defaults=queue, now=NOW)
    second = o.run_transaction(2, key="j", defaults=[queue], state=first.state, now=NOW)
    assert (second.action, second.decision.delay_ms) == ("retry", 2000)
    assert second.state.attempt == 2
    assert second.policy == queue


def test_what_the_transaction_writes_pickles_and_copies() -> None:
    state = None
    for attempt in range(1, 12):
        out = o.run_transaction(
            attempt,
            key="job-1",
            defaults={"max_attempts": 20},
            state=state,
            type="net.reset",
            message="\x01" * 70_000,
            details={"status": 503},
            now=NOW,
        )
        state = out.state_json
        assert len(state.encode()) <= 1 << 20
        for again in (pickle.loads(pickle.dumps(out.state)), copy.deepcopy(out.state)):
            assert again.to_json() == out.state_json
        assert o.RetryPolicy(out.policy.to_json()) == out.policy
        assert o.RetryState.from_json(out.state_json).to_json() == out.state_json
    assert [kind for kind, _ in out.notes] == ["message_truncated", "state_budget"]


def test_a_refused_layer_is_a_dead_letter_record() -> None:
    out = o.run_transaction(
        1,
        key="job-2",
        defaults={"max_interval": "PT3S"},
        layer='{"initial_interval": "PT5S"}',
        now=NOW,
        queue="emails",
    )
    assert (out.action, out.decision.reason) == ("dead_letter", "policy_invalid")
    record = json.loads(out.dead_letter or "null")
    assert (record["queue"], record["job_id"], record["reason"]) == ("emails", "job-2", "policy_invalid")
    assert record["notes"][0]["kind"] == "policy_refused"
    assert "validation.retry_policy_invalid" in out.notes[0][1]


def test_counters_out_of_range_are_noted_not_raised() -> None:
    for attempt in (-5, 0, 2**70):
        out = o.run_transaction(attempt, key="j", now=NOW)
        assert out.notes[0][0] == "attempt_out_of_range", out.notes


def test_what_the_queues_own_code_passes_is_checked() -> None:
    """The key, queue name, ``timed_out`` and history limit are the queue's
    configuration, not what the job carried: typed errors naming them, as
    every other call's arguments (the history limit: the state's range)."""
    bad: list[tuple[dict[str, object], str]] = [
        ({"key": 5}, "key"), ({"queue": b"q"}, "queue"), ({"timed_out": 1}, "timed_out"),
        ({"timed_out": "yes"}, "timed_out"), ({"history_limit": 9}, "history_limit"),
        ({"history_limit": 10_001}, "history_limit"), ({"history_limit": -1}, "history_limit"),
        ({"history_limit": "10"}, "history_limit"),
    ]
    for kwargs, field in bad:
        args: dict[str, object] = {"key": "j", "now": NOW, **kwargs}
        try:
            o.run_transaction(1, **args)  # type: ignore[arg-type]
        except o.PolicyError as e:
            assert (e.code, e.field) == ("validation.invalid_argument", field), kwargs
        else:
            raise AssertionError(f"{kwargs} was accepted")
    out = o.run_transaction(1, key="j", queue="q", timed_out=True, history_limit=12, now=NOW)
    assert (out.state.history_limit, out.decision.timed_out) == (12, True)


def test_details_python_cannot_make_json_of_are_dropped() -> None:
    out = o.run_transaction(1, key="j", details={"when": object()}, now=NOW)
    assert [kind for kind, _ in out.notes] == ["details_dropped"]
    assert "details" not in json.loads(out.state_json)["errors"][0]
