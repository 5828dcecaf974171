#!/usr/bin/python3
"""An independent GGUF decoder for the quant tests: parses a GGUF file and dequantizes every
block-quantized tensor straight from ggml's block layouts (ggml-common.h, dequantize_row_*
in ggml-quants.c), with numpy only, sharing no code with toyllm.

usage: gguf_dequantize.py FILE.gguf OUT_DIR
Writes OUT_DIR/<tensor index>.f32 (raw little-endian float32, ggml order) for each
quantized tensor and prints one line per tensor: "<index> <name> <type id> <elements>".
"""
import struct
import sys

import numpy as np

# type id: (weights per block, bytes per block)
BLOCKS = {2: (32, 18), 3: (32, 20), 6: (32, 22), 7: (32, 24), 8: (32, 34),
          10: (256, 84), 11: (256, 110), 12: (256, 144), 13: (256, 176), 14: (256, 210),
          20: (32, 18)}
# IQ4_NL's 16 values (ggml-common.h, kvalues_iq4nl), which its nibbles index.
IQ4_NL_VALUES = np.array([-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113],
                         dtype=np.float32)
SCALAR_SIZES = {0: 1, 1: 1, 2: 2, 3: 2, 4: 4, 5: 4, 6: 4, 7: 1, 10: 8, 11: 8, 12: 8}


class Reader:
    def __init__(self, data):
        self.data, self.pos = data, 0

    def take(self, fmt):
        values = struct.unpack_from("<" + fmt, self.data, self.pos)
        self.pos += struct.calcsize("<" + fmt)
        return values[0] if len(values) == 1 else values

    def string(self):
        n = self.take("Q")
        s = self.data[self.pos:self.pos + n].decode("utf-8", "replace")
        self.pos += n
        return s

    def value(self, vtype):
        if vtype == 8:
            return self.string()
        if vtype == 9:
            etype, count = self.take("I"), self.take("Q")
            if etype in SCALAR_SIZES:  # skipped, not decoded: only general.alignment matters here
                self.pos += SCALAR_SIZES[etype] * count
                return None
            return [self.value(etype) for _ in range(count)]
        fmt = {0: "B", 1: "b", 2: "H", 3: "h", 4: "I", 5: "i", 6: "f", 7: "?", 10: "Q", 11: "q", 12: "d"}[vtype]
        return self.take(fmt)


def f16(b, lo):
    return b[:, lo:lo + 2].copy().view("<f2").astype(np.float32)  # shape (nb, 1)


def two_bit(qs):  # (nb, 64) -> (nb, 256): weight 128*half + 32*j + l in bits 2j of qs[32*half + l]
    halves = qs.reshape(-1, 2, 1, 32)
    shifts = np.array([0, 2, 4, 6], dtype=np.uint8).reshape(1, 1, 4, 1)
    return ((halves >> shifts) & 3).reshape(-1, 256)


def k4_scales(s):  # (nb, 12) -> scales, mins (nb, 8) as in get_scale_min_k4
    sc = np.empty((s.shape[0], 8), np.float32)
    mn = np.empty((s.shape[0], 8), np.float32)
    sc[:, :4] = s[:, 0:4] & 63
    mn[:, :4] = s[:, 4:8] & 63
    sc[:, 4:] = (s[:, 8:12] & 0xF) | ((s[:, 0:4] >> 6) << 4)
    mn[:, 4:] = (s[:, 8:12] >> 4) | ((s[:, 4:8] >> 6) << 4)
    return sc, mn


def q3_scales(s):  # (nb, 12) -> (nb, 16) signed, by ggml's kmask arithmetic on 32-bit words
    aux = s.copy().view("<u4")  # (nb, 3)
    a0, a1, tmp = aux[:, 0], aux[:, 1], aux[:, 2]
    k1, k2 = np.uint32(0x03030303), np.uint32(0x0f0f0f0f)
    out = np.stack([(a0 & k2) | (((tmp >> 0) & k1) << 4), (a1 & k2) | (((tmp >> 2) & k1) << 4),
                    ((a0 >> 4) & k2) | (((tmp >> 4) & k1) << 4), ((a1 >> 4) & k2) | (((tmp >> 6) & k1) << 4)],
                   axis=1).astype("<u4")
    return out.view(np.int8).astype(np.float32) - 32


def per_group(values, group):  # (nb, 256 / group) -> (nb, 256)
    return np.repeat(values, group, axis=1)


def nibbles32(qs):  # legacy: (nb, 16) -> (nb, 32), low nibbles first
    return np.concatenate([qs & 0xF, qs >> 4], axis=1).astype(np.float32)


def high_bits32(qh):  # (nb, 4) -> (nb, 32): bit i of the little-endian word
    word = qh.copy().view("<u4")
    return ((word >> np.arange(32, dtype=np.uint32)) & 1).astype(np.float32)


