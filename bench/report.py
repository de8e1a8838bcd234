"""Joins the suites' raw figures into one table: scripts/bench runs it.

    python3 bench/report.py OUT_DIR

Reads OUT_DIR/{node,python,wasm}.json and criterion's estimates under
target/criterion, writes OUT_DIR/results.json and OUT_DIR/results.md, and
prints the Markdown. Every ratio divides two medians measured in the same
run. Standard library only (runs under the system python3).
"""

from __future__ import annotations

import json
import platform
import subprocess
import sys
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
KIB = 1024


def rust_results() -> list[dict[str, Any]]:
    """Criterion medians; the delay group computes 25 delays per iteration."""
    out = []
    base = ROOT / "target" / "criterion"
    for est in sorted(base.glob("*/*/new/estimates.json")):
        group, name = est.parts[-4], est.parts[-3]
        ns = json.loads(est.read_text())["median"]["point_estimate"]
        per = 25 if group == "delay_1_to_25" else 1
        out.append({"group": group, "name": name, "ns": ns / per})
    return out


def load(out_dir: Path, suite: str) -> dict[str, Any]:
    path = out_dir / f"{suite}.json"
    if not path.exists():
        sys.exit(f"report: {path} is missing (did that suite run?)")
    return json.loads(path.read_text())


