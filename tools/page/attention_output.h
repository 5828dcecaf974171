// The files `toyllm attention` and `generate --dump-attention` write into a folder:
// attention.npy [layers, heads, T, T], tokens.json, index.html, and per layer N the page's
// layerN.js and a picture, layerN.png.
#ifndef TOYLLM_TOOLS_PAGE_ATTENTION_OUTPUT_H_
#define TOYLLM_TOOLS_PAGE_ATTENTION_OUTPUT_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "runtime/model_config.h"
#include "tokenizer/tokenizer.h"
#include "tools/inspect/attention_maps.h"
#include "tools/inspect/tap_recorder.h"

namespace toyllm {

// The taps a recorder must keep to assemble maps of these layers (all heads).
std::set<std::pair<Tap, int>> AttentionTaps(const std::vector<int>& layers);

// Assembles the recorded weights of `layers` × `heads` over the first `positions` tokens.
absl::StatusOr<AttentionMaps> AssembleMaps(const TapRecorder& recorder, const std::vector<int>& layers,
                                           const std::vector<int>& heads, const std::vector<int>& ids,
                                           const Tokenizer& tokenizer);

// Creates `dir` unless it exists.
absl::Status CreateFolder(const std::string& dir);

// Whether CreateFolder(dir) can work: `dir` is a folder, or its parent is. A command that
// streams output before writing the folder checks this first, so that a bad path fails
// before any output rather than after it.
absl::Status CheckFolderCreatable(const std::string& dir);

absl::Status WriteAttentionFolder(const std::string& dir, const AttentionMaps& maps,
                                  const ModelConfig& config, const std::string& model_path);

}  // namespace toyllm

#endif  // TOYLLM_TOOLS_PAGE_ATTENTION_OUTPUT_H_
