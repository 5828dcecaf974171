// Llama 3.1's RoPE frequency factors, computed from Hugging Face's rope_scaling of type
// "llama3" exactly as llama.cpp's convert_hf_to_gguf.py computes its rope_freqs tensor.
#ifndef TOYLLM_MODELS_LLAMA3_ROPE_H_
#define TOYLLM_MODELS_LLAMA3_ROPE_H_

#include <vector>

namespace toyllm {

struct Llama3RopeScaling {
  float factor = 8.0f;
  float low_freq_factor = 1.0f;
  float high_freq_factor = 4.0f;
  int original_context = 8192;  // original_max_position_embeddings
};

// One divisor per RoPE pair of a head (head_dim / 2 values): 1 for pairs that turn round
// more than high_freq_factor times in the original context, `factor` for those that turn
// fewer than low_freq_factor times, and a smooth blend in between. So a model trained on
// 8192 positions keeps the angles it knows for its fast pairs and stretches its slow ones.
// Computed in float32, as the converter does with torch.
std::vector<float> Llama3RopeFactors(float theta, int head_dim, const Llama3RopeScaling& s);

}  // namespace toyllm

#endif  // TOYLLM_MODELS_LLAMA3_ROPE_H_
