// The scripts that make models/coref.gguf (tools/coref/), on tiny settings so they cannot
// rot: corpus, tokenizer and a few training steps with Debian's PyTorch, then
// `toyllm convert` and `toyllm generate` on the result.
#include <cstdlib>
#include <iostream>
#include <string>

#include "gtest/gtest.h"
#include "tests/test_env.h"
#include "tests/test_util.h"

namespace toyllm {
namespace {

constexpr char kPython[] = "/usr/bin/python3";  // Debian's, where python3-torch installs

// Runs one script of tools/coref with its arguments; true when it exits 0.
bool RunScript(const std::string& script, const std::string& args) {
  const std::string command = std::string(kPython) + " '" + TOYLLM_SOURCE_DIR + "/tools/coref/" +
                              script + "' " + args + " >/dev/null";
  const bool ok = std::system(command.c_str()) == 0;
  EXPECT_TRUE(ok) << "failed: " << command;
  return ok;
}

TEST(coref_training, ScriptsMakeAModelThatToyllmConvertsAndRuns) {
  if (std::system((std::string(kPython) + " -c 'import torch, sentencepiece' 2>/dev/null").c_str()) != 0) {
    std::cerr << "\n*** " << kPython << " cannot import torch and sentencepiece: install "
              << "python3-torch and python3-sentencepiece (scripts/install-deps.sh) ***\n\n";
    if (testing::ModelsRequired()) FAIL() << kPython << " cannot import torch, sentencepiece";
    GTEST_SKIP() << "PYTORCH MISSING: " << kPython << " cannot import torch, sentencepiece";
  }
  const std::string dir = testing::TempDir();
  const std::string q = "'" + dir + "'";
  ASSERT_TRUE(RunScript("make_corpus.py", q + " --train 2000 --heldout 20"));
  ASSERT_TRUE(RunScript("train_tokenizer.py", q));
  ASSERT_TRUE(RunScript("train_model.py", q + " " + q + "/model.pt --steps 3 --dim 16 " +
                                              "--layers 1 --heads 2 --hidden 32"));

  const std::string gguf = dir + "/model.gguf";
  testing::RunResult r = testing::RunToyllm(
      {"convert", dir + "/model.pt", "--tokenizer", dir + "/tok.model", "-o", gguf});
  ASSERT_TRUE(testing::Succeeds(r)) << testing::Describe(r);
  r = testing::RunToyllm({"generate", "-m", gguf, "-p", "这个动物并没有过马路，因为它太累了。它指的是",
                          "--temp", "0", "-n", "2"});
  ASSERT_TRUE(testing::Succeeds(r)) << testing::Describe(r);
  EXPECT_EQ(r.out.rfind("这个动物并没有过马路，因为它太累了。它指的是", 0), 0u) << r.out;
  testing::RemoveTempDir(dir);
}

}  // namespace
}  // namespace toyllm
