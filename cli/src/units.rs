//! Durations in words for people reading a terminal, and text that fits
//! the terminal's width.

use ojs_retry::MAX_MS;

/// The width output is fitted to: the terminal's (when standard output is
/// one), else `COLUMNS`, else 80, the width every terminal has.
pub fn width() -> usize {
    terminal_size::terminal_size()
        .map(|(w, _)| usize::from(w.0))
        .or_else(|| std::env::var("COLUMNS").ok()?.trim().parse().ok())
        .filter(|&w| w >= 40)
        .unwrap_or(80)
}

/// `text` broken at spaces into lines of at most `width` characters (a
/// word longer than that stays whole); lines after the first start with
/// `indent`.
pub fn wrap(text: &str, width: usize, indent: &str) -> Vec<String> {
    let mut lines = Vec::new();
    let mut line = String::new();
    for word in text.split(' ').filter(|w| !w.is_empty()) {
        let len = line.chars().count();
        if !line.trim().is_empty() && len + 1 + word.chars().count() > width {
            lines.push(std::mem::replace(&mut line, indent.to_owned()));
        }
        if !line.is_empty() && !line.ends_with(' ') {
            line.push(' ');
        }
        line.push_str(word);
    }
    if !line.trim().is_empty() {
        lines.push(line);
    }
    lines
}

/// A cap in words: `5m`, or `no cap` for the engine's largest duration
/// (what a policy without a cap holds).
pub fn cap(ms: u64) -> String {
    if ms >= MAX_MS {
        "no cap".to_owned()
    } else {
        human(ms)
    }
}

/// The retries a policy allows, in words: `24 retries allowed
/// (max_attempts 25)`, or `unlimited retries` for the engine's largest
/// count (what a policy without a limit holds).
pub fn retries_allowed(max_attempts: u64) -> String {
    match max_attempts {
        n if n >= MAX_MS => "unlimited retries".to_owned(),
        1 => "no retries (max_attempts 1)".to_owned(),
        2 => "1 retry allowed (max_attempts 2)".to_owned(),
        n => format!("{} retries allowed (max_attempts {n})", n - 1),
    }
}

/// `1500` → `1.5s`, `5_400_000` → `1h 30m`, `250` → `250ms`; `∞` for the
/// engine's largest duration (where a formula saturates).
pub fn human(ms: u64) -> String {
    if ms >= MAX_MS {
        return "∞".to_owned();
    }
    if ms < 1_000 {
        return format!("{ms}ms");
    }
    let (d, h, m) = (ms / 86_400_000, (ms / 3_600_000) % 24, (ms / 60_000) % 60);
    let s = (ms % 60_000) as f64 / 1_000.0;
    let mut parts = Vec::new();
    if d > 0 {
        parts.push(format!("{d}d"));
    }
    if h > 0 {
        parts.push(format!("{h}h"));
    }
    if m > 0 {
        parts.push(format!("{m}m"));
    }
    if s > 0.0 {
        parts.push(format!("{s}s"));
    }
    parts.join(" ")
}

/// At most two units, for narrow columns: `850ms`, `1.5s`, `42s`, `5m 20s`,
/// `1h 5m`, `2d 3h` (rounded down to the smaller unit).
pub fn short(ms: u64) -> String {
    const UNITS: [(u64, &str); 4] = [
        (86_400_000, "d"),
        (3_600_000, "h"),
        (60_000, "m"),
        (1_000, "s"),
    ];
    if ms >= MAX_MS {
        return "∞".to_owned();
    }
    if ms < 1_000 {
        return format!("{ms}ms");
    }
    if ms < 10_000 && ms % 1_000 != 0 {
        return format!("{:.1}s", ms as f64 / 1_000.0);
    }
    for (i, (unit, name)) in UNITS.iter().enumerate() {
        if ms >= *unit {
            let whole = ms / unit;
            let rest = UNITS
                .get(i + 1)
                .map(|(u, n)| (ms % unit / u, *n))
                .filter(|(r, _)| *r > 0);
            return match rest {
                Some((r, n)) => format!("{whole}{name} {r}{n}"),
                None => format!("{whole}{name}"),
            };
        }
    }
    format!("{ms}ms")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_keeps_two_units() {
        let cases = [
            (0, "0ms"),
            (850, "850ms"),
            (1_500, "1.5s"),
            (2_000, "2s"),
            (42_000, "42s"),
            (320_000, "5m 20s"),
            (300_000, "5m"),
            (3_900_000, "1h 5m"),
            (183_600_000, "2d 3h"),
        ];
        for (ms, text) in cases {
            assert_eq!(short(ms), text);
        }
    }

    #[test]
    fn unbounded_values_say_what_they_mean() {
        assert_eq!(cap(MAX_MS), "no cap");
        assert_eq!(cap(300_000), "5m");
        assert_eq!(
            (human(MAX_MS), short(MAX_MS)),
            ("∞".to_owned(), "∞".to_owned())
        );
        assert_eq!(retries_allowed(MAX_MS), "unlimited retries");
        assert_eq!(retries_allowed(1), "no retries (max_attempts 1)");
        assert_eq!(retries_allowed(25), "24 retries allowed (max_attempts 25)");
    }

    #[test]
    fn wrap_breaks_at_spaces() {
        assert_eq!(wrap("aa bb cc", 5, "  "), ["aa bb", "  cc"]);
        assert_eq!(wrap("a verylongword b", 4, ""), ["a", "verylongword", "b"]);
        assert_eq!(wrap("", 10, ""), Vec::<String>::new());
        assert!(
            wrap(&"word ".repeat(40), 80, "  ")
                .iter()
                .all(|l| l.chars().count() <= 80)
        );
    }

    #[test]
    fn human_spells_every_unit() {
        assert_eq!(human(5_400_000), "1h 30m");
        assert_eq!(human(90_061_500), "1d 1h 1m 1.5s");
    }
}
