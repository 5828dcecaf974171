// toyllm bench: prefill and decode speed as llama-bench measures them, next to the bound
// that the memory bus puts on decoding (every token reads every weight matrix once).
#include <sys/resource.h>

#include <algorithm>
#include <cmath>
#include <iostream>
#include <map>
#include <optional>
#include <thread>

#include <nlohmann/json.hpp>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "models/model_file.h"
#include "runtime/blas.h"
#include "runtime/cpu_features.h"
#include "runtime/kv_cache.h"
#include "runtime/ops.h"
#include "tools/cli/args.h"
#include "tools/cli/bandwidth.h"
#include "tools/cli/bench_test.h"
#include "tools/cli/commands.h"
#include "tools/cli/model_setup.h"
#include "tools/cli/sgemm_speed.h"
#include "tools/cli/weight_traffic.h"

namespace toyllm {
namespace {

constexpr int kMaxTokens = 1 << 16;
constexpr int kMaxThreads = 1024;
constexpr int kMaxRepetitions = 1000;

// A comma-separated list of whole numbers, each in min..max; errors name `flag`.
absl::StatusOr<std::vector<int>> ParseCounts(const std::string& flag, const std::string& text, int min,
                                             int max) {
  std::vector<int> counts;
  for (absl::string_view part : absl::StrSplit(text, ',')) {
    int n;
    if (!absl::SimpleAtoi(part, &n) || n < min || n > max) {
      return absl::InvalidArgumentError(
          absl::StrCat(flag, ": '", part, "' is not a whole number in ", min, "..", max));
    }
    counts.push_back(n);
  }
  return counts;
}

enum class Output { kMarkdown, kJson, kCsv };

absl::StatusOr<Output> ParseOutput(const std::string& text) {
  if (text == "md") return Output::kMarkdown;
  // An object per line, which llama-bench calls jsonl; its own name is taken as well.
  if (text == "json" || text == "jsonl") return Output::kJson;
  if (text == "csv") return Output::kCsv;
  return absl::InvalidArgumentError(absl::StrCat("--output: '", text, "' is not md, json, jsonl or csv"));
}

// The tests llama-bench runs for these flags, in its order: every prompt size, every
// generation length, then the prompt+generation pair, each at every depth. A 0 skips.
absl::StatusOr<std::vector<BenchTest>> PlanTests(const std::string& prompt_list, const std::string& gen_list,
                                                 const std::string& pg, const std::string& depth_list,
                                                 bool capture) {
  absl::StatusOr<std::vector<int>> prompts = ParseCounts("--n-prompt", prompt_list, 0, kMaxTokens);
  if (!prompts.ok()) return prompts.status();
  absl::StatusOr<std::vector<int>> gens = ParseCounts("--n-gen", gen_list, 0, kMaxTokens);
  if (!gens.ok()) return gens.status();
  absl::StatusOr<std::vector<int>> depths = ParseCounts("--n-depth", depth_list, 0, kMaxTokens);
  if (!depths.ok()) return depths.status();
  std::vector<int> pair;
  if (!pg.empty()) {
    absl::StatusOr<std::vector<int>> parsed = ParseCounts("-pg", pg, 1, kMaxTokens);
    if (!parsed.ok()) return parsed.status();
    if (parsed->size() != 2) return absl::InvalidArgumentError(absl::StrCat("-pg: '", pg, "' is not PP,TG"));
    pair = *parsed;
  }
  std::vector<BenchTest> tests;
  for (int d : *depths) {
    for (int n : *prompts) {
      if (n > 0) tests.push_back({n, 0, d});
    }
    for (int n : *gens) {
      if (n > 0) tests.push_back({0, n, d});
      if (n > 0 && capture) tests.push_back({0, n, d, /*capture=*/true});
    }
    if (!pair.empty()) tests.push_back({pair[0], pair[1], d});
  }
  if (tests.empty()) return absl::InvalidArgumentError("no tests: -p, -n and -pg are all 0 or empty");
  for (const BenchTest& t : tests) {
    if (t.depth + t.prompt + t.gen > kMaxTokens) {
      return absl::InvalidArgumentError(
          absl::StrCat(t.Name(), ": ", t.depth + t.prompt + t.gen, " positions, more than ", kMaxTokens));
    }
  }
  return tests;
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
  double bandwidth_gbs;  // over as many bytes as one decoded token reads: the bound's
  double dram_gbs;       // over 1 GiB, far more than any cache
  std::optional<double> bound_tok_s;  // decode only

  std::optional<double> bound_pct() const {
    if (!bound_tok_s) return std::nullopt;
    return speed.median / *bound_tok_s * 100;
  }
};

nlohmann::ordered_json ToJson(const std::string& model, const std::string& type, const Measurement& m) {
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
      {"dram_gbs", Round(m.dram_gbs, 2)},
  };
  if (m.bound_pct()) line["bound_pct"] = Round(*m.bound_pct(), 1);
  return line;
}

std::string Dump(const nlohmann::ordered_json& value) {
  return value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

constexpr const char* kCsvColumns[] = {"model", "type", "threads", "test", "tok_s_median", "tok_s_min",
                                       "tok_s_max", "peak_rss_mib", "bandwidth_gbs", "dram_gbs",
                                       "bound_pct"};

// CSV with the JSON lines' keys as columns; text fields quoted as JSON strings (a path may
// hold a comma), bound_pct empty where there is none.
void PrintCsvRow(const nlohmann::ordered_json& line) {
  std::string row;
  for (const char* column : kCsvColumns) {
    if (!row.empty()) row += ',';
    if (line.contains(column)) row += Dump(line[column]);
  }
  std::cout << row << std::endl;
}

void PrintHeader(Output output) {
  if (output == Output::kJson) return;
  if (output == Output::kCsv) {
    std::cout << absl::StrJoin(kCsvColumns, ",") << std::endl;
    return;
  }
  std::cout << "| model | type | threads | test | tok/s median | tok/s min–max | peak RSS MiB "
               "| bandwidth GB/s | DRAM GB/s | bound tok/s | % of bound |\n"
               "| --- | --- | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
            << std::endl;
}

void PrintRow(Output output, const std::string& model, const std::string& type, const Measurement& m) {
  if (output == Output::kJson) {
    std::cout << Dump(ToJson(model, type, m)) << std::endl;
    return;
  }
  if (output == Output::kCsv) {
    PrintCsvRow(ToJson(model, type, m));
    return;
  }
  std::cout << absl::StrFormat("| %s | %s | %d | %s | %.2f | %.2f–%.2f | %.1f | %.2f | %.2f | %s | %s |",
                               model, type, m.threads, m.test, m.speed.median, m.speed.min,
                               m.speed.max, m.peak_rss_mib, m.bandwidth_gbs, m.dram_gbs,
                               m.bound_tok_s ? absl::StrFormat("%.1f", *m.bound_tok_s) : "",
                               m.bound_pct() ? absl::StrFormat("%.1f", *m.bound_pct()) : "")
            << std::endl;
}

// Bytes a decode test reads per token: the weights, and the KV cache over the positions a
// token attends to on average (which at a depth of thousands outweighs a small model).
int64_t DecodeBytesPerToken(const ModelFile& model, int64_t weight_bytes, const BenchTest& test,
                            KvTypes kv_types) {
  const int mean_keys = test.depth + (test.gen + 1) / 2;
  return weight_bytes + KvCache::Bytes(model.config, mean_keys, kv_types);
}

}  // namespace

absl::Status RunBench(const std::vector<std::string>& argv) {
  std::string cache_type_k = "f32", cache_type_v = "f32";
  std::string model_path, prompt_list = "512", gen_list = "128", pg, depth_list = "0", output_name = "md",
                          thread_list = absl::StrCat(std::max(1u, std::thread::hardware_concurrency()));
  int repetitions = 5;
  bool json = false, capture = false;
  MemoryFlags memory;
  std::vector<Flag> flags = {{"-m", "--model", "model file", &model_path},
             {"-p", "--n-prompt", "prefill tests: prompt tokens, comma-separated; 0 skips (default 512)",
              &prompt_list},
             {"-n", "--n-gen", "decode tests: tokens generated one at a time, comma-separated; 0 skips "
                               "(default 128)", &gen_list},
             {"-pg", "--prompt-gen", "a prompt of PP tokens then TG generated, timed as one (ppPP+tgTG)", &pg},
             {"-d", "--n-depth", "tokens already in the KV cache before each test, comma-separated "
                                 "(default 0)", &depth_list},
             {"-t", "--threads", "thread counts, comma-separated (default: all cores)", &thread_list},
             {"-r", "--repetitions", "timed runs per test after one warm-up (default 5)", &repetitions},
             {"-o", "--output", "md (a Markdown table, the default), json or jsonl (an object per line) or csv",
              &output_name},
             {"", "--json", "the same as -o json", &json},
             {"", "--capture", "also time decode with the attention maps recorded "
                               "(generate --dump-attention), as tgN+attn", &capture}};
  for (Flag& flag : MemoryFlagList(memory)) flags.push_back(flag);
  for (Flag& flag : KvTypeFlags(cache_type_k, cache_type_v)) flags.push_back(flag);
  Args args("bench",
            "toyllm bench -m MODEL [-p 512] [-n 128] [-pg PP,TG] [-d 0] [-t 1,2] [-r 5] [-o md|json|jsonl|csv]\n"
            "Measures prefill (ppN) and decode (tgN) speed like llama-bench, with the memory read\n"
            "bandwidth and how close decode comes to the bound it sets. No tokenizer needed.",
            flags);
  if (absl::StatusOr<bool> run = args.Parse(argv); !run.ok() || !*run) return run.status();
  if (model_path.empty()) return absl::InvalidArgumentError("no model given (-m FILE)");
  absl::StatusOr<Output> output = ParseOutput(json ? "json" : output_name);
  if (!output.ok()) return output.status();
  absl::StatusOr<std::vector<BenchTest>> tests = PlanTests(prompt_list, gen_list, pg, depth_list, capture);
  if (!tests.ok()) return tests.status();
  absl::StatusOr<KvTypes> kv_types = ParseKvTypes(cache_type_k, cache_type_v);
  if (!kv_types.ok()) return kv_types.status();
  absl::StatusOr<std::vector<int>> threads = ParseCounts("--threads", thread_list, 1, kMaxThreads);
  if (!threads.ok()) return threads.status();
  if (repetitions < 1 || repetitions > kMaxRepetitions) {
    return absl::InvalidArgumentError(
        absl::StrCat("--repetitions: ", repetitions, " is outside 1..", kMaxRepetitions));
  }

  absl::StatusOr<std::unique_ptr<ModelFile>> model = LoadModel(model_path, memory.memory());
  if (!model.ok()) return model.status();
  const std::string type = LayerWeightType(**model);
  const int64_t weight_bytes = WeightBytesPerToken(**model);
  std::cerr << absl::StrFormat("%s: %s, %.1f MiB of weights read per decoded token; KV cache %s/%s\n",
                               model_path, type, weight_bytes / 1048576.0, cache_type_k, cache_type_v);
  std::cerr << absl::StrFormat("blas: %s; kernels %s; toyllm kernels %s; sgemm 1024²: %.0f GFLOP/s on 1 thread\n",
                               Blas().config, BlasKernels(), KernelsInUse(),
                               SgemmGflops(1024));

  PrintHeader(*output);
  for (int t : *threads) {
    absl::StatusOr<double> dram = MeasureReadBandwidth(t, kDramProbeBytes);
    if (!dram.ok()) return dram.status();
    SetThreadCount(t);
    std::map<int64_t, double> bandwidth_of;  // by bytes: most tests read the same
    for (const BenchTest& test : *tests) {
      // The bound of a decode test: its bytes per token over the bandwidth of reading that
      // many bytes, from cache when they fit in it, as decoding them does.
      // A decode test is probed just before and just after its runs, keeping the best
      // probe so far: on a shared host the bandwidth moves from minute to minute, and a
      // decode timed in a quiet minute against a probe of a busy one showed 111 % of its
      // bound (Zen 4 VM; on Zen 5, up to 110 % with the probe after the runs alone).
      const int64_t bytes = DecodeBytesPerToken(**model, weight_bytes, test, *kv_types);
      const auto probe = [&]() -> absl::Status {
        absl::StatusOr<double> bandwidth = MeasureReadBandwidth(t, bytes);
        if (!bandwidth.ok()) return bandwidth.status();
        bandwidth_of[bytes] = std::max(bandwidth_of[bytes], *bandwidth);
        return absl::OkStatus();
      };
      if (test.prompt == 0) {
        if (absl::Status s = probe(); !s.ok()) return s;
      }
      absl::StatusOr<Speed> speed = TimeTest(**model, test, repetitions, *kv_types);
      if (!speed.ok()) {
        return absl::Status(speed.status().code(), absl::StrCat(model_path, ": ", speed.status().message()));
      }
      if (!bandwidth_of.count(bytes) || test.prompt == 0) {
        if (absl::Status s = probe(); !s.ok()) return s;
      }
      const double bandwidth = bandwidth_of[bytes];
      Measurement m{t, test.Name(), *speed, PeakRssMiB(), bandwidth, *dram, std::nullopt};
      if (test.prompt == 0) m.bound_tok_s = bandwidth * 1e9 / bytes;
      PrintRow(*output, model_path, type, m);
    }
  }
  return absl::OkStatus();
}

}  // namespace toyllm
