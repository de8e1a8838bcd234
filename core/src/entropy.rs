//! OS entropy for [`JitterSource::Entropy`](crate::JitterSource::Entropy)
//! (feature `std`).
//!
//! One `getrandom` call per sample cost ~500 ns on Linux, seven times the
//! rest of a `delay`, and the kernel's generator gives ~20 ns per 8 bytes
//! however much is asked for at once (measured on the development VM).
//! So each thread keeps a ChaCha8 generator (`rand_chacha`) seeded with 32
//! bytes from the OS, reseeded from the OS after every 64 KiB of output, as
//! rand's `ThreadRng` does, and each sample is its next 64-bit word.
//!
//! Eight rounds, not `ThreadRng`'s twelve: ChaCha8 is what Go's runtime
//! and `math/rand/v2` draw from; the best published attack on ChaCha
//! reaches seven rounds; and twelve cost 1.1 ns more per word here (3.9
//! against 2.8 ns, ~1 ns of Node's ~50 ns `delay(n)`). Jitter needs
//! samples no one can predict or repeat across processes, which eight
//! rounds give with margin.
//!
//! The words are made 32 at a time (four ChaCha blocks, with the AVX2 code
//! where the CPU has it) into a buffer of [`Cell`]s, so a draw is an index
//! check and a load, with no borrow flag to set and clear, and it is
//! inlined into the caller: through a call, the `Result` went back through
//! memory and stalled the load that read it (5 ns of the 12 ns a draw
//! cost). Measured: 11.8 → 5.2 ns per word.
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

use core::cell::{Cell, RefCell};
use rand_chacha::ChaCha8Rng;
use rand_core::{RngCore, SeedableRng};

/// Words drawn between two seeds from the OS: 64 KiB, `ThreadRng`'s
/// figure.
const WORDS_PER_SEED: u32 = 64 * 1024 / 8;

/// Words made at once: four ChaCha blocks, what `rand_chacha` computes in
/// one pass.
const BUFFER: usize = 32;

/// A generator of entropy words for one thread: ChaCha8 seeded from the
/// OS and reseeded after every 64 KiB, its output buffered 32 words at a
/// time. [`word`] draws from one kept per thread; a binding that already
/// has a thread-local of its own can keep one there instead and reach both
/// with one thread-local access (the Node.js addon does: 2 ns of a 50 ns
/// `delay(n)`).
///
/// Not `Sync`: it is meant for a `thread_local!`. After a `fork()`, call
/// [`Generator::forget`] in the child (see [`after_fork`]).
///
/// ```
/// use ojs_retry::entropy::Generator;
/// std::thread_local! {
///     static MINE: Generator = const { Generator::new() };
/// }
/// let (a, b) = MINE.with(|g| (g.word(), g.word()));
/// assert_ne!(a.unwrap(), b.unwrap());
/// ```
pub struct Generator {
    /// The buffered words; `words[next..]` are not drawn yet.
    words: [Cell<u64>; BUFFER],
    next: Cell<usize>,
    /// `None` until the first draw, and after [`Generator::forget`].
    rng: RefCell<Option<ChaCha8Rng>>,
    /// Words left before the next seed from the OS.
    left: Cell<u32>,
}

impl Default for Generator {
    fn default() -> Self {
        Self::new()
    }
}

impl Generator {
    /// A generator with no seed yet: the first draw reads one from the OS.
    #[must_use]
    pub const fn new() -> Self {
        Self {
            words: [const { Cell::new(0) }; BUFFER],
            next: Cell::new(BUFFER),
            rng: RefCell::new(None),
            left: Cell::new(0),
        }
    }

    /// The next 64-bit word.
    ///
    /// # Errors
    ///
    /// The OS entropy source's, when it has no seed to give.
    #[inline]
    pub fn word(&self) -> Result<u64, getrandom::Error> {
        let i = self.next.get();
        match self.words.get(i) {
            Some(w) => {
                self.next.set(i.saturating_add(1));
                Ok(w.get())
            }
            None => self.refill(),
        }
    }

