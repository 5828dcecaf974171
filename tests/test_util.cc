#include "tests/test_util.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <system_error>
#include <thread>

#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/strings/ascii.h"
#include "runtime/generate.h"
#include "tests/test_env.h"

extern char** environ;

namespace toyllm::testing {

// ---------------------------------------------------------------------------------------
// Files.

std::string WriteFile(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  EXPECT_TRUE(out.good()) << "cannot write " << path;
  return path;
}

std::string WriteFile(const std::string& dir, const std::string& name, const std::string& bytes) {
  return WriteFile(dir + "/" + name, bytes);
}

bool PathExists(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0;
}

std::vector<std::string> ListDir(const std::string& dir) {
  std::vector<std::string> names;
  std::error_code error;
  for (std::filesystem::directory_iterator it(dir, error), end; !error && it != end; it.increment(error)) {
    names.push_back(it->path().filename().string());
  }
  EXPECT_FALSE(error) << "cannot list " << dir << ": " << error.message();
  std::sort(names.begin(), names.end());
  return names;
}

void RemoveTempDir(const std::string& dir) {
  if (dir.rfind(::testing::TempDir() + "toyllm_", 0) == 0) std::filesystem::remove_all(dir);
}

int64_t PeakRssKiB() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_maxrss;
}

// ---------------------------------------------------------------------------------------
// Logits.

std::vector<int> MixedTokens(size_t n) {
  const std::vector<int> all = {1,   403, 407, 261, 378, 500, 2,  0,  511, 77,
                                300, 1,   42,  256, 13,  99,  450, 3, 128, 64};
  return std::vector<int>(all.begin(), all.begin() + std::min(n, all.size()));
}

std::vector<float> AllLogits(const ModelConfig& config, const ModelWeights& weights,
                             const std::vector<int>& tokens, int context_length, int max_batch) {
  absl::StatusOr<std::unique_ptr<Transformer>> t =
      Transformer::Create(config, weights, context_length, max_batch);
  EXPECT_TRUE(t.ok()) << t.status();
  if (!t.ok()) return {};
  absl::StatusOr<std::vector<float>> logits = Prefill(**t, tokens, 0, Transformer::Logits::kAll);
  EXPECT_TRUE(logits.ok()) << logits.status();
  return logits.ok() ? *logits : std::vector<float>{};
}

std::vector<float> AllLogits(const ModelFile& model, const std::vector<int>& tokens,
                             std::optional<int> context_length) {
  return AllLogits(model.config, model.weights, tokens,
                   context_length.value_or(model.config.context_length));
}

void ExpectSameDimensions(const ModelConfig& actual, const ModelConfig& expected) {
  EXPECT_EQ(actual.dim, expected.dim);
  EXPECT_EQ(actual.hidden_dim, expected.hidden_dim);
  EXPECT_EQ(actual.n_layers, expected.n_layers);
  EXPECT_EQ(actual.n_heads, expected.n_heads);
  EXPECT_EQ(actual.n_kv_heads, expected.n_kv_heads);
  EXPECT_EQ(actual.head_dim, expected.head_dim);
  EXPECT_EQ(actual.vocab_size, expected.vocab_size);
}

float MaxAbsDiff(const std::vector<float>& a, const std::vector<float>& b) {
  EXPECT_EQ(a.size(), b.size());
  float worst = 0.0f;
  for (size_t i = 0; i < std::min(a.size(), b.size()); ++i) {
    worst = std::max(worst, std::fabs(a[i] - b[i]));
  }
  return worst;
}

absl::StatusOr<NpyArray> ReadNpyFloat32(const std::string& path) {
  const std::string bytes = ReadFile(path);
  const auto bad = [&path](const std::string& why) {
    return absl::InvalidArgumentError(path + ": " + why);
  };
  if (bytes.size() < 10 || bytes.compare(0, 6, "\x93NUMPY") != 0) return bad("not a .npy file");
  if (bytes[6] != 1 || bytes[7] != 0) return bad("not .npy version 1.0");
  const size_t header_len = static_cast<unsigned char>(bytes[8]) | static_cast<unsigned char>(bytes[9]) << 8;
  if (10 + header_len > bytes.size()) return bad("header runs past the end");
  const std::string header = bytes.substr(10, header_len);
  if (header.find("'descr': '<f4'") == std::string::npos) return bad("not little-endian float32");
  if (header.find("'fortran_order': False") == std::string::npos) return bad("not in C order");
  const size_t open = header.find("'shape': (");
  const size_t close = header.find(')', open);
  if (open == std::string::npos || close == std::string::npos) return bad("no shape");
  NpyArray array;
  int64_t count = 1;
  for (absl::string_view dim : absl::StrSplit(header.substr(open + 10, close - open - 10), ',')) {
    const absl::string_view d = absl::StripAsciiWhitespace(dim);
    if (d.empty()) continue;
    int64_t value = 0;
    if (!absl::SimpleAtoi(d, &value) || value < 0) return bad("bad shape");
    array.shape.push_back(value);
    count *= value;
  }
  if (bytes.size() - 10 - header_len != static_cast<size_t>(count) * sizeof(float)) {
    return bad("data size does not match the shape");
  }
  array.values.resize(count);
  std::memcpy(array.values.data(), bytes.data() + 10 + header_len, count * sizeof(float));
  return array;
}

