"""TF's legacy ``Hash64`` (tensorflow/core/lib/hash/hash.cc: a MurmurHash64A variant seeded with
0xDECAFCAFFE), the hash of ``tf.strings.to_hash_bucket`` (StringToHashBucket): pure Python on
64-bit integers (masked), so a string's bucket is TF's. Checked against TF 2.21's buckets for
random byte strings of lengths 0-40 and 100 (tests/test_strings22.py holds the recorded values)."""
from __future__ import annotations

_M = (1 << 64) - 1
_MUL = 0xc6a4a7935bd1e995
_SEED = 0xDECAFCAFFE


def hash64(s: bytes, seed: int = _SEED) -> int:
    """Hash64(s, seed) as an unsigned 64-bit int."""
    n = len(s)
    h = (seed ^ (n * _MUL)) & _M
    full = n - n % 8
    for i in range(0, full, 8):
        k = (int.from_bytes(s[i:i + 8], "little") * _MUL) & _M
        k = ((k ^ (k >> 47)) * _MUL) & _M
        h = ((h ^ k) * _MUL) & _M
    if n > full:     # the 1-7 tail bytes, little-endian (TF's fall-through switch), then one multiply
        h = ((h ^ int.from_bytes(s[full:], "little")) * _MUL) & _M
    h ^= h >> 47
    h = (h * _MUL) & _M
    return h ^ (h >> 47)
