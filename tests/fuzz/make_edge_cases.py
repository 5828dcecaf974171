"""Writes the hand-made edge cases of the committed fuzz corpus, tests/fuzz/corpus/<harness>/.

usage: python3 tests/fuzz/make_edge_cases.py

Each file is a few bytes to a few hundred: a structure cut short, a count or size that
cannot fit, a type or nesting the reader refuses. Generated seeds of valid files (the tiny
model in every format) are not committed: tests/fuzz/make_seeds.cc writes them at fuzz time.
Crashes the fuzzers found are committed beside these as crash-<harness>-<what>, by hand.
"""
import io
import json
import os
import struct
import zipfile

CORPUS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus")


def write(harness, name, data):
    os.makedirs(os.path.join(CORPUS, harness), exist_ok=True)
    if isinstance(data, str):
        data = data.encode()
    with open(os.path.join(CORPUS, harness, name), "wb") as f:
        f.write(data)


def gguf_string(s):
    s = s.encode() if isinstance(s, str) else s
    return struct.pack("<Q", len(s)) + s


def gguf_header(n_tensors, n_values, version=3):
    return b"GGUF" + struct.pack("<IQQ", version, n_tensors, n_values)


def gguf():
    write("gguf", "magic_only", b"GGUF")
    write("gguf", "empty_v3", gguf_header(0, 0))
    write("gguf", "big_endian", b"GGUF" + struct.pack(">IQQ", 3, 0, 0))
    write("gguf", "huge_counts", gguf_header(2**63, 2**63 - 1))
    kv = gguf_string("general.architecture") + struct.pack("<I", 8) + struct.pack("<Q", 2**62)
    write("gguf", "string_past_end", gguf_header(0, 1) + kv)
    kv = gguf_string("tokenizer.ggml.tokens") + struct.pack("<IIQ", 9, 8, 2**40)
    write("gguf", "string_array_too_long", gguf_header(0, 1) + kv)
    kv = gguf_string("a") + struct.pack("<IIQ", 9, 9, 1) + struct.pack("<IQ", 4, 1)
    write("gguf", "nested_array", gguf_header(0, 1) + kv + struct.pack("<I", 7))
    kv = gguf_string("general.alignment") + struct.pack("<II", 4, 3)
    write("gguf", "alignment_not_power_of_two", gguf_header(0, 1) + kv)
    tensor = gguf_string("token_embd.weight") + struct.pack("<I", 2) + struct.pack("<QQ", 2**33, 2**33)
    write("gguf", "absurd_dims", gguf_header(1, 0) + tensor + struct.pack("<IQ", 0, 0))
    # A well-formed llama header whose one tensor lies past the end of the file.
    kvs = [gguf_string("general.architecture") + struct.pack("<I", 8) + gguf_string("llama")]
    for key, value in [("llama.embedding_length", 8), ("llama.feed_forward_length", 0),
                       ("llama.block_count", 1), ("llama.attention.head_count", 2),
                       ("llama.context_length", 8)]:
        kvs.append(gguf_string(key) + struct.pack("<II", 4, value))
    tensor = gguf_string("token_embd.weight") + struct.pack("<IQQIQ", 2, 8, 16, 0, 4096)
    write("gguf", "tensor_past_end", gguf_header(1, len(kvs)) + b"".join(kvs) + tensor + b"\0" * 32)
    # Every tensor of a two-layer model at data offset 0: with more layers and wider
    # matrices, an 8.9 MB file described 51 GB of float32 copies before overlaps were refused.
    kvs = [gguf_string("general.architecture") + struct.pack("<I", 8) + gguf_string("llama")]
    for key, value in [("llama.embedding_length", 8), ("llama.feed_forward_length", 16),
                       ("llama.block_count", 2), ("llama.attention.head_count", 4),
                       ("llama.context_length", 8)]:
        kvs.append(gguf_string(key) + struct.pack("<II", 4, value))
    tensors = []

    def tensor(name, dims, ggml_type=1):  # f16
        tensors.append(gguf_string(name) + struct.pack("<I", len(dims)) +
                       b"".join(struct.pack("<Q", d) for d in dims) + struct.pack("<IQ", ggml_type, 0))

    tensor("token_embd.weight", [8, 16])
    tensor("output_norm.weight", [8], 0)
    for layer in range(2):
        tensor(f"blk.{layer}.attn_norm.weight", [8], 0)
        tensor(f"blk.{layer}.ffn_norm.weight", [8], 0)
        for name in ["attn_q", "attn_k", "attn_v", "attn_output"]:
            tensor(f"blk.{layer}.{name}.weight", [8, 8])
        for name, dims in [("ffn_gate", [8, 16]), ("ffn_up", [8, 16]), ("ffn_down", [16, 8])]:
            tensor(f"blk.{layer}.{name}.weight", dims)
    header = gguf_header(len(tensors), len(kvs)) + b"".join(kvs) + b"".join(tensors)
    header += b"\0" * (-len(header) % 32)
    write("gguf", "aliased_tensors", header + b"\0\x3c" * 128)  # f16 1.0


