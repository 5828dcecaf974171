#include "tools/server/api_error.h"

#include "nlohmann/json.hpp"

namespace toyllm {

ApiError ToApiError(const absl::Status& status) {
  int http = 500;
  std::string type = "server_error";
  switch (status.code()) {
    case absl::StatusCode::kInvalidArgument:
    case absl::StatusCode::kOutOfRange:
      http = 400;
      type = "invalid_request_error";
      break;
    case absl::StatusCode::kUnauthenticated:
      http = 401;
      type = "authentication_error";
      break;
    case absl::StatusCode::kNotFound:
      http = 404;
      type = "not_found_error";
      break;
    case absl::StatusCode::kResourceExhausted:
    case absl::StatusCode::kUnavailable:
      http = 503;
      type = "unavailable_error";
      break;
    default:
      break;
  }
  nlohmann::json error = {{"error",
                           {{"message", std::string(status.message())},
                            {"type", type},
                            {"code", status.code() == absl::StatusCode::kOutOfRange
                                         ? nlohmann::json("context_length_exceeded")
                                         : nlohmann::json(nullptr)}}}};
  return {http, error.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)};
}

}  // namespace toyllm
