"""Writes PyTorch checkpoints of a llama2.c legacy model, for tests/pytorch_reader_test.cc.

usage: /usr/bin/python3 make_pt_checkpoint.py LEGACY.bin OUT_DIR

The state dict uses the tensor names of Meta's and llama2.c's model.py. OUT_DIR receives:
  train_f32.pt   what llama2.c's train.py saves for a torch.compile'd model: {"model": state
                 dict with "_orig_mod." prefixes, "optimizer", "model_args", "iter_num",
                 "best_val_loss", "config"}; the classifier shares the embedding's storage
  train_bf16.pt  the same with the model in bfloat16
  bare/consolidated.00.pth  a bare float32 state dict, Meta style, with its own classifier
  bare/consolidated.f16.pth the same in float16
  bare/params.json          Meta's hyper-parameters (no max_seq_len, vocab_size -1)
"""
import json
import os
import struct
import sys

import torch


def read_legacy(path):
    """The seven-int header and the weights of a llama2.c legacy file, as float32 tensors."""
    with open(path, "rb") as f:
        data = f.read()
    dim, hidden, n_layers, n_heads, n_kv_heads, vocab, seq_len = struct.unpack("<7i", data[:28])
    shared = vocab > 0
    vocab = abs(vocab)
    head_dim = dim // n_heads
    kv_dim = n_kv_heads * head_dim
    floats = torch.frombuffer(bytearray(data[28:]), dtype=torch.float32)
    offset = 0

    def take(*shape):
        nonlocal offset
        n = 1
        for s in shape:
            n *= s
        t = floats[offset:offset + n].reshape(shape).clone()
        offset += n
        return t

    w = {"tok_embeddings": take(vocab, dim)}
    for name, shape in [("attention_norm", (dim,)), ("attention.wq", (dim, dim)),
                        ("attention.wk", (kv_dim, dim)), ("attention.wv", (kv_dim, dim)),
                        ("attention.wo", (dim, dim)), ("ffn_norm", (dim,)),
                        ("feed_forward.w1", (hidden, dim)), ("feed_forward.w2", (dim, hidden)),
                        ("feed_forward.w3", (hidden, dim))]:
        for layer in range(n_layers):
            w[f"layers.{layer}.{name}"] = take(*shape)
    w["norm"] = take(dim)
    take(seq_len * head_dim)  # freq_cis_real and freq_cis_imag, unused
    w["output"] = w["tok_embeddings"] if shared else take(vocab, dim)
    # multiple_of only shaped hidden_dim at training time: train.py's default stands in.
    args = dict(dim=dim, n_layers=n_layers, n_heads=n_heads, n_kv_heads=n_kv_heads,
                vocab_size=vocab, multiple_of=32, max_seq_len=seq_len, dropout=0.0)
    return {f"{k}.weight": v for k, v in w.items()}, args


def cast(state_dict, dtype):
    """A copy in `dtype` that keeps the classifier tied to the embedding when it was."""
    out = {k: v.to(dtype) for k, v in state_dict.items()}
    if state_dict["output.weight"] is state_dict["tok_embeddings.weight"]:
        out["output.weight"] = out["tok_embeddings.weight"]
    return out


def train_py_checkpoint(state_dict, args):
    """train.py's checkpoint dict, with the AdamW state after one step."""
    params = [torch.nn.Parameter(v.float().clone()) for v in state_dict.values()]
    optimizer = torch.optim.AdamW(params, lr=5e-4, betas=(0.9, 0.95), weight_decay=0.1)
    for p in params:
        p.grad = torch.zeros_like(p)
    optimizer.step()
    model = {"_orig_mod." + k: v for k, v in state_dict.items()}
    config = {"out_dir": "out", "batch_size": 128, "learning_rate": 5e-4, "compile": True,
              "dtype": "bfloat16", "n_kv_heads": args["n_kv_heads"]}
    return {"model": model, "optimizer": optimizer.state_dict(), "model_args": args,
            "iter_num": 1000, "best_val_loss": 1.25, "config": config}


def main():
    legacy, out_dir = sys.argv[1], sys.argv[2]
    state_dict, args = read_legacy(legacy)
    os.makedirs(os.path.join(out_dir, "bare"), exist_ok=True)
    torch.save(train_py_checkpoint(state_dict, args), os.path.join(out_dir, "train_f32.pt"))
    torch.save(train_py_checkpoint(cast(state_dict, torch.bfloat16), args),
               os.path.join(out_dir, "train_bf16.pt"))
    bare = dict(state_dict)
    bare["output.weight"] = bare["output.weight"].clone()
    torch.save(bare, os.path.join(out_dir, "bare", "consolidated.00.pth"))
    torch.save(cast(bare, torch.float16), os.path.join(out_dir, "bare", "consolidated.f16.pth"))
    params = {"dim": args["dim"], "multiple_of": args["multiple_of"], "n_heads": args["n_heads"],
              "n_kv_heads": args["n_kv_heads"], "n_layers": args["n_layers"], "norm_eps": 1e-05,
              "vocab_size": -1}
    with open(os.path.join(out_dir, "bare", "params.json"), "w") as f:
        json.dump(params, f)


if __name__ == "__main__":
    main()
