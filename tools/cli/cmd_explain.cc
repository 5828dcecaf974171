// toyllm explain: one attention computation step by step, as the article does it by hand:
// each token's x, its q, k and v, the scores q·k, their scaling by √d_k, the softmax
// weights and the weighted sum of values. Every number is the forward pass's own (taps).
#include <algorithm>
#include <iostream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/strip.h"
#include "tokenizer/token_text.h"
#include "tools/cli/commands.h"
#include "tools/cli/model_setup.h"
#include "tools/inspect/explain.h"
#include "tools/inspect/tap_recorder.h"

namespace toyllm {
namespace {

constexpr int kShownValues = 8;  // longer vectors are cut, with their length said

std::string Vector(const float* v, int n) {
  std::vector<std::string> parts;
  for (int i = 0; i < std::min(n, kShownValues); ++i) parts.push_back(absl::StrFormat("%.4g", v[i]));
  return absl::StrCat("[", absl::StrJoin(parts, ", "), n > kShownValues ? absl::StrCat(", … (", n, ")") : "", "]");
}

// Terminal columns of a UTF-8 text: CJK and other wide characters take two.
int Columns(const std::string& text) {
  int columns = 0;
  for (size_t i = 0; i < text.size();) {
    const unsigned char lead = text[i];
    const int bytes = lead < 0x80 ? 1 : lead < 0xE0 ? 2 : lead < 0xF0 ? 3 : 4;
    columns += bytes >= 3 && lead != 0xE2 ? 2 : 1;  // U+2000..U+2FFF (E2 ..) are narrow
    i += bytes;
  }
  return columns;
}

std::string Padded(const std::string& text, int width) {
  return text + std::string(std::max(0, width - Columns(text)), ' ');
}

std::string RightAligned(const std::string& text, int width) {
  return std::string(std::max(0, width - Columns(text)), ' ') + text;
}

// The query position: --position, else the last occurrence of --token, else the last.
absl::StatusOr<int> QueryPosition(const std::vector<int>& ids, const Tokenizer& tokenizer,
                                  const std::string& token, int position) {
  const int n = static_cast<int>(ids.size());
  if (position >= 0) {
    if (position >= n) {
      return absl::InvalidArgumentError(
          absl::StrCat("--position: ", position, " is outside the prompt's 0..", n - 1));
    }
    return position;
  }
  if (token.empty()) return n - 1;
  for (int p = n - 1; p >= 0; --p) {
    if (absl::StripLeadingAsciiWhitespace(TokenText(tokenizer, ids[p])) ==
        absl::StripLeadingAsciiWhitespace(token)) {
      return p;
    }
  }
  return absl::InvalidArgumentError(absl::StrCat("--token: '", token, "' is not a token of the prompt"));
}

}  // namespace

absl::Status RunExplain(const std::vector<std::string>& argv) {
  ModelFlags model_flags;
  int layer = 0, head = 0, position = -1;
  std::string token;
  std::vector<Flag> flags = CommonFlags(model_flags, /*with_context=*/true);
  flags.insert(flags.end(), {
      {"", "--layer", "the layer (default 0)", &layer},
      {"", "--head", "the query head (default 0)", &head},
      {"", "--token", "the query token's text (default: the last token)", &token},
      {"", "--position", "the query token's position, instead of --token", &position},
  });
  Args args("explain",
            "Prints one head's attention for one query token step by step, as the article does:\n"
            "x, q, k, v of every token, the scores q·k, ÷√d_k, softmax, and Σ weight·v.",
            flags);
  if (absl::StatusOr<bool> run = args.Parse(argv); !run.ok() || !*run) return run.status();
  absl::StatusOr<LoadedModel> model = LoadForInference(model_flags);
  if (!model.ok()) return model.status();
  const ModelConfig& c = model->file->config;
  absl::StatusOr<std::vector<int>> ids = EncodePrompt(*model, model_flags.prompt);
  if (!ids.ok()) return ids.status();
  const Tokenizer& tokenizer = *model->tokenizer;
  absl::StatusOr<int> query = QueryPosition(*ids, tokenizer, token, position);
  if (!query.ok()) return query.status();

  TapRecorder recorder(ExplainTaps(std::clamp(layer, 0, c.n_layers - 1)));
  model->transformer->set_observer(&recorder);
  absl::StatusOr<std::vector<float>> logits =
      Prefill(*model->transformer, *ids, 0, Transformer::Logits::kLast);
  if (!logits.ok()) return logits.status();
  absl::StatusOr<ExplainedAttention> e = ExplainAttention(c, model->file->weights, recorder, layer, head, *query);
  if (!e.ok()) return absl::InvalidArgumentError(absl::StrCat("--", e.status().message()));

  const int d = e->head_dim, n = e->query + 1;  // the keys the query can see
  const std::string query_text = TokenText(tokenizer, (*ids)[e->query]);
  std::string s = absl::StrFormat(
      "layer %d, head %d (key/value head %d), d_k = %d; query: \"%s\" at position %d\n\n", layer,
      head, e->kv_head, d, query_text, e->query);
  int step = 0;
  const auto row_label = [&](int p) { return Padded(TokenText(tokenizer, (*ids)[p]), 10); };
  absl::StrAppend(&s, ++step, ". Each token's input vector x (", c.dim, " dims)\n");
  for (int p = 0; p < n; ++p) absl::StrAppend(&s, "   ", row_label(p), " ", Vector(e->x[p].data(), c.dim), "\n");
  if (c.norm == NormKind::kRmsNorm) {
    absl::StrAppend(&s, "\n", ++step, ". RMSNorm: h = x / sqrt(mean(x²) + eps) · g\n");
    for (int p = 0; p < n; ++p) absl::StrAppend(&s, "   ", row_label(p), " ", Vector(e->h[p].data(), c.dim), "\n");
  }
  const char* input_name = c.norm == NormKind::kNone ? "x" : "h";
  const bool biased = !e->bias_q.empty();
  const auto bias = [biased](const char* b) { return biased ? absl::StrCat(" + ", b) : std::string(); };
  absl::StrAppend(&s, "\n", ++step, ". q = ", input_name, "·W_Q", bias("b_Q"), ", k = ", input_name, "·W_K",
                  bias("b_K"), ", v = ", input_name, "·W_V", bias("b_V"), " (this head's ", d, " dims)\n");
  if (biased) {
    absl::StrAppend(&s, "   ", Padded("bias", 10), " q ", Vector(e->bias_q.data(), d), "  k ",
                    Vector(e->bias_k.data(), d), "  v ", Vector(e->bias_v.data(), d), "\n");
  }
  for (int p = 0; p < n; ++p) {
    absl::StrAppend(&s, "   ", row_label(p), " q ", Vector(e->q_raw[p].data(), d), "  k ",
                    Vector(e->k_raw[p].data(), d), "  v ", Vector(e->v[p].data(), d), "\n");
  }
  if (!e->q_normed.empty()) {
    absl::StrAppend(&s, "\n", ++step, ". q/k norm: each head's q and k RMS-normalised before RoPE, "
                    "q = q / sqrt(mean(q²) + eps) · g_Q (and so k), so that q·k cannot grow without bound\n");
    for (int p = 0; p < n; ++p) {
      absl::StrAppend(&s, "   ", row_label(p), " q ", Vector(e->q_normed[p].data(), d), "  k ",
                      Vector(e->k_normed[p].data(), d), "\n");
    }
  }
  if (e->rotated) {
    absl::StrAppend(&s, "\n", ++step, ". RoPE: each pair of q's and k's coordinates turned by an angle that "
                    "grows with the position; pairs ",
                    c.rope_layout == RopeLayout::kInterleaved
                        ? "(0, 1), (2, 3), … (adjacent)"
                        : absl::StrCat("(0, ", d / 2, "), (1, ", d / 2 + 1, "), … (the two halves, NeoX)"),
                    c.rope_freq_factors.empty() ? "" : "; slow pairs' angles divided by the rope frequency factors",
                    "\n");
    for (int p = 0; p < n; ++p) {
      absl::StrAppend(&s, "   ", row_label(p), " q ", Vector(e->q[p].data(), d), "  k ",
                      Vector(e->k[p].data(), d), "\n");
    }
  }
  const float sqrt_dk = e->sqrt_dk;
  absl::StrAppend(&s, absl::StrFormat("\n%d. Scores of \"%s\": q·k, divided by √d_k = %.4g, then softmax\n",
                                      ++step, query_text, sqrt_dk));
  absl::StrAppend(&s, "   ", Padded("key", 10), " ", RightAligned("q·k", 10), " ",
                  RightAligned("÷√d_k", 10), " ", RightAligned("weight", 10), "\n");
  for (int p = 0; p < n; ++p) {
    const float scaled = e->scaled_scores[p];
    absl::StrAppend(&s, "   ", row_label(p),
                    absl::StrFormat(" %10.5g %10.5g %10.4f\n", scaled * sqrt_dk, scaled, e->weights[p]));
  }
  absl::StrAppend(&s, absl::StrFormat("\n%d. \"%s\"'s new vector: Σ weight · v = %s\n", ++step, query_text,
                                      Vector(e->out.data(), d)));
  std::cout << s;
  return absl::OkStatus();
}

}  // namespace toyllm
