"""Python benchmarks of ojs-retry against its floor and the peers,
all in one process so that ratios compare figures measured under the same
conditions. Run by scripts/bench inside its own virtualenv (the peers are
installed there, never into the package); prints one JSON document:

    {"suite": "python", "env": {...}, "results": [{group, name, ns, note?}]}

``ns`` is the median, over repeats, of the time per call measured with
``timeit`` (each repeat runs the call enough times to last ~20 ms). Timings
are information only: nothing asserts them.

    python bench/python/bench.py [--quick] [--only REGEX]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import random
import re
import statistics
import sys
import timeit
from pathlib import Path
from typing import Annotated, Any, Literal

ROOT = Path(__file__).resolve().parents[2]
POLICY_TEXT = (ROOT / "examples" / "12.3-aggressive-dead-letter.json").read_text()
SCHEMA = json.loads((ROOT / "bench" / "schema" / "retry-policy.schema.json").read_text())

# The §12.3 curve, as in the Rust and Node benchmarks.
I_MS, C, CAP_MS = 15_000, 4.0, 3_600_000
N = 7  # a retry number past the cap (the cost does not depend on it)
KEY = "job-8f3a"  # a queue's job id, the jitter key
NOW = 1_770_892_265_000


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="a few short repeats (smoke run)")
    ap.add_argument("--only", default="", help="regex on 'group name'")
    args = ap.parse_args()
    # Samples are taken in rounds that visit every benchmark in turn, so
    # that a change in the machine's load touches a subject and its
    # baseline alike; `ns` is the median of all samples.
    rounds, repeats, target_s = (1, 3, 0.002) if args.quick else (7, 3, 0.02)
    only = re.compile(args.only)
    ns_: dict[str, Any] = {}
    benches: list[dict[str, Any]] = []

    def bench(group: str, name: str, stmt: str, note: str = "") -> None:
        """Registers `stmt` (a statement, so no lambda frame is measured),
        run with the names in `ns_`."""
        if not only.search(f"{group} {name}"):
            return
        exec(stmt, ns_)  # fail loudly before timing
        benches.append({"group": group, "name": name, "stmt": stmt, "note": note, "times": []})

    def run() -> list[dict[str, Any]]:
        for b in benches:
            t = timeit.Timer(b["stmt"], globals=ns_)
            number = 1
            while t.timeit(number) < target_s / 4:
                number *= 4
            b["timer"] = t
            b["number"] = max(1, int(number * target_s / max(t.timeit(number), 1e-9)))
        for _ in range(rounds):
            for b in benches:
                b["times"] += [x / b["number"] * 1e9 for x in b["timer"].repeat(repeat=repeats, number=b["number"])]
        out = []
        for b in benches:
            ns = statistics.median(b["times"])
            print(f"python {b['group']:<8} {b['name']:<62} {ns:9.1f} ns", file=sys.stderr)
            row: dict[str, Any] = {"group": b["group"], "name": b["name"], "ns": ns}
            if b["note"]:
                row["note"] = b["note"]
            out.append(row)
        return out

    import ojs_retry
    import ojs_retry_bench_floor as floor

    # Each call of the binding is measured next to the same call, with the
    # same arguments, on the floor: a plain pyo3 class whose #[pymethods]
    # have the same signatures and do nothing (bench/pyfloor).
    policy = ojs_retry.RetryPolicy(POLICY_TEXT)
    fl = floor.Floor()
    ns_.update(policy=policy, fl=fl, N=N, KEY=KEY, now=NOW, TEXT=POLICY_TEXT)
    ns_.update(RetryPolicy=ojs_retry.RetryPolicy, Floor=floor.Floor)
    calls = [
        ("delay", "delay(n, key=job_id)", "delay(N, key=KEY)"),
        ("delay", "delay(n, seed=42)", "delay(N, seed=42)"),
        ("delay", "delay(n, u=0.5)", "delay(N, u=0.5)"),
        ("delay", "delay(n), OS entropy", "delay(N)"),
        ("decide", "decide(3, type=..., now=..., key=job_id)", "decide(3, type='external.timeout', now=now, key=KEY)"),
        ("decide", "decide(3, type=..., now=..., seed=42)", "decide(3, type='external.timeout', now=now, seed=42)"),
    ]
    for group, label, call in calls:
        bench(group, f"ojs_retry policy.{label}", f"policy.{call}")
        bench("floor", f"pyo3 no-op Floor().{label}", f"fl.{call}")
    # The same decide without the failure's type: what reading the
    # failure's keywords (through pythonize) costs, by difference.
    bench("decide", "ojs_retry policy.decide(3, now=..., key=job_id), no type", "policy.decide(3, now=now, key=KEY)")
    bench("parse", "ojs_retry RetryPolicy(json_text)", "RetryPolicy(TEXT)")
    bench("floor", "pyo3 no-op Floor(json_text)", "Floor(TEXT)")
    bench("parse", "ojs_retry RetryPolicy.from_json(json_text)", "RetryPolicy.from_json(TEXT)")
    bench("floor", "pyo3 no-op Floor.from_json(json_text)", "Floor.from_json(TEXT)")
    # CPython's own C call, for scale.
    ns_.update(ldexp=math.ldexp)
    bench("floor", "math.ldexp(0.5, 3)", "ldexp(0.5, 3)")

    # -- delay(n): what a user writes instead, and the peers.
    ns_.update(rnd=random.random, I=I_MS, C=C, CAP=CAP_MS)
    bench("delay", "pure Python formula (tuned)", "int(min(I * C ** (N - 1), CAP) * (0.5 + rnd()))")

    import tenacity

    # tenacity's exponential wait with jitter: min(multiplier · base^(n−1) +
    # uniform(0, jitter), max), in seconds (additive jitter).
    wait = tenacity.wait_exponential_jitter(multiplier=15, max=3600, exp_base=4, jitter=15)
    state = tenacity.RetryCallState(retry_object=None, fn=None, args=(), kwargs={})  # type: ignore[arg-type]
    state.attempt_number = N
    ns_.update(wait=wait, state=state)
    bench("delay", "tenacity wait_exponential_jitter", "wait(state)", "seconds, additive jitter")

    from celery.utils.time import get_exponential_backoff_interval

    ns_.update(celery_backoff=get_exponential_backoff_interval)
    bench(
        "delay",
        "Celery get_exponential_backoff_interval",
        "celery_backoff(15, N - 1, 3600, True)",
        "seconds, base 2, full jitter",
    )

    # -- parse + merge + validate the §12.3 document: the peers.
    ns_.update(loads=json.loads)
    bench("parse", "json.loads only", "loads(TEXT)")

    import jsonschema

    validator = jsonschema.Draft202012Validator(SCHEMA)
    assert validator.is_valid(json.loads(POLICY_TEXT))
    ns_.update(validator=validator)
    bench("parse", "json.loads + jsonschema (prebuilt validator)", "validator.is_valid(loads(TEXT))")

    from pydantic import BaseModel, ConfigDict, Field

    duration = SCHEMA["properties"]["initial_interval"]["pattern"]

    class Policy(BaseModel):
        # The §14 schema as a model; the duration pattern has look-arounds,
        # which only Python's `re` supports.
        model_config = ConfigDict(extra="forbid", regex_engine="python-re")
        max_attempts: int = Field(3, ge=0)
        initial_interval: str = Field("PT1S", pattern=duration)
        backoff_coefficient: float = Field(2.0, ge=1.0)
        max_interval: str = Field("PT5M", pattern=duration)
        jitter: bool = True
        non_retryable_errors: list[Annotated[str, Field(min_length=1)]] = []
        on_exhaustion: Literal["discard", "dead_letter"] = "discard"

    Policy.model_validate_json(POLICY_TEXT)
    ns_.update(Policy=Policy)
    bench("parse", "pydantic v2 model_validate_json", "Policy.model_validate_json(TEXT)")

    env = {
        "python": platform.python_version(),
        "implementation": platform.python_implementation(),
        "ojs_retry": ojs_retry.__version__ if hasattr(ojs_retry, "__version__") else "",
        "tenacity": _version("tenacity"),
        "celery": _version("celery"),
        "jsonschema": _version("jsonschema"),
        "pydantic": _version("pydantic"),
        "cores": os.cpu_count(),
    }
    json.dump({"suite": "python", "env": env, "results": run()}, sys.stdout, indent=2)
    sys.stdout.write("\n")


def _version(dist: str) -> str:
    from importlib.metadata import version

    return version(dist)


if __name__ == "__main__":
    main()
