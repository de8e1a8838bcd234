//! Unit tests of the backoff formulas and jitter spreads.

use super::*;

fn b(curve: Curve, spread: Spread) -> Backoff {
    Backoff {
        initial_ms: 1_000,
        curve,
        offset_ms: 0,
        cap_ms: 300_000,
        spread,
        rounding: Rounding::Nearest,
    }
}

/// The table and the cap from `capped_delays` give exactly the full
/// computation, for every curve, cap and offset tried, well past the
/// point where integer powers overflow, and past the table's end and
/// the `u32` range of its entries.
#[test]
fn capped_delays_match_the_full_computation() {
    let samples = [Sample::MIN, Sample::from_unit(0.5).unwrap(), Sample::MAX];
    let (mut shortcuts, mut tabled, mut full_tables) = (0, 0, 0);
    for curve in [
        Curve::Constant,
        Curve::Linear,
        Curve::Exponential(1.0),
        Curve::Exponential(1.5),
        Curve::Exponential(2.0),
        Curve::Exponential(3.0),
        Curve::Exponential(4.0),
        Curve::Exponential(10.0),
        Curve::Exponential(1024.0),
        Curve::Polynomial(2.0),
        Curve::Table(alloc::vec![5, 50_000, 7]),
    ] {
        for initial_ms in [1, 7, 999, 15_000, (1 << 32) - 1, 1 << 32, 1 << 40, MAX_MS] {
            for cap_ms in [
                0,
                1,
                1_000,
                3_600_000,
                (1 << 32) - 2,
                (1 << 32) - 1,
                1 << 32,
                1 << 52,
                MAX_MS,
            ] {
                for offset_ms in [0, 2_000] {
                    for spread in [Spread::Proportional, Spread::None] {
                        let mut bo = b(curve.clone(), spread);
                        (bo.initial_ms, bo.cap_ms, bo.offset_ms) = (initial_ms, cap_ms, offset_ms);
                        let known = bo.capped_delays();
                        shortcuts += usize::from(known.from() != u64::MAX);
                        tabled += usize::from(known.len() > 0);
                        full_tables += usize::from(known.len() == 16);
                        assert!(known.len() <= 16 && u64::from(known.len()) < known.from());
                        for n in (0..=1_100).chain([MAX_MS - 1, MAX_MS]) {
                            let capped = bo.raw_ms(n).min(bo.cap_ms);
                            assert_eq!(
                                bo.capped_ms(n, &known),
                                capped,
                                "{curve:?} I={initial_ms} cap={cap_ms} offset={offset_ms} n={n}"
                            );
                            if let Some(ms) = known.get(n) {
                                assert_eq!(ms, capped, "table, {curve:?} n={n}");
                            }
                            for s in samples {
                                assert_eq!(
                                    bo.delay_capped(n, s, &known),
                                    bo.delay(n, s),
                                    "{curve:?} I={initial_ms} cap={cap_ms} offset={offset_ms} n={n}"
                                );
                            }
                        }
                    }
                }
            }
        }
    }
    assert!(shortcuts > 100, "{shortcuts}");
    assert!(tabled > 100, "{tabled}");
    assert!(full_tables > 10, "{full_tables}");
    // By hand: 1 s · 2^(n−1) first reaches 300 s at n = 10 (512 s; n = 9
    // is 256 s); §12.3's 15 s · 4^(n−1) first reaches 1 h at n = 5 (3 840 s).
    let mut bo = b(Curve::Exponential(2.0), Spread::Proportional);
    let known = bo.capped_delays();
    assert_eq!((known.from(), known.len()), (10, 9));
    assert_eq!(known.get(9), Some(256_000));
    assert_eq!(known.get(10), None);
    (bo.curve, bo.initial_ms, bo.cap_ms) = (Curve::Exponential(4.0), 15_000, 3_600_000);
    let known = bo.capped_delays();
    assert_eq!((known.from(), known.len()), (5, 4));
    assert_eq!(known.get(4), Some(960_000));
    // Past u32: the table ends where the values stop fitting.
    (bo.curve, bo.initial_ms, bo.cap_ms) = (Curve::Exponential(2.0), 1 << 30, MAX_MS);
    let known = bo.capped_delays();
    assert_eq!((known.from(), known.len()), (24, 2));
    // A constant below the cap: every entry of the table, no `from`.
    (bo.curve, bo.initial_ms, bo.cap_ms) = (Curve::Constant, 5, 10);
    let known = bo.capped_delays();
    assert_eq!((known.from(), known.len()), (u64::MAX, 16));
}

