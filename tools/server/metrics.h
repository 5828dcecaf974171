// What GET /metrics reports, in Prometheus's text format: counters the request handlers
// bump, plus the pool's queue and busy slots read at the moment of asking.
#ifndef TOYLLM_TOOLS_SERVER_METRICS_H_
#define TOYLLM_TOOLS_SERVER_METRICS_H_

#include <atomic>
#include <cstdint>
#include <string>

namespace toyllm {

struct Metrics {
  std::atomic<uint64_t> requests{0};           // every HTTP request answered
  std::atomic<uint64_t> errors{0};             // answered 4xx or 5xx
  std::atomic<uint64_t> rejected{0};           // 503: the queue was full
  std::atomic<uint64_t> completions{0};        // completions run to their end
  std::atomic<uint64_t> prompt_tokens{0};
  std::atomic<uint64_t> generated_tokens{0};
  std::atomic<uint64_t> generation_micros{0};  // wall time spent in completions, summed

  std::string Prometheus(int slots, int slots_busy, int waiting) const;
};

}  // namespace toyllm

#endif  // TOYLLM_TOOLS_SERVER_METRICS_H_
