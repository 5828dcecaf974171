// toyllm serve: an OpenAI-compatible HTTP server (cpp-httplib) over one model with -np
// slots. Routes: POST /v1/completions, /v1/chat/completions (JSON or server-sent events),
// GET /v1/models, POST /tokenize, /detokenize, GET /health, GET /metrics; and the live
// attention page, GET /, with the routes behind it, POST /v1/inspect/attention and /lens.
#ifndef TOYLLM_TOOLS_SERVER_SERVER_H_
#define TOYLLM_TOOLS_SERVER_SERVER_H_

#include <functional>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "models/model_file.h"
#include "tokenizer/tokenizer.h"
#include "tools/chat/chat_template.h"

namespace toyllm {

struct ServerOptions {
  std::string host = "127.0.0.1";
  int port = 8080;             // 0: any free port
  int slots = 1;               // -np
  int max_waiting = 64;        // requests queued for a slot before 503
  int context = 0;             // 0: the model's
  std::string api_key;         // non-empty: API routes need "Authorization: Bearer KEY"
  size_t max_body_bytes = 1 << 20;
  std::string model_name;      // what /v1/models lists
};

class Server {
 public:
  // The model, tokenizer and template must outlive the server.
  static absl::StatusOr<std::unique_ptr<Server>> Create(const ModelFile& model, const Tokenizer& tokenizer,
                                                        const ChatTemplate& chat_template,
                                                        const ServerOptions& options);
  virtual ~Server() = default;

  // Binds, calls on_listening with the port, and serves until Stop.
  virtual absl::Status Run(const std::function<void(int port)>& on_listening) = 0;
  // Ends every generation at its next token (streams end with [DONE]), answers waiting
  // requests 503 and makes Run return. Safe from any thread.
  virtual void Stop() = 0;
};

}  // namespace toyllm

#endif  // TOYLLM_TOOLS_SERVER_SERVER_H_
