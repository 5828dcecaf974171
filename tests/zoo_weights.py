#!/usr/bin/python3
"""The zoo qwen2 model's float32 matrices, regenerated from the recipe in the zoo README
(the F32 file llama-quantize started from is not in the zoo): per tensor a numpy legacy
RandomState seeded [20250220, crc32(name)], standard normal float64 of the torch shape
[out, in], scaled and cast to float32; token_embd N(0, 0.6) with the padding rows from
151669 on zero, every other matrix N(0, 1/sqrt(in)). The norms and biases are float32 in
the zoo files themselves.

usage: zoo_weights.py OUT_DIR NAME...
Writes OUT_DIR/<NAME>.f32 (raw little-endian float32, ggml order) and prints
"<NAME> <elements>" for each NAME (a matrix of the qwen2 zoo model).
"""
import sys
import zlib

import numpy as np

SHAPES = {"token_embd.weight": (151936, 256)}  # [out, in]; the blocks' below
for layer in (0, 1):
    for name, shape in (("attn_q", (256, 256)), ("attn_k", (128, 256)), ("attn_v", (128, 256)),
                        ("attn_output", (256, 256)), ("ffn_gate", (768, 256)), ("ffn_up", (768, 256)),
                        ("ffn_down", (256, 768))):
        SHAPES["blk.%d.%s.weight" % (layer, name)] = shape


def main():
    out_dir = sys.argv[1]
    for name in sys.argv[2:]:
        shape = SHAPES[name]
        normal = np.random.RandomState([20250220, zlib.crc32(name.encode())]).standard_normal(shape)
        if name == "token_embd.weight":
            w = (normal * 0.6).astype(np.float32)
            w[151669:] = 0
        else:
            w = (normal / np.sqrt(shape[1])).astype(np.float32)
        w.astype("<f4").tofile("%s/%s.f32" % (out_dir, name))
        print(name, w.size)


if __name__ == "__main__":
    main()
