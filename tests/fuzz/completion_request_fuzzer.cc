// The server's request reading (tools/server/completion_request.h): any bytes as the body of
// /v1/completions and of /v1/chat/completions. Whatever is accepted must be in range.
#include <cstdlib>
#include <string_view>

#include "tests/fuzz/fuzz_targets.h"
#include "tools/server/completion_request.h"

namespace toyllm::fuzz {

void CompletionRequestInput(const uint8_t* data, size_t size) {
  const std::string_view body(reinterpret_cast<const char*>(data), size);
  for (Endpoint endpoint : {Endpoint::kCompletions, Endpoint::kChat}) {
    absl::StatusOr<CompletionRequest> r = ParseCompletionRequest(body, endpoint);
    if (!r.ok()) continue;
    const bool valid = r->max_tokens >= -1 && r->sampling.temperature >= 0 && r->sampling.temperature <= 2 &&
                       r->sampling.top_p > 0 && r->sampling.top_p <= 1 && r->sampling.top_k >= 0 &&
                       r->sampling.seed != 0 && r->top_logprobs >= 0 && r->top_logprobs <= 20 &&
                       (endpoint == Endpoint::kCompletions || r->messages.is_array());
    if (!valid || !ValidateSamplerOptions(r->sampling).ok()) std::abort();
    (void)r->messages.dump();
  }
}

}  // namespace toyllm::fuzz
