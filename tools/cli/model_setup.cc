#include "tools/cli/model_setup.h"

#include <sys/stat.h>

#include <fstream>
#include <iostream>
#include <thread>
#include <tuple>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "models/ggml_type.h"
#include "models/gguf_reader.h"
#include "tools/cli/default_model.h"

namespace toyllm {
namespace {

// GGUF files begin with the magic "GGUF", whatever their name.
bool IsGgufFile(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  char magic[4] = {};
  return file.read(magic, 4) && std::string(magic, 4) == "GGUF";
}

bool IsFile(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

std::string Directory(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? "." : path.substr(0, slash);
}

}  // namespace

std::vector<Flag> MemoryFlagList(MemoryFlags& f) {
  return {{"", "--no-mmap", "read the model into memory instead of mapping it: no disk reads "
                            "once loaded, at the cost of reading all of it first", &f.no_mmap},
          {"", "--mlock", "lock the model's pages in RAM so that they are never paged out", &f.mlock}};
}

std::vector<Flag> KvTypeFlags(std::string& keys, std::string& values) {
  return {{"-ctk", "--cache-type-k", "the KV cache's type for keys: f32 (default), f16 or q8_0", &keys},
          {"-ctv", "--cache-type-v", "the KV cache's type for values: f32 (default), f16 or q8_0", &values}};
}

absl::StatusOr<KvTypes> ParseKvTypes(const std::string& keys, const std::string& values) {
  KvTypes types;
  for (auto [flag, name, type] : {std::tuple{"--cache-type-k", &keys, &types.keys},
                                  std::tuple{"--cache-type-v", &values, &types.values}}) {
    bool known = false;
    for (GgmlType t : {GgmlType::kF32, GgmlType::kF16, GgmlType::kQ8_0}) {
      if (*name != GgmlTypeName(t)) continue;
      *type = static_cast<WeightType>(t);  // ggml's numbering, both
      known = true;
    }
    if (!known) {
      return absl::InvalidArgumentError(absl::StrCat(flag, ": '", *name, "' is not f32, f16 or q8_0"));
    }
  }
  return types;
}

std::vector<Flag> CommonFlags(ModelFlags& f, bool with_context) {
  if (f.model.empty()) f.model = DefaultModelPath();
  std::vector<Flag> flags = {
      {"-m", "--model", "model file (default: the project's own, " + f.model + ")", &f.model},
      {"", "--tokenizer", "SentencePiece .model, tokenizer.json or GGUF file (default: the model's "
                          "own, else tok<vocab>.model or tokenizer.model beside it)", &f.tokenizer},
      {"-p", "--prompt", "prompt text (default: empty, i.e. BOS alone)", &f.prompt},
      {"-t", "--threads", "threads (default: all cores)", &f.threads},
  };
  for (Flag& flag : MemoryFlagList(f.memory)) flags.push_back(flag);
  if (with_context) {
    flags.push_back({"-c", "--ctx-size", "context length (default: the model's)", &f.ctx_size});
    for (Flag& flag : KvTypeFlags(f.cache_type_k, f.cache_type_v)) flags.push_back(flag);
  }
  return flags;
}

// The tokenizer file to use: --tokenizer, else one beside the model.
static absl::StatusOr<std::string> FindTokenizerFile(const ModelFlags& flags, const ModelFile& model) {
  if (!flags.tokenizer.empty()) return flags.tokenizer;
  const std::string dir = Directory(flags.model);
  const std::vector<std::string> candidates = {
      absl::StrCat(dir, "/tok", model.config.vocab_size, ".model"),
      absl::StrCat(dir, "/tokenizer.model")};
  for (const std::string& candidate : candidates) {
    if (IsFile(candidate)) return candidate;
  }
  return absl::NotFoundError(absl::StrCat(
      flags.model, ": no --tokenizer given, none inside the model file and none beside it (looked for ",
      absl::StrJoin(candidates, ", "), ")"));
}

absl::StatusOr<std::unique_ptr<Tokenizer>> LoadAnyTokenizer(const std::string& path) {
  if (IsGgufFile(path)) {
    absl::StatusOr<Vocabulary> vocabulary = ReadGgufVocabulary(path);
    if (!vocabulary.ok()) return vocabulary.status();
    return LoadTokenizer(*vocabulary, path);
  }
  return LoadTokenizerFile(path);
}

absl::StatusOr<std::unique_ptr<Tokenizer>> LoadTokenizerFor(const ModelFlags& flags,
                                                            const ModelFile& model) {
  // A model file that carries its vocabulary (GGUF) needs no tokenizer file.
  const bool embedded = flags.tokenizer.empty() && !model.vocabulary.empty();
  absl::StatusOr<std::string> path = embedded ? flags.model : FindTokenizerFile(flags, model);
  if (!path.ok()) return path.status();
  absl::StatusOr<std::unique_ptr<Tokenizer>> tokenizer =
      embedded ? LoadTokenizer(model.vocabulary, *path) : LoadAnyTokenizer(*path);
  if (!tokenizer.ok()) return tokenizer.status();
  // A byte-level vocabulary may be shorter than the embedding: Qwen pads its 151,669
  // tokens to 151,936 rows, and tokenizer.json leaves the padding out. Padding is a few
  // hundred rows, under 1%; another model's tokenizer (GPT-2's 50,257 for Qwen's 151,936,
  // Llama 3's 128,256) falls short by far more, and the ids past its end would decode to nothing.
  const int model_rows = model.config.vocab_size;
  const int missing = model_rows - (*tokenizer)->vocab_size();
  const bool padded = (*tokenizer)->vocabulary().model == "gpt2" && missing > 0 && missing < model_rows / 100;
  if ((*tokenizer)->vocab_size() != model.config.vocab_size && !padded) {
    return absl::InvalidArgumentError(absl::StrCat(
        *path, ": the tokenizer has ", (*tokenizer)->vocab_size(), " tokens but the model ",
        flags.model, " has a vocabulary of ", model.config.vocab_size));
  }
  return tokenizer;
}

absl::StatusOr<LoadedModel> LoadForInference(const ModelFlags& flags) {
  if (flags.model.empty()) return absl::InvalidArgumentError("no model given (-m FILE)");
  if (flags.threads < 0 || flags.threads > 1024) {
    return absl::InvalidArgumentError(
        absl::StrCat("--threads: ", flags.threads, " is outside 0..1024"));
  }
  if (flags.ctx_size < 0) {
    return absl::InvalidArgumentError(absl::StrCat("--ctx-size: ", flags.ctx_size, " is negative"));
  }
  absl::StatusOr<KvTypes> kv_types = ParseKvTypes(flags.cache_type_k, flags.cache_type_v);
  if (!kv_types.ok()) return kv_types.status();
  LoadedModel loaded;
  absl::StatusOr<std::unique_ptr<ModelFile>> file = LoadModel(flags.model, flags.memory.memory());
  if (!file.ok()) return file.status();
  loaded.file = *std::move(file);
  absl::StatusOr<std::unique_ptr<Tokenizer>> tokenizer = LoadTokenizerFor(flags, *loaded.file);
  if (!tokenizer.ok()) return tokenizer.status();
  loaded.tokenizer = *std::move(tokenizer);

  const ModelConfig& config = loaded.file->config;
  const int context = flags.ctx_size > 0 ? flags.ctx_size : config.context_length;
  SetThreadCount(flags.threads > 0 ? flags.threads
                                   : static_cast<int>(std::thread::hardware_concurrency()));
  absl::StatusOr<std::unique_ptr<Transformer>> transformer =
      Transformer::Create(config, loaded.file->weights, context, Transformer::kDefaultMaxBatch, *kv_types);
  if (!transformer.ok()) {
    return absl::Status(transformer.status().code(),
                        absl::StrCat(flags.model, ": ", transformer.status().message()));
  }
  // Only once the context is known to be usable, so that a rejected -c gives one error line.
  if (context > config.context_length) {
    std::cerr << "warning: a context of " << context << " exceeds the " << config.context_length
              << " positions " << flags.model << " records as trained\n";
  }
  loaded.transformer = *std::move(transformer);
  return loaded;
}

absl::StatusOr<std::vector<int>> EncodePrompt(const LoadedModel& model, const std::string& prompt) {
  std::vector<int> ids = model.tokenizer->Encode(prompt, model.tokenizer->add_bos());
  if (ids.empty()) return absl::InvalidArgumentError("the tokenizer has no BOS token and the prompt is empty");
  const int context = model.transformer->context_length();
  if (static_cast<int>(ids.size()) > context) {
    return absl::OutOfRangeError(absl::StrCat("the prompt is ", ids.size(),
                                              " tokens long, more than the context of ", context,
                                              " (-c)"));
  }
  return ids;
}

}  // namespace toyllm