def main() -> None:
    out_dir = Path(sys.argv[1])
    figures: dict[str, dict[str, float]] = {"rust": {}, "python": {}, "node": {}}
    for r in rust_results():
        figures["rust"][f"{r['group']}/{r['name']}"] = r["ns"]
    envs = {}
    for suite in ("python", "node"):
        doc = load(out_dir, suite)
        envs[suite] = doc["env"]
        for r in doc["results"]:
            figures[suite][r["name"]] = r["ns"]
    sizes = load(out_dir, "wasm")

    def ns(suite: str, name: str) -> float:
        try:
            return figures[suite][name]
        except KeyError:
            sys.exit(f"report: no figure for {suite} / {name}")

    rows: list[dict[str, Any]] = []

    def ratio(suite: str, subject: str, baseline: str, target: str, limit: float | None, faster: bool = False) -> None:
        """`subject / baseline` (or `baseline / subject` when `faster`: how
        many times faster the subject is), checked against `limit`."""
        s, b = ns(suite, subject), ns(suite, baseline)
        r = b / s if faster else s / b
        met = None if limit is None else (r >= limit if faster else r <= limit)
        rows.append({"suite": suite, "subject": subject, "ns": s, "baseline": baseline, "baseline_ns": b,
                     "ratio": r, "ratio_kind": "× faster" if faster else "× baseline", "target": target, "met": met})

    def absolute(suite: str, subject: str, target: str, limit_ns: float) -> None:
        s = ns(suite, subject)
        rows.append({"suite": suite, "subject": subject, "ns": s, "baseline": None, "baseline_ns": None,
                     "ratio": None, "ratio_kind": None, "target": target, "met": s <= limit_ns})

    # Rust (per delay; the engine's delay(n) with its own seeded RNG is the
    # like-for-like comparison with a formula that uses a fast RNG).
    hw = "delay_1_to_25/hand_written"
    ratio("rust", "delay_1_to_25/ojs_retry_seed", hw, "≤ 2× hand-written", 2.0)
    ratio("rust", "delay_1_to_25/ojs_retry_u", hw, "(info: caller's u, validated)", None)
    ratio("rust", "delay_1_to_25/ojs_retry_key", hw, "(info: keyed, hashes the key)", None)
    ratio("rust", "delay_1_to_25/ojs_retry_seed", "delay_1_to_25/backon", "≥ 20× faster than backon", 20.0, faster=True)
    ratio("rust", "delay_1_to_25/ojs_retry_seed", "delay_1_to_25/backoff", "≥ 20× faster than backoff", 20.0, faster=True)
    absolute("rust", "decide/ojs_retry_retry", "≤ 50 ns", 50)
    absolute("rust", "decide/ojs_retry_non_retryable", "≤ 50 ns", 50)
    absolute("rust", "parse_12_3/ojs_retry_from_json", "≤ 1 µs", 1000)

    # Python.
    d = "ojs_retry policy.delay(n, u=0.5)"
    ratio("python", d, "pyo3 no-op method Floor().delay(n, u=0.5)", "≤ 1.3× a no-op pyo3 call of the same signature", 1.3)
    ratio("python", d, "pyo3 no-op method Floor4().delay(n, u=0.5), 4 methods",
          "(info: vs the same no-op in a class of 4 methods: pyo3's parser shared, not inlined)", None)
    ratio("python", "ojs_retry policy.delay(n), OS entropy", "pyo3 no-op method Floor().delay(n)",
          "≤ 1.3× a no-op pyo3 call of the same signature", 1.3)
    ratio("python", d, "pyo3 no-op function noop()", "(info: vs a bare no-op function)", None)
    ratio("python", d, "math.ldexp(0.5, 3)", "(info: vs CPython's own C call)", None)
    ratio("python", d, "tenacity wait_exponential + wait_random", "≥ 15× faster than tenacity", 15.0, faster=True)
    ratio("python", d, "pure Python formula (tuned)", "(info)", None, faster=True)
    ratio("python", d, "Celery get_exponential_backoff_interval", "(info)", None, faster=True)
    p = "ojs_retry RetryPolicy(json_text)"
    ratio("python", p, "json.loads + jsonschema (prebuilt validator)", "≥ 50× faster than jsonschema", 50.0, faster=True)
    ratio("python", p, "pydantic v2 model_validate_json", "≥ 5× faster than pydantic", 5.0, faster=True)
    absolute("python", "ojs_retry policy.decide(3, error_type=..., now=..., seed=...)", "(info)", float("inf"))

    # Node.
    # `delay(n)` read two ways, each against the floor the issue names: the
    # call with no jitter argument (the sample drawn from the host's
    # entropy inside the call) and the call with the caller's sample.
    ratio("node", "wasm delay(n), the host's entropy", "raw wasm no-op export", "≤ 3× a raw wasm no-op", 3.0)
    ratio("node", "wasm delay(n, u)", "raw wasm no-op export",
          "≤ 3× a raw wasm no-op (u = the caller's Math.random(), which the no-op does not pay)", 3.0)
    ratio("node", "wasm delay(n, u)", "raw wasm (f64, f64) -> f64 export", "(info: vs an export of the same shape)", None)
    ratio("node", "native delay(n, u)", "native no-op function (h, n, u) -> number", "≤ 1.3× a native (napi-rs) no-op of the same shape", 1.3)
    ratio("node", "native delay(n), the host's entropy", "native no-op function (h, n) -> number",
          "≤ 1.3× a native (napi-rs) no-op of the same shape", 1.3)
    ratio("node", "native delay(n, u)", "raw Node-API no-op function (h, n, u) -> number",
          "(info: vs the same no-op registered with Node-API directly, as the delay calls are)", None)
    ratio("node", "native delay(n), the host's entropy", "raw Node-API no-op function (h, n) -> number",
          "(info: vs the same no-op registered with Node-API directly, as the delay calls are)", None)
    ratio("node", "native delay(n, u)", "native no-op method (n, u) -> number", "(info: vs a no-op class method, the shape before policies became handles)", None)
    ratio("node", "native delay(n, u)", "native no-op function", "(info: vs a bare no-op function)", None)
    for label in ("native", "wasm"):
        ratio("node", f"{label} delay(n, {{ u }})", f"{label} delay(n, u)", "(info: options object)", None)
        ratio("node", f"{label} new RetryPolicy(text)", "JSON.parse + ajv (compiled once)", "faster than JSON.parse + ajv", 1.0, faster=True)
    ratio("node", "native new RetryPolicy(text)", "native no-op class: new Floor()", "(info: vs constructing any napi-rs class instance, which a policy no longer is)", None)
    ratio("node", "native delays(Array(25), { seed }), per delay", "native 25 × delay(n, { seed }), per delay",
          "batch of 25 ≥ 5× cheaper per delay", 5.0, faster=True)
    ratio("node", "native delay(n, u)", "pure JS formula", "(info)", None)
    ratio("node", "native delay(n, u)", "BullMQ Backoffs.calculate", "(info)", None, faster=True)
    for label in ("native", "wasm"):
        absolute("node", f"{label} decide(failure, {{ now, jitter: {{ seed }} }})", "(info)", float("inf"))

    size_rows = [
        {"what": "raw (after wasm-bindgen)", "bytes": sizes["raw"], "target": None},
        {"what": "after wasm-opt -Oz", "bytes": sizes["opt"], "target": 120 * KIB},
        {"what": "gzipped (-9)", "bytes": sizes["gzip"], "target": 50 * KIB},
    ]

    machine = {
        "date": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "cpu": envs["node"].get("cpu", platform.processor()),
        "cores": envs["node"].get("cores"),
        "kernel": platform.release(),
        "load_average": _loadavg(),
        "rustc": _cmd(["rustc", "--version"]),
        "node": envs["node"].get("node"),
        "python": envs["python"].get("python"),
        "peers": {k: v for k, v in envs["python"].items() if k in ("tenacity", "celery", "jsonschema", "pydantic")},
    }
    doc = {"machine": machine, "targets": rows, "wasm_size": size_rows, "figures": figures}
    (out_dir / "results.json").write_text(json.dumps(doc, indent=2) + "\n")
    md = render(doc)
    (out_dir / "results.md").write_text(md)
    print(md)


