// A model's chat template (GGUF tokenizer.chat_template, or tokenizer_config.json's
// chat_template): the conversation as the model was trained to read it, rendered by the
// project's Jinja2 interpreter. Parse checks the whole template at load — every statement,
// filter and test must be one the interpreter implements — so that a template it cannot
// run is an error then and not a wrong prompt later.
#ifndef TOYLLM_TOOLS_CHAT_CHAT_TEMPLATE_H_
#define TOYLLM_TOOLS_CHAT_CHAT_TEMPLATE_H_

#include <memory>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"

namespace toyllm {

namespace jinja {
struct Node;
}

class ChatTemplate {
 public:
  // For base models without a template: "role: content" lines, then "assistant:".
  static constexpr char kPlainTemplate[] =
      "{% for message in messages %}{{ message['role'] }}: {{ message['content'] }}\n{% endfor %}"
      "{% if add_generation_prompt %}assistant:{% endif %}";

  static absl::StatusOr<ChatTemplate> Parse(std::string_view source);

  // messages: [{"role": ..., "content": ...}, ...]. bos_token and eos_token are the
  // tokenizer's pieces, as the templates expect.
  absl::StatusOr<std::string> Render(const nlohmann::ordered_json& messages, bool add_generation_prompt,
                                     const std::string& bos_token, const std::string& eos_token) const;
  // Any variables (messages, tools, add_generation_prompt, ...).
  absl::StatusOr<std::string> Render(const nlohmann::ordered_json& variables) const;

 private:
  std::shared_ptr<const std::vector<std::unique_ptr<jinja::Node>>> tree_;
};

}  // namespace toyllm

#endif  // TOYLLM_TOOLS_CHAT_CHAT_TEMPLATE_H_
