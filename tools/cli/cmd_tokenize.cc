// toyllm tokenize: how the tokenizer splits a text, one token per line.
#include <iostream>

#include "absl/strings/str_cat.h"
#include "tokenizer/load_tokenizer.h"
#include "tools/cli/commands.h"
#include "tools/cli/default_model.h"
#include "tools/cli/model_setup.h"

namespace toyllm {

absl::Status RunTokenize(const std::vector<std::string>& argv) {
  ModelFlags model_flags;
  model_flags.model = DefaultModelPath();
  std::string file;
  bool ids_only = false;
  bool no_bos = false;
  std::vector<Flag> flags = {
      {"", "--tokenizer", "SentencePiece .model, tokenizer.json or GGUF file", &model_flags.tokenizer},
      {"-m", "--model", "a model whose tokenizer to use (default: the project's own, " + model_flags.model + ")",
       &model_flags.model},
      {"-p", "--prompt", "the text to tokenize", &model_flags.prompt},
      {"-f", "--file", "read the text from this file instead, exactly (newlines, tabs)", &file},
      {"", "--no-bos", "leave out BOS even where the tokenizer adds it", &no_bos},
      {"", "--ids", "print only the ids, on one line", &ids_only},
  };
  Args args("tokenize",
            "Prints each token of the text as `id -> 'piece'`, BOS first where the tokenizer adds it;\n"
            "byte-level pieces are shown as the text they stand for, part of a character as <0xE5>.",
            flags);
  if (absl::StatusOr<bool> run = args.Parse(argv); !run.ok() || !*run) return run.status();
  if (!file.empty() && args.given("--prompt")) return absl::InvalidArgumentError("give either -p or -f, not both");
  std::string text = model_flags.prompt;
  if (!file.empty()) {
    absl::StatusOr<std::string> contents = ReadTokenizerFile(file);
    if (!contents.ok()) {
      return absl::Status(contents.status().code(), absl::StrCat(file, ": cannot read the text file"));
    }
    text = *std::move(contents);
  }
  std::unique_ptr<Tokenizer> tokenizer;
  if (!model_flags.tokenizer.empty()) {
    absl::StatusOr<std::unique_ptr<Tokenizer>> t = LoadAnyTokenizer(model_flags.tokenizer);
    if (!t.ok()) return t.status();
    tokenizer = *std::move(t);
  } else if (model_flags.model.empty()) {
    return absl::InvalidArgumentError("no tokenizer given (--tokenizer FILE or -m MODEL)");
  } else {
    absl::StatusOr<std::unique_ptr<ModelFile>> model = LoadModel(model_flags.model);
    if (!model.ok()) return model.status();
    absl::StatusOr<std::unique_ptr<Tokenizer>> t = LoadTokenizerFor(model_flags, **model);
    if (!t.ok()) return t.status();
    tokenizer = *std::move(t);
  }
  const std::vector<int> ids = tokenizer->Encode(text, tokenizer->add_bos() && !no_bos);
  std::string out;
  for (int id : ids) {
    if (ids_only) {
      absl::StrAppend(&out, out.empty() ? "" : " ", id);
    } else {
      absl::StrAppend(&out, id, " -> '", tokenizer->Readable(id), "'\n");
    }
  }
  std::cout << out << (ids_only ? "\n" : "");
  return absl::OkStatus();
}

}  // namespace toyllm
