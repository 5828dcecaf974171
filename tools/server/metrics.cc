#include "tools/server/metrics.h"

#include "absl/strings/str_cat.h"

namespace toyllm {
namespace {

void Add(std::string& out, const char* name, const char* type, const char* help, double value) {
  absl::StrAppend(&out, "# HELP ", name, " ", help, "\n# TYPE ", name, " ", type, "\n", name, " ",
                  value, "\n");
}

}  // namespace

std::string Metrics::Prometheus(int slots, int slots_busy, int waiting) const {
  std::string out;
  const double seconds = generation_micros.load() / 1e6;
  Add(out, "toyllm_requests_total", "counter", "HTTP requests answered", requests.load());
  Add(out, "toyllm_request_errors_total", "counter", "requests answered with 4xx or 5xx", errors.load());
  Add(out, "toyllm_requests_rejected_total", "counter", "requests turned away (503, queue full)",
      rejected.load());
  Add(out, "toyllm_completions_total", "counter", "completions run", completions.load());
  Add(out, "toyllm_prompt_tokens_total", "counter", "prompt tokens processed", prompt_tokens.load());
  Add(out, "toyllm_generated_tokens_total", "counter", "tokens generated", generated_tokens.load());
  Add(out, "toyllm_generation_seconds_total", "counter", "seconds spent in completions, summed over slots",
      seconds);
  Add(out, "toyllm_tokens_per_second", "gauge", "generated tokens per second of completion time",
      seconds > 0 ? generated_tokens.load() / seconds : 0.0);
  Add(out, "toyllm_slots", "gauge", "generation slots (-np)", slots);
  Add(out, "toyllm_slots_busy", "gauge", "slots generating now", slots_busy);
  Add(out, "toyllm_queue_length", "gauge", "requests waiting for a slot", waiting);
  return out;
}

}  // namespace toyllm
