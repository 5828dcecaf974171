#include "tools/cli/default_model.h"

#include <sys/stat.h>
#include <unistd.h>

#include <climits>

namespace toyllm {
namespace {

// The running binary's folder, or "" when /proc does not tell.
std::string ExecutableDirectory() {
  char path[PATH_MAX];
  const ssize_t n = readlink("/proc/self/exe", path, sizeof(path) - 1);
  if (n <= 0) return "";
  const std::string exe(path, n);
  return exe.substr(0, exe.rfind('/'));
}

bool IsFile(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

}  // namespace

std::string DefaultModelPath() {
  // Set by CMakeLists.txt: the install rule's path relative to the installed binary, and
  // the model in the source tree this binary was built from.
  const std::string installed = ExecutableDirectory() + "/" + TOYLLM_INSTALLED_MODEL;
  return IsFile(installed) ? installed : TOYLLM_SOURCE_MODEL;
}

}  // namespace toyllm
