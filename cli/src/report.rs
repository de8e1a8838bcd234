//! How a failed command is reported: each policy fault with the file it
//! came from, an argument's fault with the flag that gave it beside the
//! engine's field, in lines that fit the terminal; or, with `--json`, the
//! same as one JSON object.

use std::process::ExitCode;

use ojs_retry::{Error, Fault};
use serde_json::json;

use crate::output;
use crate::units::{width, wrap};

/// A failure of the command.
pub enum Failed {
    /// The policy files (in the order given) did not make a policy.
    Policy { files: Vec<String>, error: Error },
    /// The engine refused a value that a flag gave.
    Flag { flag: &'static str, error: Error },
    /// Any other engine error.
    Engine(Error),
    /// A file that cannot be read, and the like.
    Other(String),
    /// Standard output cannot be written.
    Output(std::io::Error),
}

impl From<std::io::Error> for Failed {
    fn from(e: std::io::Error) -> Self {
        Self::Output(e)
    }
}

impl From<Error> for Failed {
    fn from(e: Error) -> Self {
        Self::Engine(e)
    }
}

/// The engine's argument fields and the flags that give them.
const FLAGS: [(&str, &str); 11] = [
    ("attempt", "--attempt"),
    ("timestamp", "--now"),
    ("now", "--now"),
    ("code", "--code"),
    ("u", "--u"),
    ("seed", "--seed"),
    ("key", "--key"),
    ("retries", "--retries"),
    ("count", "--retries"),
    ("jobs", "--jobs"),
    ("bucket_ms", "--bucket-ms"),
];

/// An engine error about one of this command's arguments, as a fault of
/// the flag that gave it.
pub fn flag(error: Error) -> Failed {
    let name = error.field().unwrap_or("");
    match FLAGS.iter().find(|(field, _)| *field == name) {
        Some((_, flag)) => Failed::Flag { flag, error },
        None => Failed::Engine(error),
    }
}

/// The file a policy fault came from, and its message without the
/// engine's `layer N: ` prefix (which the engine puts on the faults of a
/// layer when there are several; a fault of the merged policy has none).
fn source<'a>(files: &[String], fault: &'a Fault) -> (String, &'a str) {
    let name = |f: &String| {
        if f == "-" {
            "stdin".to_owned()
        } else {
            f.clone()
        }
    };
    if let [only] = files {
        return (name(only), &fault.message);
    }
    let layer = fault.message.strip_prefix("layer ").and_then(|rest| {
        let (n, message) = rest.split_once(": ")?;
        let i = n.parse::<usize>().ok()?.checked_sub(1)?;
        Some((files.get(i)?, message))
    });
    match layer {
        Some((file, message)) => (name(file), message),
        None => ("the merged policy".to_owned(), &fault.message),
    }
}

fn error_lines(text: &str) {
    for line in wrap(text, width(), "    ") {
        output::error_line(format_args!("{line}"));
    }
}

/// The JSON of a failure: the engine's error, its faults (given, or the
/// engine's own), and the flag that gave the value when one did.
fn engine_json(
    e: &Error,
    faults: Option<serde_json::Value>,
    flag: Option<&str>,
) -> serde_json::Value {
    let faults = faults.unwrap_or_else(|| json!(e.faults()));
    json!({"valid": false, "code": e.code().as_str(), "field": e.field(), "path": e.path(), "faults": faults, "flag": flag})
}

/// Prints `failed` (to standard output as JSON with `json`, else to
/// standard error in words) and gives the exit code: 1 for a policy or
/// argument fault, 2 for anything else.
pub fn print(failed: Failed, json: bool) -> ExitCode {
    // The exit code already says it failed; a closed pipe leaves nothing
    // more to say, so a failed write of the JSON is ignored.
    let json_out = |v: serde_json::Value| {
        let _ = output::line(format_args!("{v}"));
    };
    let code = match &failed {
        Failed::Output(e) if output::is_closed_pipe(e) => return ExitCode::SUCCESS,
        Failed::Output(_) | Failed::Other(_) => 2,
        _ => 1,
    };
    match failed {
        Failed::Output(e) => error_lines(&format!("error: cannot write the output: {e}")),
        Failed::Other(msg) => error_lines(&format!("error: {msg}")),
        Failed::Policy { files, error } if json => {
            let faults: Vec<_> = error
                .faults()
                .iter()
                .map(|f| {
                    let (file, message) = source(&files, f);
                    json!({"field": f.field, "path": f.path, "message": message, "file": file})
                })
                .collect();
            json_out(engine_json(&error, Some(json!(faults)), None));
        }
        Failed::Policy { files, error } => {
            for f in error.faults() {
                let (file, message) = source(&files, f);
                let path = f.path.as_deref().unwrap_or("(document)");
                error_lines(&format!(
                    "{file}: error[{}] {path}: {message}",
                    error.code()
                ));
            }
        }
        Failed::Flag { flag, error } if json => {
            json_out(engine_json(&error, None, Some(flag)));
        }
        Failed::Flag { flag, error } => {
            let field = error.field().unwrap_or("");
            for f in error.faults() {
                error_lines(&format!(
                    "error[{}] {flag} (field {field}): {}",
                    error.code(),
                    f.message
                ));
            }
        }
        Failed::Engine(error) if json => json_out(engine_json(&error, None, None)),
        Failed::Engine(error) => {
            for f in error.faults() {
                let path = f.path.as_deref().unwrap_or("(document)");
                error_lines(&format!("error[{}] {path}: {}", error.code(), f.message));
            }
        }
    }
    ExitCode::from(code)
}
