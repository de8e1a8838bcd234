//! OS entropy for [`JitterSource::Entropy`](crate::JitterSource::Entropy)
//! (feature `std`).
//!
//! One `getrandom` call per sample cost ~500 ns on Linux, seven times the
//! rest of a `delay`, and the kernel's generator gives ~20 ns per 8 bytes
//! however much is asked for at once (measured on the development VM).
//! So each thread keeps a ChaCha12 generator (`rand_chacha`, the generator
//! of rand's `ThreadRng`) seeded with 32 bytes from the OS, reseeded from
//! the OS after every 64 KiB of output, as `ThreadRng` does, and each
//! sample is its next 64-bit word: a few ns.
//!
//! A generator copied by `fork()` would give the parent and the child the
//! same next samples, so a process that forks and draws entropy in the
//! child must call [`after_fork`] in the child first. The Python package
//! does so through `os.register_at_fork` (RQ, Celery's prefork pool and
//! `multiprocessing` fork workers); Node.js never forks a running process.
//!
//! ```
//! let a = ojs_retry::entropy::word().unwrap();
//! let b = ojs_retry::entropy::word().unwrap();
//! assert_ne!(a, b); // 2^-64 odds of a false failure
//! ```

use core::cell::RefCell;
use rand_chacha::ChaCha12Rng;
use rand_core::{RngCore, SeedableRng};

/// Words drawn between two seeds from the OS: 64 KiB, `ThreadRng`'s
/// figure.
const WORDS_PER_SEED: u32 = 64 * 1024 / 8;

struct Generator {
    rng: Option<ChaCha12Rng>,
    /// Words left before the next seed from the OS.
    left: u32,
}

impl Generator {
    const UNSEEDED: Self = Self { rng: None, left: 0 };

    fn word(&mut self) -> Result<u64, getrandom::Error> {
        let rng = match &mut self.rng {
            Some(rng) if self.left > 0 => rng,
            _ => {
                let mut seed = [0u8; 32];
                getrandom::fill(&mut seed)?;
                self.left = WORDS_PER_SEED;
                self.rng.insert(ChaCha12Rng::from_seed(seed))
            }
        };
        self.left = self.left.saturating_sub(1);
        Ok(rng.next_u64())
    }
}

std::thread_local! {
    static GENERATOR: RefCell<Generator> = const { RefCell::new(Generator::UNSEEDED) };
}

/// A fresh 64-bit word of entropy from this thread's generator.
///
/// # Errors
///
/// The OS entropy source's, when it has no seed to give.
pub fn word() -> Result<u64, getrandom::Error> {
    // A thread being torn down (its generator gone), or a reentrant call
    // (none exists): a word straight from the OS.
    GENERATOR
        .try_with(|g| match g.try_borrow_mut() {
            Ok(mut g) => g.word(),
            Err(_) => getrandom::u64(),
        })
        .unwrap_or_else(|_| getrandom::u64())
}

/// Drops this thread's generator, so that the next sample comes from a
/// new seed from the OS. Call it in the child after `fork()`: the child
/// has only the forking thread, whose generator is a copy of the parent's.
///
/// ```
/// ojs_retry::entropy::after_fork();
/// assert!(ojs_retry::entropy::word().is_ok());
/// ```
pub fn after_fork() {
    // A generator that cannot be reached has nothing to drop.
    let _ = GENERATOR.try_with(|g| {
        if let Ok(mut g) = g.try_borrow_mut() {
            *g = Generator::UNSEEDED;
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::collections::BTreeSet;
    use alloc::vec::Vec;

    #[test]
    fn words_are_fresh_and_the_seed_is_renewed_every_64_kib() {
        let mut g = Generator::UNSEEDED;
        let first = g.word().unwrap();
        assert_eq!(g.left, WORDS_PER_SEED - 1);
        let mut words: Vec<u64> = (1..WORDS_PER_SEED).map(|_| g.word().unwrap()).collect();
        words.push(first);
        assert_eq!(g.left, 0);
        // The next word comes from a new seed.
        words.push(g.word().unwrap());
        assert_eq!(g.left, WORDS_PER_SEED - 1);
        // 8 193 words, all different (a repeat has odds of about 2^-38).
        assert_eq!(words.iter().collect::<BTreeSet<_>>().len(), words.len());
    }

    #[test]
    fn after_fork_drops_this_threads_generator() {
        let _ = word().unwrap();
        assert!(GENERATOR.with(|g| g.borrow().rng.is_some()));
        after_fork();
        assert!(GENERATOR.with(|g| g.borrow().rng.is_none()));
        let _ = word().unwrap();
        assert_eq!(GENERATOR.with(|g| g.borrow().left), WORDS_PER_SEED - 1);
    }

    #[test]
    fn threads_draw_from_generators_of_their_own() {
        let a = std::thread::spawn(|| (0..100).map(|_| word().unwrap()).collect::<Vec<_>>());
        let b: Vec<u64> = (0..100).map(|_| word().unwrap()).collect();
        let a = a.join().unwrap();
        let all: BTreeSet<_> = a.iter().chain(b.iter()).collect();
        assert_eq!(all.len(), 200);
    }
}
