// The fuzz harnesses, one function per reader, each in tests/fuzz/<name>_fuzzer.cc. Every
// one takes arbitrary bytes, runs the code under test on them and aborts only when an
// invariant breaks (a crash, a sanitizer report or a model that loads but cannot run).
// fuzz_main.cc makes each a libFuzzer binary; tests/fuzz_regression_test.cc replays the
// committed corpus through the same functions in the ordinary and sanitizer builds.
#ifndef TOYLLM_TESTS_FUZZ_FUZZ_TARGETS_H_
#define TOYLLM_TESTS_FUZZ_FUZZ_TARGETS_H_

#include <cstddef>
#include <cstdint>
#include <string>

namespace toyllm::fuzz {

using Target = void (*)(const uint8_t* data, size_t size);

void ArgsInput(const uint8_t* data, size_t size);
void BpeEncodeInput(const uint8_t* data, size_t size);
void ChatTemplateInput(const uint8_t* data, size_t size);
void CompletionRequestInput(const uint8_t* data, size_t size);
void GgufInput(const uint8_t* data, size_t size);
void HfConfigInput(const uint8_t* data, size_t size);
void Llama2cInput(const uint8_t* data, size_t size);
void NpyInput(const uint8_t* data, size_t size);
void PickleInput(const uint8_t* data, size_t size);
void PytorchInput(const uint8_t* data, size_t size);
void SafetensorsInput(const uint8_t* data, size_t size);
void TokenizerInput(const uint8_t* data, size_t size);
void TokenizerJsonInput(const uint8_t* data, size_t size);

// The harness of a corpus folder, tests/fuzz/corpus/<name>/ (e.g. "gguf"), or nullptr.
Target FindTarget(const std::string& name);

}  // namespace toyllm::fuzz

#endif  // TOYLLM_TESTS_FUZZ_FUZZ_TARGETS_H_
