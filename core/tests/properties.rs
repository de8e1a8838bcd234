//! Property tests for the invariants the spec states: delays stay within
//! [0, max_interval] (RET-04, RET-06), jitter stays within [0.5, 1.5) of the
//! capped delay (RET-05), no retry is ever scheduled at or past max_attempts
//! (RET-01), delays without jitter never decrease, and documents and
//! durations round-trip through their canonical forms.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

use ojs_retry::{
    Action, Failure, JitterSource, MAX_MS, PartialPolicy, RetryPolicy, Strategy as Curve,
    format_duration, parse_duration,
};
use proptest::prelude::{
    Just, ProptestConfig, Strategy as _, any, prop_assert, prop_assert_eq, prop_assert_ne,
    prop_compose, prop_oneof, proptest,
};

fn strategy() -> impl proptest::strategy::Strategy<Value = Curve> {
    prop_oneof![
        Just(Curve::None),
        Just(Curve::Linear),
        Just(Curve::Exponential),
        Just(Curve::Polynomial)
    ]
}

fn coefficient() -> impl proptest::strategy::Strategy<Value = f64> {
    prop_oneof![
        1.0..10.0f64,
        Just(1.0),
        Just(2.0),
        1.0..1e300f64,
        Just(f64::MAX)
    ]
}

prop_compose! {
    fn policy()(
        strategy in strategy(),
        initial in 1..=10_000_000u64,
        extra in prop_oneof![0..=10_000_000u64, 0..=(MAX_MS / 2)],
        coefficient in coefficient(),
        jitter in any::<bool>(),
        max_attempts in prop_oneof![0..=30u64, 0..=MAX_MS],
    ) -> RetryPolicy {
        build(strategy, initial, extra, coefficient, jitter, Some(max_attempts))
    }
}

prop_compose! {
    /// Policies whose capped delays are known at construction: constant,
    /// linear and integral exponential curves, with caps near and past the
    /// table's end and the `u32` range of its entries.
    fn tabled_policy()(
        strategy in prop_oneof![Just(Curve::None), Just(Curve::Linear), Just(Curve::Exponential)],
        initial in prop_oneof![1..=100u64, 1..=10_000_000u64, Just((1 << 32) - 1), 1..=(MAX_MS / 2)],
        extra in prop_oneof![0..=100u64, 0..=10_000_000u64, 0..=u64::from(u32::MAX), 0..=(MAX_MS / 2)],
        coefficient in prop_oneof![(2..=12u32).prop_map(f64::from), Just(1024.0)],
        jitter in any::<bool>(),
    ) -> RetryPolicy {
        build(strategy, initial, extra, coefficient, jitter, None)
    }
}

/// A valid policy from generated fields (the cap is `initial + extra`).
fn build(
    strategy: Curve,
    initial: u64,
    extra: u64,
    coefficient: f64,
    jitter: bool,
    max_attempts: Option<u64>,
) -> RetryPolicy {
    let mut p = PartialPolicy::new()
        .backoff_strategy(strategy)
        .initial_interval_ms(initial)
        .max_interval_ms(initial + extra)
        .backoff_coefficient(coefficient)
        .jitter(jitter);
    if let Some(n) = max_attempts {
        p = p.max_attempts(n);
    }
    p.build().expect("generated policies are valid")
}

/// Every preset with its system's defaults (their delays are drawn per retry).
fn preset_policy() -> impl proptest::strategy::Strategy<Value = RetryPolicy> {
    proptest::sample::select(&ojs_retry::PRESET_SYSTEMS[..])
        .prop_map(|system| RetryPolicy::preset_json(system, "{}").expect("defaults are valid"))
}

fn retry_number() -> impl proptest::strategy::Strategy<Value = u64> {
    prop_oneof![1..=64u64, 1..=u64::from(u32::MAX), 1..=MAX_MS]
}

