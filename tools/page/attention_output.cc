#include "tools/page/attention_output.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>

#include <nlohmann/json.hpp>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "models/atomic_file.h"
#include "tokenizer/token_text.h"
#include "tools/page/attention_page.h"
#include "tools/inspect/attention_png.h"
#include "tools/inspect/npy_writer.h"
#include "tools/inspect/text_file.h"

namespace toyllm {

std::set<std::pair<Tap, int>> AttentionTaps(const std::vector<int>& layers) {
  std::set<std::pair<Tap, int>> taps;
  for (int l : layers) taps.insert({Tap::kWeights, l});
  return taps;
}

absl::StatusOr<AttentionMaps> AssembleMaps(const TapRecorder& recorder, const std::vector<int>& layers,
                                           const std::vector<int>& heads, const std::vector<int>& ids,
                                           const Tokenizer& tokenizer) {
  AttentionMaps maps;
  maps.layers = layers;
  maps.heads = heads;
  maps.positions = static_cast<int>(ids.size());
  maps.token_ids = ids;
  for (int id : ids) {
    maps.token_pieces.push_back(tokenizer.Piece(id));
    maps.token_text.push_back(TokenText(tokenizer, id));
  }
  const size_t t = maps.positions;
  maps.weights.assign(layers.size() * heads.size() * t * t, 0.0f);
  for (size_t li = 0; li < layers.size(); ++li) {
    for (size_t hi = 0; hi < heads.size(); ++hi) {
      const std::vector<std::vector<float>>* rows = recorder.Rows(Tap::kWeights, layers[li], heads[hi]);
      if (rows == nullptr || rows->size() < t) {
        return absl::InternalError(absl::StrCat("attention of layer ", layers[li], " head ", heads[hi],
                                                " was not captured for every position"));
      }
      float* map = &maps.weights[(li * heads.size() + hi) * t * t];
      for (size_t q = 0; q < t; ++q) std::copy((*rows)[q].begin(), (*rows)[q].end(), map + q * t);
    }
  }
  return maps;
}

absl::Status CreateFolder(const std::string& dir) {
  if (mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST) {
    return absl::PermissionDeniedError(absl::StrCat(dir, ": cannot create folder (", strerror(errno), ")"));
  }
  return absl::OkStatus();
}

absl::Status CheckFolderCreatable(const std::string& dir) {
  struct stat st;
  if (stat(dir.c_str(), &st) == 0) {
    if (!S_ISDIR(st.st_mode)) return absl::FailedPreconditionError(absl::StrCat(dir, ": not a folder"));
    return absl::OkStatus();
  }
  const size_t slash = dir.find_last_of('/');
  const std::string parent = slash == std::string::npos ? "." : slash == 0 ? "/" : dir.substr(0, slash);
  if (stat(parent.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    return absl::NotFoundError(absl::StrCat(dir, ": cannot create folder (", parent, " is not a folder)"));
  }
  return absl::OkStatus();
}

absl::Status WriteAttentionFolder(const std::string& dir, const AttentionMaps& maps,
                                  const ModelConfig& config, const std::string& model_path) {
  if (absl::Status s = CreateFolder(dir); !s.ok()) return s;
  if (absl::Status s = WriteNpy(dir + "/attention.npy", maps.weights.data(), maps.shape()); !s.ok()) {
    return s;
  }
  nlohmann::json tokens = {
      {"model", model_path},
      {"ids", maps.token_ids},
      {"pieces", maps.token_pieces},
      {"text", maps.token_text},
      {"layers", maps.layers},
      {"heads", maps.heads},
      {"dims", {{"dim", config.dim}, {"n_layers", config.n_layers}, {"n_heads", config.n_heads},
                {"n_kv_heads", config.n_kv_heads}, {"head_dim", config.head_dim},
                {"vocab_size", config.vocab_size}}}};
  const std::string json = tokens.dump(1, ' ', /*ensure_ascii=*/false,
                                       nlohmann::json::error_handler_t::replace);
  if (absl::Status s = WriteTextFile(dir + "/tokens.json", json); !s.ok()) return s;
  if (absl::Status s = WriteAttentionPage(dir, maps, model_path); !s.ok()) return s;
  for (size_t li = 0; li < maps.layers.size(); ++li) {
    const std::string png = absl::StrCat(dir, "/layer", maps.layers[li], ".png");
    if (absl::Status s = WriteLayerPng(png, maps, static_cast<int>(li)); !s.ok()) return s;
  }
  return absl::OkStatus();
}

}  // namespace toyllm
