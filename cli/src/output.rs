//! Standard output that fails as a value, not a panic (`println!` panics
//! when stdout is a closed pipe or a full disk).
//!
//! A closed pipe (`ojs-retry schedule p.json | head -1`) ends the program
//! quietly with success, as Unix filters do; any other write error is a
//! message and exit code 2.

use std::fmt;
use std::io::{self, Write as _};

/// Writes one line to standard output.
pub fn line(args: fmt::Arguments<'_>) -> io::Result<()> {
    let mut out = io::stdout().lock();
    out.write_fmt(args)?;
    out.write_all(b"\n")
}

/// Flushes standard output (its buffer may hold the last lines).
pub fn flush() -> io::Result<()> {
    io::stdout().lock().flush()
}

/// Whether a write error is the reader having gone away.
pub fn is_closed_pipe(e: &io::Error) -> bool {
    e.kind() == io::ErrorKind::BrokenPipe
}

/// Writes one line to standard error; if even that fails there is no one
/// left to tell, and the exit code still says what happened.
pub fn error_line(args: fmt::Arguments<'_>) {
    let mut err = io::stderr().lock();
    let _ = err.write_fmt(args).and_then(|()| err.write_all(b"\n"));
}