// ---------------------------------------------------------------------------------------
// Error messages.

void ExpectError(const absl::Status& status, const std::string& path,
                 const std::vector<std::string>& phrases) {
  ASSERT_FALSE(status.ok()) << path << " loaded but should not";
  const std::string message(status.message());
  EXPECT_NE(message.find(path), std::string::npos) << "the path is not in: " << message;
  for (const std::string& s : phrases) {
    EXPECT_NE(message.find(s), std::string::npos) << "\"" << s << "\" not in: " << message;
  }
  std::cerr << "  " << message << "\n";
}

// ---------------------------------------------------------------------------------------
// The toyllm binary as a subprocess.

std::string Describe(const RunResult& r) {
  std::ostringstream s;
  if (!r.started) {
    s << "did not start";
  } else if (r.timed_out) {
    s << "timed out";
  } else if (r.exited) {
    s << "exit " << r.exit_code;
  } else {
    s << "killed by signal " << r.signal << " (" << strsignal(r.signal) << ")";
  }
  s << "\n--- stdout (" << r.out.size() << " bytes) ---\n" << r.out.substr(0, 2000)
    << "\n--- stderr (" << r.err.size() << " bytes) ---\n" << r.err.substr(0, 2000);
  return s.str();
}

std::string QuotedArgs(const std::vector<std::string>& args) {
  std::string s;
  for (const std::string& a : args) s += (s.empty() ? "" : " ") + ("'" + a + "'");
  return s;
}

RunResult RunToyllm(const std::vector<std::string>& args, std::chrono::seconds timeout) {
  RunResult result;
  const std::string binary = ToyllmBinary();
  int out_pipe[2], err_pipe[2];
  if (pipe2(out_pipe, O_CLOEXEC) != 0) {
    ADD_FAILURE() << "pipe: " << strerror(errno);
    return result;
  }
  if (pipe2(err_pipe, O_CLOEXEC) != 0) {
    ADD_FAILURE() << "pipe: " << strerror(errno);
    close(out_pipe[0]);
    close(out_pipe[1]);
    return result;
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, out_pipe[1], 1);  // dup2 clears O_CLOEXEC
  posix_spawn_file_actions_adddup2(&actions, err_pipe[1], 2);
  std::vector<std::string> full = {binary};
  full.insert(full.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& a : full) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = -1;
  const int spawn_error = posix_spawn(&pid, binary.c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  close(out_pipe[1]);
  close(err_pipe[1]);
  if (spawn_error != 0) {
    close(out_pipe[0]);
    close(err_pipe[0]);
    ADD_FAILURE() << "cannot start " << binary << ": " << strerror(spawn_error);
    return result;
  }
  result.started = true;

  const auto deadline = std::chrono::steady_clock::now() + timeout;
  const auto remaining_ms = [&deadline] {
    return std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now())
        .count();
  };
  pollfd fds[2] = {{out_pipe[0], POLLIN, 0}, {err_pipe[0], POLLIN, 0}};
  std::string* sinks[2] = {&result.out, &result.err};
  int open_pipes = 2;
  while (open_pipes > 0) {
    const long long left = remaining_ms();
    if (left <= 0) {
      result.timed_out = true;
      break;
    }
    const int ready = poll(fds, 2, static_cast<int>(std::min<long long>(left, 1000)));
    if (ready < 0) {
      if (errno == EINTR) continue;
      ADD_FAILURE() << "poll: " << strerror(errno);
      result.timed_out = true;  // treat as a hang: kill the child below
      break;
    }
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || fds[i].revents == 0) continue;
      char buffer[65536];
      const ssize_t got = read(fds[i].fd, buffer, sizeof(buffer));
      if (got > 0) {
        sinks[i]->append(buffer, static_cast<size_t>(got));
      } else if (got == 0 || errno != EINTR) {
        close(fds[i].fd);
        fds[i].fd = -1;  // poll ignores negative descriptors
        --open_pipes;
      }
    }
  }
  int status = 0;
  for (;;) {
    if (result.timed_out) kill(pid, SIGKILL);
    const pid_t waited = waitpid(pid, &status, result.timed_out ? 0 : WNOHANG);
    if (waited == pid) break;
    if (waited < 0) {
      if (errno == EINTR) continue;
      ADD_FAILURE() << "waitpid: " << strerror(errno);
      break;
    }
    if (remaining_ms() <= 0) {
      result.timed_out = true;  // closed its output but did not exit
    } else {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  }
  for (pollfd& f : fds) {
    if (f.fd >= 0) close(f.fd);
  }
  if (WIFEXITED(status)) {
    result.exited = true;
    result.exit_code = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    result.signal = WTERMSIG(status);
  }
  if (result.timed_out) {
    ADD_FAILURE() << "toyllm " << QuotedArgs(args) << " did not finish within " << timeout.count() << " s";
  }
  return result;
}

::testing::AssertionResult Succeeds(const RunResult& r) {
  if (r.started && r.exited && r.exit_code == 0) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << Describe(r);
}

}  // namespace toyllm::testing
