#!/usr/bin/python3
"""Quantization quality on the zoo's qwen2 model, weights only: an exact float64 forward
pass (the zoo README's) of each GGUF's dequantised weights (tests/gguf_dequantize.py's
decoder), and the mean KL divergence of each candidate's next-token distributions from the
reference's. The two zoo prompts give only 43 positions, and on this random-weight model a
position's KL is heavy-tailed (0 to 3.5), so two positions can move the mean by 20 %: the
mean is also taken over 8 more sequences of 64 random token ids (seed 0), 555 positions.

usage: zoo_kl.py ZOO_DIR REFERENCE.gguf CANDIDATE.gguf... (each a qwen2 zoo model's weights)
prints one line per candidate:
"<path> <mean KL, zoo prompts> <mean KL, all> <same argmax fraction, all>"
"""
import json
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gguf_dequantize as gd  # noqa: E402


def header(data):
    """The metadata and a reader positioned at the tensor infos."""
    r = gd.Reader(data[:64 << 20].tobytes())
    _, _, n_tensors, n_kv = r.take("IIQQ")
    meta = {}
    for _ in range(n_kv):
        key = r.string()
        meta[key] = r.value(r.take("I"))
    return meta, r, n_tensors


def load(path):
    data = np.memmap(path, dtype=np.uint8, mode="r")
    meta, r, n_tensors = header(data)
    infos = []
    for _ in range(n_tensors):
        name = r.string()
        dims = [r.take("Q") for _ in range(r.take("I"))]
        infos.append((name, dims, r.take("I"), r.take("Q")))
    alignment = meta.get("general.alignment", 32)
    start = (r.pos + alignment - 1) // alignment * alignment
    tensors = {}
    for name, dims, t, offset in infos:
        n = int(np.prod(dims))
        if t == 0:
            w = np.frombuffer(data, dtype="<f4", count=n, offset=start + offset)
        elif t == 1:
            w = np.frombuffer(data, dtype="<f2", count=n, offset=start + offset)
        else:
            weights, size = gd.BLOCKS[t]
            blocks = np.asarray(data[start + offset:start + offset + n // weights * size]).reshape(-1, size)
            w = np.concatenate([gd.decode(t, blocks[i:i + 16384]) for i in range(0, blocks.shape[0], 16384)])
        tensors[name] = w.astype(np.float64).reshape(list(reversed(dims)))
    return meta, tensors


def rms_norm(x, w, eps):
    return x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + eps) * w


def rope_neox(x, base):  # x: [T, heads, 64], pairs (i, i + 32)
    T, _, d = x.shape
    i = np.arange(d // 2)
    angle = np.arange(T)[:, None] * base ** (-2.0 * i / d)
    cos, sin = np.cos(angle)[:, None, :], np.sin(angle)[:, None, :]
    a, b = x[..., :d // 2], x[..., d // 2:]
    return np.concatenate([a * cos - b * sin, a * sin + b * cos], axis=-1)


def forward(meta, w, ids):
    arch = meta["general.architecture"]
    n_layers = meta[arch + ".block_count"]
    n_head, n_kv = meta[arch + ".attention.head_count"], meta[arch + ".attention.head_count_kv"]
    eps, base = meta[arch + ".attention.layer_norm_rms_epsilon"], meta[arch + ".rope.freq_base"]
    x = w["token_embd.weight"][ids]
    T, dim = x.shape
    hd = dim // n_head
    mask = np.triu(np.full((T, T), -np.inf), 1)
    for l in range(n_layers):
        p = "blk.%d." % l
        h = rms_norm(x, w[p + "attn_norm.weight"], eps)
        q = h @ w[p + "attn_q.weight"].T + w.get(p + "attn_q.bias", 0)
        k = h @ w[p + "attn_k.weight"].T + w.get(p + "attn_k.bias", 0)
        v = h @ w[p + "attn_v.weight"].T + w.get(p + "attn_v.bias", 0)
        q = rope_neox(q.reshape(T, n_head, hd), base)
        k = rope_neox(k.reshape(T, n_kv, hd), base)
        v = v.reshape(T, n_kv, hd)
        heads = []
        for j in range(n_head):
            kv = j // (n_head // n_kv)
            s = q[:, j] @ k[:, kv].T / np.sqrt(hd) + mask
            s = np.exp(s - s.max(axis=-1, keepdims=True))
            heads.append((s / s.sum(axis=-1, keepdims=True)) @ v[:, kv])
        x = x + np.concatenate(heads, axis=-1) @ w[p + "attn_output.weight"].T
        h = rms_norm(x, w[p + "ffn_norm.weight"], eps)
        g = h @ w[p + "ffn_gate.weight"].T
        x = x + (g / (1 + np.exp(-g)) * (h @ w[p + "ffn_up.weight"].T)) @ w[p + "ffn_down.weight"].T
    out = w.get("output.weight", w["token_embd.weight"])
    return rms_norm(x, w["output_norm.weight"], eps) @ out.T


def log_softmax(z):
    z = z - z.max(axis=-1, keepdims=True)
    return z - np.log(np.exp(z).sum(axis=-1, keepdims=True))


def main():
    zoo, reference, candidates = sys.argv[1], sys.argv[2], sys.argv[3:]
    prompts = [json.load(open("%s/golden/qwen2/Q8_0/p%d.json" % (zoo, k)))["ids"] for k in (1, 2)]
    rng = np.random.RandomState(0)
    prompts += [list(rng.randint(0, 151643, size=64)) for _ in range(8)]
    # The zoo qwen2's hyper-parameters, from its own file: the reference and the candidates
    # a test writes may carry none.
    meta, _, _ = header(np.memmap("%s/models/qwen2-Q8_0.gguf" % zoo, dtype=np.uint8, mode="r"))
    _, w = load(reference)
    ref = [log_softmax(forward(meta, w, ids)) for ids in prompts]
    for path in candidates:
        _, wc = load(path)
        kl = []
        same = 0
        for ids, lp in zip(prompts, ref):
            lc = log_softmax(forward(meta, wc, ids))
            kl.extend(np.sum(np.exp(lp) * (lp - lc), axis=-1))
            same += int(np.sum(lp.argmax(-1) == lc.argmax(-1)))
        zoo_positions = len(prompts[0]) + len(prompts[1])
        print(path, np.mean(kl[:zoo_positions]), np.mean(kl), same / len(kl))


if __name__ == "__main__":
    main()
