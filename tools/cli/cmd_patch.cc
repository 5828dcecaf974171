// toyllm patch: activation patching. Which components carry what tells a clean prompt from
// a corrupted one of the same length: each head's output, each layer's residual stream at
// each position and each MLP output, pasted one at a time from the clean run into the
// corrupted one, with the metric restored written as .npy, .json, a page and PNGs.
#include <algorithm>
#include <iostream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "tools/cli/commands.h"
#include "tools/cli/model_setup.h"
#include "tools/inspect/activation_patch.h"
#include "tools/page/patch_output.h"

namespace toyllm {

absl::Status RunPatch(const std::vector<std::string>& argv) {
  ModelFlags model_flags;
  std::string clean_text, corrupt_text, metric_text, output;
  std::vector<Flag> flags = CommonFlags(model_flags, /*with_context=*/true);
  // The two prompts have their own flags.
  flags.erase(std::remove_if(flags.begin(), flags.end(), [](const Flag& f) { return f.long_name == "--prompt"; }),
              flags.end());
  flags.insert(flags.end(), {
      {"", "--clean", "the clean prompt, whose answer patching restores", &clean_text},
      {"", "--corrupt", "the corrupted prompt: as many tokens as the clean one", &corrupt_text},
      {"", "--metric", "A-B: logit of token A minus token B at the last position; A: the probability of A",
       &metric_text},
      {"-o", "--output", "folder to write patch.npy, patch.json, index.html and the PNGs into", &output},
  });
  Args args("patch",
            "Runs the corrupted prompt once per component (each head's output, each layer's residual\n"
            "stream at each position, each MLP output) with that component taken from the clean\n"
            "run, and reports the metric restored: 0 = the corrupted run's value, 1 = the clean run's.",
            flags);
  if (absl::StatusOr<bool> run = args.Parse(argv); !run.ok() || !*run) return run.status();
  if (clean_text.empty() || corrupt_text.empty()) {
    return absl::InvalidArgumentError("both --clean and --corrupt need a non-empty prompt");
  }
  if (metric_text.empty()) return absl::InvalidArgumentError("no --metric given (A-B or A)");
  if (output.empty()) return absl::InvalidArgumentError("no output folder given (-o DIR)");
  absl::StatusOr<LoadedModel> model = LoadForInference(model_flags);
  if (!model.ok()) return model.status();
  absl::StatusOr<PatchMetric> metric = ParsePatchMetric(metric_text, *model->tokenizer);
  if (!metric.ok()) return metric.status();
  absl::StatusOr<std::vector<int>> clean = EncodePrompt(*model, clean_text);
  if (!clean.ok()) return clean.status();
  absl::StatusOr<std::vector<int>> corrupt = EncodePrompt(*model, corrupt_text);
  if (!corrupt.ok()) return corrupt.status();
  absl::StatusOr<PatchMap> map = PatchEachComponent(*model->transformer, *clean, *corrupt, *metric);
  if (!map.ok()) return map.status();
  if (absl::Status s = WritePatchFolder(output, *map, *metric, *model->tokenizer, model_flags.model); !s.ok()) {
    return s;
  }
  std::string report = absl::StrFormat("metric %s: clean %.4f, corrupted %.4f\nrestored by each head:\n",
                                       metric->text, map->clean, map->corrupt);
  for (int l = 0; l < map->layers; ++l) {
    absl::StrAppend(&report, "  layer ", l, ":");
    for (int h = 0; h < map->heads; ++h) absl::StrAppend(&report, absl::StrFormat(" %6.3f", map->head[l * map->heads + h]));
    absl::StrAppend(&report, absl::StrFormat("   MLP %6.3f\n", map->mlp[l]));
  }
  std::cout << report;
  std::cerr << "wrote " << output << "/: patch.npy [" << map->layers << ", " << map->heads
            << "], patch_residual.npy [" << map->layers << ", " << map->positions
            << "], patch_mlp.npy, patch.json, index.html, heads.png, residual.png, mlp.png\n";
  return absl::OkStatus();
}

}  // namespace toyllm
