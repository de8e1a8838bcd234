//! `simulate`: the herd of [`ojs_retry::RetryPolicy::herd`] in the
//! terminal: each retry round's arrivals as a sparkline, the whole
//! timeline, and the peak rate.

use ojs_retry::{Herd, HerdRound};

use crate::units::short;

/// Columns of a round's sparkline: the row is 78 columns.
pub const SPARK: usize = 36;
/// Columns of the timeline of every round together.
pub const TIMELINE: usize = 72;
/// A column's height in eighths: nothing, then ▁ … █.
const LEVELS: [char; 9] = [' ', '▁', '▂', '▃', '▄', '▅', '▆', '▇', '█'];

/// `counts` summed into at most `width` columns of whole buckets: the
/// columns and how many buckets each holds.
fn columns(counts: &[u64], width: usize) -> (Vec<u64>, usize) {
    let per = counts.len().div_ceil(width).max(1);
    (counts.chunks(per).map(|c| c.iter().sum()).collect(), per)
}

/// The character for `value` on a scale whose top is `top`: any arrival at
/// all shows at least ▁.
fn level(value: f64, top: f64) -> char {
    if value <= 0.0 || top <= 0.0 {
        return ' ';
    }
    let eighths = ((value / top) * 8.0).ceil().clamp(1.0, 8.0) as usize;
    LEVELS.get(eighths).copied().unwrap_or('█')
}

/// One row per round: first and last arrival, peak per second, and the
/// sparkline of arrivals per bucket (one scale for every round, so a
/// spread-out round looks lower).
fn rounds(h: &Herd) -> Vec<String> {
    let cols: Vec<(Vec<u64>, usize)> = h.rounds.iter().map(|r| columns(&r.counts, SPARK)).collect();
    // Arrivals per bucket, so that columns of different widths compare.
    let rate = |c: u64, per: usize| c as f64 / per as f64;
    let top = cols
        .iter()
        .flat_map(|(c, per)| c.iter().map(move |&v| rate(v, *per)))
        .fold(0.0, f64::max);
    let mut lines = vec![format!(
        "{:>5} {:>8} {:>8} {:>8}  {:SPARK$}  {:>6}",
        "retry", "first", "last", "peak/s", "arrivals over the round", "column"
    )];
    for (r, (c, per)) in h.rounds.iter().zip(&cols) {
        let spark: String = c.iter().map(|&v| level(rate(v, *per), top)).collect();
        lines.push(format!(
            "{:>5} {:>8} {:>8} {:>8}  {spark:SPARK$}  {:>6}",
            r.retry_number,
            short(r.first_ms),
            short(r.last_ms),
            r.peak_per_second,
            short(h.bucket_ms.saturating_mul(*per as u64))
        ));
    }
    lines
}

/// Every round's buckets added up in [`TIMELINE`] columns from the failure
/// to the last arrival: what the downstream service sees.
fn timeline(h: &Herd) -> Vec<String> {
    let end = h.rounds.iter().map(|r| r.last_ms).max().unwrap_or(0) + 1;
    let width = end
        .div_ceil(TIMELINE as u64)
        .div_ceil(h.bucket_ms)
        .max(1)
        .saturating_mul(h.bucket_ms);
    let mut cols = vec![0_u64; TIMELINE];
    for r in &h.rounds {
        for (at, c) in bucket_starts(r, h.bucket_ms).zip(&r.counts) {
            let i = usize::try_from(at / width).unwrap_or(usize::MAX);
            if let Some(slot) = cols.get_mut(i) {
                *slot += c;
            }
        }
    }
    let top = cols.iter().copied().max().unwrap_or(0);
    let used = usize::try_from(end.div_ceil(width))
        .unwrap_or(TIMELINE)
        .min(TIMELINE);
    let spark: String = cols
        .iter()
        .take(used)
        .map(|&c| level(c as f64, top as f64))
        .collect();
    let right = short(end.saturating_sub(1));
    vec![
        format!(
            "every round together, one column per {} (busiest: {top} arrivals):",
            short(width)
        ),
        format!("  {spark}"),
        format!(
            "  0{right:>w$}",
            w = used.saturating_sub(1).max(right.len())
        ),
    ]
}

fn bucket_starts(r: &HerdRound, bucket_ms: u64) -> impl Iterator<Item = u64> + '_ {
    (0_u64..).map(move |i| r.start_ms.saturating_add(i.saturating_mul(bucket_ms)))
}

/// The whole report.
pub fn render(h: &Herd) -> Vec<String> {
    let mut lines = vec![format!(
        "{} jobs (jitter keys \"1\" … \"{}\") fail at once; every retry fails again.",
        h.jobs, h.jobs
    )];
    if h.rounds.is_empty() {
        lines.push("The policy retries nothing: no herd comes back.".into());
        return lines;
    }
    lines.push(format!(
        "peak: {} arrivals in one second ({:.1}% of the jobs), {} after the failure",
        h.peak_per_second,
        h.peak_per_second as f64 * 100.0 / h.jobs as f64,
        short(h.peak_at_ms)
    ));
    lines.push(String::new());
    lines.extend(rounds(h));
    lines.push(String::new());
    lines.extend(timeline(h));
    lines
}
