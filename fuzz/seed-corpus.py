#!/usr/bin/env python3
"""Seeds fuzz/corpus/<target>/ from the conformance vectors.

    fuzz/seed-corpus.py [corpus-dir]

* duration: every `parse_duration` / `parse_timestamp` text and every
  `format_duration` / `format_timestamp` result.
* policy_bytes: every policy document of every vector as JSON text (layers
  joined by 0x1E, the target's layer separator), every §10 state document,
  every failure, every preset configuration (with its `system`, and as a
  `{"preset": ...}` document), and the examples of examples/.
* policy_value, transitions, transaction: the same bytes as policy_bytes. These targets
  read their input through `arbitrary`, so a seed is not a document to them,
  only a varied starting point for libFuzzer's mutations.

The corpus is generated at run time (scripts/fuzz) and never committed.
"""

import hashlib
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "fuzz" / "corpus"


def plain(v):
    """The vector value without the hostile-input encodings (`$special`
    and friends), which only runners expand."""
    if isinstance(v, dict):
        if any(k.startswith("$") for k in v):
            return None
        return {k: plain(x) for k, x in v.items()}
    if isinstance(v, list):
        return [plain(x) for x in v]
    return v


def seeds():
    texts, docs = set(), set()
    for f in sorted((ROOT / "tests" / "vectors").glob("*.json")):
        for case in json.loads(f.read_text(encoding="utf-8"))["cases"]:
            i = case.get("input", {})
            op = case["op"]
            expect = case.get("expect") or {}
            if op in ("parse_duration", "parse_timestamp") and isinstance(i.get("text"), str):
                texts.add(i["text"])
            if op in ("format_duration", "format_timestamp") and isinstance(expect.get("text"), str):
                texts.add(expect["text"])
            if op == "policy":
                if isinstance(i.get("json"), list) and all(isinstance(t, str) for t in i["json"]):
                    docs.add("\x1e".join(i["json"]))
                if isinstance(i.get("layers"), list):
                    docs.add("\x1e".join(json.dumps(plain(layer)) for layer in i["layers"]))
            if op == "preset" and isinstance(i.get("config"), dict):
                config = dict(plain(i["config"]), system=i.get("system"))
                docs.add(json.dumps(config))
                docs.add(json.dumps({"preset": config}))
            for key in ("policy", "initial", "failure"):
                if key in i:
                    docs.add(json.dumps(plain(i[key])))
            for ev in i.get("events") or []:
                if isinstance(ev, dict) and isinstance(ev.get("fail"), dict):
                    docs.add(json.dumps(plain(dict(ev["fail"], attempt=1))))
            for failure in i.get("failures") or []:
                docs.add(json.dumps(plain(failure)))
            if isinstance(expect, dict) and "state" in expect:
                docs.add(json.dumps(expect["state"]))
    examples = {
        f.read_text(encoding="utf-8") for f in sorted((ROOT / "examples").glob("*.json"))
    }
    return {
        "duration": texts,
        "policy_bytes": docs | examples,
        "policy_value": docs,
        "transitions": docs,
        "transaction": docs,
    }


def main():
    total = 0
    for target, items in seeds().items():
        d = OUT / target
        d.mkdir(parents=True, exist_ok=True)
        for s in items:
            data = s.encode("utf-8", "surrogatepass")
            if len(data) > 4096:
                continue
            (d / hashlib.sha1(data).hexdigest()).write_bytes(data)
            total += 1
        print(f"seed-corpus: {target}: {len(items)} seeds")
    print(f"seed-corpus: {total} files under {OUT}")


if __name__ == "__main__":
    main()
