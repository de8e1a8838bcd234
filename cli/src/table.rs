//! `schedule`'s table: one row per retry, in columns that fit the width.
//!
//! Every column in full (durations in every unit) when they fit or with
//! `--wide`; otherwise durations in at most two units, and the least needed
//! columns left out, raw first, until the table fits. The retry number, the
//! drawn delay and the cumulative time always stay.

use ojs_retry::ScheduleRow;

use crate::units::{human, short};

/// Between two columns.
const GAP: &str = "  ";

struct Column {
    head: &'static str,
    cells: Vec<String>,
    /// Columns are left out in increasing order of this (0: never).
    keep: u8,
}

impl Column {
    fn width(&self) -> usize {
        self.cells
            .iter()
            .map(|c| c.chars().count())
            .chain([self.head.chars().count()])
            .max()
            .unwrap_or(0)
    }
}

/// The table's columns for `rows`, durations spelled by `unit`.
fn columns(rows: &[ScheduleRow], unit: fn(u64) -> String) -> Vec<Column> {
    let col = |head, keep, f: &dyn Fn(&ScheduleRow) -> String| Column {
        head,
        cells: rows.iter().map(f).collect(),
        keep,
    };
    vec![
        col("attempt", 2, &|r| r.attempt.to_string()),
        col("retry", 0, &|r| r.retry_number.to_string()),
        col("raw", 1, &|r| unit(r.raw_ms)),
        col("capped", 3, &|r| {
            if r.capped_ms < r.raw_ms {
                format!("{} (cap)", unit(r.capped_ms))
            } else {
                unit(r.capped_ms)
            }
        }),
        col("jitter range", 4, &|r| {
            if r.min_ms == r.max_ms {
                unit(r.min_ms)
            } else {
                format!("{} .. {}", unit(r.min_ms), unit(r.max_ms))
            }
        }),
        col("delay", 0, &|r| unit(r.delay_ms.unwrap_or(r.capped_ms))),
        col("cumulative", 0, &|r| unit(r.cumulative_ms)),
    ]
}

fn total(cols: &[Column]) -> usize {
    let gaps = GAP.len() * cols.len().saturating_sub(1);
    cols.iter().map(Column::width).sum::<usize>() + gaps
}

fn lines(cols: &[Column]) -> Vec<String> {
    let widths: Vec<usize> = cols.iter().map(Column::width).collect();
    let row = |cell: &dyn Fn(&Column) -> &str| {
        cols.iter()
            .zip(&widths)
            .map(|(c, w)| format!("{:>w$}", cell(c)))
            .collect::<Vec<_>>()
            .join(GAP)
    };
    let n = cols.first().map_or(0, |c| c.cells.len());
    let mut out = vec![row(&|c| c.head)];
    for i in 0..n {
        out.push(row(&|c| c.cells.get(i).map_or("", String::as_str)));
    }
    out
}

/// The table of `rows` in at most `width` columns (unless even the three
/// columns that always stay are wider), or every column in full with
/// `wide`; and the names of the columns left out.
pub fn render(rows: &[ScheduleRow], width: usize, wide: bool) -> (Vec<String>, Vec<&'static str>) {
    let full = columns(rows, human);
    if wide || total(&full) <= width {
        return (lines(&full), Vec::new());
    }
    let mut cols = columns(rows, short);
    let mut left_out = Vec::new();
    while total(&cols) > width {
        let Some(drop) = cols
            .iter()
            .enumerate()
            .filter(|(_, c)| c.keep > 0)
            .min_by_key(|(_, c)| c.keep)
            .map(|(i, _)| i)
        else {
            break;
        };
        left_out.push(cols.remove(drop).head);
    }
    (lines(&cols), left_out)
}
