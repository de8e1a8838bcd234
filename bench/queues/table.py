"""One table from the queue benchmarks' JSON documents (bench/queues/run.sh).

    python bench/queues/table.py DIR LOAD_START LOAD_END

Reads DIR/<queue>.json for every queue (a missing or unreadable one is "not
measured"), prints a Markdown table and writes it to DIR/results.md. The
targets (issues 17 and 25): retry path engine / native >= 0.95, enqueue-time
validation / the queue's own enqueue <= 0.05. Beside them, the floor: the
integration with its failure transaction a no-op (floor / native, and
engine / floor: what the engine itself costs).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

QUEUES = ["bullmq-node", "bullmq-python", "celery", "rq", "dramatiq", "chasquimq"]
RETRY_TARGET = 0.95
VALIDATE_TARGET = 0.05


def _load(path: Path) -> dict[str, Any] | None:
    try:
        doc: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return doc


def _rates(xs: list[float]) -> str:
    return " / ".join(f"{x:.0f}" for x in xs)


def _opt(retry: dict[str, Any], key: str) -> str:
    return f"{retry[key]:.2f}" if key in retry else ""


def _row(queue: str, doc: dict[str, Any] | None) -> str:
    if doc is None:
        return f"| {queue} | not measured | | | | | | | | | | |"
    retry, enq = doc["retry_path"], doc["enqueue"]
    ratio, val = retry["ratio"], enq["validate_over_add"]
    extra = f" (untracked {retry['ratio_untracked']:.2f})" if "ratio_untracked" in retry else ""
    floor = _rates(retry.get("floor_jobs_per_s", []))
    whole = enq.get("wrapped_over_add")
    if whole is None and "add_job_over_add" in enq:
        whole = enq["add_job_over_add"] - 1
    whole_txt = "" if whole is None else f"{whole:+.1%}"
    return (f"| {queue} | {retry['jobs']} | {_rates(retry['native_jobs_per_s'])} | "
            f"{_rates(retry['engine_jobs_per_s'])} | {floor} | "
            f"{ratio:.2f}{extra} {'yes' if ratio >= RETRY_TARGET else 'no'} | "
            f"{_opt(retry, 'floor_ratio')} | {_opt(retry, 'engine_over_floor')} | "
            f"{enq['add_us']:.0f} | {enq['validate_us']:.1f} | "
            f"{val:.1%} {'yes' if val <= VALIDATE_TARGET else 'no'} | {whole_txt} |")


def main() -> None:
    out, load_start, load_end = Path(sys.argv[1]), sys.argv[2], sys.argv[3]
    lines = [
        f"Queue integrations, same Redis, same run (load average at start {load_start}, at end {load_end}).",
        "",
        "| queue | jobs | native jobs/s (rounds) | engine jobs/s (rounds) | floor jobs/s (rounds) "
        f"| engine / native (≥ {RETRY_TARGET}) | floor / native | engine / floor "
        f"| enqueue µs | validation µs | validation / enqueue (≤ {VALIDATE_TARGET:.0%}) "
        "| integration's enqueue, extra |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    lines += [_row(q, _load(out / f"{q}.json")) for q in QUEUES]
    text = "\n".join(lines) + "\n"
    (out / "results.md").write_text(text, encoding="utf-8")
    sys.stdout.write(text)


if __name__ == "__main__":
    main()
