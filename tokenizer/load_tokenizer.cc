#include "tokenizer/load_tokenizer.h"

#include <sys/stat.h>

#include <fstream>
#include <sstream>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "tokenizer/bpe_tokenizer.h"
#include "tokenizer/sentencepiece_tokenizer.h"
#include "tokenizer/tokenizer_json.h"

namespace toyllm {

absl::StatusOr<std::string> ReadTokenizerFile(const std::string& path) {
  struct stat st;
  if (stat(path.c_str(), &st) != 0) {
    return absl::NotFoundError(absl::StrCat(path, ": cannot open tokenizer file"));
  }
  if (!S_ISREG(st.st_mode)) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": the tokenizer is not a regular file"));
  }
  std::ifstream file(path, std::ios::binary);
  if (!file) return absl::NotFoundError(absl::StrCat(path, ": cannot open tokenizer file"));
  std::ostringstream bytes;
  bytes << file.rdbuf();
  if (file.bad()) return absl::DataLossError(absl::StrCat(path, ": cannot read tokenizer file"));
  return bytes.str();
}

absl::StatusOr<std::unique_ptr<Tokenizer>> LoadSentencePieceFile(const std::string& path) {
  absl::StatusOr<std::string> bytes = ReadTokenizerFile(path);
  if (!bytes.ok()) return bytes.status();
  return LoadSentencePieceModel(*bytes, path);
}

absl::StatusOr<std::unique_ptr<Tokenizer>> LoadSentencePieceModel(const std::string& model,
                                                                  const std::string& source) {
  std::string error;
  std::unique_ptr<Tokenizer> tokenizer = NewSentencePieceTokenizer(model, &error);
  if (tokenizer == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat(source, ": not a SentencePiece model (", error, ")"));
  }
  return tokenizer;
}

absl::StatusOr<std::unique_ptr<Tokenizer>> LoadTokenizer(const Vocabulary& vocabulary,
                                                         const std::string& source) {
  if (vocabulary.model == "llama") return LoadSentencePieceModel(vocabulary.sentencepiece_model, source);
  if (vocabulary.model != "gpt2") {
    return absl::UnimplementedError(absl::StrCat(source, ": tokenizer model '", vocabulary.model,
                                                 "' is not supported (only 'llama', SentencePiece, and 'gpt2', byte-level BPE)"));
  }
  absl::StatusOr<std::unique_ptr<Tokenizer>> tokenizer = NewBpeTokenizer(vocabulary);
  if (!tokenizer.ok()) {
    return absl::Status(tokenizer.status().code(), absl::StrCat(source, ": ", tokenizer.status().message()));
  }
  return tokenizer;
}

absl::StatusOr<std::unique_ptr<Tokenizer>> LoadTokenizerFile(const std::string& path) {
  if (!absl::EndsWith(path, ".json")) return LoadSentencePieceFile(path);
  absl::StatusOr<Vocabulary> vocabulary = ReadTokenizerJson(path);
  if (!vocabulary.ok()) return vocabulary.status();
  return LoadTokenizer(*vocabulary, path);
}

}  // namespace toyllm
