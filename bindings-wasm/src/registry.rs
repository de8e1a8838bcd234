//! The live policies by handle. `api.js`'s `RetryPolicy` is a plain JS
//! class whose instances hold a handle (a number) into this registry, and
//! every policy export takes the handle: no wasm-bindgen object per policy
//! (its `FinalizationRegistry` entry with an unregister token cost more
//! than the rest of `new RetryPolicy()`), no method shim per call (a
//! shadow-stack frame, the `WasmRefCell` borrow and its error path).
//!
//! A handle is `generation · 2^25 + slot`, below 2^31: a small integer
//! that V8 keeps unboxed, and that the fast exports take as an `i32`.
//! 2^25 slots: more policies than fit the 4 GiB of a wasm32 memory (a
//! synchronous loop of `new RetryPolicy()` keeps every slot until it
//! yields to the finalizers). `free()` drops the policy at
//! once but keeps the slot until the class's `FinalizationRegistry`
//! reports the object collected ([`release`]); only then is the slot reused,
//! with the next generation. So a live object's handle never names another
//! policy (a freed object's slot cannot be taken before the object is
//! gone), and the registration needs no unregister token. Generations also
//! keep handles made up through the raw exports from reaching a policy
//! that took a reused slot: an unknown or stale handle is an invalid
//! argument like any other.

use crate::lock::RwLock;
use alloc::sync::Arc;
use alloc::vec::Vec;

use ojs_retry::RetryPolicy;

/// Slots per registry: a handle's low bits.
const SLOT_BITS: u32 = 25;
/// The most slots a registry holds (live items, and freed ones whose
/// object is not collected yet).
pub(crate) const MAX_SLOTS: u32 = 1 << SLOT_BITS;
/// Generations wrap at 2^6, so that a handle stays below 2^31. They only
/// guard handles that `api.js` never passes (made up, or kept past a
/// `free()` in a host without `FinalizationRegistry`): a live object's
/// slot is never reused.
const GENERATIONS: u32 = 1 << (31 - SLOT_BITS);

struct Slot<T> {
    generation: u32,
    item: Option<T>,
    /// `free()` dropped the item; the object still holds the handle.
    freed: bool,
}

/// Items by handle (see the module docs): the policies, and the
/// `RetryState` / `Reservation` objects ([`OBJECTS`]).
pub(crate) struct Registry<T> {
    slots: Vec<Slot<T>>,
    free: Vec<u32>,
    /// [`MAX_SLOTS`], smaller in tests.
    max: u32,
}

/// A `RetryState` or a `Reservation` of `api.js`, by handle.
pub(crate) enum Obj {
    State(ojs_retry::RetryState),
    Reservation(ojs_retry::Reservation),
}

// A lock in a static rather than a `thread_local!` (whose every access is
// an indirect call at opt-level "z"); on wasm32-unknown-unknown, which has
// no threads, it is a plain cell. A static must be `Sync`, hence `Arc`
// (without threads its counts are plain integers too).
static POLICIES: RwLock<Registry<Arc<RetryPolicy>>> = RwLock::new(Registry::new());

/// The `RetryState` and `Reservation` objects: no JS runs while one is
/// borrowed (every argument is converted in `api.js` before the call).
pub(crate) static OBJECTS: RwLock<Registry<Obj>> = RwLock::new(Registry::new());

fn handle_of(slot: u32, generation: u32) -> f64 {
    f64::from((generation << SLOT_BITS) | slot)
}

/// `(slot, generation)` of a handle, `None` for anything that is not one.
#[inline(always)]
fn split(handle: f64) -> Option<(usize, u32)> {
    // The fast exports' check: `handle` is a JS number, any number. As
    // `u32` it is exact (`fast_u32`'s check), and then split as they do.
    let h = fast_u32(handle)?;
    split_u32(h)
}

/// [`split`] of a handle as the fast exports take it (an `i32` of wasm,
/// whatever number JS passed converted by `ToInt32`; read here as `u32`).
#[inline(always)]
fn split_u32(h: u32) -> Option<(usize, u32)> {
    let slot = usize::try_from(h & (MAX_SLOTS - 1)).ok()?;
    Some((slot, h >> SLOT_BITS))
}

/// `x` as a `u32` when it is exactly one.
#[inline(always)]
fn fast_u32(x: f64) -> Option<u32> {
    ojs_retry::args::uint_below_2_52(x).and_then(|h| u32::try_from(h).ok())
}

/// Why a handle names no item.
pub(crate) enum Miss {
    /// `free()` dropped it; the object is not collected yet.
    Freed,
    /// Released, never made, or of another generation.
    Unknown,
}

impl<T> Registry<T> {
    const fn new() -> Self {
        Self::with_max(MAX_SLOTS)
    }

    const fn with_max(max: u32) -> Self {
        Self {
            slots: Vec::new(),
            free: Vec::new(),
            max,
        }
    }

