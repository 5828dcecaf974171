// toyllm info: what a model file holds.
#include <algorithm>
#include <iostream>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "runtime/blas.h"
#include "runtime/cpu_features.h"
#include "tools/cli/commands.h"
#include "tools/cli/default_model.h"
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
  path = DefaultModelPath();
  MemoryFlags memory;
  std::vector<Flag> flags = {{"-m", "--model", "model file (default: the project's own, " + path + ")", &path}};
  for (Flag& flag : MemoryFlagList(memory)) flags.push_back(flag);
  Args args("info", "Prints a model file's format, hyper-parameters and size, and the kernels that run it.",
            flags);
  if (absl::StatusOr<bool> run = args.Parse(argv); !run.ok() || !*run) return run.status();
  if (path.empty()) return absl::InvalidArgumentError("no model given (-m FILE)");
  absl::StatusOr<std::unique_ptr<ModelFile>> model = LoadModel(path, memory.memory());
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
      "qkv_bias:        %s\n"
      "qk_norm:         %s\n"
      "rope_factors:    %s\n"
      "parameters:      %d (%.2f M)\n"
      "file_bytes:      %d\n"
      "blas:            %s\n"
      "blas_kernels:    %s\n"
      "toyllm_kernels:  %s\n",
      path, (*model)->format, c.dim, c.hidden_dim, c.n_layers, c.n_heads, c.n_kv_heads,
      c.n_kv_heads < c.n_heads ? absl::StrFormat(" (grouped-query, %d query heads each)", c.group_size()) : "",
      c.head_dim, c.vocab_size, c.context_length, c.norm_eps, c.rope_theta,
      c.rope_layout == RopeLayout::kInterleaved ? "interleaved"
      : c.rope_layout == RopeLayout::kHalfSplit ? "half-split"
                                                : "no",
      c.tied_output ? "yes" : "no", c.qkv_bias ? "yes" : "no", c.qk_norm ? "yes (per head, before RoPE)" : "no",
      c.rope_freq_factors.empty() ? "none"
                                  : absl::StrFormat("%d per-pair divisors, %g .. %g", c.rope_freq_factors.size(),
                                                    c.rope_freq_factors.front(), c.rope_freq_factors.back()),
      params, params / 1e6, FileBytes(**model), Blas().config, BlasKernels(),
      KernelsInUse());
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
