#include "tests/fuzz/fuzz_util.h"

#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <vector>

#include "runtime/ops.h"
#include "runtime/transformer.h"
#include "tokenizer/load_tokenizer.h"

namespace toyllm::fuzz {
namespace {

std::string MakeScratchDir() {
  struct stat st;
  const char* tmp = std::getenv("TMPDIR");
  std::string base = stat("/dev/shm", &st) == 0 && S_ISDIR(st.st_mode) ? "/dev/shm"
                     : tmp != nullptr && *tmp != '\0'                 ? tmp
                                                                      : "/tmp";
  std::string pattern = base + "/toyllm_fuzz_XXXXXX";
  if (mkdtemp(pattern.data()) == nullptr) {
    std::perror(pattern.c_str());
    std::abort();
  }
  return pattern;
}

void RemoveScratchDir() {
  std::error_code ignored;
  std::filesystem::remove_all(ScratchDir(), ignored);
}

// [begin, begin + bytes) lies inside one of the model's mappings or converted copies.
bool Owned(const ModelFile& model, const void* begin, int64_t bytes) {
  if (begin == nullptr || bytes < 0) return false;
  const auto inside = [&](const void* lo, size_t size) {
    const auto b = reinterpret_cast<uintptr_t>(begin), l = reinterpret_cast<uintptr_t>(lo);
    return b >= l && b - l <= size && static_cast<uint64_t>(bytes) <= size - (b - l);
  };
  for (const auto& m : model.mappings) {
    if (inside(m->data(), m->size())) return true;
  }
  for (const std::vector<float>& c : model.converted) {
    if (inside(c.data(), c.size() * sizeof(float))) return true;
  }
  return false;
}

void CheckView(const ModelFile& model, const char* what, int layer, const void* data,
               int64_t bytes) {
  if (bytes == 0 || Owned(model, data, bytes)) return;
  std::fprintf(stderr, "%s: weight view %s of layer %d (%lld bytes at %p) lies outside the model's memory\n",
               model.format.c_str(), what, layer, static_cast<long long>(bytes), data);
  std::abort();
}

void CheckViews(const ModelFile& model) {
  const ModelConfig& c = model.config;
  const ModelWeights& w = model.weights;
  const auto matrix = [&](const char* what, int layer, const Matrix& m) {
    CheckView(model, what, layer, m.data, m.rows * m.row_bytes());
  };
  const int64_t norm = c.norm == NormKind::kNone ? 0 : c.dim * int64_t{sizeof(float)};
  matrix("token_embedding", -1, w.token_embedding);
  matrix("output", -1, w.output);
  CheckView(model, "output_norm", -1, w.output_norm, norm);
  for (size_t l = 0; l < w.layers.size(); ++l) {
    const LayerWeights& lw = w.layers[l];
    const int i = static_cast<int>(l);
    CheckView(model, "attn_norm", i, lw.attn_norm, norm);
    CheckView(model, "ffn_norm", i, lw.ffn_norm, c.hidden_dim > 0 ? norm : 0);
    for (auto [name, m] : {std::pair{"wq", &lw.wq}, std::pair{"wk", &lw.wk}, std::pair{"wv", &lw.wv},
                           std::pair{"wo", &lw.wo}, std::pair{"w1", &lw.w1}, std::pair{"w2", &lw.w2},
                           std::pair{"w3", &lw.w3}}) {
      matrix(name, i, *m);
    }
  }
}

}  // namespace

const std::string& ScratchDir() {
  static const std::string* dir = [] {
    auto* d = new std::string(MakeScratchDir());
    std::atexit(RemoveScratchDir);
    return d;
  }();
  return *dir;
}

std::string WriteScratchFile(const std::string& name, const uint8_t* data, size_t size) {
  const std::string path = ScratchDir() + "/" + name;
  if (const size_t slash = name.rfind('/'); slash != std::string::npos) {
    std::error_code ignored;
    std::filesystem::create_directories(ScratchDir() + "/" + name.substr(0, slash), ignored);
  }
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr || (size > 0 && std::fwrite(data, 1, size, f) != size) || std::fclose(f) != 0) {
    std::perror(path.c_str());
    std::abort();
  }
  return path;
}

void RemoveScratchFile(const std::string& name) { unlink((ScratchDir() + "/" + name).c_str()); }

void ExerciseModel(const ModelFile& model) {
  CheckViews(model);
  if (!model.vocabulary.empty()) {
    absl::StatusOr<std::unique_ptr<Tokenizer>> tokenizer =
        LoadTokenizer(model.vocabulary, "the model's tokenizer");
    if (tokenizer.ok()) {
      const std::vector<int> ids = (*tokenizer)->Encode("Once upon a time, 它太累了\n", true);
      (*tokenizer)->Decode(ids);
    }
  }
  // One BLAS thread: the fuzzer runs one input at a time, and thread start-up would
  // dominate the tiny products.
  static const bool single_threaded = (SetThreadCount(1), true);
  (void)single_threaded;
  const ModelConfig& c = model.config;
  const int context = std::min(c.context_length, 2);
  absl::StatusOr<std::unique_ptr<Transformer>> transformer =
      Transformer::Create(c, model.weights, context, /*max_batch=*/1);
  // A model the reader accepted must run: a refusal here means the reader let through a
  // config or a weight shape that the runtime rejects.
  const auto fail = [&](const absl::Status& s) {
    std::fprintf(stderr, "%s: loaded but does not run: %s\n", model.format.c_str(),
                 std::string(s.message()).c_str());
    std::abort();
  };
  if (!transformer.ok()) fail(transformer.status());
  const int first = 0, last = c.vocab_size - 1;
  if (auto s = (*transformer)->Forward(absl::MakeConstSpan(&first, 1), 0); !s.ok()) fail(s.status());
  if (context < 2) return;
  if (auto s = (*transformer)->Forward(absl::MakeConstSpan(&last, 1), 1); !s.ok()) fail(s.status());
}

}  // namespace toyllm::fuzz
