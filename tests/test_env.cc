#include "tests/test_env.h"

#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <iostream>
#include <sstream>

namespace toyllm::testing {

std::string ModelsDir() {
  const char* env = std::getenv("TOYLLM_MODELS");
  return env != nullptr && *env != '\0' ? env : std::string(TOYLLM_SOURCE_DIR) + "/../shared/models";
}

std::string GoldenDir() { return ModelsDir() + "/../golden"; }

bool ModelsRequired() {
  const char* env = std::getenv("TOYLLM_REQUIRE_MODELS");
  return env != nullptr && std::string(env) == "1";
}

namespace {

std::string ExistingOrReported(const std::string& path) {
  struct stat st;
  if (stat(path.c_str(), &st) == 0) return path;
  std::cerr << "\n*** MODEL FILE MISSING: " << path
            << " (set TOYLLM_MODELS to the folder holding the shared models) ***\n\n";
  return "";
}

}  // namespace

std::string ModelPath(const std::string& relative) { return ExistingOrReported(ModelsDir() + "/" + relative); }

std::string SharedPath(const std::string& sibling, const std::string& relative) {
  return ExistingOrReported(ModelsDir() + "/../" + sibling + "/" + relative);
}

std::string Stories260K() { return ModelPath("stories260K/stories260K.bin"); }
std::string Tok512() { return ModelPath("stories260K/tok512.model"); }

std::string ToyllmBinary() { return TOYLLM_BINARY; }

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

std::string TempDir() {
  std::string pattern = ::testing::TempDir() + "toyllm_XXXXXX";
  if (mkdtemp(pattern.data()) == nullptr) return ::testing::TempDir();
  return pattern;
}

}  // namespace toyllm::testing
