//! Rust benchmarks: the engine's `delay(n)`, `decide` and policy parsing
//! against a hand-written formula (the floor) and the backon / backoff
//! crates, all on the §12.3 curve. `scripts/bench` runs this and reads
//! criterion's estimates; timings are never asserted anywhere.
//!
//! "From scratch" means what a queue worker does: it knows the attempt
//! number and nothing else (no iterator kept between failures), so the
//! peers build their backoff and step it `n` times, and the engine calls
//! `delay(n)` on a policy it parsed once.

#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use std::hint::black_box;
use std::time::Duration;

use backoff::backoff::Backoff as _;
use criterion::measurement::WallTime;
use criterion::{BenchmarkGroup, Criterion, criterion_group, criterion_main};
use ojs_retry::{Failure, JitterSource, RetryPolicy};
use ojs_retry_bench::{CAP_MS, COEFFICIENT, FastRng, INITIAL_MS, POLICY_12_3, hand_written_delay};

/// Retries 1..=25 (§12.3 allows 25 attempts): each iteration computes all
/// 25 delays, so per-delay figures are the iteration time / 25.
const RETRIES: u32 = 25;

fn delays(c: &mut Criterion) {
    let mut g = c.benchmark_group("delay_1_to_25");
    let mut rng = FastRng(0x5EED);
    g.bench_function("hand_written", |b| {
        b.iter(|| {
            let mut sum = 0_u64;
            for n in 1..=RETRIES {
                sum = sum.wrapping_add(hand_written_delay(black_box(n), &mut rng));
            }
            sum
        });
    });

    // The engine, one policy parsed once, with each jitter source.
    let policy = RetryPolicy::from_json(POLICY_12_3).unwrap();
    let mut seed = 0_u64;
    engine(&mut g, &policy, "ojs_retry_seed", || {
        seed = seed.wrapping_add(1);
        JitterSource::Seed(black_box(seed))
    });
    let mut caller_rng = FastRng(0x5EED);
    engine(&mut g, &policy, "ojs_retry_u", || {
        JitterSource::Uniform(caller_rng.next_unit())
    });
    engine(&mut g, &policy, "ojs_retry_key", || {
        JitterSource::Key(black_box("job-8f3a"))
    });

    g.bench_function("backon", |b| {
        use backon::BackoffBuilder as _;
        let builder = backon::ExponentialBuilder::default()
            .with_min_delay(Duration::from_millis(INITIAL_MS))
            .with_factor(COEFFICIENT as f32)
            .with_max_delay(Duration::from_millis(CAP_MS))
            .with_jitter()
            .with_max_times(RETRIES as usize);
        b.iter(|| {
            let mut sum = Duration::ZERO;
            for n in 1..=RETRIES as usize {
                // The delay of attempt n: a fresh backoff stepped n times.
                let d = builder.build().nth(black_box(n) - 1).unwrap_or_default();
                sum += d;
            }
            sum
        });
    });

    g.bench_function("backoff", |b| {
        let mut builder = backoff::ExponentialBackoffBuilder::new();
        builder
            .with_initial_interval(Duration::from_millis(INITIAL_MS))
            .with_multiplier(COEFFICIENT)
            .with_max_interval(Duration::from_millis(CAP_MS))
            .with_randomization_factor(0.5)
            .with_max_elapsed_time(None);
        b.iter(|| {
            let mut sum = Duration::ZERO;
            for n in 1..=RETRIES {
                let mut eb = builder.build();
                let mut d = Duration::ZERO;
                for _ in 0..black_box(n) {
                    d = eb.next_backoff().unwrap_or_default();
                }
                sum += d;
            }
            sum
        });
    });
    g.finish();
}

/// Benchmarks `policy.delay(n, source())` for n in 1..=25 (generic, so the
/// source inlines as the hand-written formula's RNG does).
fn engine(
    g: &mut BenchmarkGroup<'_, WallTime>,
    policy: &RetryPolicy,
    name: &str,
    mut source: impl FnMut() -> JitterSource<'static>,
) {
    g.bench_function(name, |b| {
        b.iter(|| {
            let mut sum = 0_u64;
            for n in 1..=u64::from(RETRIES) {
                sum = sum.wrapping_add(policy.delay(black_box(n), source()).unwrap());
            }
            sum
        });
    });
}

fn decide(c: &mut Criterion) {
    let mut g = c.benchmark_group("decide");
    let policy = RetryPolicy::from_json(POLICY_12_3).unwrap();
    // A retryable failure: checked against the three non-retryable
    // patterns, then the delay and next_retry_at.
    let retry = Failure::new(3).with_type("external.timeout");
    let now = 1_770_892_265_000_u64;
    let mut seed = 0_u64;
    g.bench_function("ojs_retry_retry_seed", |b| {
        b.iter(|| {
            seed = seed.wrapping_add(1);
            policy
                .decide(black_box(&retry), black_box(now), JitterSource::Seed(seed))
                .unwrap()
        });
    });
    // What a queue passes: the job's id as the jitter key.
    g.bench_function("ojs_retry_retry_key", |b| {
        b.iter(|| {
            policy
                .decide(
                    black_box(&retry),
                    black_box(now),
                    JitterSource::Key(black_box("job-8f3a")),
                )
                .unwrap()
        });
    });
    let stolen = Failure::new(3).with_type("payment.card_stolen");
    g.bench_function("ojs_retry_non_retryable", |b| {
        b.iter(|| {
            policy
                .decide(black_box(&stolen), black_box(now), JitterSource::Seed(1))
                .unwrap()
        });
    });
    g.finish();
}

fn parse(c: &mut Criterion) {
    let mut g = c.benchmark_group("parse_12_3");
    // Text to a validated policy: serde_json's strict reader, merged over
    // the defaults, every check.
    g.bench_function("ojs_retry_from_json", |b| {
        b.iter(|| RetryPolicy::from_json(black_box(POLICY_12_3)).unwrap());
    });
    // For scale: serde_json's plain parse into a value, no validation.
    g.bench_function("serde_json_value", |b| {
        b.iter(|| serde_json::from_str::<serde_json::Value>(black_box(POLICY_12_3)).unwrap());
    });
    g.finish();
}

fn config() -> Criterion {
    Criterion::default()
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2))
        .sample_size(50)
}

criterion_group! { name = benches; config = config(); targets = delays, decide, parse }
criterion_main!(benches);
