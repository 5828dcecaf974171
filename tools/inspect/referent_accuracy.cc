#include "tools/inspect/referent_accuracy.h"

#include <algorithm>
#include <fstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "runtime/generate.h"

namespace toyllm {

absl::StatusOr<std::vector<ReferentSentence>> ReadReferentTsv(const std::string& path) {
  std::ifstream in(path);
  if (!in) return absl::NotFoundError(absl::StrCat(path, ": cannot open"));
  std::vector<ReferentSentence> sentences;
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    if (line.empty() || line[0] == '#') continue;
    const std::vector<std::string> f = absl::StrSplit(line, '\t');
    if (f.size() != 4 || f[1].empty() || f[2].empty()) {
      return absl::InvalidArgumentError(absl::StrCat(path, ":", number,
                                                     ": expected kind, prompt, referent and other noun, tab-separated"));
    }
    sentences.push_back({f[0], f[1], f[2], f[3]});
  }
  if (sentences.empty()) return absl::InvalidArgumentError(absl::StrCat(path, ": no sentences"));
  return sentences;
}

absl::StatusOr<ReferentAccuracy> GreedyReferentAccuracy(Transformer& transformer, const Tokenizer& tokenizer,
                                                        const std::vector<ReferentSentence>& sentences,
                                                        const InterventionFor& intervention) {
  ReferentAccuracy accuracy;
  for (const ReferentSentence& s : sentences) {
    const std::vector<int> ids = tokenizer.Encode(s.prompt, /*add_bos=*/true);
    if (static_cast<int>(ids.size()) > transformer.context_length()) {
      return absl::OutOfRangeError(absl::StrCat("'", s.prompt, "' is ", ids.size(),
                                                " tokens long, more than the context of ", transformer.context_length()));
    }
    std::unique_ptr<Intervention> edit;
    if (intervention) {
      absl::StatusOr<std::unique_ptr<Intervention>> made = intervention(ids);
      if (!made.ok()) return made.status();
      edit = *std::move(made);
    }
    transformer.set_intervention(edit.get());
    absl::StatusOr<std::vector<float>> logits = Prefill(transformer, ids, 0, Transformer::Logits::kLast);
    transformer.set_intervention(nullptr);
    if (!logits.ok()) return logits.status();
    const int next = static_cast<int>(std::max_element(logits->begin(), logits->end()) - logits->begin());
    const bool right = tokenizer.Piece(next) == s.referent;
    for (Score* score : {&accuracy.all, &accuracy.by_kind[s.kind]}) {
      score->right += right;
      ++score->total;
    }
  }
  return accuracy;
}

}  // namespace toyllm
