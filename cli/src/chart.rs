//! `schedule --chart`: each retry's delay as a bar of Unicode blocks (the
//! least delay solid, the jitter band shaded, the drawn delay marked, the
//! cap as a rule), on a linear or log axis, in at most 80 columns.

use ojs_retry::ScheduleRow;

use crate::units::short;

/// Columns of the bar area: `retry` (5) + bar + drawn (10) + cumulative
/// (10) with their separators is 78.
pub const BAR: usize = 50;
/// The widest line the chart prints (the legend and description lines are
/// cut to it).
pub const COLUMNS: usize = 80;
/// Left blocks of 0/8 … 7/8 of a cell.
const EIGHTHS: [char; 8] = [' ', '▏', '▎', '▍', '▌', '▋', '▊', '▉'];
const SOLID: char = '█';
const BAND: char = '░';
const DRAWN: char = '◆';
const CAP: char = '│';
/// A wider spread than this (largest over smallest delay) gets a log axis.
const LOG_ABOVE: f64 = 30.0;
/// The ticks of a log axis: round durations, each 6 to 10 times the last.
const NICE_MS: [u64; 13] = [
    1,
    10,
    100,
    1_000,
    10_000,
    60_000,
    600_000,
    3_600_000,
    21_600_000,
    86_400_000,
    604_800_000,
    2_592_000_000,
    31_536_000_000,
];

/// The horizontal axis.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Scale {
    /// From 0 to `hi` ms.
    Linear { hi: f64 },
    /// From `lo` (one of the round durations of the ticks) to `hi` ms,
    /// logarithmic.
    Log { lo: f64, hi: f64 },
}

impl Scale {
    /// The axis for `rows`: log when the delays span more than a factor
    /// of 30, else linear from 0.
    pub fn fit(rows: &[ScheduleRow]) -> Self {
        let hi = rows
            .iter()
            .map(|r| r.max_ms.max(r.delay_ms.unwrap_or(0)).max(r.capped_ms))
            .max()
            .unwrap_or(0)
            .max(1) as f64;
        let lo = rows
            .iter()
            .flat_map(|r| [r.min_ms, r.capped_ms])
            .filter(|&ms| ms > 0)
            .min();
        match lo {
            Some(lo) if hi / lo as f64 > LOG_ABOVE => Self::Log {
                lo: NICE_MS
                    .iter()
                    .rev()
                    .find(|&&n| n <= lo)
                    .copied()
                    .unwrap_or(1) as f64,
                hi,
            },
            _ => Self::Linear { hi },
        }
    }

    /// `"linear"` or `"log"`.
    pub fn name(self) -> &'static str {
        match self {
            Self::Linear { .. } => "linear",
            Self::Log { .. } => "log",
        }
    }

    /// Where `ms` falls, in cells from 0 to [`BAR`].
    fn at(self, ms: u64) -> f64 {
        let x = ms as f64;
        let f = match self {
            Self::Linear { hi } => x / hi,
            Self::Log { lo, .. } if x <= lo => 0.0,
            Self::Log { lo, hi } => (x.ln() - lo.ln()) / (hi.ln() - lo.ln()),
        };
        f.clamp(0.0, 1.0) * BAR as f64
    }

    /// The cell holding `ms`.
    fn cell(self, ms: u64) -> usize {
        (self.at(ms) as usize).min(BAR - 1)
    }

    /// The tick values: quarters of a linear axis, the round durations on a
    /// log one, and both ends.
    fn ticks(self) -> Vec<u64> {
        match self {
            Self::Linear { hi } => (0..=4).map(|q| (hi * f64::from(q) / 4.0) as u64).collect(),
            Self::Log { lo, hi } => {
                let mut t: Vec<u64> = NICE_MS
                    .into_iter()
                    .filter(|&n| n as f64 >= lo && (n as f64) < hi)
                    .collect();
                t.push(hi as u64);
                t
            }
        }
    }
}

