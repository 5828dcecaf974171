// toyllm serve: the OpenAI-compatible server (tools/server/) over a model, until SIGTERM
// or Ctrl-C, which end every stream cleanly and exit 0.
#include <signal.h>
#include <unistd.h>

#include <cerrno>

#include <iostream>
#include <thread>

#include "absl/strings/str_cat.h"
#include "tools/cli/chat_setup.h"
#include "tools/cli/commands.h"
#include "tools/cli/model_setup.h"
#include "tools/server/server.h"

namespace toyllm {
namespace {

int g_signal_pipe[2] = {-1, -1};

void OnStopSignal(int) {
  const char byte = 1;
  (void)!write(g_signal_pipe[1], &byte, 1);
}

}  // namespace

absl::Status RunServe(const std::vector<std::string>& argv) {
  ModelFlags model_flags;
  ServerOptions options;
  std::string template_file;
  std::vector<Flag> flags = CommonFlags(model_flags, /*with_context=*/true);
  flags.erase(flags.begin() + 2);  // -p: prompts come with the requests
  flags.insert(flags.end(), {
      {"", "--host", "address to listen on (default 127.0.0.1; 0.0.0.0 for every interface)", &options.host},
      {"", "--port", "port (default 8080; 0 picks a free one)", &options.port},
      {"-np", "--parallel", "generation slots, each with its own KV cache (default 1)", &options.slots},
      {"", "--queue", "requests that may wait for a slot before 503 (default 64)", &options.max_waiting},
      {"", "--api-key", "require 'Authorization: Bearer KEY' on the API routes", &options.api_key},
      {"", "--chat-template", "Jinja2 chat template file (default: the model's, else role: content lines)",
       &template_file},
  });
  Args args("serve",
            "Serves the model over HTTP with the OpenAI API: /v1/completions, /v1/chat/completions,\n"
            "/v1/models, /tokenize, /detokenize, /health, /metrics.",
            flags);
  if (absl::StatusOr<bool> run = args.Parse(argv); !run.ok() || !*run) return run.status();

  absl::StatusOr<LoadedModel> model = LoadForInference(model_flags);
  if (!model.ok()) return model.status();
  options.context = model->transformer->context_length();
  model->transformer.reset();  // the slots have their own
  absl::StatusOr<ChatSetup> chat = LoadChatTemplate(template_file, *model->file, model_flags.model);
  if (!chat.ok()) return chat.status();
  options.model_name = model_flags.model.substr(model_flags.model.rfind('/') + 1);

  absl::StatusOr<std::unique_ptr<Server>> server =
      Server::Create(*model->file, *model->tokenizer, chat->chat_template, options);
  if (!server.ok()) return server.status();
  // SIGTERM and SIGINT may land on any thread (OpenBLAS starts its own); the handler only
  // writes a byte, and a thread of ours stops the server outside the handler's limits.
  if (pipe(g_signal_pipe) != 0) return absl::InternalError("cannot create the signal pipe");
  struct sigaction action = {};
  action.sa_handler = OnStopSignal;
  sigemptyset(&action.sa_mask);
  sigaction(SIGTERM, &action, nullptr);
  sigaction(SIGINT, &action, nullptr);
  std::thread([s = server->get()] {
    char byte;
    while (read(g_signal_pipe[0], &byte, 1) < 0 && errno == EINTR) {
    }
    std::cerr << "toyllm serve: stopping; open streams end now\n";
    s->Stop();
  }).detach();
  return (*server)->Run([&](int port) {
    std::cout << "toyllm serve: " << options.slots << " slot(s), context " << options.context
              << ", listening on http://" << options.host << ":" << port << "/" << std::endl;
  });
}

}  // namespace toyllm
