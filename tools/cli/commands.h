// The subcommands of `toyllm`, one file each. Each takes the arguments after its name and
// returns an error for main() to print.
#ifndef TOYLLM_TOOLS_CLI_COMMANDS_H_
#define TOYLLM_TOOLS_CLI_COMMANDS_H_

#include <string>
#include <vector>

#include "absl/status/status.h"

namespace toyllm {

absl::Status RunAblate(const std::vector<std::string>& args);
absl::Status RunAttention(const std::vector<std::string>& args);
absl::Status RunBench(const std::vector<std::string>& args);
absl::Status RunChat(const std::vector<std::string>& args);
absl::Status RunConvert(const std::vector<std::string>& args);
absl::Status RunExplain(const std::vector<std::string>& args);
absl::Status RunGenerate(const std::vector<std::string>& args);
absl::Status RunInfo(const std::vector<std::string>& args);
absl::Status RunLens(const std::vector<std::string>& args);
absl::Status RunLogits(const std::vector<std::string>& args);
absl::Status RunPatch(const std::vector<std::string>& args);
absl::Status RunServe(const std::vector<std::string>& args);
absl::Status RunTokenize(const std::vector<std::string>& args);

}  // namespace toyllm

#endif  // TOYLLM_TOOLS_CLI_COMMANDS_H_
