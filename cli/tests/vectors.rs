//! The conformance vectors that the command line can express — `policy`
//! cases given as JSON texts — run through `ojs-retry validate --json`, one
//! file per layer: the same value or the same error (code, field, paths)
//! as every other runtime, the limits' boundaries included.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

use std::path::PathBuf;
use std::process::Command;

use serde_json::Value;

/// A JSON text layer with its encodings expanded, or `None` for one the
/// command line cannot be given (raw bytes are written as they are).
fn text(v: &Value) -> Option<Vec<u8>> {
    match v {
        Value::String(s) => Some(s.clone().into_bytes()),
        Value::Object(m) if m.contains_key("$repeat") => {
            let n = usize::try_from(m["times"].as_u64()?).ok()?;
            Some(m["$repeat"].as_str()?.repeat(n).into_bytes())
        }
        Value::Object(m) if m.contains_key("$concat") => {
            let mut out = Vec::new();
            for p in m["$concat"].as_array()? {
                out.extend(text(p)?);
            }
            Some(out)
        }
        Value::Object(m) if m.contains_key("$bytes") => {
            let h = m["$bytes"].as_str()?;
            (0..h.len())
                .step_by(2)
                .map(|i| u8::from_str_radix(h.get(i..i + 2)?, 16).ok())
                .collect()
        }
        _ => None,
    }
}

fn layers(input: &Value) -> Option<Vec<Vec<u8>>> {
    let json = input.get("json")?;
    if let Some(m) = json.as_object().filter(|m| m.contains_key("$array")) {
        let one = text(&m["$array"])?;
        return Some(vec![one; usize::try_from(m["times"].as_u64()?).ok()?]);
    }
    json.as_array()?.iter().map(text).collect()
}

/// Every key of `expected` is in `actual` with an equal value.
fn subset(expected: &Value, actual: &Value) -> bool {
    match (expected, actual) {
        (Value::Object(e), Value::Object(a)) => e
            .iter()
            .all(|(k, v)| a.get(k).is_some_and(|x| subset(v, x))),
        (Value::Number(e), Value::Number(a)) => e.as_f64() == a.as_f64(),
        _ => expected == actual,
    }
}

fn check(id: &str, case: &Value, out: &Value) -> Result<(), String> {
    if let Some(expect) = case.get("expect") {
        if out["valid"] != true || !subset(&expect["policy"], &out["policy"]) {
            return Err(format!("{id}: expected {expect}, got {out}"));
        }
        return Ok(());
    }
    let err = &case["error"];
    let field = &err["field"];
    let path = err.get("path").unwrap_or(field);
    let got = (&out["code"], &out["field"], &out["path"]);
    if got != (&err["code"], field, path) {
        return Err(format!("{id}: expected {err}, got {out}"));
    }
    if let Some(paths) = err.get("paths") {
        let actual: Vec<&Value> = out["faults"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| &f["path"])
            .collect();
        if paths.as_array().unwrap().iter().collect::<Vec<_>>() != actual {
            return Err(format!("{id}: expected paths {paths}, got {out}"));
        }
    }
    Ok(())
}

#[test]
fn every_policy_vector_given_as_text_runs_through_the_cli() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../tests/vectors");
    let tmp = std::env::temp_dir().join(format!("ojs-retry-cli-vectors-{}", std::process::id()));
    std::fs::create_dir_all(&tmp).unwrap();
    let (mut ran, mut failed) = (0, Vec::new());
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    files.sort();
    for file in files {
        let doc: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
        for case in doc["cases"].as_array().unwrap() {
            let id = case["id"].as_str().unwrap();
            let runs_in_rust = case["runtimes"]
                .as_array()
                .is_none_or(|r| r.iter().any(|x| x == "rust"));
            let Some(texts) =
                layers(&case["input"]).filter(|_| case["op"] == "policy" && runs_in_rust)
            else {
                continue;
            };
            let paths: Vec<String> = texts
                .iter()
                .enumerate()
                .map(|(i, t)| {
                    let p = tmp.join(format!("{id}-{i}.json"));
                    std::fs::write(&p, t).unwrap();
                    p.to_string_lossy().into_owned()
                })
                .collect();
            let out = Command::new(env!("CARGO_BIN_EXE_ojs-retry"))
                .arg("validate")
                .arg("--json")
                .args(&paths)
                .output()
                .unwrap();
            let v: Value = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
            ran += 1;
            if let Err(e) = check(id, case, &v) {
                failed.push(e);
            }
        }
    }
    std::fs::remove_dir_all(&tmp).ok();
    assert!(ran > 20, "only {ran} vectors ran");
    assert!(
        failed.is_empty(),
        "{} of {ran} failed:\n{}",
        failed.len(),
        failed.join("\n")
    );
}
