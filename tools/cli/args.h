// A small command-line parser with llama.cpp's flag style: short and long names
// (-m/--model), values as the next argument or after '=', and a --help per subcommand.
#ifndef TOYLLM_TOOLS_CLI_ARGS_H_
#define TOYLLM_TOOLS_CLI_ARGS_H_

#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace toyllm {

struct Flag {
  std::string short_name;  // e.g. "-m"; empty when there is none
  std::string long_name;   // e.g. "--model"
  std::string help;
  // Where the value goes; a bool flag takes no value and is set to true when present.
  std::variant<std::string*, int*, float*, uint64_t*, bool*> target;
  bool given = false;
};

class Args {
 public:
  // `positionals`, when given, collects the arguments that are not flags; without it they
  // are errors.
  Args(std::string command, std::string summary, std::vector<Flag> flags,
       std::vector<std::string>* positionals = nullptr)
      : command_(std::move(command)),
        summary_(std::move(summary)),
        flags_(std::move(flags)),
        positionals_(positionals) {}

  // Parses the arguments after the subcommand's name: true when the command should run,
  // false when -h/--help asked for the usage, which Parse then prints to stdout. Unknown
  // flags, missing or malformed values and stray positional arguments are errors naming
  // the flag.
  absl::StatusOr<bool> Parse(const std::vector<std::string>& args);

  bool given(const std::string& long_name) const;
  std::string Usage() const;

 private:
  absl::Status Set(Flag& flag, const std::string& value);

  std::string command_;
  std::string summary_;
  std::vector<Flag> flags_;
  std::vector<std::string>* positionals_;
};

}  // namespace toyllm

#endif  // TOYLLM_TOOLS_CLI_ARGS_H_
