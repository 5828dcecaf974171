// toyllm info: what a model file holds.
#include <algorithm>
#include <iostream>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "tools/cli/commands.h"
#include "tools/cli/model_setup.h"

namespace toyllm {

namespace {

int64_t FileBytes(const ModelFile& model) {
  int64_t bytes = 0;
  for (const auto& mapping : model.mappings) bytes += mapping->size();
  return bytes;
}

}  // namespace

absl::Status RunInfo(const std::vector<std::string>& argv) {
  std::string path;
  Args args("info", "Prints a model file's format, hyper-parameters and size.",
            {{"-m", "--model", "model file", &path}});
  if (absl::StatusOr<bool> run = args.Parse(argv); !run.ok() || !*run) return run.status();
  if (path.empty()) return absl::InvalidArgumentError("no model given (-m FILE)");
  absl::StatusOr<std::unique_ptr<ModelFile>> model = LoadModel(path);
  if (!model.ok()) return model.status();
  const ModelConfig& c = (*model)->config;
  const int64_t params = ParameterCount(c);
  std::cout << absl::StrFormat(
      "file:            %s\n"
      "format:          %s\n"
      "dim:             %d\n"
      "hidden_dim:      %d\n"
      "layers:          %d\n"
      "heads:           %d\n"
      "kv_heads:        %d%s\n"
      "head_dim:        %d\n"
      "vocab_size:      %d\n"
      "context_length:  %d\n"
      "norm_eps:        %g\n"
      "rope_theta:      %g (%s pairs)\n"
      "tied_output:     %s\n"
      "parameters:      %d (%.2f M)\n"
      "file_bytes:      %d\n",
      path, (*model)->format, c.dim, c.hidden_dim, c.n_layers, c.n_heads, c.n_kv_heads,
      c.n_kv_heads < c.n_heads ? absl::StrFormat(" (grouped-query, %d query heads each)", c.group_size()) : "",
      c.head_dim, c.vocab_size, c.context_length, c.norm_eps, c.rope_theta,
      c.rope_layout == RopeLayout::kInterleaved ? "interleaved" : "half-split",
      c.tied_output ? "yes" : "no", params, params / 1e6, FileBytes(**model));
  // The types the file stores its tensors in, with how many of each (in order of first use).
  std::vector<std::pair<std::string, int>> types;
  for (const ModelFile::Tensor& t : (*model)->tensors) {
    auto it = std::find_if(types.begin(), types.end(), [&](const auto& p) { return p.first == t.type; });
    if (it == types.end()) {
      types.emplace_back(t.type, 1);
    } else {
      ++it->second;
    }
  }
  if (!types.empty()) {
    std::cout << "tensor_types:    "
              << absl::StrJoin(types, ", ", [](std::string* out, const auto& p) {
                   absl::StrAppend(out, p.first, " x", p.second);
                 })
              << "\n";
  }
  if (!(*model)->metadata.empty()) std::cout << "\nmetadata:\n";
  for (const auto& [key, value] : (*model)->metadata) {
    std::cout << absl::StrFormat("  %-42s %s\n", key, value);
  }
  if (!(*model)->tensors.empty()) std::cout << "\ntensors:\n";
  for (const ModelFile::Tensor& t : (*model)->tensors) {
    std::cout << absl::StrFormat("  %-32s %-5s [%s]\n", t.name, t.type, absl::StrJoin(t.dims, ", "));
  }
  return absl::OkStatus();
}

}  // namespace toyllm
