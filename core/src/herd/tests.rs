#![allow(
    clippy::unwrap_used,
    clippy::indexing_slicing,
    clippy::arithmetic_side_effects
)]

use alloc::format;
use alloc::vec;
use alloc::vec::Vec;

use super::{MAX_HERD_BUCKETS, peak};
use crate::{JitterSource, RetryPolicy};

fn policy(json: &str) -> RetryPolicy {
    RetryPolicy::from_json(json).unwrap()
}

/// The arrival of each job's retries, from single delays added up by hand.
fn by_hand(p: &RetryPolicy, jobs: u64, retries: u64) -> Vec<Vec<u64>> {
    let mut rounds = vec![Vec::new(); usize::try_from(retries).unwrap()];
    for job in 1..=jobs {
        let key = format!("{job}");
        let mut at = 0;
        for n in 1..=retries {
            at += p.delay(n, JitterSource::Key(&key)).unwrap();
            rounds[usize::try_from(n - 1).unwrap()].push(at);
        }
    }
    rounds
}

#[test]
fn arrivals_are_the_keyed_delays_added_up() {
    let p = policy(r#"{"max_attempts": 8, "initial_interval": "PT2S", "max_interval": "PT1M"}"#);
    let h = p.herd(300, 7, 250).unwrap();
    let expected = by_hand(&p, 300, 7);
    assert_eq!(h.rounds.len(), 7);
    for (r, times) in h.rounds.iter().zip(&expected) {
        assert_eq!(r.jobs, 300);
        assert_eq!(r.counts.iter().sum::<u64>(), 300);
        assert_eq!(r.first_ms, *times.iter().min().unwrap());
        assert_eq!(r.last_ms, *times.iter().max().unwrap());
        assert_eq!(r.start_ms % 250, 0);
        assert!(r.start_ms <= r.first_ms && r.first_ms - r.start_ms < 250);
        assert_eq!(r.counts.len() as u64, (r.last_ms - r.start_ms) / 250 + 1);
        for (i, c) in r.counts.iter().enumerate() {
            let lo = r.start_ms + 250 * i as u64;
            let n = times
                .iter()
                .filter(|&&t| (lo..lo + 250).contains(&t))
                .count();
            assert_eq!(*c, n as u64, "retry {} bucket {i}", r.retry_number);
        }
        assert_eq!(r.peak_per_second, brute_peak(times).0);
    }
    let all: Vec<u64> = expected.concat();
    assert_eq!((h.peak_per_second, h.peak_at_ms), brute_peak(&all));
}

#[test]
fn without_jitter_the_whole_herd_arrives_at_once() {
    let p = policy(r#"{"max_attempts": 6, "jitter": false}"#);
    let h = p.herd(10_000, 5, 1_000).unwrap();
    let at: Vec<_> = h.rounds.iter().map(|r| (r.first_ms, r.last_ms)).collect();
    assert_eq!(
        at,
        [
            (1_000, 1_000),
            (3_000, 3_000),
            (7_000, 7_000),
            (15_000, 15_000),
            (31_000, 31_000)
        ]
    );
    assert!(
        h.rounds
            .iter()
            .all(|r| r.counts == [10_000] && r.peak_per_second == 10_000)
    );
    assert_eq!((h.peak_per_second, h.peak_at_ms), (10_000, 1_000));
}

#[test]
fn jitter_spreads_later_rounds() {
    let p = policy(r#"{"max_attempts": 11}"#);
    let h = p.herd(10_000, 10, 1_000).unwrap();
    assert!(
        h.rounds
            .iter()
            .all(|r| r.counts.iter().sum::<u64>() == 10_000)
    );
    assert!(h.rounds[9].peak_per_second * 10 < h.rounds[0].peak_per_second);
}

#[test]
fn rounds_stop_where_the_policy_stops() {
    // The defaults allow two retries.
    assert_eq!(
        RetryPolicy::default()
            .herd(50, 10, 1_000)
            .unwrap()
            .rounds
            .len(),
        2
    );
    assert!(
        policy(r#"{"max_attempts": 1}"#)
            .herd(50, 10, 1_000)
            .unwrap()
            .rounds
            .is_empty()
    );
    // A preset decides as its system does: Sidekiq `retry: 3` retries 3 times.
    let s = RetryPolicy::preset_json("sidekiq", r#"{"retry": 3}"#).unwrap();
    let h = s.herd(200, 10, 1_000).unwrap();
    assert_eq!(h.rounds.len(), 3);
    assert!(h.rounds.iter().all(|r| r.jobs == 200));
}

#[test]
fn the_same_call_gives_the_same_herd() {
    let p =
        RetryPolicy::preset_json("celery", r#"{"retry_backoff": true, "max_retries": 5}"#).unwrap();
    assert_eq!(
        p.herd(2_000, 5, 100).unwrap(),
        p.herd(2_000, 5, 100).unwrap()
    );
}

#[test]
fn bad_arguments_are_errors_with_their_field() {
    let p = RetryPolicy::default();
    for (jobs, retries, bucket, field) in [
        (0, 1, 1_000, "jobs"),
        (1_000_001, 1, 1_000, "jobs"),
        (10, 0, 1_000, "retries"),
        (100_000, 11, 1_000, "retries"),
        (1, 1_001, 1_000, "retries"),
        (10, 1, 0, "bucket_ms"),
    ] {
        let e = p.herd(jobs, retries, bucket).unwrap_err();
        assert_eq!(e.code().as_str(), "validation.invalid_argument");
        assert_eq!(e.field(), Some(field), "{jobs} {retries} {bucket}");
    }
    assert!(p.herd(100_000, 10, 1_000).is_ok());
    assert!(p.herd(1, 1_000, 1_000).is_ok());
}

#[test]
fn too_many_buckets_name_the_width_that_fits() {
    // Retries 1 and 2 arrive over ~600 s and ~1 700 s: 1 ms
    // buckets would be ~2 300 000, more than all rounds may hold.
    let p = policy(r#"{"initial_interval": "PT10M", "max_interval": "PT1H"}"#);
    let e = p.herd(1_000, 2, 1).unwrap_err();
    assert_eq!(e.field(), Some("bucket_ms"));
    assert!(
        e.message().contains("expected a width of at least"),
        "{}",
        e.message()
    );
    let h = p.herd(1_000, 2, 4).unwrap();
    let total: usize = h.rounds.iter().map(|r| r.counts.len()).sum();
    assert!(total as u64 <= MAX_HERD_BUCKETS);
}

/// The most times in any `[t, t + 1000)`, by trying every arrival as `t`.
fn brute_peak(times: &[u64]) -> (u64, u64) {
    let mut sorted = times.to_vec();
    sorted.sort_unstable();
    let mut best = (0, 0);
    for &s in &sorted {
        let n = sorted
            .iter()
            .filter(|&&t| (s..s + 1_000).contains(&t))
            .count() as u64;
        if n > best.0 {
            best = (n, s);
        }
    }
    best
}

#[test]
fn peak_counts_one_second_windows() {
    assert_eq!(peak(&[]), (0, 0));
    assert_eq!(peak(&[5, 5, 5]), (3, 5));
    assert_eq!(peak(&[0, 999, 1_000, 1_999]), (2, 0));
    assert_eq!(peak(&[0, 1_000, 1_500, 1_999, 2_999]), (3, 1_000));
    let mut x: u64 = 7;
    let times: Vec<u64> = (0..500)
        .map(|_| {
            x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
            (x >> 33) % 20_000
        })
        .collect();
    let mut sorted = times.clone();
    sorted.sort_unstable();
    assert_eq!(peak(&sorted), brute_peak(&times));
}
