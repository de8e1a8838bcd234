#!/usr/bin/env python3
"""Independent reference for the seeded and keyed jitter sources.

Written from the algorithm as documented in core/src/jitter.rs and
core/src/backoff.rs (not from the Rust code), using Python's exact integers.
It computes the expected values of the vectors in jitter.json that depend on
SplitMix64 / FNV-1a, so those expectations do not come from running the
engine. Run it to print them: `python3 tests/vectors/reference.py`.
"""

M64 = (1 << 64) - 1
GAMMA = 0x9E3779B97F4A7C15


def splitmix64(seed: int, n: int) -> int:
    """The n-th output (1-based) of SplitMix64 seeded with `seed`."""
    z = (seed + n * GAMMA) & M64
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M64
    return z ^ (z >> 31)


def fnv1a64(data: bytes) -> int:
    h = 0xCBF29CE484222325
    for b in data:
        h = ((h ^ b) * 0x100000001B3) & M64
    return h


def sample_seed(seed: int, n: int) -> int:
    return splitmix64(seed, n) >> 11


def sample_key(key: str, n: int) -> int:
    return splitmix64(fnv1a64(key.encode("utf-8")), n) >> 11


def ojs_jitter(capped_ms: int, k: int, cap_ms: int) -> int:
    """floor(capped * (0.5 + k / 2^53)), then the cap again."""
    return min((capped_ms * ((1 << 52) + k)) >> 53, cap_ms)


def exp_capped(initial_ms: int, coefficient: int, n: int, cap_ms: int) -> int:
    """Exponential raw delay for an integer coefficient (exact), capped."""
    return min(initial_ms * coefficient ** (n - 1), cap_ms)


if __name__ == "__main__":
    # Published reference values: SplitMix64 seed 1234567, FNV-1a test suite.
    assert splitmix64(1234567, 1) == 6457827717110365317
    assert fnv1a64(b"foobar") == 0x85944171F73967E8
    for seed in (0, 42, 1234567, M64):
        print("seed", seed, [sample_seed(seed, n) for n in (1, 2, 3)])
    for key in ("job-1", "", "ジョブ-🚀", "order_789"):
        print("key", repr(key), [sample_key(key, n) for n in (1, 2, 3, 24)])
    # Default policy (PT1S x2, cap PT5M): delays for key "job-1", retries 1..10.
    print("default key job-1", [ojs_jitter(exp_capped(1000, 2, n, 300000), sample_key("job-1", n), 300000) for n in range(1, 11)])
    print("default seed 42", [ojs_jitter(exp_capped(1000, 2, n, 300000), sample_seed(42, n), 300000) for n in range(1, 11)])
    # §12.3 polynomial (PT15S, n^4, cap PT1H), key "order_789", retries 1..5.
    print("12.3 key order_789", [ojs_jitter(min(15000 * n**4, 3600000), sample_key("order_789", n), 3600000) for n in range(1, 6)])
