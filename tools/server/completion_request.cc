#include "tools/server/completion_request.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "absl/strings/str_cat.h"

namespace toyllm {
namespace {

using nlohmann::json;

constexpr int kMaxStops = 4;  // OpenAI's limit
constexpr int kMaxTopLogprobs = 20;

absl::Status Wrong(const std::string& field, const std::string& what) {
  return absl::InvalidArgumentError(absl::StrCat("'", field, "' ", what));
}

// Reads body[field] into out when present and not null.
absl::Status ReadNumber(const json& body, const std::string& field, double lo, double hi, float* out) {
  auto it = body.find(field);
  if (it == body.end() || it->is_null()) return absl::OkStatus();
  if (!it->is_number()) return Wrong(field, "must be a number");
  const double v = it->get<double>();
  if (!std::isfinite(v) || v < lo || v > hi) {
    return Wrong(field, absl::StrCat("must be between ", lo, " and ", hi));
  }
  *out = static_cast<float>(v);
  return absl::OkStatus();
}

absl::Status ReadInt(const json& body, const std::string& field, int64_t lo, int64_t hi, int64_t* out,
                     bool* given = nullptr) {
  auto it = body.find(field);
  if (it == body.end() || it->is_null()) return absl::OkStatus();
  if (!it->is_number_integer()) return Wrong(field, "must be an integer");
  // JSON integers above int64's range arrive unsigned.
  const bool in_range = it->is_number_unsigned()
                            ? it->get<uint64_t>() <= static_cast<uint64_t>(hi) && it->get<int64_t>() >= lo
                            : it->get<int64_t>() >= lo && it->get<int64_t>() <= hi;
  if (!in_range) {
    return Wrong(field, absl::StrCat("must be between ", lo, " and ", hi));
  }
  *out = it->get<int64_t>();
  if (given != nullptr) *given = true;
  return absl::OkStatus();
}

absl::Status ReadBool(const json& body, const std::string& field, bool* out) {
  auto it = body.find(field);
  if (it == body.end() || it->is_null()) return absl::OkStatus();
  if (!it->is_boolean()) return Wrong(field, "must be true or false");
  *out = it->get<bool>();
  return absl::OkStatus();
}

absl::Status ReadStop(const json& body, std::vector<std::string>* stop) {
  auto it = body.find("stop");
  if (it == body.end() || it->is_null()) return absl::OkStatus();
  if (it->is_string()) {
    *stop = {it->get<std::string>()};
  } else if (it->is_array() && it->size() <= kMaxStops) {
    for (const json& s : *it) {
      if (!s.is_string()) return Wrong("stop", "must be a string or an array of strings");
      stop->push_back(s.get<std::string>());
    }
  } else {
    return Wrong("stop", absl::StrCat("must be a string or an array of at most ", kMaxStops, " strings"));
  }
  for (const std::string& s : *stop) {
    if (s.empty()) return Wrong("stop", "must not hold an empty string");
  }
  return absl::OkStatus();
}

absl::Status ReadMessages(const json& body, nlohmann::ordered_json* messages) {
  auto it = body.find("messages");
  if (it == body.end()) return Wrong("messages", "is required");
  if (!it->is_array() || it->empty()) return Wrong("messages", "must be a non-empty array");
  for (const json& m : *it) {
    if (!m.is_object()) return Wrong("messages", "must hold objects");
    auto role = m.find("role");
    if (role == m.end() || !role->is_string()) return Wrong("messages[].role", "must be a string");
    auto content = m.find("content");
    if (content != m.end() && !content->is_string() && !content->is_null()) {
      return Wrong("messages[].content", "must be a string");
    }
  }
  // The template sees the messages as sent, keys in their order, unknown fields and all.
  *messages = nlohmann::ordered_json::parse(it->dump());
  return absl::OkStatus();
}

// The deepest nesting of arrays and objects in JSON text, strings skipped. Printing a
// parsed value recurses once per level, so the body's nesting is bounded first.
int NestingDepth(std::string_view text) {
  int depth = 0, deepest = 0;
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') ++i;
      else if (c == '"') in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      deepest = std::max(deepest, ++depth);
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return deepest;
}

constexpr int kMaxNesting = 64;

}  // namespace

absl::StatusOr<json> ParseJsonObject(std::string_view body) {
  if (NestingDepth(body) > kMaxNesting) {
    return absl::InvalidArgumentError(absl::StrCat("the body nests deeper than ", kMaxNesting, " levels"));
  }
  // nlohmann's parser rejects malformed UTF-8 in strings as well as malformed JSON.
  json parsed = json::parse(body.begin(), body.end(), nullptr, /*allow_exceptions=*/false);
  if (parsed.is_discarded()) return absl::InvalidArgumentError("the body is not valid JSON (UTF-8)");
  if (!parsed.is_object()) return absl::InvalidArgumentError("the body must be a JSON object");
  return parsed;
}

absl::StatusOr<CompletionRequest> ParseCompletionRequest(std::string_view text, Endpoint endpoint) {
  absl::StatusOr<json> parsed = ParseJsonObject(text);
  if (!parsed.ok()) return parsed.status();
  const json& body = *parsed;
  CompletionRequest r;
  r.sampling.top_p = 1.0f;
  if (endpoint == Endpoint::kCompletions) {
    auto it = body.find("prompt");
    if (it == body.end() || !it->is_string()) return Wrong("prompt", "must be a string");
    r.prompt = it->get<std::string>();
  } else if (absl::Status s = ReadMessages(body, &r.messages); !s.ok()) {
    return s;
  }
  int64_t max_tokens = -1, top_k = 0, seed = 1, top_logprobs = 0;
  constexpr int64_t kIntMax = std::numeric_limits<int>::max();
  // max_completion_tokens is the chat API's newer name for the same limit.
  for (const char* name : {"max_tokens", "max_completion_tokens"}) {
    if (absl::Status s = ReadInt(body, name, 0, kIntMax, &max_tokens); !s.ok()) return s;
  }
  if (absl::Status s = ReadNumber(body, "temperature", 0, 2, &r.sampling.temperature); !s.ok()) return s;
  if (absl::Status s = ReadNumber(body, "top_p", 0, 1, &r.sampling.top_p); !s.ok()) return s;
  if (r.sampling.top_p <= 0) return Wrong("top_p", "must be above 0");
  if (absl::Status s = ReadInt(body, "top_k", 0, kIntMax, &top_k); !s.ok()) return s;
  if (absl::Status s = ReadInt(body, "seed", 1, std::numeric_limits<int64_t>::max(), &seed, &r.seed_given); !s.ok()) {
    return s;
  }
  if (absl::Status s = ReadBool(body, "stream", &r.stream); !s.ok()) return s;
  if (absl::Status s = ReadStop(body, &r.stop); !s.ok()) return s;
  if (endpoint == Endpoint::kChat) {
    if (absl::Status s = ReadBool(body, "logprobs", &r.logprobs); !s.ok()) return s;
    if (absl::Status s = ReadInt(body, "top_logprobs", 0, kMaxTopLogprobs, &top_logprobs); !s.ok()) return s;
  } else {
    // The legacy API's logprobs is the number of alternatives; 0 still reports the chosen one's.
    bool given = false;
    if (absl::Status s = ReadInt(body, "logprobs", 0, kMaxTopLogprobs, &top_logprobs, &given); !s.ok()) return s;
    r.logprobs = given;
  }
  if (auto n = body.find("n"); n != body.end() && !n->is_null() && *n != 1) return Wrong("n", "must be 1");
  r.max_tokens = static_cast<int>(max_tokens);
  r.sampling.top_k = static_cast<int>(top_k);
  r.sampling.seed = static_cast<uint64_t>(seed);
  r.top_logprobs = static_cast<int>(top_logprobs);
  return r;
}

}  // namespace toyllm
