//! OS entropy for [`JitterSource::Entropy`](crate::JitterSource::Entropy),
//! drawn a pool at a time (feature `std`).
//!
//! One `getrandom` call per sample cost ~400 ns on Linux, six times the
//! rest of a `delay`: each thread keeps a pool of 2 KiB from the OS (256
//! words, one system call) and takes one fresh 64-bit word per sample,
//! clearing it as it goes. Every sample is still OS entropy, used once.
//!
//! A pool copied by `fork()` would give the parent and the child the same
//! next samples, so a process that forks and draws entropy in the child
//! must call [`after_fork`] in the child first. The Python package does so
//! through `os.register_at_fork` (RQ, Celery's prefork pool and
//! `multiprocessing` fork workers); Node.js never forks a running process.
//!
//! ```
//! let a = ojs_retry::entropy::word().unwrap();
//! let b = ojs_retry::entropy::word().unwrap();
//! assert_ne!(a, b); // 2^-64 odds of a false failure
//! ```

use core::cell::RefCell;

/// Bytes per pool: one `getrandom` call.
const POOL_BYTES: usize = 2048;

struct Pool {
    bytes: [u8; POOL_BYTES],
    /// The next unread byte; `POOL_BYTES` when the pool is used up.
    next: usize,
}

impl Pool {
    const EMPTY: Self = Self {
        bytes: [0; POOL_BYTES],
        next: POOL_BYTES,
    };

    fn word(&mut self) -> Result<u64, getrandom::Error> {
        if self.next >= POOL_BYTES {
            getrandom::fill(&mut self.bytes)?;
            self.next = 0;
        }
        let i = self.next;
        match self
            .bytes
            .get_mut(i..)
            .and_then(|b| b.first_chunk_mut::<8>())
        {
            Some(w) => {
                let word = u64::from_ne_bytes(*w);
                *w = [0; 8];
                self.next = i.saturating_add(8);
                Ok(word)
            }
            // POOL_BYTES is a multiple of 8: unreachable, and a fresh word
            // from the OS is a correct answer anyway.
            None => getrandom::u64(),
        }
    }
}

std::thread_local! {
    static POOL: RefCell<Pool> = const { RefCell::new(Pool::EMPTY) };
}

/// A fresh 64-bit word of OS entropy, from this thread's pool.
///
/// # Errors
///
/// The OS entropy source's, when it has none to give.
pub fn word() -> Result<u64, getrandom::Error> {
    // A thread being torn down (its pool gone), or a reentrant call (none
    // exists): a word straight from the OS.
    POOL.try_with(|p| match p.try_borrow_mut() {
        Ok(mut p) => p.word(),
        Err(_) => getrandom::u64(),
    })
    .unwrap_or_else(|_| getrandom::u64())
}

/// Empties this thread's pool, so that the next sample comes from a new
/// `getrandom` call. Call it in the child after `fork()`: the child has
/// only the forking thread, whose pool is a copy of the parent's.
///
/// ```
/// ojs_retry::entropy::after_fork();
/// assert!(ojs_retry::entropy::word().is_ok());
/// ```
pub fn after_fork() {
    // A pool that cannot be reached has nothing to clear.
    let _ = POOL.try_with(|p| {
        if let Ok(mut p) = p.try_borrow_mut() {
            *p = Pool::EMPTY;
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::collections::BTreeSet;
    use alloc::vec::Vec;

    #[test]
    fn words_are_fresh_across_refills_and_cleared() {
        // Three pools' worth: 768 words, all different (a repeat has odds
        // of about 2^-45), and each read word is zero in the pool after.
        let mut p = Pool::EMPTY;
        let words: Vec<u64> = (0..768).map(|_| p.word().unwrap()).collect();
        assert_eq!(words.iter().collect::<BTreeSet<_>>().len(), 768);
        assert_eq!(p.next, POOL_BYTES);
        assert!(p.bytes.iter().all(|&b| b == 0));
    }

    #[test]
    fn after_fork_empties_this_threads_pool() {
        let _ = word().unwrap();
        let left = POOL.with(|p| p.borrow().next);
        assert!(left > 0 && left < POOL_BYTES);
        after_fork();
        assert_eq!(POOL.with(|p| p.borrow().next), POOL_BYTES);
        let _ = word().unwrap();
        assert_eq!(POOL.with(|p| p.borrow().next), 8);
    }

    #[test]
    fn threads_draw_from_pools_of_their_own() {
        let a = std::thread::spawn(|| (0..100).map(|_| word().unwrap()).collect::<Vec<_>>());
        let b: Vec<u64> = (0..100).map(|_| word().unwrap()).collect();
        let a = a.join().unwrap();
        let all: BTreeSet<_> = a.iter().chain(b.iter()).collect();
        assert_eq!(all.len(), 200);
    }
}
