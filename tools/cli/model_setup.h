// What the subcommands that run a model share: the common flags, and loading a model, its
// tokenizer and a transformer from them with every check a user's input needs.
#ifndef TOYLLM_TOOLS_CLI_MODEL_SETUP_H_
#define TOYLLM_TOOLS_CLI_MODEL_SETUP_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "toyllm.h"
#include "tools/cli/args.h"

namespace toyllm {

struct ModelFlags {
  std::string model;
  std::string tokenizer;
  std::string prompt;
  int threads = 0;  // 0: all cores
  int ctx_size = 0;  // 0: the model's context length
};

// -m (defaulting to the project's own model, DefaultModelPath()), --tokenizer, -p, -t and,
// when with_context, -c.
std::vector<Flag> CommonFlags(ModelFlags& flags, bool with_context);

struct LoadedModel {
  std::unique_ptr<ModelFile> file;
  std::unique_ptr<Tokenizer> tokenizer;
  std::unique_ptr<Transformer> transformer;
};

// A SentencePiece .model, a Hugging Face tokenizer.json or a GGUF file's tokenizer keys.
absl::StatusOr<std::unique_ptr<Tokenizer>> LoadAnyTokenizer(const std::string& path);

// Loads --tokenizer, or the model's own, or the tokenizer found beside the model (tok<vocab>.model, then
// tokenizer.model) when none is given, and checks its vocabulary against the model's.
absl::StatusOr<std::unique_ptr<Tokenizer>> LoadTokenizerFor(const ModelFlags& flags,
                                                            const ModelFile& model);

// Loads the model and its tokenizer, sets the thread count, and creates a transformer
// with the context -c asks for (warning on stderr when it exceeds the trained length).
absl::StatusOr<LoadedModel> LoadForInference(const ModelFlags& flags);

// The prompt's token ids, with BOS first when the tokenizer adds one; an empty prompt is
// BOS alone. Fails when the
// prompt does not fit the context.
absl::StatusOr<std::vector<int>> EncodePrompt(const LoadedModel& model, const std::string& prompt);

}  // namespace toyllm

#endif  // TOYLLM_TOOLS_CLI_MODEL_SETUP_H_
