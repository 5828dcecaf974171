#!/usr/bin/python3
"""Trains the tiny Llama-architecture model of the coreference corpus on the CPU and saves it
as a llama2.c-style PyTorch checkpoint ({"model": state_dict, "model_args": {...}}), which
`toyllm convert` reads.

The architecture is the runtime's: token embedding, N x [RMSNorm, attention with RoPE on
interleaved pairs (llama2.c's layout), RMSNorm, SwiGLU], final RMSNorm, and the output
tied to the embedding. Every example is BOS, the tokens of one corpus line, EOS. The loss is
the next-token loss over all of them plus, once more, the loss of the referent after
"它指的是": it is one token of some twenty, the only one the sentence determines, and
without the extra weight the model learns it late and poorly.

Usage: train_model.py CORPUS_DIR OUT.pt [--steps N] [--dim D] [--layers L] ...
(reads CORPUS_DIR/train.txt, CORPUS_DIR/tok.model and, to report, CORPUS_DIR/heldout.tsv)
"""
import argparse
import math
import os
import time

import sentencepiece as spm
import torch
import torch.nn.functional as F
from torch import nn


class RMSNorm(nn.Module):
    def __init__(self, dim, eps):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


def rope_tables(head_dim, length, theta):
    freqs = 1.0 / theta ** (torch.arange(0, head_dim, 2).float() / head_dim)
    angles = torch.outer(torch.arange(length).float(), freqs)
    return angles.cos(), angles.sin()


def apply_rope(x, cos, sin):
    # x: [batch, T, heads, head_dim]; rotates the pairs (0,1), (2,3), ... as llama2.c does.
    pairs = x.float().reshape(*x.shape[:-1], -1, 2)
    a, b = pairs[..., 0], pairs[..., 1]
    cos, sin = cos[None, :, None, :], sin[None, :, None, :]
    return torch.stack((a * cos - b * sin, a * sin + b * cos), dim=-1).flatten(-2)