def decode(t, b):
    """b: (nb, block bytes) uint8 -> (nb * block weights,) float32."""
    if t == 8:
        return (f16(b, 0) * b[:, 2:34].view(np.int8).astype(np.float32)).ravel()
    if t == 2:
        return (f16(b, 0) * (nibbles32(b[:, 2:18]) - 8)).ravel()
    if t == 3:
        return (f16(b, 0) * nibbles32(b[:, 4:20]) + f16(b, 2)).ravel()
    if t == 20:
        return (f16(b, 0) * IQ4_NL_VALUES[nibbles32(b[:, 2:18]).astype(np.int64)]).ravel()
    if t == 6:
        q = nibbles32(b[:, 6:22]) + 16 * high_bits32(b[:, 2:6])
        return (f16(b, 0) * (q - 16)).ravel()
    if t == 7:
        q = nibbles32(b[:, 8:24]) + 16 * high_bits32(b[:, 4:8])
        return (f16(b, 0) * q + f16(b, 2)).ravel()
    if t == 10:
        s = b[:, 0:16]
        q = two_bit(b[:, 16:80]).astype(np.float32)
        dl = f16(b, 80) * per_group((s & 0xF).astype(np.float32), 16)
        ml = f16(b, 82) * per_group((s >> 4).astype(np.float32), 16)
        return (dl * q - ml).ravel()
    if t == 11:
        hmask, qs = b[:, 0:32], b[:, 32:96]
        q = two_bit(qs).astype(np.float32)
        bit_index = np.arange(256) // 32
        high = (hmask[:, np.arange(256) % 32] >> bit_index.astype(np.uint8)) & 1
        q = q - np.where(high == 1, 0, 4)
        dl = f16(b, 108) * per_group(q3_scales(b[:, 96:108]), 16)
        return (dl * q).ravel()
    if t in (12, 13):
        sc, mn = k4_scales(b[:, 4:16])
        qs = b[:, 16:144] if t == 12 else b[:, 48:176]
        runs = qs.reshape(-1, 4, 1, 32)
        q = np.concatenate([runs & 0xF, runs >> 4], axis=2).astype(np.float32)  # (nb, 4, 2, 32)
        if t == 13:
            qh = b[:, 16:48].reshape(-1, 1, 1, 32)
            shift = (2 * np.arange(4).reshape(1, 4, 1, 1) + np.arange(2).reshape(1, 1, 2, 1)).astype(np.uint8)
            q = q + 16 * ((qh >> shift) & 1)
        q = q.reshape(-1, 256)
        d1 = f16(b, 0) * per_group(sc, 32)
        m1 = f16(b, 2) * per_group(mn, 32)
        return (d1 * q - m1).ravel()
    if t == 14:
        ql, qh = b[:, 0:128].reshape(-1, 2, 64), b[:, 128:192].reshape(-1, 2, 32)
        sc = b[:, 192:208].view(np.int8).astype(np.float32)
        a, c = ql[:, :, :32], ql[:, :, 32:]
        parts = [(a & 0xF) | ((qh & 3) << 4), (c & 0xF) | (((qh >> 2) & 3) << 4),
                 (a >> 4) | (((qh >> 4) & 3) << 4), (c >> 4) | (((qh >> 6) & 3) << 4)]
        q = np.stack(parts, axis=2).astype(np.float32).reshape(-1, 256) - 32  # (nb, half, part, l)
        return ((f16(b, 208) * per_group(sc, 16)) * q).ravel()
    raise ValueError("type %d" % t)


def main():
    path, out_dir = sys.argv[1], sys.argv[2]
    data = np.memmap(path, dtype=np.uint8, mode="r")
    r = Reader(data[:64 << 20].tobytes() if data.size > (64 << 20) else data.tobytes())
    magic, version, n_tensors, n_kv = r.take("IIQQ")
    assert magic == 0x46554747 and version in (2, 3)
    alignment = 32
    for _ in range(n_kv):
        key = r.string()
        value = r.value(r.take("I"))
        if key == "general.alignment":
            alignment = value
    infos = []
    for _ in range(n_tensors):
        name = r.string()
        dims = [r.take("Q") for _ in range(r.take("I"))]
        infos.append((name, dims, r.take("I"), r.take("Q")))
    start = (r.pos + alignment - 1) // alignment * alignment
    for index, (name, dims, t, offset) in enumerate(infos):
        if t not in BLOCKS:
            continue
        n = int(np.prod(dims))
        weights, size = BLOCKS[t]
        blocks = data[start + offset:start + offset + n // weights * size].reshape(-1, size)
        with open("%s/%d.f32" % (out_dir, index), "wb") as f:
            for i in range(0, blocks.shape[0], 16384):  # a chunk at a time: the embeddings are large
                f.write(decode(t, np.asarray(blocks[i:i + 16384])).astype("<f4").tobytes())
        print(index, name, t, n)


if __name__ == "__main__":
    main()
