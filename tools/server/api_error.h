// Errors as the OpenAI API shapes them: {"error": {"message", "type", "code"}} with the
// HTTP status that an absl::Status code stands for.
#ifndef TOYLLM_TOOLS_SERVER_API_ERROR_H_
#define TOYLLM_TOOLS_SERVER_API_ERROR_H_

#include <string>

#include "absl/status/status.h"

namespace toyllm {

struct ApiError {
  int http_status;
  std::string body;  // the JSON text
};

// InvalidArgument and OutOfRange → 400, Unauthenticated → 401, NotFound → 404,
// ResourceExhausted → 503 (the queue is full), Unavailable → 503, others → 500.
ApiError ToApiError(const absl::Status& status);

}  // namespace toyllm

#endif  // TOYLLM_TOOLS_SERVER_API_ERROR_H_
