#include "tests/fuzz/fuzz_targets.h"

namespace toyllm::fuzz {

Target FindTarget(const std::string& name) {
  static const struct {
    const char* name;
    Target target;
  } kTargets[] = {
      {"args", ArgsInput},         {"gguf", GgufInput},
      {"chat_template", ChatTemplateInput}, {"completion_request", CompletionRequestInput},
      {"hf_config", HfConfigInput}, {"llama2c", Llama2cInput},
      {"npy", NpyInput},           {"pickle", PickleInput},
      {"pytorch", PytorchInput},   {"safetensors", SafetensorsInput},
      {"tokenizer", TokenizerInput},   {"tokenizer_json", TokenizerJsonInput},
      {"bpe_encode", BpeEncodeInput},
  };
  for (const auto& t : kTargets) {
    if (name == t.name) return t.target;
  }
  return nullptr;
}

}  // namespace toyllm::fuzz
