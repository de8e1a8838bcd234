"""One call at every documented limit (README "Limits on input") through
the Python binding, timed (best of three): `python bench/python/limits.py`
with the wheel installed. The figures are in bench/RESULTS.md."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import ojs_retry as o

MIB, KIB64 = 1 << 20, 1 << 16


def row(name: str, f: Callable[[], Any]) -> None:
    best = float("inf")
    for _ in range(3):
        t = time.perf_counter()
        try:
            f()
        except o.PolicyError:
            pass
        best = min(best, time.perf_counter() - t)
    print(f"| {name} | {best * 1e3:.1f} ms |")


def main() -> None:
    big = "x" * KIB64
    last = MIB - (1 + 20 + 1 + 16 + 15 * KIB64)
    doc = {"non_retryable_errors": [big] * 15 + ["y" * last]}
    many = {"non_retryable_errors": ["a.*"] * 10_000}
    print("| call at the limit (Python) | time |\n|---|---|")
    row("RetryPolicy(1 MiB dict: 16 × 64 KiB patterns)", lambda: o.RetryPolicy(doc))
    row("RetryPolicy(10 000 patterns)", lambda: o.RetryPolicy(many))
    row("merge(16 × the same 10 000-pattern dict)", lambda: o.RetryPolicy.merge(*[many] * 16))
    row("merge(200 × the same 1 MiB dict): refused at layers", lambda: o.RetryPolicy.merge(*[doc] * 200))
    row("merge(16 × the same 1 MiB dict): refused after the second", lambda: o.RetryPolicy.merge(*[doc] * 16))
    p = o.RetryPolicy(many)
    row("decide: 64 KiB type against 10 000 patterns", lambda: p.decide(1, now=0, u=0.5, type=big))
    row("decide: ~1 MiB of details", lambda: p.decide(1, now=0, u=0.5, details=[big] * 15))
    row("matches: 64 KiB type, 10 000 patterns", lambda: o.matches(big, [f"p{i}.*" for i in range(10_000)]))
    row("matches: 10 000 × the same 64 KiB pattern: refused (1 MiB)", lambda: o.matches(big, [big] * 10_000))
    row("schedule(10 000) keyed by a 64 KiB key", lambda: o.RetryPolicy().schedule(10_000, key=big))
    errors = [{"attempt": n, "type": "a.b", "message": "m", "code": "RETRY", "timestamp": "2026-02-12T10:00:00Z"}
              for n in range(1, 10_001)]
    row("RetryState.from_json(10 000-record history)", lambda: o.RetryState.from_json({"attempt": 10_000, "errors": errors}))

    class Endless(dict):  # type: ignore[type-arg]
        def items(self) -> Any:
            i = 0
            while True:
                i += 1
                yield (f"k{i}", 1)

    row("decide: details an endless mapping (10 001 pairs taken)", lambda: p.decide(1, now=0, u=0.5, details=Endless()))


if __name__ == "__main__":
    main()