#[test]
fn spreads_by_hand() {
    let half = Sample::from_unit(0.5).unwrap();
    // d = 10 000 ms, u = 0.5.
    assert_eq!(
        b(Curve::Constant, Spread::Proportional).jittered(10_000, half),
        10_000
    );
    assert_eq!(
        b(Curve::Constant, Spread::Full).jittered(10_000, half),
        5_000
    );
    assert_eq!(
        b(Curve::Constant, Spread::Equal).jittered(10_000, half),
        7_500
    );
    assert_eq!(
        b(Curve::Constant, Spread::Additive(1_000)).jittered(10_000, half),
        10_500
    );
    // Proportional upper bound is exclusive: 1.5·d is never reached.
    assert_eq!(
        b(Curve::Constant, Spread::Proportional).jittered(10_000, Sample::MAX),
        14_999
    );
    assert_eq!(
        b(Curve::Constant, Spread::Full).jittered(10_000, Sample::MAX),
        9_999
    );
}

#[test]
fn decorrelated_chain_by_hand() {
    // base 1000, cap 300 000; u = 0.5 every step:
    // 1000 + (3000 − 1000)/2 = 2000; 1000 + (6000 − 1000)/2 = 3500;
    // 1000 + (10 500 − 1000)/2 = 5750.
    let d = b(Curve::Constant, Spread::Decorrelated);
    let half = Sample::from_unit(0.5).unwrap();
    assert_eq!(
        [1, 2, 3].map(|n| d.decorrelated(n, |_| half)),
        [2_000, 3_500, 5_750]
    );
    // u = 0 stays at base; the cap holds.
    assert_eq!(d.decorrelated(50, |_| Sample::MIN), 1_000);
    assert_eq!(d.decorrelated(50, |_| Sample::MAX), 300_000);
}

#[test]
fn table_and_offset() {
    let mut t = b(Curve::Table(alloc::vec![10, 20, 30]), Spread::None);
    assert_eq!([1, 2, 3, 4, 99].map(|n| t.raw_ms(n)), [10, 20, 30, 30, 30]);
    t.offset_ms = 15_000;
    t.rounding = Rounding::Floor;
    assert_eq!(t.raw_ms(1), 15_010);
}

#[test]
fn int_pow_matches_libm() {
    let mut checked = 0;
    for b in 1..=1024_u32 {
        for e in 0..=1024_u32 {
            let (bf, ef) = (f64::from(b), f64::from(e));
            match int_pow(bf, ef) {
                Some(p) => {
                    #[allow(clippy::cast_precision_loss)]
                    let p = p as f64;
                    assert_eq!(p.to_bits(), libm::pow(bf, ef).to_bits(), "{b}^{e}");
                    checked += 1;
                }
                None => {
                    let exact = u64::from(b).checked_pow(e);
                    assert!(exact.is_none_or(|p| p > 1 << 53), "{b}^{e} missed");
                    break; // larger exponents only grow
                }
            }
        }
    }
    assert_eq!(checked, 8_169); // the size of the domain
    for (b, e) in [
        (2.5, 2.0),
        (2.0, 0.5),
        (1025.0, 1.0),
        (2.0, 1025.0),
        (0.5, 2.0),
    ] {
        assert_eq!(int_pow(b, e), None, "{b}^{e}");
    }
}

/// The integer route of `raw_ms` agrees with the `f64` route wherever
/// it applies, saturation and offsets included.
#[test]
fn exact_raw_ms_matches_float_route() {
    let float_route = |b: &Backoff, n: u64| {
        #[allow(clippy::cast_precision_loss)]
        let (i, nf) = (b.initial_ms as f64, n as f64);
        let raw = match b.curve {
            Curve::Exponential(c) => i * libm::pow(c, nf - 1.0),
            Curve::Polynomial(c) => i * libm::pow(nf, c),
            _ => i,
        };
        #[allow(clippy::cast_precision_loss)]
        to_ms(raw + b.offset_ms as f64, b.rounding)
    };
    let mut checked = 0;
    for c in [1.0, 2.0, 3.0, 4.0, 10.0, 1024.0, 1.5] {
        for initial in [1, 999, 15_000, 1 << 40, MAX_MS] {
            for offset in [0, 15_000, MAX_MS] {
                for curve in [Curve::Exponential(c), Curve::Polynomial(c)] {
                    let mut b = b(curve, Spread::None);
                    b.initial_ms = initial;
                    b.offset_ms = offset;
                    for n in (1..=80).chain([1_023, 1_024, 1_025, MAX_MS]) {
                        assert_eq!(b.raw_ms(n), float_route(&b, n), "{b:?} n={n}");
                        checked += usize::from(b.exact_raw_ms(n).is_some());
                    }
                }
            }
        }
    }
    assert!(checked > 1_000, "{checked}");
}

#[test]
fn saturation() {
    let e = b(Curve::Exponential(f64::MAX), Spread::Proportional);
    assert_eq!(e.raw_ms(u64::from(u32::MAX)), MAX_MS);
    assert_eq!(e.delay(u64::from(u32::MAX), Sample::MAX), 300_000);
    let p = b(Curve::Polynomial(f64::MAX), Spread::None);
    assert_eq!(p.raw_ms(1), 1_000); // 1^C = 1
    assert_eq!(p.raw_ms(2), MAX_MS);
}
