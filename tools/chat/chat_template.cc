#include "tools/chat/chat_template.h"

#include "tools/chat/jinja_interpreter.h"
#include "tools/chat/jinja_parser.h"

namespace toyllm {

absl::StatusOr<ChatTemplate> ChatTemplate::Parse(std::string_view source) {
  absl::StatusOr<jinja::Body> tree = jinja::Parse(source);
  if (!tree.ok()) return tree.status();
  ChatTemplate t;
  t.tree_ = std::make_shared<const jinja::Body>(*std::move(tree));
  return t;
}

absl::StatusOr<std::string> ChatTemplate::Render(const nlohmann::ordered_json& messages,
                                                 bool add_generation_prompt, const std::string& bos_token,
                                                 const std::string& eos_token) const {
  return Render(nlohmann::ordered_json{{"messages", messages},
                                       {"add_generation_prompt", add_generation_prompt},
                                       {"bos_token", bos_token},
                                       {"eos_token", eos_token}});
}

absl::StatusOr<std::string> ChatTemplate::Render(const nlohmann::ordered_json& variables) const {
  if (!variables.is_object()) return absl::InvalidArgumentError("chat template variables must be an object");
  return jinja::Render(*tree_, variables);
}

}  // namespace toyllm
