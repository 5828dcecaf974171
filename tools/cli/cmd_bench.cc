// toyllm bench: prefill and decode speed as llama-bench measures them, next to the bound
// that the memory bus puts on decoding (every token reads every weight matrix once).
#include <sys/resource.h>

#include <cmath>
#include <iostream>
#include <optional>
#include <thread>

#include <nlohmann/json.hpp>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "models/model_file.h"
#include "runtime/ops.h"
#include "tools/cli/args.h"
#include "tools/cli/bandwidth.h"
#include "tools/cli/bench_test.h"
#include "tools/cli/commands.h"
#include "tools/cli/weight_traffic.h"

namespace toyllm {
namespace {

constexpr int kMaxTokens = 1 << 16;
constexpr int kMaxThreads = 1024;
constexpr int kMaxRepetitions = 1000;

// A comma-separated list of whole numbers, each in 1..max; errors name `flag`.
absl::StatusOr<std::vector<int>> ParseCounts(const std::string& flag, const std::string& text, int max) {
  std::vector<int> counts;
  for (absl::string_view part : absl::StrSplit(text, ',')) {
    int n;
    if (!absl::SimpleAtoi(part, &n) || n < 1 || n > max) {
      return absl::InvalidArgumentError(
          absl::StrCat(flag, ": '", part, "' is not a whole number in 1..", max));
    }
    counts.push_back(n);
  }
  return counts;
}

// Peak resident memory of this process so far.
double PeakRssMiB() {
  struct rusage usage;
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_maxrss / 1024.0;  // KiB on Linux
}

double Round(double x, int digits) {
  const double scale = std::pow(10.0, digits);
  return std::round(x * scale) / scale;
}

struct Measurement {
  int threads;
  std::string test;
  Speed speed;
  double peak_rss_mib;
  double bandwidth_gbs;
  std::optional<double> bound_tok_s;  // decode only

  std::optional<double> bound_pct() const {
    if (!bound_tok_s) return std::nullopt;
    return speed.median / *bound_tok_s * 100;
  }
};

void PrintJson(const std::string& model, const std::string& type, const Measurement& m) {
  nlohmann::ordered_json line = {
      {"model", model},
      {"type", type},
      {"threads", m.threads},
      {"test", m.test},
      {"tok_s_median", Round(m.speed.median, 2)},
      {"tok_s_min", Round(m.speed.min, 2)},
      {"tok_s_max", Round(m.speed.max, 2)},
      {"peak_rss_mib", Round(m.peak_rss_mib, 1)},
      {"bandwidth_gbs", Round(m.bandwidth_gbs, 2)},
  };
  if (m.bound_pct()) line["bound_pct"] = Round(*m.bound_pct(), 1);
  std::cout << line.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << std::endl;
}

void PrintTableHeader() {
  std::cout << "| model | type | threads | test | tok/s median | tok/s min–max | peak RSS MiB "
               "| bandwidth GB/s | bound tok/s | % of bound |\n"
               "| --- | --- | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: |"
            << std::endl;
}

void PrintTableRow(const std::string& model, const std::string& type, const Measurement& m) {
  std::cout << absl::StrFormat("| %s | %s | %d | %s | %.2f | %.2f–%.2f | %.1f | %.2f | %s | %s |",
                               model, type, m.threads, m.test, m.speed.median, m.speed.min,
                               m.speed.max, m.peak_rss_mib, m.bandwidth_gbs,
                               m.bound_tok_s ? absl::StrFormat("%.1f", *m.bound_tok_s) : "",
                               m.bound_pct() ? absl::StrFormat("%.1f", *m.bound_pct()) : "")
            << std::endl;
}

}  // namespace

absl::Status RunBench(const std::vector<std::string>& argv) {
  std::string model_path, prompt_list = "512", gen_list = "128",
                          thread_list = absl::StrCat(std::max(1u, std::thread::hardware_concurrency()));
  int repetitions = 5;
  bool json = false, capture = false;
  Args args("bench",
            "toyllm bench -m MODEL [-p 128,512] [-n 128] [-t 1,2] [-r 5] [--json] [--capture]\n"
            "Measures prefill (ppN) and decode (tgN) speed like llama-bench, with the memory read\n"
            "bandwidth and how close decode comes to the bound it sets. No tokenizer needed.",
            {{"-m", "--model", "model file", &model_path},
             {"-p", "--n-prompt", "prefill tests: tokens per batch, comma-separated (default 512)", &prompt_list},
             {"-n", "--n-gen", "decode tests: tokens generated one at a time, comma-separated (default 128)",
              &gen_list},
             {"-t", "--threads", "thread counts, comma-separated (default: all cores)", &thread_list},
             {"-r", "--repetitions", "timed runs per test after one warm-up (default 5)", &repetitions},
             {"", "--json", "one JSON object per line per measurement instead of a Markdown table", &json},
             {"", "--capture", "also time decode with the attention maps recorded "
                               "(generate --dump-attention), as tgN+attn", &capture}});
  if (absl::StatusOr<bool> run = args.Parse(argv); !run.ok() || !*run) return run.status();
  if (model_path.empty()) return absl::InvalidArgumentError("no model given (-m FILE)");
  absl::StatusOr<std::vector<int>> prompts = ParseCounts("--n-prompt", prompt_list, kMaxTokens);
  if (!prompts.ok()) return prompts.status();
  absl::StatusOr<std::vector<int>> gens = ParseCounts("--n-gen", gen_list, kMaxTokens);
  if (!gens.ok()) return gens.status();
  absl::StatusOr<std::vector<int>> threads = ParseCounts("--threads", thread_list, kMaxThreads);
  if (!threads.ok()) return threads.status();
  if (repetitions < 1 || repetitions > kMaxRepetitions) {
    return absl::InvalidArgumentError(
        absl::StrCat("--repetitions: ", repetitions, " is outside 1..", kMaxRepetitions));
  }

  std::vector<BenchTest> tests;
  for (int n : *prompts) tests.push_back({BenchTest::Kind::kPrefill, n});
  for (int n : *gens) {
    tests.push_back({BenchTest::Kind::kDecode, n});
    if (capture) tests.push_back({BenchTest::Kind::kDecode, n, /*capture=*/true});
  }

  absl::StatusOr<std::unique_ptr<ModelFile>> model = LoadModel(model_path);
  if (!model.ok()) return model.status();
  const std::string type = LayerWeightType(**model);
  const int64_t bytes_per_token = WeightBytesPerToken(**model);
  std::cerr << absl::StrFormat("%s: %s, %.1f MiB of weights read per decoded token\n", model_path,
                               type, bytes_per_token / 1048576.0);

  if (!json) PrintTableHeader();
  for (int t : *threads) {
    absl::StatusOr<double> bandwidth = MeasureReadBandwidth(t);
    if (!bandwidth.ok()) return bandwidth.status();
    SetThreadCount(t);
    for (const BenchTest& test : tests) {
      absl::StatusOr<Speed> speed = TimeTest(**model, test, repetitions);
      if (!speed.ok()) {
        return absl::Status(speed.status().code(), absl::StrCat(model_path, ": ", speed.status().message()));
      }
      Measurement m{t, test.Name(), *speed, PeakRssMiB(), *bandwidth, std::nullopt};
      if (test.kind == BenchTest::Kind::kDecode) m.bound_tok_s = *bandwidth * 1e9 / bytes_per_token;
      if (json) {
        PrintJson(model_path, type, m);
      } else {
        PrintTableRow(model_path, type, m);
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace toyllm
