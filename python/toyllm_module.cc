// toyllm for Python: the same library the command line runs, with numpy arrays in and out.
//
//   m = toyllm.Model()                        # or Model("models/coref.gguf")
//   ids = m.tokenize("这个动物并没有过马路，因为它太累了。它指的是")
//   logits, cache = m.run_with_cache(ids)     # cache["blk.2.weights"]: [heads, T, T]
//   logits = m.run(ids, ablate=[(2, 0)])      # as `toyllm logits --ablate 2.0`
//   text = m.generate("Once upon a time", n=50, temp=0)
//
// Arrays are copies the caller owns. Errors are Python exceptions carrying the library's
// message: ValueError for bad arguments, RuntimeError for the rest.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cmath>
#include <limits>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "tools/cli/ablation_flags.h"
#include "tools/cli/default_model.h"
#include "tools/cli/generate_text.h"
#include "tools/cli/model_setup.h"
#include "tools/inspect/tap_recorder.h"

namespace py = pybind11;

namespace toyllm {
namespace {

[[noreturn]] void Raise(const absl::Status& status) {
  const std::string message(status.message());
  if (absl::IsInvalidArgument(status) || absl::IsOutOfRange(status)) throw py::value_error(message);
  throw std::runtime_error(message);
}

template <typename T>
T Check(absl::StatusOr<T> result) {
  if (!result.ok()) Raise(result.status());
  return *std::move(result);
}

py::array_t<float> Array(const std::vector<float>& values, std::vector<py::ssize_t> shape) {
  py::array_t<float> array(shape);
  std::copy(values.begin(), values.end(), array.mutable_data());
  return array;
}

class Model {
 public:
  Model(std::optional<std::string> path, std::optional<std::string> tokenizer, int threads, int ctx_size) {
    ModelFlags flags;
    flags.model = path.value_or(DefaultModelPath());
    flags.tokenizer = tokenizer.value_or("");
    flags.threads = threads;
    flags.ctx_size = ctx_size;
    model_ = Check(LoadForInference(flags));
  }

  std::vector<int> Tokenize(const std::string& text) { return Check(EncodePrompt(model_, text)); }

  std::string Detokenize(const std::vector<int>& ids) {
    std::string text;
    for (int id : CheckedIds(ids)) text += model_.tokenizer->Piece(id);
    return text;
  }

  py::array_t<float> Run(const std::vector<int>& ids, const std::vector<std::pair<int, int>>& ablate,
                         const std::string& ablate_mode, const std::optional<std::string>& ablate_ref) {
    return Forward(ids, ablate, ablate_mode, ablate_ref, nullptr);
  }

  std::pair<py::array_t<float>, py::dict> RunWithCache(const std::vector<int>& ids,
                                                       const std::vector<std::pair<int, int>>& ablate,
                                                       const std::string& ablate_mode,
                                                       const std::optional<std::string>& ablate_ref) {
    const ModelConfig& c = model_.file->config;
    std::set<std::pair<Tap, int>> taps = {{Tap::kEmbed, -1}, {Tap::kFinalNorm, -1}};
    for (int l = 0; l < c.n_layers; ++l) {
      for (int t = static_cast<int>(Tap::kAttnNorm); t <= static_cast<int>(Tap::kResidPost); ++t) {
        taps.insert({static_cast<Tap>(t), l});
      }
    }
    TapRecorder recorder(taps);
    py::array_t<float> logits = Forward(ids, ablate, ablate_mode, ablate_ref, &recorder);
    const py::ssize_t n = static_cast<py::ssize_t>(ids.size());
    py::dict cache;
    for (const auto& [tap, layer] : taps) {
      if (tap == Tap::kScores || tap == Tap::kWeights) {
        // [heads, T, T]; the keys a query may not see: 0 weight, -inf score.
        const float hidden = tap == Tap::kWeights ? 0.0f : -std::numeric_limits<float>::infinity();
        std::vector<float> values(static_cast<size_t>(c.n_heads) * n * n, hidden);
        for (int h = 0; h < c.n_heads; ++h) {
          const std::vector<std::vector<float>>& rows = *recorder.Rows(tap, layer, h);
          for (py::ssize_t q = 0; q < n; ++q) {
            std::copy(rows[q].begin(), rows[q].end(), &values[(static_cast<size_t>(h) * n + q) * n]);
          }
        }
        cache[py::str(TapName(tap, layer))] = Array(values, {c.n_heads, n, n});
        continue;
      }
      const std::vector<std::vector<float>>* rows = recorder.Rows(tap, layer);
      if (rows == nullptr) continue;  // no feed-forward layer
      std::vector<float> values;
      for (const std::vector<float>& row : *rows) values.insert(values.end(), row.begin(), row.end());
      cache[py::str(TapName(tap, layer))] = Array(values, {n, static_cast<py::ssize_t>(rows->front().size())});
    }
    return {logits, cache};
  }

  std::string Generate(const std::string& text, int n, float temp, float top_p, int top_k, uint64_t seed,
                       const std::vector<std::pair<int, int>>& ablate, const std::string& ablate_mode,
                       const std::optional<std::string>& ablate_ref) {
    if (n < -1) throw py::value_error(absl::StrCat("n: ", n, " must be >= -1"));
    const std::vector<int> prompt = Tokenize(text);
    std::unique_ptr<HeadAblation> ablation = Ablation(prompt, ablate, ablate_mode, ablate_ref);
    SamplerOptions sampling;
    sampling.temperature = temp;
    sampling.top_p = top_p;
    sampling.top_k = top_k;
    sampling.seed = seed;
    model_.transformer->set_intervention(ablation.get());
    absl::StatusOr<std::string> out = GenerateText(model_, prompt, n, sampling);
    model_.transformer->set_intervention(nullptr);
    return Check(std::move(out));
  }