    /// Registers an item: its handle.
    pub(crate) fn register(&mut self, item: T) -> Option<f64> {
        if let Some(i) = self.free.pop() {
            let slot = self.slots.get_mut(usize::try_from(i).ok()?)?;
            slot.item = Some(item);
            return Some(handle_of(i, slot.generation));
        }
        let i = u32::try_from(self.slots.len())
            .ok()
            .filter(|&i| i < self.max)?;
        self.slots.push(Slot {
            generation: 0,
            item: Some(item),
            freed: false,
        });
        Some(handle_of(i, 0))
    }

    fn slot(&mut self, handle: f64) -> Option<(usize, &mut Slot<T>)> {
        let (i, generation) = split(handle)?;
        let slot = self.slots.get_mut(i)?;
        (slot.generation == generation).then_some((i, slot))
    }

    /// Drops the item now (`free()`); its slot stays taken until
    /// [`Registry::release`], so the handle reads as freed until then.
    pub(crate) fn free(&mut self, handle: f64) {
        if let Some((_, slot)) = self.slot(handle) {
            if slot.item.take().is_some() {
                slot.freed = true;
            }
        }
    }

    /// Gives the slot of a collected object back (dropping the item,
    /// unless [`Registry::free`] did): it is reused with the next
    /// generation.
    pub(crate) fn release(&mut self, handle: f64) {
        let Some((i, slot)) = self.slot(handle) else {
            return;
        };
        slot.item = None;
        slot.freed = false;
        slot.generation = (slot.generation + 1) % GENERATIONS;
        if let Ok(i) = u32::try_from(i) {
            self.free.push(i);
        }
    }

    /// The item behind `handle`, or why there is none.
    pub(crate) fn get_mut(&mut self, handle: f64) -> Result<&mut T, Miss> {
        let (_, slot) = self.slot(handle).ok_or(Miss::Unknown)?;
        match &mut slot.item {
            Some(item) => Ok(item),
            None if slot.freed => Err(Miss::Freed),
            None => Err(Miss::Unknown),
        }
    }

    /// How many slots are taken.
    fn taken(&self) -> Option<u64> {
        u64::try_from(self.slots.len().saturating_sub(self.free.len())).ok()
    }
}

/// Registers a policy; the handle to pass to [`with`] and [`release`].
///
/// `None` only if the registry is borrowed, which cannot happen here: no
/// JS runs while an export holds it.
pub(crate) fn register(policy: Arc<RetryPolicy>) -> Option<f64> {
    POLICIES.try_write().ok()?.register(policy)
}

/// Drops the policy behind `handle` now (`free()`).
pub(crate) fn free(handle: f64) {
    if let Ok(mut r) = POLICIES.try_write() {
        r.free(handle);
    }
}

/// Gives the slot of a collected policy back.
pub(crate) fn release(handle: f64) {
    // Busy (impossible, see `register`): the slot stays taken, which
    // only keeps this policy's memory.
    if let Ok(mut r) = POLICIES.try_write() {
        r.release(handle);
    }
}

/// The policy behind `handle` (an `Arc` of its own), or why there is none.
pub(crate) fn get(handle: f64) -> Result<Arc<RetryPolicy>, Miss> {
    let mut r = POLICIES.try_write().map_err(|_| Miss::Unknown)?;
    r.get_mut(handle).map(|p| Arc::clone(p))
}

/// How many slots are taken, policies and objects (live ones, and freed
/// ones whose object is not collected yet).
pub(crate) fn taken() -> Option<u64> {
    let p = POLICIES.try_read().ok()?.taken()?;
    let o = OBJECTS.try_read().ok()?.taken()?;
    p.checked_add(o)
}

/// `f(policy)` for the policy behind the handle as the fast exports take
/// it, or `-1`: their route, as small as it can be.
#[inline(always)]
pub(crate) fn fast(handle: u32, f: impl FnOnce(&RetryPolicy) -> f64) -> f64 {
    let Ok(r) = POLICIES.try_read() else {
        return -1.0;
    };
    let Some((i, generation)) = split_u32(handle) else {
        return -1.0;
    };
    match r.slots.get(i) {
        Some(Slot {
            generation: g,
            item: Some(p),
            ..
        }) if *g == generation => f(p),
        _ => -1.0,
    }
}