def llama2c():
    dims = [8, 16, 1, 2, 1, 16, 8]
    write("llama2c", "legacy_header_only", struct.pack("<7i", *dims))
    write("llama2c", "legacy_vocab_int_min", struct.pack("<7i", 8, 16, 1, 2, 1, -2**31, 8))
    write("llama2c", "legacy_huge_dims", struct.pack("<7i", 2**16, 2**18, 1024, 1024, 1024, 2**22, 2**22))
    write("llama2c", "short", b"\x08\0\0\0")
    header = struct.pack("<Ii7iB", 0x616B3432, 2, *dims, 1) + struct.pack("<i", 0)
    write("llama2c", "v2_group_zero", header.ljust(256, b"\0"))
    header = struct.pack("<Ii7iB", 0x616B3432, 3, *dims, 1)
    write("llama2c", "v3_unknown", header.ljust(256, b"\0"))
    write("llama2c", "versioned_short", struct.pack("<Ii", 0x616B3432, 1))


def safetensors_file(header, buffer=b""):
    text = header if isinstance(header, bytes) else json.dumps(header).encode()
    return struct.pack("<Q", len(text)) + text + buffer


def safetensors():
    write("safetensors", "length_only", struct.pack("<Q", 0))
    write("safetensors", "header_past_end", struct.pack("<Q", 2**63) + b"{}")
    write("safetensors", "empty_object", safetensors_file({}))
    write("safetensors", "metadata_only", safetensors_file({"__metadata__": {"format": "pt"}}))
    write("safetensors", "not_an_object", safetensors_file(b"[1, 2]"))
    write("safetensors", "bad_json", safetensors_file(b'{"a": {"dtype": "F32", '))
    t = {"dtype": "F32", "shape": [2], "data_offsets": [8, 0]}
    write("safetensors", "offsets_reversed", safetensors_file({"t": t}, b"\0" * 8))
    t = {"dtype": "F32", "shape": [-1, 2], "data_offsets": [0, 8]}
    write("safetensors", "negative_shape", safetensors_file({"t": t}, b"\0" * 8))
    t = {"dtype": "F32", "shape": [2**40, 2**40], "data_offsets": [0, 0]}
    write("safetensors", "shape_overflow", safetensors_file({"t": t}))
    t = {"dtype": "F32", "shape": [4], "data_offsets": [0, 16]}
    write("safetensors", "buffer_short", safetensors_file({"t": t}, b"\0" * 8))
    t = {"dtype": "F8_E4M3", "shape": [1], "data_offsets": [0, 1]}
    write("safetensors", "unknown_dtype", safetensors_file({"t": t}, b"\0"))
    a = {"dtype": "F16", "shape": [4], "data_offsets": [0, 8]}
    b = {"dtype": "F16", "shape": [2], "data_offsets": [4, 8]}
    write("safetensors", "overlapping", safetensors_file({"a": a, "b": b}, b"\0\x3c" * 4))
    t = {"dtype": "F32", "shape": [2], "data_offsets": [0.5, 8]}
    write("safetensors", "float_offsets", safetensors_file({"t": t}, b"\0" * 8))


def hf_config():
    base = {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 8,
            "intermediate_size": 16, "num_hidden_layers": 1, "num_attention_heads": 2,
            "num_key_value_heads": 1, "vocab_size": 16, "max_position_embeddings": 8}
    write("hf_config", "empty_object", "{}")
    write("hf_config", "null", "null")
    write("hf_config", "no_heads", json.dumps(dict(base, num_attention_heads=0)))
    write("hf_config", "odd_head_dim", json.dumps(dict(base, head_dim=3)))
    write("hf_config", "huge_layers", json.dumps(dict(base, num_hidden_layers=2**31)))
    write("hf_config", "string_sizes", json.dumps(dict(base, hidden_size="8")))
    write("hf_config", "rope_scaling", json.dumps(dict(base, rope_scaling={"rope_type": "yarn"})))
    write("hf_config", "rope_type_number", json.dumps(dict(base, rope_parameters={"rope_type": 1})))
    write("hf_config", "eps_huge", json.dumps(dict(base, rms_norm_eps=1e300)))
    write("hf_config", "llama3_equal_factors", json.dumps(dict(base, rope_scaling={
        "rope_type": "llama3", "low_freq_factor": 2.0, "high_freq_factor": 2.0})))
    write("hf_config", "llama3_huge_head_dim", json.dumps(dict(base, head_dim=2**30, rope_scaling={
        "rope_type": "llama3", "factor": 1e30, "original_max_position_embeddings": 0})))
    write("hf_config", "qwen3_odd_head_dim", json.dumps(dict(base, model_type="qwen3", head_dim=5)))
    config = json.dumps(base).encode()
    write("hf_config", "index_escapes", config + b"\0" + json.dumps({"weight_map": {"a": "../model.safetensors"}}).encode())
    write("hf_config", "index_names_config", config + b"\0" + json.dumps({"weight_map": {"a": "config.json"}}).encode())
    write("hf_config", "index_names_nothing", config + b"\0" + json.dumps({"weight_map": {"a": ""}}).encode())
    write("hf_config", "index_not_object", config + b"\0" + b"[]")


