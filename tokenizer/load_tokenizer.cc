#include "tokenizer/load_tokenizer.h"

#include <sys/stat.h>

#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "tokenizer/sentencepiece_tokenizer.h"

namespace toyllm {

absl::StatusOr<std::unique_ptr<Tokenizer>> LoadSentencePieceFile(const std::string& path) {
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
  return LoadSentencePieceModel(bytes.str(), path);
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

}  // namespace toyllm
