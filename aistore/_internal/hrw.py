"""Highest-random-weight placement: which target of a cluster map owns an object.

Matches the cluster's own choice (Go `cmn/xoshiro256.Hash` over `xxhash64(uname, seed)`),
so a client can talk to the owning target directly.
"""

from __future__ import annotations

from aistore import _native

_MASK = (1 << 64) - 1


def _rotl(x: int, r: int) -> int:
    return ((x << r) | (x >> (64 - r))) & _MASK


def xxh64(data: bytes, seed: int = 0) -> int:
    """XXH64 of `data` (the xxHash library, through the native extension)."""
    return int(_native.xxhash64_hex(data, seed), 16)


_GOLDEN = 0x9E3779B97F4A7C15
_MIX1 = 0xBF58476D1CE4E5B9
_MIX2 = 0x94D049BB133111EB


def _splitmix(z: int) -> int:
    z = ((z ^ (z >> 30)) * _MIX1) & _MASK
    z = ((z ^ (z >> 27)) * _MIX2) & _MASK
    return z ^ (z >> 31)


def xoshiro256_hash(seed: int) -> int:
    """The cluster's 64-bit mixing function: two splitmix64 steps, then xoshiro256** output."""
    z = _splitmix((seed + _GOLDEN) & _MASK)
    z = _splitmix((z + _GOLDEN) & _MASK)
    z = (z * 5) & _MASK
    return (_rotl(z, 7) * 9) & _MASK