/// The bar of one row.
fn bar(scale: Scale, r: &ScheduleRow, cap: Option<u64>) -> String {
    let mut cells = [' '; BAR];
    let solid = scale.at(r.min_ms);
    let full = solid.floor() as usize;
    cells.iter_mut().take(full).for_each(|c| *c = SOLID);
    let eighths = ((solid - solid.floor()) * 8.0).round() as usize;
    let mut band_from = full;
    if let Some(c) = cells.get_mut(full).filter(|_| eighths > 0) {
        *c = EIGHTHS.get(eighths).copied().unwrap_or(SOLID);
        band_from += 1;
    }
    if r.max_ms > r.min_ms {
        let band_to = (scale.at(r.max_ms).ceil() as usize).max(band_from + 1);
        cells
            .iter_mut()
            .take(band_to)
            .skip(band_from)
            .for_each(|c| *c = BAND);
    }
    if let Some(c) = cap.and_then(|ms| cells.get_mut(scale.cell(ms))) {
        if *c == ' ' {
            *c = CAP;
        }
    }
    if let Some(c) = r.delay_ms.and_then(|ms| cells.get_mut(scale.cell(ms))) {
        *c = DRAWN;
    }
    cells.iter().collect()
}

/// The axis under the bars: a rule with a tick at each label, and the
/// labels that fit without overlapping (the right end always).
fn axis(scale: Scale) -> [String; 2] {
    let mut rule = ['─'; BAR];
    let mut labels = vec![' '; BAR + 10];
    let ticks = scale.ticks();
    let mut free = 0;
    for (i, &ms) in ticks.iter().enumerate() {
        let col = scale.cell(ms);
        let text = short(ms);
        let last = i + 1 == ticks.len();
        // The last label ends at the bar's end; the others start at their tick.
        let start = if last {
            BAR.saturating_sub(text.chars().count())
        } else {
            col
        };
        if start < free
            || (!last
                && start + text.chars().count() + 1
                    > BAR.saturating_sub(short(scale_end(scale)).chars().count()))
        {
            continue;
        }
        if let Some(c) = rule.get_mut(col) {
            *c = '┬';
        }
        for (slot, ch) in labels.iter_mut().skip(start).zip(text.chars()) {
            *slot = ch;
        }
        free = start + text.chars().count() + 1;
    }
    let pad = " ".repeat(6);
    [
        format!("{pad}{}", rule.iter().collect::<String>()),
        format!("{pad}{}", labels.iter().collect::<String>().trim_end()),
    ]
}

fn scale_end(scale: Scale) -> u64 {
    match scale {
        Scale::Linear { hi } | Scale::Log { hi, .. } => hi as u64,
    }
}

/// The chart of `rows`; `cap` draws the cap rule where it is inside the
/// axis; `source` names where the drawn delays come from.
pub fn render(rows: &[ScheduleRow], cap: Option<u64>, source: &str) -> (Scale, Vec<String>) {
    let scale = Scale::fit(rows);
    let cap = cap.filter(|&ms| ms <= scale_end(scale));
    let cut = |s: String| s.chars().take(COLUMNS).collect::<String>();
    let mut lines = vec![
        cut(format!(
            "delay per retry ({} scale), drawn from {source}",
            scale.name()
        )),
        cut(format!(
            "{SOLID} least delay  {BAND} jitter band  {DRAWN} drawn delay{}",
            cap.map(|ms| format!("  {CAP} cap {}", short(ms)))
                .unwrap_or_default()
        )),
        format!(
            "{:>5} {:BAR$} {:>10} {:>10}",
            "retry", "", "drawn", "cumulative"
        ),
    ];
    for r in rows {
        lines.push(format!(
            "{:>5} {} {:>10} {:>10}",
            r.retry_number,
            bar(scale, r, cap),
            r.delay_ms.map(short).unwrap_or_default(),
            short(r.cumulative_ms)
        ));
    }
    lines.extend(axis(scale));
    (scale, lines)
}
