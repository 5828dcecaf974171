// Builds models/article.gguf: the article's own example as a model file. One layer, one
// head, 4-dimensional embeddings of the 11 tokens of "这个动物并没有过马路，因为它太累了",
// W_Q, W_K, W_V of 4×2 (d_k = 2), no normalisation, no position encoding and no
// feed-forward layer; all numbers are the article's. Usage: make_article_model OUT.gguf
#include <iostream>
#include <string>
#include <vector>

#include "models/llama_gguf_export.h"
#include "tokenizer/load_tokenizer.h"
#include "tokenizer/sentencepiece_proto.h"

namespace toyllm {
namespace {

struct Word {
  const char* text;
  std::vector<float> x;  // the article's embedding vector
};

// The article's table. The comma has no vector there; it gets zeros so the whole sentence
// still tokenizes.
const std::vector<Word> kWords = {
    {"这个", {0.12f, -0.45f, 0.31f, 0.08f}}, {"动物", {0.55f, 0.20f, -0.11f, 0.44f}},
    {"并", {-0.09f, 0.33f, 0.15f, -0.22f}},  {"没有", {0.41f, -0.18f, -0.36f, 0.19f}},
    {"过", {0.07f, 0.29f, -0.05f, 0.33f}},   {"马路", {0.62f, -0.10f, 0.24f, -0.31f}},
    {"，", {0.0f, 0.0f, 0.0f, 0.0f}},        {"因为", {-0.28f, 0.44f, 0.09f, 0.17f}},
    {"它", {0.19f, -0.37f, 0.28f, 0.06f}},   {"太", {0.33f, 0.11f, -0.19f, -0.08f}},
    {"累", {-0.15f, 0.52f, 0.06f, -0.29f}},  {"了", {0.03f, -0.05f, 0.02f, 0.01f}},
};

// The article multiplies x (a row) by W (4×2); a linear layer stores W transposed (2×4).
const std::vector<float> kWq = {1, 0, 1, 0, /**/ 0, 1, 1, -1};
const std::vector<float> kWk = {0.5f, 0, 0.5f, 0, /**/ 0, 0.5f, 0.5f, -0.5f};
const std::vector<float> kWv = {0.1f, 0.2f, -0.1f, 0.3f, /**/ 0.2f, 0.1f, 0.3f, -0.2f};
// The article stops at the attention output; W_O puts it into the first two coordinates.
const std::vector<float> kWo = {1, 0, /**/ 0, 1, /**/ 0, 0, /**/ 0, 0};

int Run(const std::string& path) {
  VocabularyArrays vocabulary;
  vocabulary.pieces = {"<unk>"};
  vocabulary.types = {static_cast<int32_t>(TokenType::kUnknown)};
  std::vector<float> embedding(4, 0.0f);  // <unk>
  for (const Word& w : kWords) {
    vocabulary.pieces.push_back(w.text);
    vocabulary.types.push_back(static_cast<int32_t>(TokenType::kUserDefined));
    embedding.insert(embedding.end(), w.x.begin(), w.x.end());
  }
  vocabulary.scores.assign(vocabulary.pieces.size(), 0.0f);
  // The article's sentence starts with its first word: no BOS, no leading space.
  vocabulary.bos_id = vocabulary.eos_id = -1;
  vocabulary.add_dummy_prefix = false;
  vocabulary.byte_fallback = false;
  absl::StatusOr<std::unique_ptr<Tokenizer>> tokenizer =
      LoadSentencePieceModel(BuildSentencePieceModel(vocabulary), "the article's vocabulary");
  if (!tokenizer.ok()) {
    std::cerr << tokenizer.status().message() << "\n";
    return 1;
  }

  ModelConfig c;
  c.dim = 4;
  c.hidden_dim = 0;
  c.n_layers = 1;
  c.n_heads = c.n_kv_heads = 1;
  c.head_dim = 2;
  c.vocab_size = static_cast<int>(vocabulary.pieces.size());
  c.context_length = 32;
  c.rope_layout = RopeLayout::kNone;
  c.norm = NormKind::kNone;
  c.tied_output = true;
  ModelWeights w;
  w.token_embedding = {embedding.data(), c.vocab_size, c.dim};
  w.output = w.token_embedding;
  w.layers.resize(1);
  w.layers[0].wq = {kWq.data(), 2, 4};
  w.layers[0].wk = {kWk.data(), 2, 4};
  w.layers[0].wv = {kWv.data(), 2, 4};
  w.layers[0].wo = {kWo.data(), 4, 2};
  ExportOptions options;
  options.name = "article: 这个动物并没有过马路，因为它太累了";
  options.tokenizer = tokenizer->get();
  if (absl::Status s = WriteLlamaGguf(path, c, w, options); !s.ok()) {
    std::cerr << s.message() << "\n";
    return 1;
  }
  return 0;
}

}  // namespace
}  // namespace toyllm

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: make_article_model OUT.gguf\n";
    return 2;
  }
  return toyllm::Run(argv[1]);
}
