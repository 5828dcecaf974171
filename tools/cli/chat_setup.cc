#include "tools/cli/chat_setup.h"

#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"

namespace toyllm {

absl::StatusOr<ChatSetup> LoadChatTemplate(const std::string& template_file, const ModelFile& model,
                                           const std::string& model_path) {
  std::string source = model.chat_template;
  std::string origin = absl::StrCat(model_path, ": tokenizer.chat_template");
  if (!template_file.empty()) {
    std::ifstream in(template_file, std::ios::binary);
    if (!in) return absl::NotFoundError(absl::StrCat(template_file, ": cannot open the chat template"));
    std::ostringstream text;
    text << in.rdbuf();
    source = text.str();
    origin = template_file;
  }
  const bool plain = source.empty();
  absl::StatusOr<ChatTemplate> parsed = ChatTemplate::Parse(plain ? ChatTemplate::kPlainTemplate : source);
  if (!parsed.ok()) return absl::InvalidArgumentError(absl::StrCat(origin, ": ", parsed.status().message()));
  return ChatSetup{*std::move(parsed), plain};
}

}  // namespace toyllm
