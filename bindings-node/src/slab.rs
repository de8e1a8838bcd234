//! The policies of this thread, addressed from JS by a number (a handle).
//!
//! A `RetryPolicy` is a plain JS class in the loader (`index.js`) holding a
//! handle in a private field, not a napi-rs class instance: wrapping a
//! native object in a JS object (`napi_wrap`, its weak reference, napi-rs's
//! per-instance bookkeeping) cost ~0.85 µs per policy, twice the parse
//! itself. The loader frees a policy's entry from a `FinalizationRegistry`
//! once its JS object is collected ([`release`]).
//!
//! Thread-local: every Node worker thread runs its own JS heap, and its JS
//! objects (and so the handles they hold) never reach another thread.
//!
//! A handle is `generation × 2^24 + index`, below 2^31: V8 keeps it as a
//! small integer (no heap number in the object, the registry, or the
//! results; measured ~2.5% of `new RetryPolicy(text)` against 53-bit
//! handles). So a thread holds at most 2^24 live policies. The generation
//! of a slot (1 ..= 127) changes every time the slot is freed, so a handle
//! kept past its policy's release (only possible by calling the addon's
//! hidden exports directly) is reported as unknown instead of reaching
//! whichever policy took the slot next — unless that one slot has been
//! reused a multiple of 127 times since.
//!
//! No borrow of the table is held while JS can run (reading arguments may
//! call getters, which may create policies): callers either take an `Rc`
//! out ([`get`]) or compute inside [`with`], which must not call into JS.

use std::cell::RefCell;
use std::rc::Rc;

use ojs_retry::RetryPolicy;

/// The index takes the low 24 bits of a handle.
const INDEX_BITS: u32 = 24;
const INDEX_MASK: u32 = (1 << INDEX_BITS) - 1;
/// Generations run `1 ..= MAX_GENERATION` (so no handle is 0) and wrap;
/// the largest handle is `2^31 − 1`.
const MAX_GENERATION: u32 = (1 << (31 - INDEX_BITS)) - 1;

struct Slot {
    generation: u32,
    policy: Option<Rc<RetryPolicy>>,
}

struct Slab {
    slots: Vec<Slot>,
    /// Indices of empty slots, reused last-freed first (warm in cache).
    free: Vec<u32>,
    live: usize,
}

/// This thread's policies, and its entropy for `delay(n)`: one
/// thread-local, so that [`with_word`] reaches both with one access (a
/// thread-local in a shared library is a call to `__tls_get_addr`; 2 ns of
/// the 50 ns `delay(n)`). Node.js never forks a running process, so this
/// generator needs no `after_fork`.
struct Local {
    table: RefCell<Slab>,
    entropy: ojs_retry::entropy::Generator,
}

thread_local! {
    static LOCAL: Local = const {
        Local {
            table: RefCell::new(Slab {
                slots: Vec::new(),
                free: Vec::new(),
                live: 0,
            }),
            entropy: ojs_retry::entropy::Generator::new(),
        }
    };
}

/// Runs `f` on this thread's table.
#[inline]
fn table<T>(f: impl FnOnce(&RefCell<Slab>) -> T) -> T {
    LOCAL.with(|l| f(&l.table))
}

/// Why a policy could not be stored.
pub enum InsertError {
    /// 2^24 policies alive in one thread: the index space is used up.
    Full,
    /// The table was borrowed (a bug: nothing holds it across JS).
    Busy,
}

/// Splits a handle into (index, generation); `None` for any number that no
/// handle can be.
#[inline]
fn split(handle: f64) -> Option<(usize, u32)> {
    // The saturating cast and the exact round trip reject NaN, negatives,
    // fractions and numbers from 2^32 up (2^32 − 1 itself is generation 255,
    // which no slot has).
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    let h = handle as u32;
    if f64::from(h) != handle {
        return None;
    }
    let index = usize::try_from(h & INDEX_MASK).ok()?;
    Some((index, h >> INDEX_BITS))
}

