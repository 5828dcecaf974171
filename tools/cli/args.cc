#include "tools/cli/args.h"

#include <iostream>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace toyllm {
namespace {

std::string FlagNames(const Flag& f) {
  return f.short_name.empty() ? f.long_name : absl::StrCat(f.short_name, ", ", f.long_name);
}

}  // namespace

absl::Status Args::Set(Flag& flag, const std::string& value) {
  flag.given = true;
  const auto bad = [&](const char* what) {
    return absl::InvalidArgumentError(
        absl::StrCat(flag.long_name, ": '", value, "' is not ", what));
  };
  if (auto* s = std::get_if<std::string*>(&flag.target)) {
    **s = value;
  } else if (auto* i = std::get_if<int*>(&flag.target)) {
    if (!absl::SimpleAtoi(value, *i)) return bad("an integer");
  } else if (auto* f = std::get_if<float*>(&flag.target)) {
    if (!absl::SimpleAtof(value, *f)) return bad("a number");
  } else if (auto* u = std::get_if<uint64_t*>(&flag.target)) {
    if (!absl::SimpleAtoi(value, *u)) return bad("a non-negative integer");
  }
  return absl::OkStatus();
}

absl::StatusOr<bool> Args::Parse(const std::vector<std::string>& args) {
  bool help = false;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg == "-h" || arg == "--help") {
      help = true;
      continue;
    }
    const size_t eq = arg.find('=');
    const std::string name = arg.substr(0, eq);
    Flag* flag = nullptr;
    for (Flag& f : flags_) {
      if (name == f.long_name || (!f.short_name.empty() && name == f.short_name)) flag = &f;
    }
    const bool is_flag = arg.size() > 1 && arg[0] == '-';
    if (flag == nullptr && !is_flag && positionals_ != nullptr) {
      positionals_->push_back(arg);
      continue;
    }
    if (flag == nullptr) {
      const char* what = is_flag ? "unknown flag" : "unexpected argument";
      return absl::InvalidArgumentError(
          absl::StrCat(what, " '", arg, "' for '", command_, "' (see toyllm ", command_, " --help)"));
    }
    if (auto* b = std::get_if<bool*>(&flag->target)) {
      if (eq != std::string::npos) {
        return absl::InvalidArgumentError(absl::StrCat(flag->long_name, " takes no value"));
      }
      **b = true;
      flag->given = true;
      continue;
    }
    if (eq != std::string::npos) {
      if (absl::Status s = Set(*flag, arg.substr(eq + 1)); !s.ok()) return s;
    } else if (i + 1 < args.size()) {
      if (absl::Status s = Set(*flag, args[++i]); !s.ok()) return s;
    } else {
      return absl::InvalidArgumentError(absl::StrCat(flag->long_name, " needs a value"));
    }
  }
  if (help) std::cout << Usage();
  return !help;
}

bool Args::given(const std::string& long_name) const {
  for (const Flag& f : flags_) {
    if (f.long_name == long_name) return f.given;
  }
  return false;
}

std::string Args::Usage() const {
  std::string usage = absl::StrCat("usage: toyllm ", command_, " [flags]\n", summary_, "\n\nflags:\n");
  for (const Flag& f : flags_) {
    std::string names = FlagNames(f);
    names.resize(std::max<size_t>(names.size() + 2, 22), ' ');
    absl::StrAppend(&usage, "  ", names, f.help, "\n");
  }
  absl::StrAppend(&usage, "  -h, --help            this message\n");
  return usage;
}

}  // namespace toyllm
