// WriteFileAtomically: what the write function puts out is what the file holds, across
// the 2 MiB pieces it is written in, and a failed write leaves no file.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <string>

#include "absl/status/status.h"
#include "gtest/gtest.h"
#include "models/atomic_file.h"

namespace toyllm {
namespace {

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

TEST(atomic_file, KeepsEveryByteOfPiecesLargerAndSmallerThanItsBuffer) {
  // Pieces of odd sizes, one longer than the buffer, so that writes go both through the
  // buffer and past it, and the last piece ends inside a buffer that only fclose flushes.
  const size_t sizes[] = {size_t{13}, size_t{5} << 20, size_t{1} << 20, size_t{3}, size_t{2} << 20, size_t{777}};
  std::mt19937 gen(7);
  std::string expected;
  for (size_t size : sizes) {
    std::string piece(size, '\0');
    for (char& c : piece) c = static_cast<char>(gen());
    expected += piece;
  }
  const std::string path = ::testing::TempDir() + "/atomic_file_pieces.bin";
  ASSERT_TRUE(WriteFileAtomically(path, [&](std::FILE* f) {
                size_t at = 0;
                for (size_t size : sizes) {
                  if (std::fwrite(expected.data() + at, 1, size, f) != size) {
                    return absl::DataLossError("short write");
                  }
                  at += size;
                }
                return absl::OkStatus();
              }).ok());
  EXPECT_TRUE(ReadAll(path) == expected) << "the file differs from what was written";
}

TEST(atomic_file, FailedWriteLeavesNoFile) {
  const std::string dir = ::testing::TempDir() + "/atomic_file_failed";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const absl::Status s = WriteFileAtomically(dir + "/model.gguf", [](std::FILE* f) {
    std::fputs("half a file", f);
    return absl::DataLossError("the source ran dry");
  });
  EXPECT_FALSE(s.ok());
  EXPECT_TRUE(std::filesystem::is_empty(dir)) << "a file was left in " << dir;
}

}  // namespace
}  // namespace toyllm
