//! Reading the policy documents the command line names: counted before any
//! is opened, and each read only as far as the merge's budget allows, so a
//! huge file or an endless stream (`/dev/urandom`) is refused after at most
//! one document's worth of bytes, with the engine's own error.

use std::io::Read;

use ojs_retry::limits::{self, MAX_DOCUMENT_BYTES};
use ojs_retry::{Layer, RetryPolicy};

use crate::report::Failed;

/// The layers of `files` (`-` is stdin), merged by the engine.
pub(crate) fn load(files: &[String]) -> Result<RetryPolicy, Failed> {
    let policy = |error| Failed::Policy {
        files: files.to_vec(),
        error,
    };
    limits::check_layers(files.len()).map_err(policy)?;
    let mut layers = Vec::with_capacity(files.len());
    let mut left = MAX_DOCUMENT_BYTES;
    for path in files {
        let bytes = read(path, left)?;
        let over = bytes.len() > left;
        left = left.saturating_sub(bytes.len());
        layers.push(Layer::JsonBytes(bytes.into()));
        if over {
            // One byte over the budget, read no further: the engine
            // refuses the layers as over 1 MiB together, the answer the
            // whole input gets, without the rest being read.
            break;
        }
    }
    RetryPolicy::from_layers(layers).map_err(policy)
}

/// At most `left + 1` bytes of a document: its raw bytes (the engine
/// checks that they are UTF-8, so a file in another encoding is a policy
/// fault with a code, not an I/O error).
fn read(path: &str, left: usize) -> Result<Vec<u8>, Failed> {
    let limit = u64::try_from(left).unwrap_or(u64::MAX).saturating_add(1);
    let mut bytes = Vec::new();
    let read = if path == "-" {
        std::io::stdin().lock().take(limit).read_to_end(&mut bytes)
    } else {
        std::fs::File::open(path).and_then(|f| f.take(limit).read_to_end(&mut bytes))
    };
    let what = if path == "-" { "stdin" } else { path };
    read.map_err(|e| Failed::Other(format!("cannot read {what}: {e}")))?;
    Ok(bytes)
}
