#include "tools/server/server.h"

#include <atomic>
#include <chrono>
#include <ctime>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "httplib.h"
#include "nlohmann/json.hpp"
#include "tools/server/api_error.h"
#include "tools/server/completion.h"
#include "tools/server/completion_request.h"
#include "tools/inspect/npy_writer.h"
#include "tools/page/heatmap_script.h"
#include "tools/server/inspect.h"
#include "tools/server/live_page_html.h"
#include "tools/server/metrics.h"
#include "tools/server/slot_pool.h"

namespace toyllm {
namespace {

using nlohmann::json;

constexpr int kRetryAfterSeconds = 1;

std::string Dump(const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); }

class HttpServer : public Server {
 public:
  HttpServer(const ModelFile& model, const Tokenizer& tokenizer, const ChatTemplate& chat_template,
             const ServerOptions& options, std::vector<std::unique_ptr<Transformer>> slots)
      : model_(model), tokenizer_(tokenizer), template_(chat_template), options_(options),
        pool_(std::move(slots), options.max_waiting) {}

  absl::Status Run(const std::function<void(int port)>& on_listening) override;
  void Stop() override {
    stopping_ = true;
    pool_.Close();
    http_.stop();
  }

 private:
  void Routes();
  void Fail(httplib::Response& res, const absl::Status& status);
  bool Authorized(const httplib::Request& req) const;
  // The request's body as a JSON object, after the content-type check.
  absl::StatusOr<json> JsonBody(const httplib::Request& req);
  static absl::Status CheckContentType(const httplib::Request& req);
  void Complete(const httplib::Request& req, httplib::Response& res, Endpoint endpoint);
  enum class Inspection { kAttention, kLens, kExplain };
  // POST /v1/inspect/attention, /lens and /explain: {"prompt", "position", "top", "layer", "head"}.
  void Inspect(const httplib::Request& req, httplib::Response& res, Inspection what);
  json Choice(Endpoint endpoint, const CompletionDelta& delta, bool streaming) const;
  json Logprobs(Endpoint endpoint, const std::vector<TokenLogprob>& logprobs) const;
  absl::StatusOr<std::vector<int>> PromptIds(const CompletionRequest& request) const;

