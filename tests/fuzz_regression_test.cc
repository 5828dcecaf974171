// Replays the committed fuzz corpus (tests/fuzz/corpus/<harness>/) through the harnesses
// of tests/fuzz/fuzz_targets.h, built here without libFuzzer: the crashes fuzzers found
// stay fixed in every build, and under scripts/sanitize.sh with ASan and UBSan watching.
// A harness aborts when an invariant breaks, which fails the test that replays the file.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/fuzz/fuzz_targets.h"

namespace toyllm::fuzz {
namespace {

namespace fs = std::filesystem;

fs::path CorpusDir() { return fs::path(TOYLLM_SOURCE_DIR) / "tests" / "fuzz" / "corpus"; }

std::vector<std::string> Sorted(const fs::path& dir, bool directories) {
  std::vector<std::string> names;
  std::error_code error;
  for (const fs::directory_entry& e : fs::directory_iterator(dir, error)) {
    if (e.is_directory() == directories) names.push_back(e.path().filename().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

class FuzzCorpus : public ::testing::TestWithParam<std::string> {};

TEST_P(FuzzCorpus, EveryFileRunsCleanly) {
  const Target target = FindTarget(GetParam());
  ASSERT_NE(target, nullptr) << "no harness for the corpus folder " << GetParam();
  const fs::path dir = CorpusDir() / GetParam();
  const std::vector<std::string> files = Sorted(dir, /*directories=*/false);
  EXPECT_FALSE(files.empty()) << dir << " is empty";
  for (const std::string& name : files) {
    std::ifstream in(dir / name, std::ios::binary);
    const std::vector<uint8_t> bytes{std::istreambuf_iterator<char>(in), {}};
    ASSERT_FALSE(in.bad()) << dir / name;
    // Said before the run: a crash ends the process before any assertion could name it.
    std::cerr << "replaying " << (dir / name).string() << " (" << bytes.size() << " bytes)\n";
    target(bytes.data(), bytes.size());
  }
}

INSTANTIATE_TEST_SUITE_P(Corpus, FuzzCorpus,
                         ::testing::ValuesIn(Sorted(CorpusDir(), /*directories=*/true)),
                         [](const auto& info) { return info.param; });

// The folders are found by listing: an empty list would instantiate nothing and pass.
TEST(FuzzCorpus, EveryHarnessHasACommittedCorpus) {
  const std::vector<std::string> folders = Sorted(CorpusDir(), /*directories=*/true);
  for (const char* name : {"args", "chat_template", "completion_request", "gguf", "hf_config", "llama2c", "npy", "pickle", "pytorch",
                           "safetensors", "tokenizer"}) {
    EXPECT_NE(std::find(folders.begin(), folders.end(), name), folders.end())
        << "tests/fuzz/corpus/" << name << " is missing";
  }
}

}  // namespace
}  // namespace toyllm::fuzz
