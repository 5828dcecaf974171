// The body of POST /v1/completions and /v1/chat/completions, read and checked field by
// field: a wrong type or an out-of-range number is an InvalidArgument naming the field, and
// fields the server does not know are ignored, as OpenAI's own server does.
#ifndef TOYLLM_TOOLS_SERVER_COMPLETION_REQUEST_H_
#define TOYLLM_TOOLS_SERVER_COMPLETION_REQUEST_H_

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"
#include "runtime/sampler.h"

namespace toyllm {

enum class Endpoint { kCompletions, kChat };

struct CompletionRequest {
  std::string prompt;              // /v1/completions
  nlohmann::ordered_json messages;  // /v1/chat/completions: [{"role", "content"}, ...]
  int max_tokens = -1;             // -1: until the context ends
  SamplerOptions sampling;
  bool seed_given = false;
  bool stream = false;
  std::vector<std::string> stop;   // strings that end the text; not part of it
  bool logprobs = false;
  int top_logprobs = 0;            // alternatives reported per token
};

// Parses and checks a request body (JSON text, any bytes). Sampling defaults are OpenAI's
// (temperature 1, top_p 1); the seed is left at 1 unless given.
absl::StatusOr<CompletionRequest> ParseCompletionRequest(std::string_view body, Endpoint endpoint);

// A JSON object parsed from any bytes, or InvalidArgument saying why not.
absl::StatusOr<nlohmann::json> ParseJsonObject(std::string_view body);

}  // namespace toyllm

#endif  // TOYLLM_TOOLS_SERVER_COMPLETION_REQUEST_H_
