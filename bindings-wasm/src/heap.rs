//! The module's allocator: blocks of power-of-two sizes, a list of freed
//! blocks per size, and fresh blocks cut in order from pages the module
//! grows its memory by.
//!
//! Hand-written for size. It replaced talc with free lists in front of it
//! (talc 1.2 KB and the lists 0.6 KB of wasm): 1.6 KB less after wasm-opt,
//! 0.8 KB gzipped, against the 50 KiB target (bench/RESULTS.md); Rust's
//! default, dlmalloc, is larger still. What it gives up: blocks are never
//! split or merged, so a block is up to twice its request (a `Vec`
//! growing by doubling fits exactly), and freed memory is kept for the
//! next request of its size rather than given to other sizes. The engine's
//! allocations are small and short-lived (a policy is five), so the
//! module's memory stays at its peak use per size. A request or a free is
//! a few loads and stores (no search).
//!
//! Single-threaded wasm only (as the module is), which is why it is built
//! only there (and for its tests, which use one instance from one thread):
//! the lists are atomics because a static must be `Sync`, and without the
//! `atomics` feature their relaxed operations are plain loads and stores;
//! with threads, a load and the store after it could interleave.

// A global allocator cannot be written without `unsafe`: the trait is
// unsafe, and a free list stores its links inside the freed blocks.
#![allow(unsafe_code)]

use core::alloc::{GlobalAlloc, Layout};
use core::ptr;
use core::sync::atomic::{AtomicPtr, AtomicUsize, Ordering::Relaxed};

/// The smallest block, and the alignment of every block (the link stored
/// in a freed block needs 4; no type in the module asks for more than 16).
const MIN: usize = 16;
/// Sizes: 16 B, 32 B, …, 2 GiB.
const CLASSES: usize = 28;
/// A wasm page.
pub(crate) const PAGE: usize = 1 << 16;

/// Where fresh memory comes from: `memory.grow` in the module.
pub(crate) trait Pages {
    /// Grows memory by `n` pages: the address of the first new byte, or
    /// `None` when the host refuses.
    fn grow(&self, n: usize) -> Option<usize>;
}

/// The module's memory 0.
#[cfg(target_family = "wasm")]
pub(crate) struct Wasm;

#[cfg(target_family = "wasm")]
impl Pages for Wasm {
    fn grow(&self, n: usize) -> Option<usize> {
        let old = core::arch::wasm32::memory_grow(0, n);
        (old != usize::MAX).then(|| old.wrapping_mul(PAGE))
    }
}

/// The allocator (see the module's documentation).
pub(crate) struct Heap<P> {
    pages: P,
    heads: [AtomicPtr<u8>; CLASSES],
    /// The next fresh block, and the end of the memory grown so far.
    next: AtomicUsize,
    end: AtomicUsize,
}

impl<P> Heap<P> {
    pub(crate) const fn new(pages: P) -> Self {
        Self {
            pages,
            heads: [const { AtomicPtr::new(ptr::null_mut()) }; CLASSES],
            next: AtomicUsize::new(0),
            end: AtomicUsize::new(0),
        }
    }
}

/// The size class of `layout` (its blocks are `MIN << c` bytes), or
/// `None` for an alignment above `MIN` or a size above the largest.
#[inline(always)]
fn class(layout: Layout) -> Option<usize> {
    if layout.align() > MIN {
        return None;
    }
    // ⌈log2 size⌉ − 4, with sizes up to 16 in the first class.
    let bits = usize::BITS - (layout.size().max(MIN) - 1).leading_zeros();
    let c = (bits as usize).wrapping_sub(4);
    (c < CLASSES).then_some(c)
}

impl<P: Pages> Heap<P> {
    /// A block of `size` bytes (a class's) from fresh memory.
    #[cold]
    fn fresh(&self, size: usize) -> *mut u8 {
        let mut at = self.next.load(Relaxed);
        let end = self.end.load(Relaxed);
        if end.wrapping_sub(at) < size {
            let n = size.div_ceil(PAGE);
            let Some(start) = self.pages.grow(n) else {
                return ptr::null_mut();
            };
            // The end of wasm32's largest memory (4 GiB) is 2^32, which a
            // 32-bit address cannot hold: those last pages are refused.
            let Some(new_end) = n.checked_mul(PAGE).and_then(|b| start.checked_add(b)) else {
                return ptr::null_mut();
            };
            // Grown memory follows the old end, unless something else grew
            // it in between: then the rest of the old pages is left unused.
            if start != end {
                at = start;
            }
            self.end.store(new_end, Relaxed);
        }
        // `at + size` is within `end` now, which did not overflow.
        self.next.store(at.wrapping_add(size), Relaxed);
        at as *mut u8
    }
}

