// A model file mapped or read into memory (--no-mmap), locked or not (--mlock): the bytes,
// and so the model's outputs, are the same; failures name the file.
#include "models/mapped_file.h"

#include <string>

#include "gtest/gtest.h"
#include "models/model_file.h"
#include "runtime/transformer.h"
#include "tests/test_env.h"
#include "tests/test_util.h"

namespace toyllm {
namespace {

using ::toyllm::testing::RunResult;
using ::toyllm::testing::RunToyllm;

const std::string kModel = std::string(TOYLLM_SOURCE_DIR) + "/models/coref.gguf";

TEST(mapped_file, ReadIntoMemoryHoldsTheSameBytesAsTheMapping) {
  for (const FileMemory memory : {FileMemory{false, false}, FileMemory{true, true}, FileMemory{false, true}}) {
    absl::StatusOr<std::unique_ptr<MappedFile>> mapped = MappedFile::Open(kModel);
    absl::StatusOr<std::unique_ptr<MappedFile>> other = MappedFile::Open(kModel, memory);
    ASSERT_TRUE(mapped.ok()) << mapped.status();
    ASSERT_TRUE(other.ok()) << other.status();
    ASSERT_EQ((*other)->size(), (*mapped)->size());
    EXPECT_NE((*other)->data(), (*mapped)->data());
    EXPECT_EQ(std::string(reinterpret_cast<const char*>((*other)->data()), (*other)->size()),
              testing::ReadFile(kModel));
  }
}

TEST(mapped_file, ErrorsNameTheFile) {
  const std::string dir = testing::TempDir();
  for (const FileMemory memory : {FileMemory{true, false}, FileMemory{false, true}}) {
    absl::StatusOr<std::unique_ptr<MappedFile>> missing = MappedFile::Open(dir + "/missing.gguf", memory);
    EXPECT_FALSE(missing.ok());
    EXPECT_NE(missing.status().message().find(dir + "/missing.gguf"), absl::string_view::npos);
    absl::StatusOr<std::unique_ptr<MappedFile>> directory = MappedFile::Open(dir, memory);
    EXPECT_FALSE(directory.ok());
    EXPECT_NE(directory.status().message().find("not a regular file"), absl::string_view::npos);
  }
  testing::RemoveTempDir(dir);
}

TEST(mapped_file, AModelReadIntoMemoryGivesTheSameLogits) {
  absl::StatusOr<std::unique_ptr<ModelFile>> mapped = LoadModel(kModel);
  absl::StatusOr<std::unique_ptr<ModelFile>> read = LoadModel(kModel, {/*map=*/false, /*lock=*/true});
  ASSERT_TRUE(mapped.ok()) << mapped.status();
  ASSERT_TRUE(read.ok()) << read.status();
  std::vector<std::vector<float>> logits;
  for (const ModelFile* model : {mapped->get(), read->get()}) {
    absl::StatusOr<std::unique_ptr<Transformer>> t = Transformer::Create(model->config, model->weights, 8, 8);
    ASSERT_TRUE(t.ok()) << t.status();
    absl::StatusOr<absl::Span<const float>> out = (*t)->Forward({1, 5, 9, 3}, 0);
    ASSERT_TRUE(out.ok()) << out.status();
    logits.emplace_back(out->begin(), out->end());
  }
  EXPECT_EQ(logits[0], logits[1]);
}

TEST(mapped_file, TheCommandsTakeNoMmapAndMlock) {
  const RunResult mapped = RunToyllm({"generate", "-p", "这个动物并没有过马路，因为它太累了。它指的是", "--temp", "0", "-n", "1"});
  const RunResult read = RunToyllm({"generate", "-p", "这个动物并没有过马路，因为它太累了。它指的是", "--temp", "0", "-n", "1",
                                    "--no-mmap", "--mlock"});
  ASSERT_TRUE(testing::Succeeds(mapped));
  ASSERT_TRUE(testing::Succeeds(read));
  EXPECT_EQ(read.out, mapped.out);
  const RunResult info = RunToyllm({"info", "-m", "/nonexistent/model.gguf", "--no-mmap"});
  EXPECT_EQ(info.exit_code, 1);
  EXPECT_EQ(info.err, "toyllm info: /nonexistent/model.gguf: cannot open (No such file or directory)\n");
  const RunResult bench = RunToyllm({"bench", "-m", kModel, "-p", "4", "-n", "2", "-t", "1", "-r", "1", "-o", "csv",
                                     "--no-mmap", "--mlock"});
  EXPECT_TRUE(testing::Succeeds(bench));
}

}  // namespace
}  // namespace toyllm
