// Where tests find the real models and golden outputs: $TOYLLM_MODELS, by default the
// shared folder beside the repository (../shared/models). When they are missing a test
// skips with a loud message, unless TOYLLM_REQUIRE_MODELS=1 (set by .ci/run) makes it fail.
#ifndef TOYLLM_TESTS_TEST_ENV_H_
#define TOYLLM_TESTS_TEST_ENV_H_

#include <string>

#include "gtest/gtest.h"

namespace toyllm::testing {

std::string ModelsDir();
std::string GoldenDir();  // the "golden" folder beside the models folder

// Path of a file in a folder beside the models folder ("zoo", "tokenizers",
// "chat-templates"), or "" after reporting it missing.
std::string SharedPath(const std::string& sibling, const std::string& relative);

// Path of a file under ModelsDir(), or "" after reporting it missing.
std::string ModelPath(const std::string& relative);

// The stories260K checkpoint and its tokenizer.
std::string Stories260K();
std::string Tok512();

// The toyllm binary under test.
std::string ToyllmBinary();

// Reads a whole file; "" when it cannot be read.
std::string ReadFile(const std::string& path);

// A fresh, empty directory for one test's files.
std::string TempDir();

// Whether missing models fail the tests instead of skipping them (TOYLLM_REQUIRE_MODELS=1).
bool ModelsRequired();

}  // namespace toyllm::testing

// Skips (or, when models are required, fails) the test if `path` is empty.
#define TOYLLM_REQUIRE_FILE(path)                                                     \
  do {                                                                                \
    if ((path).empty()) {                                                             \
      if (::toyllm::testing::ModelsRequired()) FAIL() << "required model missing";    \
      GTEST_SKIP() << "MODEL FILES MISSING: set TOYLLM_MODELS (see tests/test_env.h)"; \
    }                                                                                 \
  } while (0)

#endif  // TOYLLM_TESTS_TEST_ENV_H_
