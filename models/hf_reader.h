// Hugging Face checkpoints of LlamaForCausalLM (with Llama 3.1's "llama3" rope scaling),
// Qwen2ForCausalLM and Qwen3ForCausalLM: a directory with config.json, the weights in
// model.safetensors or shards listed by model.safetensors.index.json, and usually the
// SentencePiece tokenizer.model or a byte-level BPE tokenizer.json.
#ifndef TOYLLM_MODELS_HF_READER_H_
#define TOYLLM_MODELS_HF_READER_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "models/model_file.h"

namespace toyllm {

// Llama's Q and K are un-permuted from Hugging Face's rotate-half layout to the interleaved
// one, as llama.cpp's converter does, so the result runs (and exports) with interleaved
// RoPE; Qwen's keep the rotate-half layout, which llama.cpp's qwen2 and qwen3 also use.
absl::StatusOr<std::unique_ptr<ModelFile>> ReadHfDirectory(const std::string& dir);

// Hugging Face's per-head row order for Q/K: within each head of `head_dim` rows, row
// i·head_dim/2 + j holds what the interleaved layout keeps at row 2j + i. Returns the
// interleaved matrix for a Hugging Face one (rows = n_heads · head_dim).
std::vector<float> UnpermuteRotateHalf(const float* w, int n_heads, int head_dim, int cols);

}  // namespace toyllm

#endif  // TOYLLM_MODELS_HF_READER_H_
