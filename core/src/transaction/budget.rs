//! The state a transaction writes stays within [`MAX_STATE_BYTES`] as JSON
//! text, escapes included, and reads back as the same state.

use alloc::collections::VecDeque;
use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;

use super::sanitize::truncated;
use super::{MAX_STATE_BYTES, Note};
use crate::state::{ErrorRecord, RetryState};

/// What a shortened message or type keeps, in bytes.
const SHORT_TEXT: usize = 1024;

/// The state's text, after making it fit (each step noted).
pub(super) fn fit(state: &mut RetryState, notes: &mut Vec<Note>) -> String {
    // Nearly every state fits: its text is written once and measured.
    let text = state.to_json();
    if text.len() <= MAX_STATE_BYTES {
        return text;
    }
    let mut sizes = Sizes::of(state);
    let mut steps: Vec<&str> = Vec::new();
    if !sizes.fits() {
        let n = state.errors.len();
        // Oldest first: the newest error is what a person reads first.
        if shrink(state, &mut sizes, 0..n, |r| r.details.take().is_some()) {
            steps.push("details dropped");
        }
        if !sizes.fits() && shrink(state, &mut sizes, 0..n, |r| shorten(&mut r.message)) {
            steps.push("messages shortened");
        }
        let mut dropped = 0usize;
        while !sizes.fits() && state.errors.len() > 1 {
            state.errors.pop_front();
            sizes.drop_first();
            dropped = dropped.saturating_add(1);
        }
        if dropped > 0 {
            steps.push("oldest errors dropped");
        }
        let n = state.errors.len();
        if !sizes.fits() && shrink(state, &mut sizes, 0..n, |r| shorten(&mut r.error_type)) {
            steps.push("types shortened");
        }
    }
    let text = state.to_json();
    if !steps.is_empty() {
        notes.push(Note {
            kind: "state_budget",
            message: format!(
                "the state's JSON was over {MAX_STATE_BYTES} bytes: {}",
                steps.join(", ")
            ),
        });
    }
    text
}

fn shorten(text: &mut String) -> bool {
    match truncated(text, SHORT_TEXT) {
        Some(short) => {
            *text = short;
            true
        }
        None => false,
    }
}

/// Applies `change` to the records in `range`, oldest first, until the
/// state fits; whether anything changed.
fn shrink(
    state: &mut RetryState,
    sizes: &mut Sizes,
    range: core::ops::Range<usize>,
    mut change: impl FnMut(&mut ErrorRecord) -> bool,
) -> bool {
    let mut changed = false;
    for i in range {
        if sizes.fits() {
            break;
        }
        if let Some(r) = state.errors.get_mut(i)
            && change(r)
        {
            changed = true;
            sizes.update(i, r);
        }
    }
    changed
}

/// The state's JSON length, kept per record so a change costs one record.
struct Sizes {
    records: VecDeque<usize>,
    /// The whole text: the state without its records, the records, and
    /// the commas between them.
    total: usize,
}

fn record_len(r: &ErrorRecord) -> usize {
    serde_json::to_string(r).map_or(usize::MAX, |t| t.len())
}

impl Sizes {
    fn of(state: &RetryState) -> Self {
        let mut empty = state.clone();
        empty.errors.clear();
        let base = empty.to_json().len();
        let records: VecDeque<usize> = state.errors.iter().map(record_len).collect();
        let commas = records.len().saturating_sub(1);
        let total = records
            .iter()
            .fold(base.saturating_add(commas), |a, b| a.saturating_add(*b));
        Self { records, total }
    }

    fn fits(&self) -> bool {
        self.total <= MAX_STATE_BYTES
    }

    fn update(&mut self, i: usize, r: &ErrorRecord) {
        if let Some(len) = self.records.get_mut(i) {
            let new = record_len(r);
            self.total = self.total.saturating_sub(*len).saturating_add(new);
            *len = new;
        }
    }

    /// The oldest record removed, with the comma after it.
    fn drop_first(&mut self) {
        if let Some(len) = self.records.pop_front() {
            let comma = usize::from(!self.records.is_empty());
            self.total = self.total.saturating_sub(len.saturating_add(comma));
        }
    }
}
