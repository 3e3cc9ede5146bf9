"""The Java producer's default partitioner, so a key lands where Kafka Connect puts it."""

from __future__ import annotations

_M = 0x5BD1E995


def murmur2(data: bytes) -> int:
    """Kafka's Java `Utils.murmur2` (seed 0x9747b28c), as a signed 32-bit int."""
    length = len(data)
    h = (0x9747B28C ^ length) & 0xFFFFFFFF
    whole = length - length % 4
    for i in range(0, whole, 4):
        k = int.from_bytes(data[i:i + 4], "little")
        k = (k * _M) & 0xFFFFFFFF
        k ^= k >> 24
        k = (k * _M) & 0xFFFFFFFF
        h = ((h * _M) & 0xFFFFFFFF) ^ k
    tail = data[whole:]
    if len(tail) == 3:
        h ^= tail[2] << 16
    if len(tail) >= 2:
        h ^= tail[1] << 8
    if tail:
        h ^= tail[0]
        h = (h * _M) & 0xFFFFFFFF
    h ^= h >> 13
    h = (h * _M) & 0xFFFFFFFF
    h ^= h >> 15
    return h - (1 << 32) if h >= 1 << 31 else h


def key_partition(key: bytes, partitions: int) -> int:
    """The partition the Java producer's default partitioner picks for a keyed record."""
    return (murmur2(key) & 0x7FFFFFFF) % partitions
