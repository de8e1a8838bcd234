"""Joins the suites' raw figures into one table: scripts/bench runs it.

    python3 bench/report.py OUT_DIR

Reads OUT_DIR/{python,node,ruby,wasm,coldstart}.json and criterion's estimates
under target/criterion, writes OUT_DIR/results.json and OUT_DIR/results.md,
and prints the Markdown. Every ratio divides two medians measured in the
same run. A suite that did not run leaves its rows "not measured" (the
table still prints). Standard library only (runs under the system python3).
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


def rust_results() -> dict[str, float]:
    """Criterion medians; the delay group computes 25 delays per iteration."""
    out = {}
    base = ROOT / "target" / "criterion"
    for est in sorted(base.glob("*/*/new/estimates.json")):
        group, name = est.parts[-4], est.parts[-3]
        ns = json.loads(est.read_text())["median"]["point_estimate"]
        per = 25 if group == "delay_1_to_25" else 1
        out[f"{group}/{name}"] = ns / per
    return out


def load(out_dir: Path, suite: str) -> dict[str, Any] | None:
    path = out_dir / f"{suite}.json"
    if not path.exists():
        print(f"report: {path} is missing (that suite did not run)", file=sys.stderr)
        return None
    return json.loads(path.read_text())


class Table:
    """The target rows, in order."""

    def __init__(self, figures: dict[str, dict[str, float]]) -> None:
        self.figures = figures
        self.rows: list[dict[str, Any]] = []

    def ns(self, suite: str, name: str) -> float | None:
        return self.figures.get(suite, {}).get(name)

    def ratio(self, suite: str, subject: str, baseline: str, target: str, limit: float | None, faster: bool = False) -> None:
        """`subject / baseline` (or `baseline / subject` when `faster`: how
        many times faster the subject is), checked against `limit`."""
        s, b = self.ns(suite, subject), self.ns(suite, baseline)
        r = met = None
        if s is not None and b is not None:
            r = b / s if faster else s / b
            met = None if limit is None else (r >= limit if faster else r <= limit)
        self.rows.append({"suite": suite, "subject": subject, "ns": s, "baseline": baseline, "baseline_ns": b,
                          "ratio": r, "ratio_kind": "× faster" if faster else "× baseline", "target": target,
                          "info": limit is None, "met": met})

    def absolute(self, suite: str, subject: str, target: str, limit_ns: float | None) -> None:
        s = self.ns(suite, subject)
        met = None if s is None or limit_ns is None else s <= limit_ns
        self.rows.append({"suite": suite, "subject": subject, "ns": s, "baseline": None, "baseline_ns": None,
                          "ratio": None, "ratio_kind": None, "target": target, "info": limit_ns is None, "met": met})


def rust_rows(t: Table) -> None:
    d = "delay_1_to_25/"
    # The engine with its own seeded generator is the like-for-like
    # comparison with a formula that draws from a fast RNG.
    t.ratio("rust", d + "ojs_retry_seed", d + "hand_written", "≤ 2× a hand-written formula", 2.0)
    t.ratio("rust", d + "ojs_retry_u", d + "hand_written", "(info: the caller's u, validated)", None)
    t.ratio("rust", d + "ojs_retry_key", d + "hand_written", "(info: keyed, hashes the key)", None)
    for peer in ("backon", "backoff"):
        t.ratio("rust", d + "ojs_retry_seed", d + peer, f"≥ 20× faster than {peer}", 20.0, faster=True)
        t.ratio("rust", d + "ojs_retry_key", d + peer, f"(info: keyed, against {peer})", None, faster=True)
    for name in ("ojs_retry_retry_seed", "ojs_retry_retry_key", "ojs_retry_non_retryable"):
        t.absolute("rust", "decide/" + name, "≤ 50 ns", 50)
    t.absolute("rust", "parse_12_3/ojs_retry_from_json", "≤ 2 µs", 2000)
    t.ratio("rust", "parse_12_3/ojs_retry_from_json", "parse_12_3/serde_json_value",
            "(info: vs serde_json's parse into a Value, no checks)", None)


def python_rows(t: Table) -> None:
    key_delay = "ojs_retry policy.delay(n, key=job_id)"
    key_decide = "ojs_retry policy.decide(3, type=..., now=..., key=job_id)"
    tenacity = "tenacity wait_exponential_jitter"
    t.ratio("python", key_delay, tenacity, "≥ 15× faster than tenacity's wait", 15.0, faster=True)
    t.ratio("python", key_decide, tenacity, "≥ 15× faster than tenacity's wait", 15.0, faster=True)
    parse = "ojs_retry RetryPolicy(json_text)"
    t.ratio("python", parse, "json.loads + jsonschema (prebuilt validator)", "≥ 30× faster than jsonschema", 30.0, faster=True)
    t.ratio("python", parse, "pydantic v2 model_validate_json", "faster than pydantic v2", 1.0, faster=True)
    for label in (
        "delay(n, key=job_id)",
        "delay(n, seed=42)",
        "delay(n, u=0.5)",
        "delay(n), OS entropy",
        "decide(3, type=..., now=..., key=job_id)",
        "decide(3, type=..., now=..., seed=42)",
    ):
        t.ratio("python", f"ojs_retry policy.{label}", f"pyo3 no-op Floor().{label}",
                "≤ 1.5× a pyo3 no-op of the same signature", 1.5)
    t.ratio("python", parse, "pyo3 no-op Floor(json_text)", "≤ 1.5× a pyo3 no-op of the same signature", 1.5)
    t.ratio("python", "ojs_retry RetryPolicy.from_json(json_text)", "pyo3 no-op Floor.from_json(json_text)",
            "≤ 1.5× a pyo3 no-op of the same signature", 1.5)
    t.ratio("python", key_decide, "ojs_retry policy.decide(3, now=..., key=job_id), no type",
            "(info: vs the same call without the failure's type)", None)
    t.ratio("python", key_delay, "math.ldexp(0.5, 3)", "(info: vs CPython's own C call)", None)
    t.ratio("python", key_delay, "pure Python formula (tuned)", "(info)", None, faster=True)
    t.ratio("python", key_delay, "Celery get_exponential_backoff_interval", "(info)", None, faster=True)


def ruby_rows(t: Table) -> None:
    """The gem against Sidekiq's own delay computation, in Ruby, same run
    (information: issue 29 sets no target for the call itself; the Sidekiq
    integration's retry path will be measured against Sidekiq's native one)."""
    sidekiq = "Sidekiq delay_for formula (Ruby)"
    t.ratio("ruby", "ojs_retry policy.delay(n, key: jid)", sidekiq,
            "(info: keyed delay vs Sidekiq's delay_for in Ruby)", None)
    t.ratio("ruby", "ojs_retry sidekiq preset .delay(n, key: jid)", sidekiq,
            "(info: the sidekiq preset vs Sidekiq's delay_for)", None)
    t.ratio("ruby", "ojs_retry policy.decide(3, type:, now:, key: jid)", sidekiq,
            "(info: a whole decision vs Sidekiq's delay_for)", None)
    t.ratio("ruby", "ojs_retry sidekiq preset .decide(n, type:, now:, key: jid)", sidekiq,
            "(info: the sidekiq preset's decision vs Sidekiq's delay_for)", None)
    t.absolute("ruby", "ojs_retry RetryPolicy.new(hash)", "(info: a policy from a Ruby Hash)", None)


def node_rows(t: Table) -> None:
    bull = "BullMQ Backoffs.calculate"
    t.ratio("node", "wasm delay(n, { key })", bull, "wasm faster than BullMQ's Backoffs.calculate", 1.0, faster=True)
    t.ratio("node", "native delay(n, { key })", bull, "(info: native against BullMQ)", None, faster=True)
    t.ratio("node", "native delay(n, { key })", "pure JS formula", "(info: vs a hand-written formula)", None)
    for label in ("native", "wasm"):
        t.absolute("node", f"{label} decide(failure, {{ key, now }})", "≤ 2 µs", 2000)
    floors = {
        "native": ("napi-rs no-op delay(n, { key }), bag read by napi-rs",
                   "napi-rs no-op delayBare(n, { key }), bag not read",
                   "napi-rs no-op decide(failure, { key, now }), objects read and made by napi-rs",
                   "napi-rs no-op decideBare(failure, { key, now }), nothing read or made",
                   "≤ 1.5× a #[napi] no-op of the same shape"),
        "wasm": ("wasm-bindgen no-op delay(n, { key }), bag read by serde-wasm-bindgen",
                 "wasm-bindgen no-op delayBare(n, { key }), bag not read",
                 "wasm-bindgen no-op decide(failure, { key, now }), objects read and made by serde-wasm-bindgen",
                 "wasm-bindgen no-op decideBare(failure, { key, now }), nothing read or made",
                 "≤ 1.5× a #[wasm_bindgen] no-op of the same shape"),
    }
    for label, (delay_f, delay_bare, decide_f, decide_bare, target) in floors.items():
        t.ratio("node", f"{label} delay(n, {{ key }})", delay_f, target, 1.5)
        t.ratio("node", f"{label} delay(n, {{ key }})", delay_bare, "(info: vs the same no-op not reading the bag)", None)
        t.ratio("node", f"{label} decide(failure, {{ key, now }})", decide_f, target, 1.5)
        t.ratio("node", f"{label} decide(failure, {{ key, now }})", decide_bare,
                "(info: vs the same no-op reading and making nothing)", None)
    t.ratio("node", "native delay(n, { key })", "napi-rs no-op delaySerde(n, { key }), bag read by napi-rs's serde",
            "(info: vs the same no-op reading the bag through napi-rs's serde, the binding's route)", None)
    t.ratio("node", "native decide(failure, { key, now })",
            "napi-rs no-op decideSerde(failure, { key, now }), objects read and made by napi-rs's serde",
            "(info: vs the same no-op reading and making the objects through napi-rs's serde, the binding's route)", None)
    t.absolute("node", "napi-rs no-op method delayBare(n)", "(info: a #[napi] method call, no object)", None)
    t.absolute("node", "napi-rs no-op free function noop()", "(info: a #[napi] free function call)", None)
    t.absolute("node", "structuredClone({ key })", "(info: the copy the wasm binding reads each option bag from)", None)
    t.absolute("node", "structuredClone(failure) + structuredClone({ key, now })",
               "(info: the copies the wasm binding's decide reads from)", None)
    t.ratio("node", "native delays(Float64Array(25), { key }), per delay", "native 25 × delay(n, { key }), per delay",
            "batch of 25 ≥ 5× cheaper per delay than 25 native calls", 5.0, faster=True)
    t.ratio("node", "wasm delays(Float64Array(25), { key }), per delay", "wasm 25 × delay(n, { key }), per delay",
            "(info: the same in wasm)", None, faster=True)
    t.ratio("node", "native delays(Float64Array(25), { key }), per delay",
            "napi-rs no-op delays(Float64Array(25), { key }), per delay", "(info: vs the no-op batch call)", None)
    t.ratio("node", "wasm delays(Float64Array(25), { key }), per delay",
            "wasm-bindgen no-op delays(Float64Array(25), { key }), per delay", "(info: vs the no-op batch call)", None)
    for label in ("native", "wasm"):
        t.ratio("node", f"{label} RetryPolicy.fromJSON(text)", "JSON.parse + ajv (compiled once)",
                "(info: parse + validate vs JSON.parse + ajv)", None, faster=True)


def main() -> None:
    out_dir = Path(sys.argv[1])
    figures: dict[str, dict[str, float]] = {"rust": rust_results(), "python": {}, "node": {}, "ruby": {}}
    envs: dict[str, dict[str, Any]] = {}
    for suite in ("python", "node", "ruby"):
        doc = load(out_dir, suite)
        if doc is None:
            continue
        envs[suite] = doc["env"]
        for r in doc["results"]:
            figures[suite][r["name"]] = r["ns"]
    t = Table(figures)
    rust_rows(t)
    python_rows(t)
    node_rows(t)
    ruby_rows(t)

    sizes = load(out_dir, "wasm") or {}
    size_rows = [
        {"what": "raw (after wasm-bindgen)", "bytes": sizes.get("raw"), "target": None},
        {"what": "after wasm-opt -Oz", "bytes": sizes.get("opt"), "target": None},
        {"what": "gzipped (-9)", "bytes": sizes.get("gzip"), "target": 128 * KIB},
    ]
    cold = load(out_dir, "coldstart") or {}

    load_start = (out_dir / "load-start").read_text().strip() if (out_dir / "load-start").exists() else "unknown"
    machine = {
        "date": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "cpu": envs.get("node", {}).get("cpu", platform.processor()),
        "cores": envs.get("node", {}).get("cores") or envs.get("python", {}).get("cores"),
        "kernel": platform.release(),
        "load_average_start": load_start,
        "load_average_end": _loadavg(),
        "rustc": _cmd(["rustc", "--version"]),
        "commit": _cmd(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"]),
        # Uncommitted changes under the measured code's paths, if any.
        "dirty": _cmd(["git", "-C", str(ROOT), "status", "--porcelain", "--", "core", "bindings-node",
                       "bindings-python", "bindings-wasm", "bindings-ruby"]).replace("\n", "; "),
        "node": envs.get("node", {}).get("node"),
        "python": envs.get("python", {}).get("python"),
        "ruby": envs.get("ruby", {}).get("ruby"),
        "peers": {**{k: v for k, v in envs.get("python", {}).items() if k in ("tenacity", "celery", "jsonschema", "pydantic")},
                  **envs.get("node", {}).get("peers", {})},
    }
    doc = {"machine": machine, "targets": t.rows, "wasm_size": size_rows, "coldstart": cold, "figures": figures}
    (out_dir / "results.json").write_text(json.dumps(doc, indent=2) + "\n")
    md = render(doc)
    (out_dir / "results.md").write_text(md)
    print(md)


def fmt_ns(x: float | None) -> str:
    if x is None:
        return "not measured"
    return f"{x / 1000:.2f} µs" if x >= 1000 else f"{x:.1f} ns"


def render(doc: dict[str, Any]) -> str:
    m = doc["machine"]
    peers = ", ".join(f"{k} {v}" for k, v in m["peers"].items())
    lines = [
        f"Measured {m['date']} at commit {m['commit']}"
        f"{' (uncommitted: ' + m['dirty'] + ')' if m['dirty'] else ''} "
        f"on {m['cpu']} ({m['cores']} cores; load average {m['load_average_start']} at the start, "
        f"{m['load_average_end']} at the end), {m['rustc']}, Node {m['node']}, Python {m['python']}, "
        f"Ruby {m.get('ruby')}; peers: {peers}.",
        "",
        "| suite | subject | median | baseline (same run) | baseline median | ratio | target | met |",
        "|---|---|---:|---|---:|---:|---|:-:|",
    ]
    for r in doc["targets"]:
        if r["ratio"] is None:
            ratio = ""
        elif r["ratio_kind"] == "× faster" and r["ratio"] < 1:
            ratio = f"{1 / r['ratio']:.2f}× slower"
        else:
            ratio = f"{r['ratio']:.2f}{r['ratio_kind']}"
        if r["info"]:
            met = ""
        elif r["met"] is None:
            met = "not measured"
        else:
            met = "yes" if r["met"] else "**no**"
        base_ns = "" if r["baseline"] is None else fmt_ns(r["baseline_ns"])
        lines.append(f"| {r['suite']} | {r['subject']} | {fmt_ns(r['ns'])} | {r['baseline'] or ''} | {base_ns} | "
                     f"{ratio} | {r['target']} | {met} |")
    lines += ["", "| wasm module | bytes | KiB | target | met |", "|---|---:|---:|---|:-:|"]
    for s in doc["wasm_size"]:
        target = "" if s["target"] is None else f"≤ {s['target'] // KIB} KiB"
        if s["bytes"] is None:
            lines.append(f"| {s['what']} | not measured | | {target} | {'not measured' if target else ''} |")
            continue
        met = "" if s["target"] is None else ("yes" if s["bytes"] <= s["target"] else "**no**")
        lines.append(f"| {s['what']} | {s['bytes']} | {s['bytes'] / KIB:.1f} | {target} | {met} |")
    c = doc["coldstart"]
    lines += ["", "| wasm cold start | ms |", "|---|---:|"]
    node = c.get("node")
    if node:
        lines += [
            f"| Node: compile (`new WebAssembly.Module`), median of {node['runs']} fresh processes | {node['compile_ms']:.1f} |",
            f"| Node: instantiate (`initSync`) | {node['instantiate_ms']:.1f} |",
            f"| Node: first call (`new RetryPolicy(...).delay(1)`) | {node['first_call_ms']:.2f} |",
        ]
    else:
        lines.append("| Node | not measured |")
    w = c.get("workerd")
    if w and "error" not in w:
        lines += [
            f"| workerd (miniflare): first response of a fresh worker importing the package, best of {w['runs']} | {w['first_response_ms']:.0f} |",
            f"| workerd: the same without the package | {w['bare_first_response_ms']:.0f} |",
            f"| workerd: difference (compile + instantiate + first call) | {w['difference_ms']:.0f} |",
        ]
    else:
        lines.append(f"| workerd | not measured{': ' + w['error'] if w else ''} |")
    lines += ["", "All figures (median ns per operation):", ""]
    for suite, figs in doc["figures"].items():
        if figs:
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