def fmt_ns(x: float) -> str:
    return f"{x / 1000:.2f} µs" if x >= 1000 else f"{x:.1f} ns"


def render(doc: dict[str, Any]) -> str:
    m = doc["machine"]
    lines = [
        f"Measured {m['date']} on {m['cpu']} ({m['cores']} cores, load average {m['load_average']}), "
        f"{m['rustc']}, Node {m['node']}, Python {m['python']}.",
        "",
        "| suite | subject | median | baseline (same run) | baseline median | ratio | target | met |",
        "|---|---|---:|---|---:|---:|---|:-:|",
    ]
    for r in doc["targets"]:
        ratio = "" if r["ratio"] is None else f"{r['ratio']:.2f}{r['ratio_kind']}"
        met = {True: "yes", False: "**no**", None: ""}[r["met"]]
        if r["target"] == "(info)" and r["baseline"] is None:
            met = ""
        lines.append(
            f"| {r['suite']} | {r['subject']} | {fmt_ns(r['ns'])} | {r['baseline'] or ''} | "
            f"{'' if r['baseline_ns'] is None else fmt_ns(r['baseline_ns'])} | {ratio} | {r['target']} | {met} |"
        )
    lines += ["", "| wasm module | bytes | KiB | target | met |", "|---|---:|---:|---|:-:|"]
    for s in doc["wasm_size"]:
        target = "" if s["target"] is None else f"≤ {s['target'] // KIB} KiB"
        met = "" if s["target"] is None else ("yes" if s["bytes"] <= s["target"] else "**no**")
        lines.append(f"| {s['what']} | {s['bytes']} | {s['bytes'] / KIB:.1f} | {target} | {met} |")
    lines += ["", "All figures (median ns per operation):", ""]
    for suite, figs in doc["figures"].items():
        lines.append(f"- **{suite}**: " + "; ".join(f"{k} {fmt_ns(v)}" for k, v in figs.items()))
    return "\n".join(lines) + "\n"


def _loadavg() -> str:
    try:
        return " ".join(Path("/proc/loadavg").read_text().split()[:3])
    except OSError:
        return "unknown"


def _cmd(argv: list[str]) -> str:
    try:
        return subprocess.run(argv, capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


if __name__ == "__main__":
    main()
