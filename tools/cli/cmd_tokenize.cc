// toyllm tokenize: how the tokenizer splits a text, one token per line.
#include <iostream>

#include "absl/strings/str_cat.h"
#include "tools/cli/commands.h"
#include "tools/cli/model_setup.h"

namespace toyllm {

absl::Status RunTokenize(const std::vector<std::string>& argv) {
  ModelFlags model_flags;
  bool ids_only = false;
  std::vector<Flag> flags = {
      {"", "--tokenizer", "SentencePiece .model file", &model_flags.tokenizer},
      {"-m", "--model", "a model whose tokenizer to use (found beside it)", &model_flags.model},
      {"-p", "--prompt", "the text to tokenize", &model_flags.prompt},
      {"", "--ids", "print only the ids, on one line", &ids_only},
  };
  Args args("tokenize", "Prints each token of the text as `id -> 'piece'`, BOS first.", flags);
  if (absl::StatusOr<bool> run = args.Parse(argv); !run.ok() || !*run) return run.status();
  std::unique_ptr<Tokenizer> tokenizer;
  if (model_flags.tokenizer.empty() && !model_flags.model.empty()) {
    absl::StatusOr<std::unique_ptr<ModelFile>> model = LoadModel(model_flags.model);
    if (!model.ok()) return model.status();
    absl::StatusOr<std::unique_ptr<Tokenizer>> t = LoadTokenizerFor(model_flags, **model);
    if (!t.ok()) return t.status();
    tokenizer = *std::move(t);
  } else if (!model_flags.tokenizer.empty()) {
    absl::StatusOr<std::unique_ptr<Tokenizer>> t = LoadSentencePieceFile(model_flags.tokenizer);
    if (!t.ok()) return t.status();
    tokenizer = *std::move(t);
  } else {
    return absl::InvalidArgumentError("no tokenizer given (--tokenizer FILE or -m MODEL)");
  }
  const std::vector<int> ids = tokenizer->Encode(model_flags.prompt, /*add_bos=*/true);
  std::string out;
  for (int id : ids) {
    if (ids_only) {
      absl::StrAppend(&out, out.empty() ? "" : " ", id);
    } else {
      absl::StrAppend(&out, id, " -> '", tokenizer->Piece(id), "'\n");
    }
  }
  std::cout << out << (ids_only ? "\n" : "");
  return absl::OkStatus();
}

}  // namespace toyllm
