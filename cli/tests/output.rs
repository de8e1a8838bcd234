//! The binary's output going nowhere: a reader that stops early and a full
//! disk end with an exit code and at most a message — never a panic.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::Read as _;
use std::process::{Command, Stdio};

/// A policy file with 100 000 attempts, so `schedule` has a lot to print.
fn long_policy(name: &str) -> tempfile_path::Path {
    tempfile_path::Path::with(name, r#"{"max_attempts": 100000, "jitter": false}"#)
}

mod tempfile_path {
    use std::io::Write as _;

    /// A file under the target directory, removed when dropped.
    pub struct Path(pub std::path::PathBuf);
    impl Path {
        pub fn with(name: &str, text: &str) -> Self {
            let dir = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
            let path = dir.join(format!("{name}-{}.json", std::process::id()));
            std::fs::File::create(&path)
                .and_then(|mut f| f.write_all(text.as_bytes()))
                .unwrap();
            Self(path)
        }
        pub fn as_str(&self) -> &str {
            self.0.to_str().unwrap()
        }
    }
    impl Drop for Path {
        fn drop(&mut self) {
            let _ = std::fs::remove_file(&self.0);
        }
    }
}

#[test]
fn a_reader_that_stops_early_ends_the_program_quietly() {
    let policy = long_policy("closed-pipe");
    let mut child = Command::new(env!("CARGO_BIN_EXE_ojs-retry"))
        .args(["schedule", policy.as_str(), "--retries", "10000"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = [0u8; 1];
    child.stdout.take().unwrap().read_exact(&mut first).unwrap(); // then dropped: the pipe closes
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{:?}", out.status);
    assert_eq!(String::from_utf8_lossy(&out.stderr), "");
}

#[test]
fn a_full_disk_is_a_message_and_exit_code_2() {
    let policy = long_policy("full-disk");
    for args in [
        &["--retries", "1000"][..],
        &["--retries", "3", "--json"][..],
    ] {
        let out = Command::new(env!("CARGO_BIN_EXE_ojs-retry"))
            .arg("schedule")
            .arg(policy.as_str())
            .args(args)
            .stdout(std::fs::File::create("/dev/full").unwrap())
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.starts_with("error: cannot write the output: "), "{err}");
        assert!(!err.contains("panicked"), "{err}");
    }
}