def zip_bytes(entries, compression=zipfile.ZIP_STORED):
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", compression) as z:
        for name, data in entries:
            z.writestr(name, data)
    return out.getvalue()


def pytorch():
    write("pytorch", "end_record_only", b"PK\x05\x06" + b"\0" * 18)
    write("pytorch", "empty_dict", zip_bytes([("archive/data.pkl", b"\x80\x02}q\x00."),
                                              ("archive/byteorder", b"little")]))
    write("pytorch", "big_endian", zip_bytes([("archive/data.pkl", b"}."), ("archive/byteorder", b"big")]))
    write("pytorch", "two_pickles", zip_bytes([("a/data.pkl", b"}."), ("b/data.pkl", b"}.")]))
    write("pytorch", "compressed", zip_bytes([("archive/data.pkl", b"}." * 64)], zipfile.ZIP_DEFLATED))
    # model_args without a state dict, and one tensor whose storage entry is missing.
    pickle = (b"\x80\x02}q\x00(X\x05\x00\x00\x00modelq\x01}q\x02X\x0a\x00\x00\x00model_argsq\x03}q\x04"
              b"X\x07\x00\x00\x00n_headsq\x05K\x02sX\x02\x00\x00\x00xxq\x06ctorch._utils\n_rebuild_tensor_v2\nq\x07"
              b"(X\x07\x00\x00\x00storageq\x08ctorch\nFloatStorage\nq\tX\x01\x00\x00\x000q\nX\x03\x00\x00\x00cpuq\x0bK\x04tq\x0c"
              b"QK\x00K\x04\x85K\x01\x85\x89}q\rtq\x0eRu.")
    write("pytorch", "missing_storage", zip_bytes([("archive/data.pkl", pickle)]))


def pickle():
    write("pickle", "empty_dict", b"}.")
    write("pickle", "protocol_2_dict", b"\x80\x02}q\x00.")
    write("pickle", "no_stop", b"\x80\x02}q\x00")
    write("pickle", "deep_marks", b"(" * 100 + b".")
    write("pickle", "self_reference", b"}q\x00h\x00h\x00s.")
    write("pickle", "forbidden_global", b"cos\nsystem\n.")
    write("pickle", "long1_too_wide", b"\x8a\x09" + b"\xff" * 9 + b".")
    write("pickle", "string_past_end", b"X\xff\xff\xff\x7fabc.")
    write("pickle", "memo_unknown", b"j\xff\xff\xff\xff.")
    write("pickle", "setitems_odd", b"}(K\x01u.")
    write("pickle", "storage_pid", b"(X\x07\x00\x00\x00storagectorch\nHalfStorage\nX\x01\x00\x00\x000X\x03\x00\x00\x00cpuK\x02tQ.")


def protobuf_varint(v):
    out = b""
    while v >= 0x80:
        out += bytes([v & 0x7F | 0x80])
        v >>= 7
    return out + bytes([v])


def tokenizer():
    write("tokenizer", "one_byte", b"\x0a")
    write("tokenizer", "empty_piece", b"\x0a\x00")
    piece = b"\x0a\x01a\x15\x00\x00\x00\x00\x18\x01"
    write("tokenizer", "one_piece", b"\x0a" + protobuf_varint(len(piece)) + piece)
    trainer = b"\x18\x02"  # model_type BPE, no pieces
    write("tokenizer", "trainer_only", b"\x12" + protobuf_varint(len(trainer)) + trainer)
    trainer = b"\x18\x01" + b"\xc0\x02" + protobuf_varint(2**32 - 1)  # unigram, unk_id huge
    write("tokenizer", "unk_id_out_of_range", b"\x0a" + protobuf_varint(len(piece)) + piece +
          b"\x12" + protobuf_varint(len(trainer)) + trainer)
    write("tokenizer", "length_past_end", b"\x0a\xff\xff\xff\x0f")


def npy():
    write("npy", "rank4_large", bytes([4, 255, 255, 1, 1]))
    write("npy", "rank0", bytes([33]))
    write("npy", "zero_dim_null_data", bytes([2, 0, 200]))  # UBSan: fwrite(nullptr, 4, 0)


def args():
    write("args", "flag_without_value", b"\0--model")
    write("args", "dashes", b"\1-\0--\0-m\0-")
    write("args", "empty_values", b"\0--temp=\0--model=\0=")
    write("args", "int_overflow", b"\0-n\099999999999999999999\0--seed\x0018446744073709551616")


for make in (gguf, llama2c, safetensors, hf_config, pytorch, pickle, tokenizer, npy, args):
    make()
