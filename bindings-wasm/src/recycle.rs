//! Small freed blocks kept for reuse in front of talc.
//!
//! Making a policy allocates a handful of small blocks (the registry's
//! `Arc`, the error-type list and each of its strings: five for §12.3)
//! and freeing it gives them back; talc splits and coalesces a gap for
//! each, which measured ~55 ns per allocation and free pair here (~30 ns
//! with the lists, most of it std's calls around the allocator), a quarter
//! of `new RetryPolicy(text)`. Blocks of up to `CLASSES · GRAIN` bytes are
//! instead rounded up to a multiple of `GRAIN` and, when freed, pushed on
//! a list per size (at most `KEEP` each); an allocation of that size pops
//! one. Everything else, and every list that is empty or full, is talc's.
//!
//! Single-threaded wasm only (as the module is), which is why it is built
//! only there (and for its tests, which use one instance from one thread):
//! the list heads are atomics because a static must be `Sync`, and without
//! the `atomics` feature their relaxed operations are plain loads and
//! stores; with threads, a load and the store after it could interleave.

// A global allocator cannot be written without `unsafe`: the trait is
// unsafe, and a free list stores its links inside the freed blocks.
#![allow(unsafe_code)]

use core::alloc::{GlobalAlloc, Layout};
use core::ptr;
use core::sync::atomic::{AtomicPtr, AtomicU32, Ordering::Relaxed};

/// Size step of the lists, and the alignment every listed block has (the
/// link stored in a freed block needs 4).
const GRAIN: usize = 16;
/// Lists: blocks of 16, 32, …, 256 bytes (a policy in its `Arc` is one).
const CLASSES: usize = 16;
/// Blocks kept per list at most: what a burst of frees leaves beyond it
/// goes back to talc, so the lists never hold more than ~68 KiB.
const KEEP: u32 = 32;

/// An allocator (talc in the module) with lists of freed small blocks in
/// front.
pub(crate) struct Recycling<A> {
    inner: A,
    heads: [AtomicPtr<u8>; CLASSES],
    counts: [AtomicU32; CLASSES],
}

impl<A> Recycling<A> {
    pub(crate) const fn new(inner: A) -> Self {
        Self {
            inner,
            heads: [const { AtomicPtr::new(ptr::null_mut()) }; CLASSES],
            counts: [const { AtomicU32::new(0) }; CLASSES],
        }
    }
}

/// The list for `layout` and the layout its blocks are allocated with from
/// talc (the size rounded up to the list's), or `None`: talc's own.
#[inline(always)]
fn class(layout: Layout) -> Option<(usize, Layout)> {
    if layout.align() > GRAIN {
        return None;
    }
    let c = layout.size().saturating_sub(1) / GRAIN;
    if c >= CLASSES {
        return None;
    }
    // (c + 1) · GRAIN ≤ 256 with a power-of-two alignment: always valid.
    let rounded = Layout::from_size_align((c + 1) * GRAIN, GRAIN).ok()?;
    Some((c, rounded))
}