    /// Makes the next 32 words (with a new seed when 64 KiB have been
    /// drawn since the last); returns the first.
    #[cold]
    #[inline(never)]
    fn refill(&self) -> Result<u64, getrandom::Error> {
        // Only reachable reentrantly, which nothing here is: a word
        // straight from the OS then.
        let Ok(mut rng) = self.rng.try_borrow_mut() else {
            return getrandom::u64();
        };
        let rng = match &mut *rng {
            Some(rng) if self.left.get() > 0 => rng,
            slot => {
                let mut seed = [0u8; 32];
                getrandom::fill(&mut seed)?;
                self.left.set(WORDS_PER_SEED);
                slot.insert(ChaCha8Rng::from_seed(seed))
            }
        };
        let mut bytes = [0u8; BUFFER * 8];
        rng.fill_bytes(&mut bytes);
        for (w, b) in self.words.iter().zip(bytes.chunks_exact(8)) {
            let mut le = [0u8; 8];
            le.copy_from_slice(b);
            w.set(u64::from_le_bytes(le));
        }
        #[allow(clippy::cast_possible_truncation)] // 32
        self.left.set(self.left.get().saturating_sub(BUFFER as u32));
        // The first word is the caller's.
        self.next.set(1);
        Ok(self.words.first().map_or(0, Cell::get))
    }

    /// Drops the buffered words and the generator, so that the next word
    /// comes from a new seed from the OS (in a child after `fork()`, whose
    /// copy of the buffer the parent draws too).
    pub fn forget(&self) {
        self.next.set(BUFFER);
        self.left.set(0);
        if let Ok(mut rng) = self.rng.try_borrow_mut() {
            *rng = None;
        }
    }
}

std::thread_local! {
    static GENERATOR: Generator = const { Generator::new() };
}

/// A fresh 64-bit word of entropy from this thread's generator.
///
/// # Errors
///
/// The OS entropy source's, when it has no seed to give.
// Inlined: see the module's docs.
#[inline]
pub fn word() -> Result<u64, getrandom::Error> {
    // A thread being torn down (its generator gone): a word straight from
    // the OS.
    GENERATOR
        .try_with(Generator::word)
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
    let _ = GENERATOR.try_with(Generator::forget);
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::collections::BTreeSet;
    use alloc::vec::Vec;

    impl Generator {
        fn seeded(seed: [u8; 32]) -> Self {
            let g = Self::new();
            *g.rng.borrow_mut() = Some(ChaCha8Rng::from_seed(seed));
            g.left.set(WORDS_PER_SEED);
            g
        }
    }

    #[test]
    fn the_words_are_the_chacha8_stream_in_order() {
        // rand_chacha's own `next_u64` over the same seed is the reference:
        // no word skipped, repeated or reordered across refills.
        let seed = [7u8; 32];
        let g = Generator::seeded(seed);
        let mut reference = ChaCha8Rng::from_seed(seed);
        for i in 0..1000 {
            assert_eq!(g.word().unwrap(), reference.next_u64(), "word {i}");
        }
    }

    #[test]
    fn the_seed_is_renewed_after_every_64_kib() {
        let g = Generator::seeded([1u8; 32]);
        let words: Vec<u64> = (0..WORDS_PER_SEED).map(|_| g.word().unwrap()).collect();
        assert_eq!(g.left.get(), 0);
        assert_eq!(g.next.get(), BUFFER);
        // What the old seed would give next, against what is given.
        let mut old = g.rng.borrow().clone().unwrap();
        let continued: Vec<u64> = (0..BUFFER).map(|_| old.next_u64()).collect();
        let given: Vec<u64> = (0..BUFFER).map(|_| g.word().unwrap()).collect();
        assert_ne!(given, continued);
        assert_eq!(g.left.get(), WORDS_PER_SEED - 32);
        // 8 224 words, all different (a repeat has odds of about 2^-38).
        let all: BTreeSet<_> = words.iter().chain(&given).collect();
        assert_eq!(all.len(), words.len() + given.len());
    }

    #[test]
    fn forget_drops_the_buffer_and_the_generator() {
        let g = Generator::seeded([2u8; 32]);
        let _ = g.word().unwrap();
        let buffered: Vec<u64> = g.words[1..].iter().map(Cell::get).collect();
        g.forget();
        assert!(g.rng.borrow().is_none());
        let next: Vec<u64> = (0..31).map(|_| g.word().unwrap()).collect();
        assert_ne!(next, buffered);
        assert!(g.rng.borrow().is_some());
        assert_eq!(g.left.get(), WORDS_PER_SEED - 32);
    }

    #[test]
    fn after_fork_drops_this_threads_generator() {
        let _ = word().unwrap();
        assert!(GENERATOR.with(|g| g.rng.borrow().is_some()));
        after_fork();
        assert!(GENERATOR.with(|g| g.rng.borrow().is_none() && g.next.get() == BUFFER));
        let _ = word().unwrap();
        assert_eq!(GENERATOR.with(|g| g.left.get()), WORDS_PER_SEED - 32);
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