  py::dict Config() const {
    const ModelConfig& c = model_.file->config;
    py::dict d;
    d["dim"] = c.dim;
    d["hidden_dim"] = c.hidden_dim;
    d["n_layers"] = c.n_layers;
    d["n_heads"] = c.n_heads;
    d["n_kv_heads"] = c.n_kv_heads;
    d["head_dim"] = c.head_dim;
    d["vocab_size"] = c.vocab_size;
    d["context_length"] = c.context_length;
    return d;
  }

 private:
  std::vector<int> CheckedIds(const std::vector<int>& ids) const {
    if (ids.empty()) throw py::value_error("ids is empty (tokenize(\"\") gives BOS alone)");
    const int vocab = model_.file->config.vocab_size;
    for (int id : ids) {
      if (id < 0 || id >= vocab) throw py::value_error(absl::StrCat("token id ", id, " is outside the vocabulary 0..", vocab - 1));
    }
    if (static_cast<int>(ids.size()) > model_.transformer->context_length()) {
      throw py::value_error(absl::StrCat(ids.size(), " ids are more than the context of ",
                                         model_.transformer->context_length()));
    }
    return ids;
  }

  // The same ablation as --ablate L.H,... --ablate-mode --ablate-ref on the command line.
  std::unique_ptr<HeadAblation> Ablation(const std::vector<int>& ids, const std::vector<std::pair<int, int>>& heads,
                                         const std::string& mode, const std::optional<std::string>& reference) {
    AblationFlags flags;
    std::vector<std::string> names;
    for (const auto& [layer, head] : heads) names.push_back(absl::StrCat(layer, ".", head));
    flags.heads = absl::StrJoin(names, ",");
    flags.mode = mode;
    flags.reference = reference.value_or("");
    if (reference && reference->empty()) throw py::value_error("ablate_ref is empty");
    return Check(MakeAblation(flags, model_, ids, "ablate"));
  }

  py::array_t<float> Forward(const std::vector<int>& ids, const std::vector<std::pair<int, int>>& ablate,
                             const std::string& ablate_mode, const std::optional<std::string>& ablate_ref,
                             TapObserver* observer) {
    CheckedIds(ids);
    std::unique_ptr<HeadAblation> ablation = Ablation(ids, ablate, ablate_mode, ablate_ref);
    Transformer& t = *model_.transformer;
    t.set_intervention(ablation.get());
    t.set_observer(observer);
    absl::StatusOr<std::vector<float>> logits = Prefill(t, ids, 0, Transformer::Logits::kAll);
    t.set_observer(nullptr);
    t.set_intervention(nullptr);
    return Array(Check(std::move(logits)), {static_cast<py::ssize_t>(ids.size()), model_.file->config.vocab_size});
  }

  LoadedModel model_;
};

}  // namespace
}  // namespace toyllm

PYBIND11_MODULE(toyllm, m) {
  using toyllm::Model;
  namespace py = pybind11;
  m.doc() = "toyllm: a small CPU runtime for decoder-only transformers, with taps and interventions";
  py::class_<Model>(m, "Model")
      .def(py::init<std::optional<std::string>, std::optional<std::string>, int, int>(), py::arg("path") = py::none(),
           py::arg("tokenizer") = py::none(), py::arg("threads") = 0, py::arg("ctx_size") = 0,
           "Loads a model (default: the project's own, models/coref.gguf) and its tokenizer.")
      .def_property_readonly("config", &Model::Config, "the model's dimensions")
      .def("tokenize", &Model::Tokenize, py::arg("text"), "token ids of text, BOS first")
      .def("detokenize", &Model::Detokenize, py::arg("ids"), "the vocabulary pieces of ids, joined")
      .def("run", &Model::Run, py::arg("ids"), py::arg("ablate") = std::vector<std::pair<int, int>>{},
           py::arg("ablate_mode") = "zero", py::arg("ablate_ref") = py::none(),
           "logits [len(ids), vocab] of every position; ablate: [(layer, head), ...] set to zero or "
           "(ablate_mode='mean') to their mean over ablate_ref (default: ids)")
      .def("run_with_cache", &Model::RunWithCache, py::arg("ids"),
           py::arg("ablate") = std::vector<std::pair<int, int>>{}, py::arg("ablate_mode") = "zero",
           py::arg("ablate_ref") = py::none(),
           "(logits, cache): cache maps tap names ('embed', 'blk.L.q', 'blk.L.weights', ...) to arrays, "
           "[T, width] or, for scores and weights, [heads, T, T]")
      .def("generate", &Model::Generate, py::arg("text"), py::arg("n") = 256, py::arg("temp") = 1.0f,
           py::arg("top_p") = 0.9f, py::arg("top_k") = 0, py::arg("seed") = 1,
           py::arg("ablate") = std::vector<std::pair<int, int>>{}, py::arg("ablate_mode") = "zero",
           py::arg("ablate_ref") = py::none(), "text followed by up to n generated tokens");
}
