// The chat template `toyllm serve` and `toyllm chat` use: --chat-template FILE, else the
// one the model file carries, else ChatTemplate::kPlainTemplate for base models.
#ifndef TOYLLM_TOOLS_CLI_CHAT_SETUP_H_
#define TOYLLM_TOOLS_CLI_CHAT_SETUP_H_

#include <string>

#include "absl/status/statusor.h"
#include "models/model_file.h"
#include "tools/chat/chat_template.h"

namespace toyllm {

struct ChatSetup {
  ChatTemplate chat_template;
  bool plain = false;  // the built-in template: the model has none of its own
};

absl::StatusOr<ChatSetup> LoadChatTemplate(const std::string& template_file, const ModelFile& model,
                                           const std::string& model_path);

}  // namespace toyllm

#endif  // TOYLLM_TOOLS_CLI_CHAT_SETUP_H_
