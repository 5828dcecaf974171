// What the libFuzzer harnesses share: a scratch directory for readers that take a path,
// and the checks a successfully loaded model must pass.
#ifndef TOYLLM_TESTS_FUZZ_FUZZ_UTIL_H_
#define TOYLLM_TESTS_FUZZ_FUZZ_UTIL_H_

#include <cstddef>
#include <cstdint>
#include <string>

#include "models/model_file.h"

namespace toyllm::fuzz {

// A directory of this process's own (on tmpfs when /dev/shm exists, so that writing an
// input per run costs no disk I/O), made on first use and removed at exit.
const std::string& ScratchDir();

// Writes bytes to ScratchDir()/name and returns the path; `name` may start with a folder,
// which is made, so that a reader that looks beside its input (a Hugging Face directory,
// a checkpoint's params.json) sees only its own harness's files. I/O failure aborts: it is
// a broken harness, not a finding.
std::string WriteScratchFile(const std::string& name, const uint8_t* data, size_t size);
void RemoveScratchFile(const std::string& name);

// Runs what a user of a loaded model would: every weight view must lie inside the file's
// mapping or a converted copy (checked directly, since BLAS is not instrumented and would
// read a stray view silently), the tokenizer it carries is loaded and used, and a
// transformer with a tiny context runs the first and the last token id.
void ExerciseModel(const ModelFile& model);

}  // namespace toyllm::fuzz

#endif  // TOYLLM_TESTS_FUZZ_FUZZ_UTIL_H_
