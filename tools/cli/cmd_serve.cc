// toyllm serve: the OpenAI-compatible server (tools/server/) over a model, until SIGTERM
// or Ctrl-C, which end every stream cleanly and exit 0.
#include <pthread.h>
#include <signal.h>

#include <iostream>
#include <thread>

#include "absl/strings/str_cat.h"
#include "tools/cli/chat_setup.h"
#include "tools/cli/commands.h"
#include "tools/cli/model_setup.h"
#include "tools/server/server.h"

namespace toyllm {

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

  // SIGTERM and SIGINT are taken by a thread of their own (every thread started after this
  // inherits the mask), which stops the server from outside the signal handler's limits.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  absl::StatusOr<std::unique_ptr<Server>> server =
      Server::Create(*model->file, *model->tokenizer, chat->chat_template, options);
  if (!server.ok()) return server.status();
  std::thread([signals, s = server->get()] {
    int received = 0;
    sigwait(&signals, &received);
    std::cerr << "toyllm serve: signal " << received << ", finishing streams and stopping\n";
    s->Stop();
  }).detach();
  return (*server)->Run([&](int port) {
    std::cout << "toyllm serve: " << options.slots << " slot(s), context " << options.context
              << ", listening on http://" << options.host << ":" << port << "/" << std::endl;
  });
}

}  // namespace toyllm