  const ModelFile& model_;
  const Tokenizer& tokenizer_;
  const ChatTemplate& template_;
  const ServerOptions options_;
  SlotPool pool_;
  Metrics metrics_;
  httplib::Server http_;
  std::atomic<bool> stopping_{false};
  std::atomic<uint64_t> next_id_{0};
};

void HttpServer::Fail(httplib::Response& res, const absl::Status& status) {
  const ApiError error = ToApiError(status);
  res.status = error.http_status;
  if (error.http_status == 503) res.set_header("Retry-After", std::to_string(kRetryAfterSeconds));
  res.set_content(error.body, "application/json");
}

bool HttpServer::Authorized(const httplib::Request& req) const {
  if (options_.api_key.empty()) return true;
  return req.get_header_value("Authorization") == "Bearer " + options_.api_key;
}

absl::Status HttpServer::CheckContentType(const httplib::Request& req) {
  if (!absl::StartsWithIgnoreCase(req.get_header_value("Content-Type"), "application/json")) {
    return absl::InvalidArgumentError("Content-Type must be application/json");
  }
  return absl::OkStatus();
}

absl::StatusOr<json> HttpServer::JsonBody(const httplib::Request& req) {
  if (absl::Status s = CheckContentType(req); !s.ok()) return s;
  return ParseJsonObject(req.body);
}

absl::StatusOr<std::vector<int>> HttpServer::PromptIds(const CompletionRequest& request) const {
  std::string text = request.prompt;
  if (!request.messages.is_null()) {
    const std::string bos = tokenizer_.bos_id() >= 0 ? tokenizer_.Piece(tokenizer_.bos_id()) : "";
    const std::string eos = tokenizer_.eos_id() >= 0 ? tokenizer_.Piece(tokenizer_.eos_id()) : "";
    absl::StatusOr<std::string> rendered = template_.Render(request.messages, true, bos, eos);
    if (!rendered.ok()) return absl::InvalidArgumentError(rendered.status().message());
    text = *rendered;
    // The BOS id is always put first; the template's own BOS text would be read as text.
    if (!bos.empty() && absl::StartsWith(text, bos)) text.erase(0, bos.size());
  }
  std::vector<int> ids = tokenizer_.Encode(text, /*add_bos=*/true);
  if (ids.empty()) return absl::InvalidArgumentError("the prompt is empty and the model has no BOS token");
  return ids;
}

json HttpServer::Logprobs(Endpoint endpoint, const std::vector<TokenLogprob>& logprobs) const {
  auto bytes = [](const std::string& s) {
    json out = json::array();
    for (unsigned char c : s) out.push_back(c);
    return out;
  };
  if (endpoint == Endpoint::kChat) {
    json content = json::array();
    for (const TokenLogprob& t : logprobs) {
      json top = json::array();
      for (const auto& [id, lp] : t.top) {
        const std::string text = TokenText(tokenizer_, id);
        top.push_back({{"token", text}, {"logprob", lp}, {"bytes", bytes(text)}});
      }
      const std::string text = TokenText(tokenizer_, t.id);
      content.push_back({{"token", text}, {"logprob", t.logprob}, {"bytes", bytes(text)}, {"top_logprobs", top}});
    }
    return {{"content", content}};
  }
  json tokens = json::array(), token_logprobs = json::array(), top_logprobs = json::array();
  for (const TokenLogprob& t : logprobs) {
    tokens.push_back(TokenText(tokenizer_, t.id));
    token_logprobs.push_back(t.logprob);
    json top = json::object();
    for (const auto& [id, lp] : t.top) top[TokenText(tokenizer_, id)] = lp;
    top_logprobs.push_back(top);
  }
  return {{"tokens", tokens}, {"token_logprobs", token_logprobs}, {"top_logprobs", top_logprobs}};
}

json HttpServer::Choice(Endpoint endpoint, const CompletionDelta& delta, bool streaming) const {
  json choice = {{"index", 0}, {"finish_reason", nullptr}, {"logprobs", nullptr}};
  if (endpoint == Endpoint::kChat) {
    choice[streaming ? "delta" : "message"] = {{"role", "assistant"}, {"content", delta.text}};
  } else {
    choice["text"] = delta.text;
  }
  if (!delta.logprobs.empty()) choice["logprobs"] = Logprobs(endpoint, delta.logprobs);
  return choice;
}

void HttpServer::Complete(const httplib::Request& req, httplib::Response& res, Endpoint endpoint) {
  if (absl::Status s = CheckContentType(req); !s.ok()) return Fail(res, s);
  absl::StatusOr<CompletionRequest> parsed = ParseCompletionRequest(req.body, endpoint);
  if (!parsed.ok()) return Fail(res, parsed.status());
  auto request = std::make_shared<CompletionRequest>(*std::move(parsed));
  if (!request->seed_given) {
    request->sampling.seed = std::chrono::steady_clock::now().time_since_epoch().count() | 1;
  }
  absl::StatusOr<std::vector<int>> prompt = PromptIds(*request);
  if (!prompt.ok()) return Fail(res, prompt.status());
  const int context = options_.context;
  if (absl::Status s = CheckFitsContext(static_cast<int>(prompt->size()), request->max_tokens, context); !s.ok()) {
    return Fail(res, s);
  }
  auto lease = std::make_shared<SlotPool::Lease>(pool_.Acquire());
  if (!*lease) {
    ++metrics_.rejected;
    return Fail(res, absl::UnavailableError(stopping_ ? "the server is shutting down"
                                                      : "every slot is busy and the queue is full; retry later"));
  }
  const std::string id = absl::StrCat(endpoint == Endpoint::kChat ? "chatcmpl-" : "cmpl-", next_id_++);
  json head = {{"id", id},
               {"object", endpoint == Endpoint::kChat ? "chat.completion" : "text_completion"},
               {"created", static_cast<int64_t>(std::time(nullptr))},
               {"model", options_.model_name}};
  auto ids = std::make_shared<std::vector<int>>(*std::move(prompt));
  // Runs the completion on the leased slot, handing each delta to on_delta.
  auto run = [this, lease, ids, request](const std::function<bool(const CompletionDelta&)>& on_delta) {
    const auto start = std::chrono::steady_clock::now();
    absl::StatusOr<CompletionResult> result = RunCompletion(
        lease->transformer(), pool_.turns(), tokenizer_, *ids, *request, on_delta, [this] { return !stopping_; });
    metrics_.generation_micros += std::chrono::duration_cast<std::chrono::microseconds>(
                                      std::chrono::steady_clock::now() - start).count();
    if (result.ok()) {
      ++metrics_.completions;
      metrics_.prompt_tokens += result->prompt_tokens;
      metrics_.generated_tokens += result->completion_tokens;
    }
    return result;
  };
  auto usage = [](const CompletionResult& r) {
    return json{{"prompt_tokens", r.prompt_tokens},
                {"completion_tokens", r.completion_tokens},
                {"total_tokens", r.prompt_tokens + r.completion_tokens}};
  };

  if (!request->stream) {
    absl::StatusOr<CompletionResult> result = run([](const CompletionDelta&) { return true; });
    if (!result.ok()) return Fail(res, result.status());
    json choice = Choice(endpoint, {result->text, result->logprobs}, false);
    choice["finish_reason"] = result->finish_reason;
    json answer = head;
    answer["choices"] = json::array({choice});
    answer["usage"] = usage(*result);
    res.set_content(Dump(answer), "application/json");
    return;
  }
  head["object"] = endpoint == Endpoint::kChat ? "chat.completion.chunk" : "text_completion";
  res.set_header("Cache-Control", "no-cache");
  res.set_chunked_content_provider(
      "text/event-stream", [this, run, head, endpoint, usage](size_t, httplib::DataSink& sink) {
        auto send = [&sink](const json& event) {
          const std::string line = "data: " + Dump(event) + "\n\n";
          return sink.write(line.data(), line.size());
        };
        absl::StatusOr<CompletionResult> result = run([&](const CompletionDelta& delta) {
          json chunk = head;
          chunk["choices"] = json::array({Choice(endpoint, delta, true)});
          return send(chunk);
        });
        json last = head;
        if (result.ok()) {
          json choice = Choice(endpoint, {}, true);
          if (endpoint == Endpoint::kChat) choice["delta"] = json::object();
          choice["finish_reason"] = result->finish_reason;
          last["choices"] = json::array({choice});
          last["usage"] = usage(*result);
        } else {
          last = json::parse(ToApiError(result.status()).body);
        }
        if (send(last)) {
          const std::string done = "data: [DONE]\n\n";
          sink.write(done.data(), done.size());
        }
        sink.done();
        return true;
      });
}

void HttpServer::Inspect(const httplib::Request& req, httplib::Response& res, Inspection what) {
  absl::StatusOr<json> body = JsonBody(req);
  if (!body.ok()) return Fail(res, body.status());
  auto prompt = body->find("prompt");
  if (prompt == body->end() || !prompt->is_string()) {
    return Fail(res, absl::InvalidArgumentError("'prompt' must be a string"));
  }
  const std::vector<int> ids = tokenizer_.Encode(prompt->get<std::string>(), /*add_bos=*/true);
  int64_t position = static_cast<int64_t>(ids.size()) - 1, top = 5, layer = 0, head = 0;
  for (auto [name, value] : {std::pair<const char*, int64_t*>{"position", &position}, {"top", &top},
                             {"layer", &layer}, {"head", &head}}) {
    auto it = body->find(name);
    if (it == body->end()) continue;
    if (!it->is_number_integer() || it->get<int64_t>() < 0 || it->get<int64_t>() > 1 << 20) {
      return Fail(res, absl::InvalidArgumentError(absl::StrCat("'", name, "' must be a small non-negative integer")));
    }
    *value = it->get<int64_t>();
  }
  // The attention maps come as attention.npy's bytes on request, else as JSON.
  bool npy = absl::StrContains(req.get_header_value("Accept"), "application/x-npy");
  if (auto format = body->find("format"); format != body->end()) {
    if (what != Inspection::kAttention || !format->is_string() || (*format != "json" && *format != "npy")) {
      return Fail(res, absl::InvalidArgumentError("'format' must be \"json\" or \"npy\", on /v1/inspect/attention"));
    }
    npy = *format == "npy";
  }
  SlotPool::Lease lease = pool_.Acquire();
  if (!lease) return Fail(res, absl::UnavailableError("every slot is busy and the queue is full; retry later"));
  if (what == Inspection::kAttention) {
    absl::StatusOr<AttentionMaps> maps = InspectAttention(lease.transformer(), pool_.turns(), tokenizer_, ids);
    if (!maps.ok()) return Fail(res, maps.status());
    if (npy) return res.set_content(NpyBytes(maps->weights.data(), maps->shape()), "application/x-npy");
    return res.set_content(Dump(AttentionJson(*maps)), "application/json");
  }
  absl::StatusOr<json> answer =
      what == Inspection::kLens
          ? InspectLens(lease.transformer(), pool_.turns(), model_, tokenizer_, ids, static_cast<int>(position),
                        static_cast<int>(top))
          : InspectExplain(lease.transformer(), pool_.turns(), tokenizer_, ids, static_cast<int>(layer),
                           static_cast<int>(head), static_cast<int>(position));
  if (!answer.ok()) return Fail(res, answer.status());
  res.set_content(Dump(*answer), "application/json");
}

void HttpServer::Routes() {
  http_.set_payload_max_length(options_.max_body_bytes);
  http_.set_pre_routing_handler([this](const httplib::Request& req, httplib::Response& res) {
    ++metrics_.requests;
    const bool open = req.path == "/" || req.path == "/health";
    if (open || Authorized(req)) return httplib::Server::HandlerResponse::Unhandled;
    Fail(res, absl::UnauthenticatedError("a valid API key is needed: Authorization: Bearer KEY"));
    return httplib::Server::HandlerResponse::Handled;
  });
  // httplib's own refusals (413 too large, 400 malformed, 404 no route) get an OpenAI body too.
  http_.set_error_handler([this](const httplib::Request& req, httplib::Response& res) {
    if (!res.body.empty()) return;
    const std::string message = res.status == 404   ? absl::StrCat("no route ", req.method, " ", req.path)
                                : res.status == 413 ? absl::StrCat("the body exceeds ", options_.max_body_bytes, " bytes")
                                                    : absl::StrCat("HTTP ", res.status);
    json error = {{"error", {{"message", message}, {"type", "invalid_request_error"}, {"code", res.status}}}};
    res.set_content(Dump(error), "application/json");
  });
  http_.set_logger([this](const httplib::Request&, const httplib::Response& res) {
    if (res.status >= 400) ++metrics_.errors;
  });
  http_.Post("/v1/completions", [this](const httplib::Request& req, httplib::Response& res) {
    Complete(req, res, Endpoint::kCompletions);
  });
  http_.Post("/v1/chat/completions", [this](const httplib::Request& req, httplib::Response& res) {
    Complete(req, res, Endpoint::kChat);
  });
  http_.Get("/", [page = WithHeatmapScript(kLivePageHtml)](const httplib::Request&, httplib::Response& res) {
    res.set_content(page, "text/html; charset=utf-8");
  });
  http_.Post("/v1/inspect/attention", [this](const httplib::Request& req, httplib::Response& res) {
    Inspect(req, res, Inspection::kAttention);
  });
  http_.Post("/v1/inspect/lens", [this](const httplib::Request& req, httplib::Response& res) {
    Inspect(req, res, Inspection::kLens);
  });
  http_.Post("/v1/inspect/explain", [this](const httplib::Request& req, httplib::Response& res) {
    Inspect(req, res, Inspection::kExplain);
  });
  http_.Get("/v1/models", [this](const httplib::Request&, httplib::Response& res) {
    json model = {{"id", options_.model_name}, {"object", "model"}, {"created", 0}, {"owned_by", "toyllm"},
                  {"meta", {{"n_ctx", options_.context}, {"n_vocab", model_.config.vocab_size},
                            {"n_layer", model_.config.n_layers}, {"n_head", model_.config.n_heads}}}};
    res.set_content(Dump({{"object", "list"}, {"data", json::array({model})}}), "application/json");
  });
  http_.Post("/tokenize", [this](const httplib::Request& req, httplib::Response& res) {
    absl::StatusOr<json> body = JsonBody(req);
    if (!body.ok()) return Fail(res, body.status());
    auto content = body->find("content");
    auto special = body->find("add_special");
    if (content == body->end() || !content->is_string()) {
      return Fail(res, absl::InvalidArgumentError("'content' must be a string"));
    }
    if (special != body->end() && !special->is_boolean()) {
      return Fail(res, absl::InvalidArgumentError("'add_special' must be true or false"));
    }
    const bool add_bos = special != body->end() && special->get<bool>();
    res.set_content(Dump({{"tokens", tokenizer_.Encode(content->get<std::string>(), add_bos)}}),
                    "application/json");
  });
  http_.Post("/detokenize", [this](const httplib::Request& req, httplib::Response& res) {
    absl::StatusOr<json> body = JsonBody(req);
    if (!body.ok()) return Fail(res, body.status());
    auto tokens = body->find("tokens");
    if (tokens == body->end() || !tokens->is_array()) {
      return Fail(res, absl::InvalidArgumentError("'tokens' must be an array of token ids"));
    }
    std::vector<int> ids;
    for (const json& t : *tokens) {
      if (!t.is_number_integer() || t.get<int64_t>() < 0 || t.get<int64_t>() >= tokenizer_.vocab_size()) {
        return Fail(res, absl::InvalidArgumentError(
                             absl::StrCat("'tokens' must hold ids in [0, ", tokenizer_.vocab_size(), ")")));
      }
      ids.push_back(t.get<int>());
    }
    res.set_content(Dump({{"content", tokenizer_.Decode(ids)}}), "application/json");
  });
  http_.Get("/health", [this](const httplib::Request&, httplib::Response& res) {
    res.set_content(Dump({{"status", stopping_ ? "stopping" : "ok"},
                          {"slots_idle", pool_.size() - pool_.busy()},
                          {"slots_processing", pool_.busy()}}),
                    "application/json");
  });
  http_.Get("/metrics", [this](const httplib::Request&, httplib::Response& res) {
    res.set_content(metrics_.Prometheus(pool_.size(), pool_.busy(), pool_.waiting()),
                    "text/plain; version=0.0.4");
  });
  http_.set_exception_handler([this](const httplib::Request&, httplib::Response& res, std::exception_ptr) {
    Fail(res, absl::InternalError("the request could not be handled"));
  });
}

absl::Status HttpServer::Run(const std::function<void(int port)>& on_listening) {
  Routes();
  // Every slot and every queued request holds a connection thread; a few more answer the
  // rest (health, metrics, 503s) while they wait.
  const int threads = options_.slots + options_.max_waiting + 4;
  http_.new_task_queue = [threads] { return new httplib::ThreadPool(threads); };
  // httplib's default sets SO_REUSEPORT, with which a second server binds a port that is
  // already listening and the kernel splits the connections between the two. SO_REUSEADDR
  // alone still allows a restart over connections in TIME_WAIT, but a busy port fails.
  http_.set_socket_options([](socket_t sock) {
    int yes = 1;
    setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
  });
  int port = options_.port;
  if (port == 0) {
    port = http_.bind_to_any_port(options_.host);
  } else if (!http_.bind_to_port(options_.host, port)) {
    port = -1;
  }
  if (port < 0) {
    return absl::UnavailableError(absl::StrCat("cannot listen on ", options_.host, ":", options_.port));
  }
  on_listening(port);
  if (!stopping_ && !http_.listen_after_bind() && !stopping_) {
    return absl::InternalError("the server stopped listening");
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::unique_ptr<Server>> Server::Create(const ModelFile& model, const Tokenizer& tokenizer,
                                                       const ChatTemplate& chat_template,
                                                       const ServerOptions& given) {
  ServerOptions options = given;
  if (options.slots < 1 || options.slots > 256) {
    return absl::InvalidArgumentError(absl::StrCat("-np: ", options.slots, " is outside 1..256"));
  }
  if (options.port < 0 || options.port > 65535) {
    return absl::InvalidArgumentError(absl::StrCat("--port: ", options.port, " is outside 0..65535"));
  }
  if (options.max_waiting < 0) return absl::InvalidArgumentError("--queue must be >= 0");
  if (options.context <= 0) options.context = model.config.context_length;
  std::vector<std::unique_ptr<Transformer>> slots;
  for (int i = 0; i < options.slots; ++i) {
    absl::StatusOr<std::unique_ptr<Transformer>> t = Transformer::Create(model.config, model.weights, options.context);
    if (!t.ok()) return t.status();
    slots.push_back(*std::move(t));
  }
  return std::unique_ptr<Server>(new HttpServer(model, tokenizer, chat_template, options, std::move(slots)));
}

}  // namespace toyllm
