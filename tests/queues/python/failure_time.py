"""The shared failure-time cases (``tests/queues/bullmq-failure-time.json``)
for the Python queue tests: the cases, and the hostile-input encodings of
``tests/vectors/README.md`` they use. Imports no queue package."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

CASES: list[dict[str, Any]] = json.loads(
    (Path(__file__).resolve().parent.parent / "bullmq-failure-time.json").read_text("utf-8"))["cases"]


def expand(v: Any) -> Any:
    """An encoded string as the text it denotes."""
    if v is None or isinstance(v, str):
        return v
    if "$repeat" in v:
        return v["$repeat"] * v["times"]
    if "$lone_surrogate" in v:
        return chr(int(v["$lone_surrogate"], 16))
    if "$concat" in v:
        return "".join(expand(p) for p in v["$concat"])
    raise ValueError(f"unknown encoding {v!r}")


def well_formed(text: str) -> str:
    """The text with each lone surrogate as U+FFFD (what the engine records)."""
    return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")
