// A whole generation as text: what `generate` streams, for callers that want it at once
// (`ablate`, the Python module).
#ifndef TOYLLM_TOOLS_CLI_GENERATE_TEXT_H_
#define TOYLLM_TOOLS_CLI_GENERATE_TEXT_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "tools/cli/model_setup.h"

namespace toyllm {

// EOS ends a sequence; the TinyStories checkpoints also use BOS as the story delimiter.
std::vector<int> StopTokens(const Tokenizer& tokenizer);

// The prompt's text followed by up to `n` generated tokens' text (with whatever
// intervention the transformer has attached).
absl::StatusOr<std::string> GenerateText(LoadedModel& model, const std::vector<int>& prompt, int n,
                                         const SamplerOptions& sampling);

}  // namespace toyllm

#endif  // TOYLLM_TOOLS_CLI_GENERATE_TEXT_H_