// SAFETY (for the impl as a whole): every block is `MIN << c` bytes for
// its class `c`, aligned to `MIN` (pages are, and every size is a multiple
// of `MIN`), and cut once from fresh memory, so blocks never overlap. A
// block on a list was freed by its owner (so nothing else refers to it)
// and holds the link to the next in its first bytes. A block popped from
// a list is therefore exclusively ours and satisfies any layout of its
// class. The module is single-threaded, so the list operations cannot
// interleave.
unsafe impl<P: Pages> GlobalAlloc for Heap<P> {
    #[inline]
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let Some(c) = class(layout) else {
            return ptr::null_mut();
        };
        let Some(head) = self.heads.get(c) else {
            return ptr::null_mut();
        };
        let block = head.load(Relaxed);
        if block.is_null() {
            return self.fresh(MIN << c);
        }
        // SAFETY: see the impl: a listed block holds the link to the next.
        head.store(unsafe { block.cast::<*mut u8>().read() }, Relaxed);
        block
    }

    #[inline]
    unsafe fn dealloc(&self, block: *mut u8, layout: Layout) {
        if let Some(head) = class(layout).and_then(|c| self.heads.get(c)) {
            // SAFETY: the block is ours now (freed by its owner) and has
            // room for the link, aligned (see the impl).
            unsafe { block.cast::<*mut u8>().write(head.load(Relaxed)) };
            head.store(block, Relaxed);
        }
    }

    #[inline]
    unsafe fn realloc(&self, block: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let Ok(new_layout) = Layout::from_size_align(new_size, layout.align()) else {
            return ptr::null_mut();
        };
        if class(layout).is_some() && class(layout) == class(new_layout) {
            // Still fits its block.
            return block;
        }
        // SAFETY: a valid layout; the copy is within both blocks (the
        // smaller of the two sizes), which do not overlap.
        unsafe {
            let new = self.alloc(new_layout);
            if !new.is_null() {
                ptr::copy_nonoverlapping(block, new, layout.size().min(new_size));
                self.dealloc(block, layout);
            }
            new
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;
    use std::collections::HashSet;

    /// Pages from a region of the test process, handed out in order, up
    /// to a limit; `gap` leaves a page unused before the next grow (as if
    /// something else had grown memory in between).
    struct Arena {
        base: usize,
        used: Cell<usize>,
        limit: usize,
        gap: Cell<bool>,
    }

    impl Arena {
        fn new(limit: usize) -> Self {
            let layout = Layout::from_size_align(limit * PAGE, PAGE).unwrap();
            let base = unsafe { std::alloc::alloc(layout) } as usize;
            assert_ne!(base, 0);
            Self {
                base,
                used: Cell::new(0),
                limit,
                gap: Cell::new(false),
            }
        }
    }

    impl Drop for Arena {
        fn drop(&mut self) {
            let layout = Layout::from_size_align(self.limit * PAGE, PAGE).unwrap();
            unsafe { std::alloc::dealloc(self.base as *mut u8, layout) };
        }
    }

    impl Pages for Arena {
        fn grow(&self, n: usize) -> Option<usize> {
            let skip = usize::from(self.gap.replace(false));
            let start = self.used.get() + skip;
            if start + n > self.limit {
                return None;
            }
            self.used.set(start + n);
            Some(self.base + start * PAGE)
        }
    }

    unsafe fn fill(p: *mut u8, len: usize, tag: u8) {
        unsafe { ptr::write_bytes(p, tag, len) };
    }

    unsafe fn holds(p: *const u8, len: usize, tag: u8) -> bool {
        (0..len).all(|i| unsafe { p.add(i).read() } == tag)
    }

    #[test]
    fn classes_are_the_powers_of_two_from_16() {
        let c = |size, align| class(Layout::from_size_align(size, align).unwrap());
        assert_eq!(c(0, 1), Some(0));
        assert_eq!(c(1, 1), Some(0));
        assert_eq!(c(16, 16), Some(0));
        assert_eq!(c(17, 1), Some(1));
        assert_eq!(c(32, 8), Some(1));
        assert_eq!(c(33, 8), Some(2));
        assert_eq!(c(PAGE, 8), Some(12));
        assert_eq!(c(PAGE + 1, 8), Some(13));
        assert_eq!(c(1 << 31, 8), Some(27));
        assert_eq!(c((1 << 31) + 1, 8), None);
        assert_eq!(c(8, 32), None);
    }

    #[test]
    fn blocks_are_aligned_disjoint_and_reused() {
        let h = Heap::new(Arena::new(64));
        let mut live = Vec::new();
        let mut tag = 0_u8;
        for size in [
            1, 7, 15, 16, 17, 31, 48, 100, 128, 200, 256, 257, 1000, 70_000,
        ] {
            for align in [1, 2, 4, 8, 16] {
                for _ in 0..3 {
                    let layout = Layout::from_size_align(size, align).unwrap();
                    let p = unsafe { h.alloc(layout) };
                    assert!(!p.is_null());
                    assert_eq!(p as usize % MIN, 0, "{size} {align}");
                    tag = tag.wrapping_add(1);
                    unsafe { fill(p, size, tag) };
                    live.push((p, layout, tag));
                }
            }
        }
        for &(p, layout, tag) in &live {
            assert!(unsafe { holds(p, layout.size(), tag) });
        }
        for &(p, layout, _) in &live {
            unsafe { h.dealloc(p, layout) };
        }
        // The last block freed of a size comes back first.
        let small = Layout::from_size_align(24, 8).unwrap();
        let last_freed = live
            .iter()
            .rev()
            .find(|(_, l, _)| class(*l) == class(small))
            .map(|x| x.0);
        assert_eq!(Some(unsafe { h.alloc(small) }), last_freed);
        // Every other block of the sizes used comes back before any fresh
        // memory is cut.
        let used = h.next.load(Relaxed);
        let taken = live.iter().position(|x| Some(x.0) == last_freed).unwrap();
        for (i, &(_, layout, _)) in live.iter().enumerate() {
            if i != taken {
                assert!(!unsafe { h.alloc(layout) }.is_null());
            }
        }
        assert_eq!(h.next.load(Relaxed), used);
    }

    #[test]
    fn refused_growth_is_a_null_block_and_nothing_breaks() {
        let h = Heap::new(Arena::new(2));
        let big = Layout::from_size_align(PAGE * 2, 8).unwrap();
        let p = unsafe { h.alloc(big) };
        assert!(!p.is_null());
        assert!(unsafe { h.alloc(big) }.is_null());
        // Freed blocks are still served from the lists; fresh memory,
        // and alignments above 16, are refused.
        unsafe { h.dealloc(p, big) };
        assert_eq!(unsafe { h.alloc(big) }, p);
        assert!(unsafe { h.alloc(Layout::from_size_align(8, 8).unwrap()) }.is_null());
        assert!(unsafe { h.alloc(Layout::from_size_align(8, 32).unwrap()) }.is_null());
    }

    /// Pages at the very top of the address space (as wasm32's 4 GiB
    /// memory ends at 2^32): the block that would end past the last
    /// address is refused, never wrapped around to address 0.
    #[test]
    fn memory_ending_at_the_top_of_the_address_space_is_refused() {
        struct Top;
        impl Pages for Top {
            fn grow(&self, n: usize) -> Option<usize> {
                Some(0_usize.wrapping_sub(n * PAGE))
            }
        }
        let h = Heap::new(Top);
        assert!(unsafe { h.alloc(Layout::from_size_align(16, 8).unwrap()) }.is_null());
        assert_eq!(h.next.load(Relaxed), 0);
    }

    #[test]
    fn memory_grown_elsewhere_is_skipped() {
        let arena = Arena::new(8);
        let h = Heap::new(arena);
        let layout = Layout::from_size_align(PAGE / 2, 8).unwrap();
        let a = unsafe { h.alloc(layout) };
        let b = unsafe { h.alloc(layout) };
        assert_eq!(b as usize, a as usize + PAGE / 2);
        h.pages.gap.set(true);
        let c = unsafe { h.alloc(layout) };
        assert_eq!(
            c as usize,
            a as usize + 2 * PAGE,
            "the foreign page is left alone"
        );
    }

    #[test]
    fn realloc_keeps_the_contents_across_every_route() {
        let byte = |i: usize| u8::try_from(i % 251).unwrap();
        let h = Heap::new(Arena::new(64));
        let steps = [10, 14, 40, 200, 600, 700, 4000, 100_000, 50, 3];
        let mut layout = Layout::from_size_align(steps[0], 4).unwrap();
        let mut p = unsafe { h.alloc(layout) };
        for i in 0..layout.size() {
            unsafe { p.add(i).write(byte(i)) };
        }
        for &size in &steps[1..] {
            let next = Layout::from_size_align(size, 4).unwrap();
            let q = unsafe { h.realloc(p, layout, size) };
            assert!(!q.is_null());
            if class(layout) == class(next) {
                assert_eq!(q, p, "same size class: resized in place");
            }
            let kept = layout.size().min(size);
            for i in 0..kept {
                assert_eq!(
                    unsafe { q.add(i).read() },
                    byte(i),
                    "byte {i} after -> {size}"
                );
            }
            for i in kept..size {
                unsafe { q.add(i).write(byte(i)) };
            }
            (layout, p) = (next, q);
        }
        unsafe { h.dealloc(p, layout) };
    }

    /// A long random sequence of allocations, frees and resizes, each
    /// block filled with its own tag and checked before it is freed or
    /// resized: no block is handed out twice, overlaps another or loses
    /// its contents, and the memory cut is exactly, for each size class,
    /// its block size times the most blocks of it live at once.
    #[test]
    fn random_sequences_keep_blocks_disjoint_and_intact() {
        random_sequence(0x5eed, 20_000);
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(64))]

        /// The same, from any seed (shorter sequences, many of them).
        #[test]
        fn any_random_sequence(seed in proptest::prelude::any::<u64>()) {
            random_sequence(seed, 2_000);
        }
    }

    fn random_sequence(seed: u64, steps: usize) {
        let h = Heap::new(Arena::new(256));
        let mut i = 0;
        let mut next = move || {
            i += 1;
            ojs_retry::jitter::splitmix64(seed, i)
        };
        let pick = |x: u64, n: usize| usize::try_from(x % u64::try_from(n).unwrap()).unwrap();
        let sizes = [
            1, 8, 15, 16, 17, 24, 63, 100, 240, 255, 256, 257, 300, 1024, 5000, 70_000,
        ];
        let mut live: Vec<(*mut u8, Layout, u8)> = Vec::new();
        let mut tag = 0_u8;
        let (mut count, mut peak) = ([0_usize; CLASSES], [0_usize; CLASSES]);
        let mut track = |layout: Layout, up: bool| {
            let c = class(layout).unwrap();
            count[c] = if up { count[c] + 1 } else { count[c] - 1 };
            peak[c] = peak[c].max(count[c]);
        };
        for _ in 0..steps {
            let op = next() % 3;
            if op == 0 || live.is_empty() {
                let size = sizes[pick(next(), sizes.len())];
                let align = 1 << pick(next(), 5);
                let layout = Layout::from_size_align(size, align).unwrap();
                let p = unsafe { h.alloc(layout) };
                assert!(!p.is_null());
                assert_eq!(p as usize % align, 0);
                track(layout, true);
                tag = tag.wrapping_add(1);
                unsafe { fill(p, size, tag) };
                live.push((p, layout, tag));
            } else {
                let i = pick(next(), live.len());
                let (p, layout, t) = live.swap_remove(i);
                assert!(
                    unsafe { holds(p, layout.size(), t) },
                    "block {i} was overwritten"
                );
                if op == 1 {
                    unsafe { h.dealloc(p, layout) };
                    track(layout, false);
                } else {
                    let size = sizes[pick(next(), sizes.len())];
                    let q = unsafe { h.realloc(p, layout, size) };
                    assert!(!q.is_null());
                    let kept = layout.size().min(size);
                    let old = layout;
                    let layout = Layout::from_size_align(size, layout.align()).unwrap();
                    if class(old) != class(layout) {
                        track(layout, true);
                        track(old, false);
                    }
                    assert_eq!(q as usize % layout.align(), 0);
                    assert!(unsafe { holds(q, kept, t) }, "realloc lost the contents");
                    tag = tag.wrapping_add(1);
                    unsafe { fill(q, size, tag) };
                    live.push((q, layout, tag));
                }
            }
        }
        let cut: usize = (0..CLASSES).map(|c| peak[c] * (MIN << c)).sum();
        assert_eq!(h.next.load(Relaxed) - h.pages.base, cut);
        let addresses: HashSet<_> = live.iter().map(|x| x.0).collect();
        assert_eq!(addresses.len(), live.len());
        for &(p, layout, t) in &live {
            assert!(unsafe { holds(p, layout.size(), t) });
        }
        for (p, layout, _) in live {
            unsafe { h.dealloc(p, layout) };
        }
    }
}
