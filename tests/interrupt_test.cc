// An interrupted write leaves no partial file: the command line's SIGINT handler removes
// the temporary file WriteFileAtomically is writing and ends the process by the signal.
// Each case runs in a forked child that interrupts itself in the middle of a write, so the
// moment of the signal is exact rather than a race with a timer.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <string>

#include "absl/status/status.h"
#include "gtest/gtest.h"
#include "models/atomic_file.h"
#include "tools/cli/interrupt.h"

namespace toyllm {
namespace {

// Forks a child that installs the handler, starts writing `path` and raises `signal_number`
// after the first bytes; returns the child's wait status.
int InterruptedWrite(const std::string& path, int signal_number) {
  const pid_t child = fork();
  if (child == 0) {
    RemoveUnfinishedFileOnInterrupt();
    absl::Status s = WriteFileAtomically(path, [signal_number](std::FILE* f) {
      std::fputs("the first half of a model file", f);
      std::fflush(f);
      raise(signal_number);
      return absl::OkStatus();
    });
    _exit(s.ok() ? 0 : 1);  // reached only if the signal did not end the process
  }
  int status = 0;
  waitpid(child, &status, 0);
  return status;
}

class interrupt : public ::testing::TestWithParam<int> {};

TEST_P(interrupt, LeavesNoPartialFile) {
  const std::string dir = ::testing::TempDir() + "/interrupt_" + std::to_string(GetParam());
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);

  const int status = InterruptedWrite(dir + "/model.gguf", GetParam());

  ASSERT_TRUE(WIFSIGNALED(status)) << "the child exited normally with " << WEXITSTATUS(status);
  EXPECT_EQ(WTERMSIG(status), GetParam());
  EXPECT_TRUE(std::filesystem::is_empty(dir)) << "a file was left in " << dir;
}

INSTANTIATE_TEST_SUITE_P(signals, interrupt, ::testing::Values(SIGINT, SIGTERM, SIGHUP));

TEST(interrupt_control, UninterruptedWriteKeepsItsFile) {
  // The same write without a signal completes: the test above is not passing vacuously.
  const std::string path = ::testing::TempDir() + "/interrupt_control.bin";
  ASSERT_TRUE(WriteFileAtomically(path, [](std::FILE* f) {
                std::fputs("whole", f);
                return absl::OkStatus();
              }).ok());
  EXPECT_EQ(std::filesystem::file_size(path), 5u);
}

}  // namespace
}  // namespace toyllm
