//! Unsigned big integers, just what exact decimal ⇄ binary conversion
//! needs: the reader's slow path ([`super::float`]) and the shortest
//! round-trip writer ([`super::shortest`]).

use alloc::vec::Vec;

/// An unsigned big integer, 32-bit limbs, least significant first, no
/// leading zero limb.
#[derive(Default)]
pub(super) struct Big(Vec<u32>);

impl Big {
    pub(super) fn from_u32(n: u32) -> Self {
        let mut b = Self::default();
        b.mul_add(1, n);
        b
    }

    fn trim(&mut self) {
        while self.0.last() == Some(&0) {
            self.0.pop();
        }
    }

    pub(super) fn from_u64(n: u64) -> Self {
        #[allow(clippy::cast_possible_truncation)]
        let mut b = Self(alloc::vec![n as u32, (n >> 32) as u32]);
        b.trim();
        b
    }

    pub(super) fn is_zero(&self) -> bool {
        self.0.is_empty()
    }

    /// self = self · mul + add.
    pub(super) fn mul_add(&mut self, mul: u32, add: u32) {
        let mut carry = u64::from(add);
        for limb in &mut self.0 {
            // At most (2^32 − 1)^2 + 2^32 − 1 < 2^64.
            let x = u64::from(*limb)
                .wrapping_mul(u64::from(mul))
                .wrapping_add(carry);
            #[allow(clippy::cast_possible_truncation)]
            {
                *limb = x as u32;
            }
            carry = x >> 32;
        }
        if carry != 0 {
            #[allow(clippy::cast_possible_truncation)]
            self.0.push(carry as u32);
        }
        self.trim();
    }

    pub(super) fn mul_pow10(&mut self, k: u32) {
        let mut k = k;
        while k >= 9 {
            self.mul_add(1_000_000_000, 0);
            k = k.wrapping_sub(9);
        }
        self.mul_add(10_u32.pow(k), 0);
    }

    pub(super) fn bits(&self) -> usize {
        self.0.last().map_or(0, |top| {
            self.0
                .len()
                .saturating_sub(1)
                .saturating_mul(32)
                .saturating_add(32_usize.saturating_sub(top.leading_zeros() as usize))
        })
    }

    pub(super) fn shl(&mut self, n: usize) {
        let (limbs, bits) = (n / 32, (n % 32) as u32);
        if bits != 0 {
            let mut carry = 0_u32;
            for limb in &mut self.0 {
                let next = *limb >> 32_u32.wrapping_sub(bits);
                *limb = (*limb << bits) | carry;
                carry = next;
            }
            if carry != 0 {
                self.0.push(carry);
            }
        }
        if !self.is_zero() && limbs > 0 {
            // Not `splice`: its machinery is ~0.5 KB of wasm.
            let mut shifted = alloc::vec![0; limbs];
            shifted.extend_from_slice(&self.0);
            self.0 = shifted;
        }
    }

    pub(super) fn shr(&mut self, n: usize) {
        let (limbs, bits) = (n / 32, (n % 32) as u32);
        let limbs = limbs.min(self.0.len());
        self.0.copy_within(limbs.., 0);
        self.0.truncate(self.0.len().saturating_sub(limbs));
        if bits != 0 {
            let mut carry = 0_u32;
            for limb in self.0.iter_mut().rev() {
                let next = *limb << 32_u32.wrapping_sub(bits);
                *limb = (*limb >> bits) | carry;
                carry = next;
            }
        }
        self.trim();
    }

    /// Whether any of the `n` lowest bits is set.
    pub(super) fn low_bits_nonzero(&self, n: usize) -> bool {
        let (limbs, bits) = (n / 32, (n % 32) as u32);
        let mut it = self.0.iter();
        if it.by_ref().take(limbs).any(|&l| l != 0) {
            return true;
        }
        bits != 0
            && it
                .next()
                .is_some_and(|&l| l & (1_u32 << bits).wrapping_sub(1) != 0)
    }

    /// The low 64 bits.
    pub(super) fn low_u64(&self) -> u64 {
        let mut it = self.0.iter();
        let lo = it.next().copied().unwrap_or(0);
        let hi = it.next().copied().unwrap_or(0);
        (u64::from(hi) << 32) | u64::from(lo)
    }

    pub(super) fn ge(&self, other: &Self) -> bool {
        if self.0.len() != other.0.len() {
            return self.0.len() > other.0.len();
        }
        for (a, b) in self.0.iter().rev().zip(other.0.iter().rev()) {
            if a != b {
                return a > b;
            }
        }
        true
    }

    /// self −= other, for self ≥ other.
    pub(super) fn sub(&mut self, other: &Self) {
        let mut borrow = false;
        let mut theirs = other.0.iter();
        for limb in &mut self.0 {
            let b = theirs.next().copied().unwrap_or(0);
            let (x, o1) = limb.overflowing_sub(b);
            let (x, o2) = x.overflowing_sub(u32::from(borrow));
            *limb = x;
            borrow = o1 || o2;
        }
        self.trim();
    }

    /// How `self + other` compares with `s`.
    pub(super) fn sum_cmp(&self, other: &Self, s: &Self) -> core::cmp::Ordering {
        let len = self.0.len().max(other.0.len()).max(s.0.len());
        let (mut carry, mut ord) = (0_u64, core::cmp::Ordering::Equal);
        for i in 0..=len {
            let limb = |b: &Self| u64::from(b.0.get(i).copied().unwrap_or(0));
            // At most 2 (2^32 − 1) + 1 < 2^64.
            let x = limb(self).wrapping_add(limb(other)).wrapping_add(carry);
            carry = x >> 32;
            // Scanning up, the highest limb that differs decides.
            let (ours, theirs) = (x & 0xffff_ffff, limb(s));
            if ours != theirs {
                ord = ours.cmp(&theirs);
            }
        }
        ord
    }
}
