//! Fixtures shared by the Rust benchmarks (`benches/core.rs`): the policy
//! every runtime's benchmark uses, and the hand-written baseline the engine
//! is measured against.
//!
//! The policy is the spec's §12.3 document as written (exponential,
//! `PT15S` × 4 per retry, capped at `PT1H`, ±50 % jitter), so that the
//! hand-written formula, backon, backoff and the engine all compute the same
//! curve.
//!
//! ```
//! let mut rng = ojs_retry_bench::FastRng(7);
//! let d = ojs_retry_bench::hand_written_delay(1, &mut rng);
//! assert!((7_500..22_500).contains(&d));
//! ```

/// The spec's §12.3 policy document, as written (exponential).
pub const POLICY_12_3: &str = include_str!("../../examples/12.3-aggressive-dead-letter.json");

/// `initial_interval` of §12.3 in ms.
pub const INITIAL_MS: u64 = 15_000;
/// `backoff_coefficient` of §12.3.
pub const COEFFICIENT: f64 = 4.0;
/// `max_interval` of §12.3 in ms.
pub const CAP_MS: u64 = 3_600_000;

/// The fastest reasonable RNG a hand-written backoff would use: SplitMix64
/// as a stream (one add, two multiplies).
#[derive(Debug, Clone)]
pub struct FastRng(pub u64);

impl FastRng {
    /// The next uniform sample in `[0, 1)` (53 bits).
    #[allow(clippy::cast_precision_loss)] // 53 bits: exact
    pub fn next_unit(&mut self) -> f64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^= z >> 31;
        (z >> 11) as f64 * (1.0 / (1_u64 << 53) as f64)
    }
}

/// What a user writes by hand instead of using a library: the §12.3 curve,
/// `min(I·C^(n−1), cap) · (0.5 + u)`, with no validation and no
/// saturation. This is the floor the engine's `delay(n)` is compared with.
#[must_use]
#[allow(
    clippy::cast_precision_loss,
    clippy::cast_possible_truncation,
    clippy::cast_sign_loss,
    clippy::cast_possible_wrap
)]
pub fn hand_written_delay(n: u32, rng: &mut FastRng) -> u64 {
    let raw = INITIAL_MS as f64 * COEFFICIENT.powi(n as i32 - 1);
    let capped = raw.min(CAP_MS as f64);
    (capped * (0.5 + rng.next_unit())).min(CAP_MS as f64) as u64
}