// SAFETY (for the impl as a whole): a block on a list was allocated from
// talc with the list's rounded layout, was freed by its owner (so nothing
// else refers to it), and is at least GRAIN bytes aligned to GRAIN, room
// for the link to the next block kept in its first bytes. A block popped
// from a list is therefore exclusively ours and satisfies any layout of its
// class. The module is single-threaded, so the list operations cannot
// interleave.
unsafe impl<A: GlobalAlloc> GlobalAlloc for Recycling<A> {
    #[inline]
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let Some((c, rounded)) = class(layout) else {
            // SAFETY: the caller's layout, passed on.
            return unsafe { self.inner.alloc(layout) };
        };
        let (Some(head), Some(count)) = (self.heads.get(c), self.counts.get(c)) else {
            return ptr::null_mut();
        };
        let block = head.load(Relaxed);
        if block.is_null() {
            // SAFETY: a valid non-zero layout.
            return unsafe { self.inner.alloc(rounded) };
        }
        // SAFETY: see the impl: a listed block holds the link to the next.
        let next = unsafe { block.cast::<*mut u8>().read() };
        head.store(next, Relaxed);
        count.store(count.load(Relaxed).saturating_sub(1), Relaxed);
        block
    }

    #[inline]
    unsafe fn dealloc(&self, block: *mut u8, layout: Layout) {
        let Some((c, rounded)) = class(layout) else {
            // SAFETY: allocated by talc with this layout (see `alloc`).
            return unsafe { self.inner.dealloc(block, layout) };
        };
        let (Some(head), Some(count)) = (self.heads.get(c), self.counts.get(c)) else {
            return;
        };
        let n = count.load(Relaxed);
        if n >= KEEP {
            // SAFETY: allocated by talc with the rounded layout.
            return unsafe { self.inner.dealloc(block, rounded) };
        }
        // SAFETY: the block is ours now (freed by its owner) and has room
        // for the link, aligned (see the impl).
        unsafe { block.cast::<*mut u8>().write(head.load(Relaxed)) };
        head.store(block, Relaxed);
        count.store(n.saturating_add(1), Relaxed);
    }

    #[inline]
    unsafe fn realloc(&self, block: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let Ok(new_layout) = Layout::from_size_align(new_size, layout.align()) else {
            return ptr::null_mut();
        };
        match (class(layout), class(new_layout)) {
            // Neither end listed: talc resizes in place when it can.
            // SAFETY: the caller's arguments, passed on.
            (None, None) => unsafe { self.inner.realloc(block, layout, new_size) },
            // Still fits the rounded block.
            (Some((a, _)), Some((b, _))) if a == b => block,
            _ => {
                // SAFETY: a valid layout; the copy is within both blocks
                // (the smaller of the two sizes), which do not overlap.
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
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::alloc::System;
    use std::collections::HashSet;

    impl<A: GlobalAlloc> Recycling<A> {
        /// Gives every listed block back to the inner allocator (so that
        /// a test leaks nothing).
        fn drain(&self) {
            for (c, head) in self.heads.iter().enumerate() {
                let layout = Layout::from_size_align((c + 1) * GRAIN, GRAIN).unwrap();
                let mut block = head.swap(ptr::null_mut(), Relaxed);
                while !block.is_null() {
                    let next = unsafe { block.cast::<*mut u8>().read() };
                    unsafe { self.inner.dealloc(block, layout) };
                    block = next;
                }
                self.counts[c].store(0, Relaxed);
            }
        }
    }

    /// Fills `len` bytes at `p` with `tag`, then checks them (and that
    /// nothing else wrote there): blocks handed out never overlap.
    unsafe fn fill(p: *mut u8, len: usize, tag: u8) {
        unsafe { ptr::write_bytes(p, tag, len) };
    }
    unsafe fn holds(p: *const u8, len: usize, tag: u8) -> bool {
        (0..len).all(|i| unsafe { p.add(i).read() } == tag)
    }

    #[test]
    fn blocks_are_aligned_disjoint_and_reused() {
        let r = Recycling::new(System);
        let mut live = Vec::new();
        let mut tag = 0_u8;
        for size in [1, 7, 15, 16, 17, 31, 48, 100, 128, 200, 255, 256, 257, 1000] {
            for align in [1, 2, 4, 8, 16, 32] {
                for _ in 0..3 {
                    let layout = Layout::from_size_align(size, align).unwrap();
                    let p = unsafe { r.alloc(layout) };
                    assert!(!p.is_null());
                    assert_eq!(p as usize % align, 0, "{size} {align}");
                    tag = tag.wrapping_add(1);
                    unsafe { fill(p, size, tag) };
                    live.push((p, layout, tag));
                }
            }
        }
        for &(p, layout, tag) in &live {
            assert!(unsafe { holds(p, layout.size(), tag) });
        }
        // Freed and taken again, in the other order: a listed block comes
        // back to an allocation of its size (the last freed first).
        for &(p, layout, _) in &live {
            unsafe { r.dealloc(p, layout) };
        }
        let small = Layout::from_size_align(24, 8).unwrap();
        let last_freed = live
            .iter()
            .rev()
            .find(|(_, l, _)| class(*l).map(|c| c.0) == class(small).map(|c| c.0))
            .map(|x| x.0);
        let p = unsafe { r.alloc(small) };
        assert_eq!(Some(p), last_freed);
        unsafe { r.dealloc(p, small) };
        r.drain();
    }

    #[test]
    fn lists_are_bounded_and_hand_out_distinct_blocks() {
        let r = Recycling::new(System);
        let layout = Layout::from_size_align(16, 8).unwrap();
        let n = usize::try_from(KEEP).unwrap() * 2;
        let blocks: Vec<_> = (0..n).map(|_| unsafe { r.alloc(layout) }).collect();
        for &p in &blocks {
            unsafe { r.dealloc(p, layout) };
        }
        assert_eq!(r.counts[0].load(Relaxed), KEEP);
        let again: HashSet<*mut u8> = (0..n).map(|_| unsafe { r.alloc(layout) }).collect();
        assert_eq!(again.len(), n);
        assert_eq!(r.counts[0].load(Relaxed), 0);
        for p in again {
            unsafe { r.dealloc(p, layout) };
        }
        r.drain();
    }

    #[test]
    fn realloc_keeps_the_contents_across_every_route() {
        let byte = |i: usize| u8::try_from(i % 251).unwrap();
        let r = Recycling::new(System);
        // Same list, another list, out of the lists (both ways), and
        // between two sizes no list takes.
        let steps = [10, 14, 40, 200, 600, 700, 4000, 50, 3];
        let mut layout = Layout::from_size_align(steps[0], 4).unwrap();
        let mut p = unsafe { r.alloc(layout) };
        for i in 0..layout.size() {
            unsafe { p.add(i).write(byte(i)) };
        }
        for &size in &steps[1..] {
            let next = Layout::from_size_align(size, 4).unwrap();
            let q = unsafe { r.realloc(p, layout, size) };
            assert!(!q.is_null());
            if let (Some((a, _)), Some((b, _))) = (class(layout), class(next))
                && a == b
            {
                assert_eq!(q, p, "same list: resized in place");
            }
            let kept = layout.size().min(size);
            for i in 0..kept {
                let got = unsafe { q.add(i).read() };
                assert_eq!(got, byte(i), "byte {i} after {} -> {size}", layout.size());
            }
            for i in kept..size {
                unsafe { q.add(i).write(byte(i)) };
            }
            (layout, p) = (next, q);
        }
        unsafe { r.dealloc(p, layout) };
        r.drain();
    }
    /// A long random sequence of allocations, frees and resizes (sizes on
    /// both sides of the lists' limit, every alignment up to 32), each
    /// block filled with its own tag and checked before it is freed or
    /// resized: no block is handed out twice, overlaps another or loses
    /// its contents, and the lists never hold more than `KEEP` blocks.
    #[test]
    fn random_sequences_keep_blocks_disjoint_and_intact() {
        let r = Recycling::new(System);
        // A fixed sequence: the core's SplitMix64 stream.
        let mut i = 0;
        let mut next = move || {
            i += 1;
            ojs_retry::jitter::splitmix64(0x5eed, i)
        };
        let pick = |x: u64, n: usize| usize::try_from(x % u64::try_from(n).unwrap()).unwrap();
        let sizes = [1, 8, 15, 16, 17, 24, 63, 100, 240, 255, 256, 257, 300, 1024];
        let mut live: Vec<(*mut u8, Layout, u8)> = Vec::new();
        let mut tag = 0_u8;
        for _ in 0..20_000 {
            let op = next() % 3;
            if op == 0 || live.is_empty() {
                let size = sizes[pick(next(), sizes.len())];
                let align = 1 << pick(next(), 6);
                let layout = Layout::from_size_align(size, align).unwrap();
                let p = unsafe { r.alloc(layout) };
                assert!(!p.is_null());
                assert_eq!(p as usize % align, 0);
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
                    unsafe { r.dealloc(p, layout) };
                } else {
                    let size = sizes[pick(next(), sizes.len())];
                    let q = unsafe { r.realloc(p, layout, size) };
                    assert!(!q.is_null());
                    let kept = layout.size().min(size);
                    let layout = Layout::from_size_align(size, layout.align()).unwrap();
                    assert_eq!(q as usize % layout.align(), 0);
                    assert!(unsafe { holds(q, kept, t) }, "realloc lost the contents");
                    tag = tag.wrapping_add(1);
                    unsafe { fill(q, size, tag) };
                    live.push((q, layout, tag));
                }
            }
            assert!(r.counts.iter().all(|c| c.load(Relaxed) <= KEEP));
        }
        for &(p, layout, t) in &live {
            assert!(unsafe { holds(p, layout.size(), t) });
        }
        for (p, layout, _) in live {
            unsafe { r.dealloc(p, layout) };
        }
        r.drain();
    }
}
