"""Reads the RecordBatch v2 headers of a partition's segment files, independently of brook's
own reader, so that a test can check what the broker stored: each batch's offsets, record
count, codec (attributes bits 0-2) and whether its CRC-32C still matches.

    for b in batches(os.path.join(data_dir, "topic-0")):
        print(b.base_offset, b.count, CODECS[b.codec], b.crc_ok)

Layout (Kafka's DefaultRecordBatch): baseOffset int64 at 0, batchLength int32 at 8 (the batch
is 12 + batchLength bytes), partitionLeaderEpoch int32 at 12, magic int8 at 16, crc uint32 at
17 (CRC-32C of the bytes from 21 to the end), attributes int16 at 21, lastOffsetDelta int32 at
23, ..., recordsCount int32 at 57, records from 61. All big-endian.
"""
import os
import struct
from collections import namedtuple

CODECS = {0: "none", 1: "gzip", 2: "snappy", 3: "lz4", 4: "zstd"}

Batch = namedtuple("Batch", "segment base_offset last_offset count codec crc_ok")


def _crc32c_table():
    table = []
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
        table.append(c)
    return table


_TABLE = _crc32c_table()


def crc32c(data: bytes) -> int:
    c = 0xFFFFFFFF
    for b in data:
        c = _TABLE[(c ^ b) & 0xFF] ^ (c >> 8)
    return c ^ 0xFFFFFFFF


def batches(partition_dir):
    """Every batch of every .log segment in partition_dir, in offset order. Raises ValueError
    on a batch that is not magic 2 or runs past its file's end."""
    out = []
    for name in sorted(n for n in os.listdir(partition_dir) if n.endswith(".log")):
        path = os.path.join(partition_dir, name)
        with open(path, "rb") as f:
            data = f.read()
        pos = 0
        while pos < len(data):
            if pos + 61 > len(data):
                raise ValueError(f"{path}: {len(data) - pos} bytes at {pos} are less than a batch header")
            base, length = struct.unpack_from(">qi", data, pos)
            end = pos + 12 + length
            if length < 49 or end > len(data):
                raise ValueError(f"{path}: batch at byte {pos} has batchLength {length}, past the end")
            magic = data[pos + 16]
            if magic != 2:
                raise ValueError(f"{path}: batch at byte {pos} has magic {magic}")
            (crc,) = struct.unpack_from(">I", data, pos + 17)
            (attributes, last_delta) = struct.unpack_from(">hi", data, pos + 21)
            (count,) = struct.unpack_from(">i", data, pos + 57)
            out.append(Batch(name, base, base + last_delta, count, attributes & 7,
                             crc32c(data[pos + 21:end]) == crc))
            pos = end
    return out
