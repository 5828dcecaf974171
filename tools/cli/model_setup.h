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

// How the model file is held in memory: --no-mmap and --mlock, as llama.cpp names them.
struct MemoryFlags {
  bool no_mmap = false;
  bool mlock = false;

  FileMemory memory() const { return {!no_mmap, mlock}; }
};

// --no-mmap and --mlock, for every command that loads a model.
std::vector<Flag> MemoryFlagList(MemoryFlags& flags);

struct ModelFlags {
  std::string model;
  std::string tokenizer;
  std::string prompt;
  int threads = 0;  // 0: all cores
  int ctx_size = 0;  // 0: the model's context length
  MemoryFlags memory;
  std::string cache_type_k = "f32";
  std::string cache_type_v = "f32";
};

// -ctk and -ctv, as llama.cpp names them: the KV cache's types.
std::vector<Flag> KvTypeFlags(std::string& keys, std::string& values);

// The types -ctk and -ctv name: f32, f16 or q8_0; an error names the flag.
absl::StatusOr<KvTypes> ParseKvTypes(const std::string& keys, const std::string& values);

// -m (defaulting to the project's own model, DefaultModelPath()), --tokenizer, -p, -t,
// --no-mmap, --mlock and, when with_context, -c, -ctk and -ctv.
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
