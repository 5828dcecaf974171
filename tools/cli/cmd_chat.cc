// toyllm chat: a conversation in the terminal. Each line read is a user message; the
// whole conversation goes through the chat template and the reply streams back, by the
// same template engine and completion code as toyllm serve's /v1/chat/completions.
#include <chrono>
#include <cstdio>
#include <iostream>

#include "absl/strings/str_cat.h"
#include "tools/cli/chat_setup.h"
#include "tools/cli/commands.h"
#include "tools/cli/model_setup.h"
#include "tools/server/completion.h"

namespace toyllm {

absl::Status RunChat(const std::vector<std::string>& argv) {
  ModelFlags model_flags;
  CompletionRequest request;
  std::string template_file, system;
  int max_tokens = 256;
  std::vector<Flag> flags = CommonFlags(model_flags, /*with_context=*/true);
  flags.erase(flags.begin() + 2);  // -p: the messages come from stdin
  flags.insert(flags.end(), {
      {"-n", "--n-predict", "tokens per reply at most (default 256)", &max_tokens},
      {"", "--temp", "temperature; 0 is greedy (default 1.0)", &request.sampling.temperature},
      {"", "--top-k", "keep the k most likely tokens; 0 keeps all (default 0)", &request.sampling.top_k},
      {"", "--top-p", "nucleus sampling threshold in (0, 1] (default 0.9)", &request.sampling.top_p},
      {"", "--seed", "random seed, > 0 (default: from the clock)", &request.sampling.seed},
      {"", "--system", "a system message to start the conversation with", &system},
      {"", "--chat-template", "Jinja2 chat template file (default: the model's, else role: content lines)",
       &template_file},
  });
  Args args("chat",
            "Talks with the model: each line on stdin is a user message, the reply streams to stdout.\n"
            "An empty line or end of input ends the conversation.",
            flags);
  if (absl::StatusOr<bool> run = args.Parse(argv); !run.ok() || !*run) return run.status();
  if (!args.given("--seed")) {
    request.sampling.seed = std::chrono::system_clock::now().time_since_epoch().count() | 1;
  }
  if (absl::Status s = ValidateSamplerOptions(request.sampling); !s.ok()) return s;
  if (max_tokens < 1) return absl::InvalidArgumentError(absl::StrCat("--n-predict: ", max_tokens, " must be >= 1"));

  absl::StatusOr<LoadedModel> model = LoadForInference(model_flags);
  if (!model.ok()) return model.status();
  absl::StatusOr<ChatSetup> chat = LoadChatTemplate(template_file, *model->file, model_flags.model);
  if (!chat.ok()) return chat.status();
  // A base model under the plain template would go on to write the user's next line too.
  if (chat->plain) request.stop = {"\nuser:"};
  const Tokenizer& tokenizer = *model->tokenizer;
  const std::string bos = tokenizer.bos_id() >= 0 ? tokenizer.Piece(tokenizer.bos_id()) : "";
  const std::string eos = tokenizer.eos_id() >= 0 ? tokenizer.Piece(tokenizer.eos_id()) : "";

  nlohmann::ordered_json messages = nlohmann::ordered_json::array();
  if (!system.empty()) messages.push_back({{"role", "system"}, {"content", system}});
  TurnTaking turns;
  std::string line;
  while (true) {
    std::cout << "> " << std::flush;
    if (!std::getline(std::cin, line) || line.empty()) break;
    messages.push_back({{"role", "user"}, {"content", line}});
    absl::StatusOr<std::string> prompt = chat->chat_template.Render(messages, true, bos, eos);
    if (!prompt.ok()) return prompt.status();
    std::string text = *prompt;
    if (!bos.empty() && text.compare(0, bos.size(), bos) == 0) text.erase(0, bos.size());
    const std::vector<int> ids = tokenizer.Encode(text, /*add_bos=*/true);
    const int room = model->transformer->context_length() - static_cast<int>(ids.size());
    if (room < 1) return absl::OutOfRangeError("the conversation no longer fits the context (-c)");
    request.max_tokens = std::min(max_tokens, room);
    absl::StatusOr<CompletionResult> reply = RunCompletion(
        *model->transformer, turns, tokenizer, ids, request,
        [](const CompletionDelta& delta) {
          std::fwrite(delta.text.data(), 1, delta.text.size(), stdout);
          std::fflush(stdout);
          return true;
        },
        [] { return true; });
    if (!reply.ok()) return reply.status();
    std::cout << "\n";
    messages.push_back({{"role", "assistant"}, {"content", reply->text}});
  }
  return absl::OkStatus();
}

}  // namespace toyllm