class Attention(nn.Module):
    def __init__(self, dim, n_heads):
        super().__init__()
        self.n_heads = n_heads
        self.wq = nn.Linear(dim, dim, bias=False)
        self.wk = nn.Linear(dim, dim, bias=False)
        self.wv = nn.Linear(dim, dim, bias=False)
        self.wo = nn.Linear(dim, dim, bias=False)

    def forward(self, x, cos, sin):
        b, t, dim = x.shape
        shape = (b, t, self.n_heads, dim // self.n_heads)
        q = apply_rope(self.wq(x).view(shape), cos, sin).transpose(1, 2)
        k = apply_rope(self.wk(x).view(shape), cos, sin).transpose(1, 2)
        v = self.wv(x).view(shape).transpose(1, 2)
        scores = q @ k.transpose(-2, -1) / math.sqrt(shape[-1])
        causal = torch.ones(t, t, dtype=torch.bool).triu(1)
        weights = scores.masked_fill(causal, float("-inf")).softmax(-1)
        return self.wo((weights @ v).transpose(1, 2).reshape(b, t, dim))


class FeedForward(nn.Module):
    def __init__(self, dim, hidden_dim):
        super().__init__()
        self.w1 = nn.Linear(dim, hidden_dim, bias=False)
        self.w2 = nn.Linear(hidden_dim, dim, bias=False)
        self.w3 = nn.Linear(dim, hidden_dim, bias=False)

    def forward(self, x):
        return self.w2(F.silu(self.w1(x)) * self.w3(x))


class Block(nn.Module):
    def __init__(self, args):
        super().__init__()
        self.attention_norm = RMSNorm(args["dim"], args["norm_eps"])
        self.attention = Attention(args["dim"], args["n_heads"])
        self.ffn_norm = RMSNorm(args["dim"], args["norm_eps"])
        self.feed_forward = FeedForward(args["dim"], args["hidden_dim"])

    def forward(self, x, cos, sin):
        x = x + self.attention(self.attention_norm(x), cos, sin)
        return x + self.feed_forward(self.ffn_norm(x))


class Llama(nn.Module):
    def __init__(self, args):
        super().__init__()
        self.tok_embeddings = nn.Embedding(args["vocab_size"], args["dim"])
        self.layers = nn.ModuleList(Block(args) for _ in range(args["n_layers"]))
        self.norm = RMSNorm(args["dim"], args["norm_eps"])
        self.output = nn.Linear(args["dim"], args["vocab_size"], bias=False)
        self.output.weight = self.tok_embeddings.weight  # tied, as llama2.c's small models
        cos, sin = rope_tables(args["dim"] // args["n_heads"], args["max_seq_len"], args["rope_theta"])
        self.register_buffer("cos", cos, persistent=False)
        self.register_buffer("sin", sin, persistent=False)
        for name, p in self.named_parameters():
            if p.dim() == 2:
                nn.init.normal_(p, std=0.02)

    def forward(self, tokens):
        t = tokens.shape[1]
        x = self.tok_embeddings(tokens)
        for layer in self.layers:
            x = layer(x, self.cos[:t], self.sin[:t])
        return self.output(self.norm(x))


def encode_corpus(sp, path, max_len):
    """The examples, padded with -1 (no loss), and where each one's referent is predicted."""
    rows, referents = [], []
    with open(path, encoding="utf-8") as f:
        for line in f:
            # BOS ... 它指的是 referent 。 EOS: "是" at len - 4 predicts the referent.
            ids = [sp.bos_id()] + sp.encode(line.strip()) + [sp.eos_id()]
            assert len(ids) <= max_len + 1, f"a line of {len(ids)} tokens: {line}"
            rows.append(ids + [-1] * (max_len + 1 - len(ids)))
            referents.append(len(ids) - 4)
    return torch.tensor(rows), torch.tensor(referents)


def heldout_accuracy(model, sp, path):
    """The share of held-out prompts whose most likely next token is the referent."""
    right = total = 0
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.startswith("#"):
                continue
            _, prompt, referent, _ = line.rstrip("\n").split("\t")
            ids = torch.tensor([[sp.bos_id()] + sp.encode(prompt)])
            predicted = model(ids)[0, -1].argmax().item()
            right += sp.id_to_piece(predicted) == referent
            total += 1
    return right / max(total, 1)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("corpus_dir")
    parser.add_argument("out")
    parser.add_argument("--steps", type=int, default=800)
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--lr", type=float, default=3e-3)
    # Narrow on purpose: at 64 dimensions (and fewer nouns) the model copied both nouns into
    # the last position and picked one after attention; at 32 a head of the top layer
    # learns to attend to the referent alone (README, "Where 它 is resolved").
    parser.add_argument("--dim", type=int, default=32)
    parser.add_argument("--layers", type=int, default=3)
    parser.add_argument("--heads", type=int, default=4)
    parser.add_argument("--hidden", type=int, default=96)
    parser.add_argument("--max-seq-len", type=int, default=32)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()

    # One thread and deterministic kernels: the same command gives the same model.
    torch.manual_seed(args.seed)
    torch.set_num_threads(1)
    torch.use_deterministic_algorithms(True)

    sp = spm.SentencePieceProcessor(model_file=os.path.join(args.corpus_dir, "tok.model"))
    model_args = {"dim": args.dim, "n_layers": args.layers, "n_heads": args.heads,
                  "n_kv_heads": args.heads, "vocab_size": sp.vocab_size(),
                  "hidden_dim": args.hidden, "max_seq_len": args.max_seq_len,
                  "norm_eps": 1e-5, "rope_theta": 10000.0}
    data, referents = encode_corpus(sp, os.path.join(args.corpus_dir, "train.txt"), args.max_seq_len)
    model = Llama(model_args)
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.01)
    # Linear warm-up, then cosine decay to a tenth.
    warmup = max(1, args.steps // 20)
    schedule = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda s: min(
        (s + 1) / warmup, 0.1 + 0.45 * (1 + math.cos(math.pi * min(s / args.steps, 1.0)))))

    start = time.time()
    for step in range(args.steps):
        rows = torch.randint(len(data), (args.batch,))
        inputs, targets = data[rows, :-1].clamp(min=0), data[rows, 1:]
        logits = model(inputs)
        loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1),
                               ignore_index=-1)
        at, b = referents[rows], torch.arange(args.batch)
        loss = loss + F.cross_entropy(logits[b, at], targets[b, at])
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        schedule.step()
        if step % 200 == 0 or step == args.steps - 1:
            print(f"step {step}: loss {loss.item():.4f} ({time.time() - start:.0f} s)", flush=True)

    model.eval()
    heldout = os.path.join(args.corpus_dir, "heldout.tsv")
    if os.path.exists(heldout):
        with torch.no_grad():
            print(f"held-out accuracy (PyTorch): {heldout_accuracy(model, sp, heldout):.3f}")
    state = {k: v.contiguous() for k, v in model.state_dict().items()}
    state["output.weight"] = state["tok_embeddings.weight"]  # one storage under both names
    torch.save({"model": state, "model_args": model_args}, args.out)
    print(f"wrote {args.out}: {sum(p.numel() for p in model.parameters())} parameters, "
          f"{time.time() - start:.0f} s")


if __name__ == "__main__":
    main()