fn unit() -> impl proptest::strategy::Strategy<Value = f64> {
    prop_oneof![0.0..1.0f64, Just(0.0), Just(1.0 - f64::EPSILON / 2.0)]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2_000))]

    #[test]
    fn delays_with_equals_delay(
        p in policy(),
        ns in proptest::collection::vec(prop_oneof![0..=70u64, retry_number(), Just(MAX_MS + 1)], 1..30),
        u in prop_oneof![unit(), Just(1.0), Just(-0.5), Just(f64::NAN)],
        seed in any::<u64>(),
        key in ".{0,12}",
    ) {
        // The batch route hoists the source's work: every retry's answer is
        // the single call's (errors included: same code and field).
        for source in [JitterSource::Uniform(u), JitterSource::Seed(seed), JitterSource::Key(&key)] {
            match p.delays_with(source) {
                Ok(d) => for &n in &ns {
                    match (d.delay(n), p.delay(n, source)) {
                        (Ok(a), Ok(b)) => prop_assert_eq!(a, b),
                        (Err(a), Err(b)) => prop_assert_eq!((a.code(), a.field()), (b.code(), b.field())),
                        (a, b) => prop_assert!(false, "retry {}: {:?} vs {:?}", n, a, b),
                    }
                },
                // Only a bad `u` fails up front, and then every single call
                // with a valid retry number fails on it too.
                Err(e) => {
                    prop_assert_eq!(e.field(), Some("u"));
                    prop_assert!(p.delay(1, source).is_err());
                }
            }
        }
    }

    #[test]
    fn fill_equals_delay(
        p in prop_oneof![policy(), tabled_policy(), preset_policy()],
        ns in proptest::collection::vec(prop_oneof![
            (0..=70u64).prop_map(|n| n as f64),
            retry_number().prop_map(|n| n as f64),
            Just(MAX_MS as f64 + 1.0), Just(2.5), Just(-1.0), Just(f64::NAN), Just(f64::INFINITY),
            Just(-0.0), Just(0.5), Just(1.5), Just(2f64.powi(52) - 1.0), Just(2f64.powi(52) - 0.5),
            Just(2f64.powi(52)), Just(2f64.powi(52) + 1.0), Just(MAX_MS as f64),
        ], 0..30),
        u in prop_oneof![unit(), Just(1.0)],
        seed in any::<u64>(),
        key in ".{0,12}",
    ) {
        // The in-place batch gives every retry the single call's answer, and
        // stops at the first bad slot with the single call's error.
        for source in [JitterSource::Uniform(u), JitterSource::Seed(seed), JitterSource::Key(&key)] {
            let Ok(d) = p.delays_with(source) else { continue };
            let mut slots = ns.clone();
            let got = d.fill(&mut slots);
            let mut want = Ok(());
            for (i, &x) in ns.iter().enumerate() {
                let one = ojs_retry::uint_from_f64("retry_number", x).and_then(|n| p.delay(n, source));
                match one {
                    Ok(ms) => prop_assert_eq!(slots[i], ms as f64, "slot {}", i),
                    Err(e) => {
                        // That slot and the later ones are left alone.
                        prop_assert_eq!(slots[i..].iter().map(|x| x.to_bits()).collect::<Vec<_>>(),
                            ns[i..].iter().map(|x| x.to_bits()).collect::<Vec<_>>());
                        want = Err(e);
                        break;
                    }
                }
            }
            match (got, want) {
                (Ok(()), Ok(())) => {}
                (Err(a), Err(b)) => prop_assert_eq!((a.code(), a.field(), a.message()), (b.code(), b.field(), b.message())),
                (a, b) => prop_assert!(false, "{:?} vs {:?}", a, b),
            }
        }
    }

    /// The table of capped delays (and the cap past it) that `delay` reads
    /// gives the full computation, which `schedule` still does for every row.
    #[test]
    fn tabled_delay_equals_schedule(p in prop_oneof![tabled_policy(), policy()], u in unit(), seed in any::<u64>()) {
        for source in [JitterSource::Uniform(u), JitterSource::Seed(seed)] {
            let rows = p.schedule(70, Some(source)).unwrap();
            for row in rows {
                prop_assert_eq!(Some(p.delay(row.retry_number, source).unwrap()), row.delay_ms, "retry {}", row.retry_number);
            }
        }
    }

    #[test]
    fn delay_within_zero_and_max_interval(p in policy(), n in retry_number(), u in unit()) {
        let d = p.delay(n, JitterSource::Uniform(u)).unwrap();
        prop_assert!(d <= p.max_interval_ms());
    }

    #[test]
    fn jitter_bounds(p in policy(), n in 1..=60u64, u in unit()) {
        let capped = p.schedule(n, None).unwrap()[usize::try_from(n - 1).unwrap()].capped_ms;
        let d = p.delay(n, JitterSource::Uniform(u)).unwrap();
        let (c, m) = (capped as f64, p.max_interval_ms() as f64);
        if p.jitter() {
            // floor(c·(0.5 + u)) with the cap after: within [0.5c − 1, min(1.5c, M)] and below 1.5c.
            prop_assert!((d as f64) >= 0.5 * c - 1.0, "{d} < 0.5·{c}");
            prop_assert!((d as f64) < 1.5 * c || capped == 0, "{d} ≥ 1.5·{c}");
            prop_assert!((d as f64) <= m);
        } else {
            prop_assert_eq!(d, capped);
        }
    }

    #[test]
    fn jitter_range_contains_every_draw(p in policy(), n in 1..=40u64, u in unit()) {
        let row = p.schedule(n, Some(JitterSource::Uniform(u))).unwrap().pop().unwrap();
        let d = row.delay_ms.unwrap();
        prop_assert!(row.min_ms <= d && d <= row.max_ms, "{} <= {} <= {}", row.min_ms, d, row.max_ms);
        prop_assert!(row.capped_ms <= p.max_interval_ms() && row.capped_ms <= row.raw_ms);
    }

    #[test]
    fn never_retries_past_max_attempts(p in policy(), attempt in 1..=MAX_MS, u in unit()) {
        let d = p.decide(&Failure::new(attempt), 0, JitterSource::Uniform(u)).unwrap();
        let limit = p.max_attempts().max(1);
        if attempt >= limit {
            prop_assert_ne!(d.action, Action::Retry);
        } else {
            prop_assert_eq!(d.action, Action::Retry);
            // now = 0, so next_retry_at is the delay, saturating at the last instant.
            prop_assert_eq!(d.next_retry_at, d.delay_ms.map(|ms| ms.min(ojs_retry::MAX_INSTANT_MS)));
            prop_assert!(d.delay_ms.unwrap() <= p.max_interval_ms());
        }
    }

    #[test]
    fn delays_never_decrease_without_jitter(p in policy(), a in retry_number(), b in retry_number()) {
        let p = PartialPolicy::from_json(&p.to_json()).unwrap().jitter(false).build().unwrap();
        let (lo, hi) = (a.min(b), a.max(b));
        let (dl, dh) = (p.delay(lo, JitterSource::Uniform(0.0)).unwrap(), p.delay(hi, JitterSource::Uniform(0.0)).unwrap());
        prop_assert!(dl <= dh, "delay({lo}) = {dl} > delay({hi}) = {dh}");
    }

    #[test]
    fn canonical_json_round_trips(p in policy()) {
        let again = RetryPolicy::from_json(&p.to_json()).unwrap();
        prop_assert_eq!(&again, &p);
        prop_assert_eq!(again.to_json(), p.to_json());
    }

    #[test]
    fn duration_round_trips(ms in prop_oneof![0..=100_000u64, 0..=MAX_MS]) {
        let text = format_duration(ms).unwrap();
        prop_assert_eq!(parse_duration(&text).unwrap(), ms);
    }

    #[test]
    fn keyed_jitter_is_deterministic(p in policy(), key in ".{0,40}", n in retry_number()) {
        let a = p.delay(n, JitterSource::Key(&key)).unwrap();
        let b = p.delay(n, JitterSource::Key(&key)).unwrap();
        prop_assert_eq!(a, b);
    }

    #[test]
    fn arbitrary_documents_never_panic(doc in "\\PC{0,200}") {
        let _ = RetryPolicy::from_json(&doc);
        let _ = parse_duration(&doc);
    }
}