/// `f` of the policy behind `handle`, `None` when there is none.
pub(crate) fn with<R>(handle: f64, f: impl FnOnce(&RetryPolicy) -> R) -> Option<R> {
    let r = POLICIES.try_read().ok()?;
    let (i, generation) = split(handle)?;
    let slot = r.slots.get(i)?;
    if slot.generation != generation {
        return None;
    }
    slot.item.as_deref().map(f)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_agrees_with_the_conversion() {
        // `split` by the definition: an integer handle in 0..2^32, its low
        // 21 bits the slot and the rest the generation.
        fn reference(handle: f64) -> Option<(usize, u32)> {
            let ok = (0.0..4_294_967_296.0).contains(&handle) && handle.fract() == 0.0;
            #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
            let h = handle as u64;
            ok.then(|| {
                (
                    usize::try_from(h % (1 << 25)).unwrap_or(usize::MAX),
                    u32::try_from(h / (1 << 25)).unwrap_or(u32::MAX),
                )
            })
        }
        let mut hs = alloc::vec![
            0.0,
            -0.0,
            0.5,
            1.0,
            7.0,
            -1.0,
            f64::NAN,
            f64::INFINITY,
            33_554_431.0,
            33_554_432.0,
            33_554_432.5,
            2_147_483_647.0,
            2_147_483_648.0,
            4_294_967_295.0,
            4_294_967_295.5,
            4_294_967_296.0,
            4_503_599_627_370_496.0,
            1e300,
        ];
        // A deterministic spread (the core's SplitMix64 stream).
        for i in 1..=100_000 {
            let w = ojs_retry::jitter::splitmix64(0x5eed, i);
            #[allow(clippy::cast_precision_loss)]
            let (k, j) = ((w >> 12) as f64, (w >> 32) as f64);
            hs.extend([f64::from_bits(w), k, k + 0.5, k / 2.0, j, j + 0.5]);
        }
        for h in hs {
            assert_eq!(split(h), reference(h), "{h:?}");
        }
    }

    #[test]
    fn handles_stay_small_integers_and_slots_are_bounded() {
        // One slot reused through every generation: each handle is below
        // 2^31 (a small integer in V8) and generations wrap.
        let mut r: Registry<u8> = Registry::new();
        let mut seen = alloc::vec::Vec::new();
        let mut h = r.register(0).unwrap_or(-1.0);
        for _ in 0..=GENERATIONS {
            assert!((0.0..2_147_483_648.0).contains(&h), "{h}");
            assert_eq!(split(h).map(|s| s.0), Some(0));
            seen.push(h);
            r.release(h);
            h = r.register(0).unwrap_or(-1.0);
        }
        assert_eq!(
            seen.first(),
            seen.last(),
            "generations wrap after {GENERATIONS}"
        );
        assert_eq!(seen.get(1), Some(&33_554_432.0));
        assert_eq!(GENERATIONS, 64);
        // The last slot's handles stay below 2^31 too.
        assert_eq!(handle_of(MAX_SLOTS - 1, GENERATIONS - 1), 2_147_483_647.0);
        // Slots up to the most, then no more (a registry of 1000 here).
        let mut r: Registry<u8> = Registry::with_max(1000);
        for i in 0..1000 {
            assert_eq!(r.register(1), Some(f64::from(i)));
        }
        assert_eq!(r.register(1), None);
        r.release(5.0);
        assert_eq!(r.register(1), Some(33_554_432.0 + 5.0));
    }

    #[test]
    fn handles_are_not_reused_across_generations() {
        let a = register(Arc::new(RetryPolicy::default())).unwrap_or(-1.0);
        assert_eq!(with(a, RetryPolicy::max_attempts), Some(3));
        release(a);
        assert_eq!(with(a, RetryPolicy::max_attempts), None);
        let b = register(Arc::new(
            RetryPolicy::from_json(r#"{"max_attempts": 7}"#).unwrap_or_default(),
        ))
        .unwrap_or(-1.0);
        assert_ne!(a, b);
        // Same slot, next generation: the old handle stays dead.
        assert_eq!(split(a).map(|s| s.0), split(b).map(|s| s.0));
        assert_eq!(with(a, RetryPolicy::max_attempts), None);
        assert_eq!(with(b, RetryPolicy::max_attempts), Some(7));
        release(a); // stale: no effect
        assert_eq!(with(b, RetryPolicy::max_attempts), Some(7));
        release(b);
        // free(): the policy goes at once, the slot stays taken (the
        // handle reads as freed) until release().
        let c = register(Arc::new(RetryPolicy::default())).unwrap_or(-1.0);
        let before = taken();
        free(c);
        assert!(matches!(get(c), Err(Miss::Freed)));
        assert_eq!(with(c, RetryPolicy::max_attempts), None);
        assert_eq!(taken(), before);
        let d = register(Arc::new(RetryPolicy::default())).unwrap_or(-1.0);
        assert_ne!(split(c).map(|s| s.0), split(d).map(|s| s.0));
        release(c);
        assert!(matches!(get(c), Err(Miss::Unknown)));
        assert_eq!(taken(), before); // c gave its slot back, d took one
        release(d);
        for bad in [
            -1.0,
            0.5,
            f64::NAN,
            f64::INFINITY,
            1e300,
            a + 0.5,
            b - 0.5,
            2_147_483_648.0, // 2^31: generation 2^6
            4_294_967_296.0,
            4_503_599_627_370_496.0,
        ] {
            assert_eq!(with(bad, RetryPolicy::max_attempts), None);
        }
    }
}
