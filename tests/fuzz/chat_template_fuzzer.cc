// The chat template interpreter (tools/chat/): any bytes as a template, rendered on a fixed
// conversation when it parses. Rendering is bounded in work and output, so every input
// must end — with text or an error — without a crash.
#include <string_view>

#include "tests/fuzz/fuzz_targets.h"
#include "tools/chat/chat_template.h"

namespace toyllm::fuzz {

void ChatTemplateInput(const uint8_t* data, size_t size) {
  absl::StatusOr<ChatTemplate> t = ChatTemplate::Parse(std::string_view(reinterpret_cast<const char*>(data), size));
  if (!t.ok()) return;
  static const nlohmann::ordered_json kMessages = nlohmann::ordered_json::parse(
      R"([{"role": "system", "content": "Be brief."}, {"role": "user", "content": "它指的是"},
          {"role": "assistant", "content": "动物", "tool_calls": [{"function": {"name": "f", "arguments": {"a": 1}}}]},
          {"role": "user", "content": "Why?"}])");
  (void)t->Render(kMessages, true, "<s>", "</s>");
}

}  // namespace toyllm::fuzz
