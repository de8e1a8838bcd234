//! Durations in words for people reading a terminal.

/// `1500` → `1.5s`, `5_400_000` → `1h 30m`, `250` → `250ms`.
pub fn human(ms: u64) -> String {
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
    fn human_spells_every_unit() {
        assert_eq!(human(5_400_000), "1h 30m");
        assert_eq!(human(90_061_500), "1d 1h 1m 1.5s");
    }
}