fn join(index: u32, generation: u32) -> f64 {
    f64::from((generation << INDEX_BITS) | index)
}

/// Stores a policy; returns its handle.
pub fn insert(policy: RetryPolicy) -> Result<f64, InsertError> {
    let policy = Rc::new(policy);
    table(|s| {
        let mut s = s.try_borrow_mut().map_err(|_| InsertError::Busy)?;
        let s = &mut *s;
        if let Some(index) = s.free.pop() {
            let generation = match s.slots.get_mut(index as usize) {
                Some(slot) => {
                    slot.policy = Some(policy);
                    slot.generation
                }
                // Unreachable: the free list only holds indices of slots.
                None => return Err(InsertError::Busy),
            };
            s.live = s.live.saturating_add(1);
            return Ok(join(index, generation));
        }
        let index = u32::try_from(s.slots.len())
            .ok()
            .filter(|i| *i <= INDEX_MASK)
            .ok_or(InsertError::Full)?;
        s.slots.push(Slot {
            generation: 1,
            policy: Some(policy),
        });
        s.live = s.live.saturating_add(1);
        Ok(join(index, 1))
    })
}

/// Runs `f` on the shared policy of `handle` (`None`: unknown or released
/// handle). `f` must not call into JS.
#[inline]
fn with_rc<T>(handle: f64, f: impl FnOnce(&Rc<RetryPolicy>) -> T) -> Option<T> {
    let (index, generation) = split(handle)?;
    table(|s| {
        let s = s.try_borrow().ok()?;
        let slot = s.slots.get(index)?;
        if slot.generation != generation {
            return None;
        }
        slot.policy.as_ref().map(f)
    })
}

/// Runs `f` on the policy of `handle` and a fresh word of entropy (`None`:
/// unknown or released handle, or no entropy from the OS). `f` must not
/// call into JS.
#[inline]
pub fn with_word<T>(handle: f64, f: impl FnOnce(&RetryPolicy, u64) -> T) -> Option<T> {
    let (index, generation) = split(handle)?;
    LOCAL.with(|l| {
        let word = l.entropy.word().ok()?;
        let s = l.table.try_borrow().ok()?;
        let slot = s.slots.get(index)?;
        if slot.generation != generation {
            return None;
        }
        slot.policy.as_deref().map(|p| f(p, word))
    })
}

/// Runs `f` on the policy of `handle` (`None`: unknown or released handle).
/// `f` must not call into JS.
#[inline]
pub fn with<T>(handle: f64, f: impl FnOnce(&RetryPolicy) -> T) -> Option<T> {
    with_rc(handle, |p| f(p))
}

/// The policy of `handle`, to keep while JS runs (`None`: unknown or
/// released handle).
pub fn get(handle: f64) -> Option<Rc<RetryPolicy>> {
    with_rc(handle, Rc::clone)
}

/// Frees the entry of `handle`; an unknown or already released handle is
/// left alone. The policy itself is dropped here, or when the last call
/// still using it returns.
pub fn release(handle: f64) {
    let Some((index, generation)) = split(handle) else {
        return;
    };
    let Ok(index32) = u32::try_from(index) else {
        return;
    };
    let dropped = table(|s| {
        let mut s = s.try_borrow_mut().ok()?;
        let s = &mut *s;
        let slot = s.slots.get_mut(index)?;
        if slot.generation != generation {
            return None;
        }
        let policy = slot.policy.take()?;
        slot.generation = if slot.generation >= MAX_GENERATION {
            1
        } else {
            slot.generation.saturating_add(1)
        };
        s.free.push(index32);
        s.live = s.live.saturating_sub(1);
        Some(policy)
    });
    // Dropped outside the borrow.
    drop(dropped);
}

/// How many policies this thread holds.
pub fn live() -> usize {
    table(|s| s.try_borrow().map_or(0, |s| s.live))
}
