// The command line's parser (tools/cli/args.h) with a fixed table of every flag kind. The
// input's NUL bytes split it into arguments, as argv's strings are; the first byte says
// whether positional arguments are collected.
#include <iostream>
#include <string>
#include <vector>

#include "tests/fuzz/fuzz_targets.h"
#include "tools/cli/args.h"

namespace toyllm::fuzz {

void ArgsInput(const uint8_t* data, size_t size) {
  if (size < 1) return;
  std::vector<std::string> argv(1);
  for (size_t i = 1; i < size; ++i) {
    if (data[i] == 0) argv.emplace_back();
    else argv.back().push_back(static_cast<char>(data[i]));
  }
  std::string model, prompt;
  int n = 0, threads = 0;
  float temperature = 0.0f;
  uint64_t seed = 0;
  bool verbose = false;
  std::vector<std::string> positionals;
  Args args("fuzz", "the fuzzer's flag table",
            {{"-m", "--model", "a string", &model},
             {"-p", "--prompt", "another string", &prompt},
             {"-n", "--n-predict", "an int", &n},
             {"-t", "--threads", "another int", &threads},
             {"", "--temp", "a float", &temperature},
             {"", "--seed", "a uint64", &seed},
             {"-v", "--verbose", "a bool", &verbose}},
            data[0] & 1 ? &positionals : nullptr);
  // --help prints the usage to stdout: noise in a fuzzer's log.
  const std::ios::iostate state = std::cout.rdstate();
  std::cout.setstate(std::ios::failbit);
  (void)args.Parse(argv);
  std::cout.clear(state);
  (void)args.given("--model");
  args.Usage();
}

}  // namespace toyllm::fuzz
