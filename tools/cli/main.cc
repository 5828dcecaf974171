// toyllm: the command line. Dispatches to a subcommand and prints its error, if any, as one
// line on stderr with a non-zero exit.
#include <iostream>
#include <string>
#include <vector>

#include "tools/cli/commands.h"
#include "tools/cli/interrupt.h"

namespace {

struct Command {
  const char* name;
  const char* summary;
  absl::Status (*run)(const std::vector<std::string>&);
};

constexpr Command kCommands[] = {
    {"generate", "continue a prompt, streaming the text", toyllm::RunGenerate},
    {"tokenize", "show the token ids and pieces of a text", toyllm::RunTokenize},
    {"info", "show a model file's format, dimensions and size", toyllm::RunInfo},
    {"attention", "write per-layer, per-head attention maps (npy, json, html, png)", toyllm::RunAttention},
    {"explain", "show one attention computation step by step, as the article does", toyllm::RunExplain},
    {"convert", "write a model as GGUF, optionally in f16, bf16 or a llama.cpp quantization", toyllm::RunConvert},
    {"bench", "prefill and decode speed, like llama-bench, against the memory bandwidth bound", toyllm::RunBench},
    {"lens", "the logit lens: each layer's next-token guess at every position", toyllm::RunLens},
    {"serve", "an OpenAI-compatible HTTP server (completions, chat) over the model", toyllm::RunServe},
    {"chat", "talk with the model in the terminal through its chat template", toyllm::RunChat},
    {"logits", "write the logits at every prompt position to a .npy file", toyllm::RunLogits},
    {"ablate", "the model without some heads: continuation, or referent accuracy per head", toyllm::RunAblate},
    {"patch", "activation patching: which heads, positions and MLPs restore a clean answer", toyllm::RunPatch},
};

void PrintUsage(std::ostream& out) {
  out << "usage: toyllm COMMAND [flags]   (toyllm COMMAND --help for its flags)\n\ncommands:\n";
  for (const Command& c : kCommands) out << "  " << c.name << "\t" << c.summary << "\n";
}

}  // namespace

int main(int argc, char** argv) {
  toyllm::RemoveUnfinishedFileOnInterrupt();
  if (argc < 2) {
    PrintUsage(std::cerr);
    return 2;
  }
  const std::string name = argv[1];
  if (name == "-h" || name == "--help" || name == "help") {
    PrintUsage(std::cout);
    return 0;
  }
  for (const Command& c : kCommands) {
    if (name != c.name) continue;
    const absl::Status status = c.run(std::vector<std::string>(argv + 2, argv + argc));
    if (status.ok()) return 0;
    std::cout.flush();
    std::cerr << "toyllm " << name << ": " << status.message() << std::endl;
    return 1;
  }
  std::cerr << "toyllm: unknown command '" << name << "' (see toyllm --help)" << std::endl;
  return 2;
}
