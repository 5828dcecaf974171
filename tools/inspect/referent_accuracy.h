// How often the model names the right referent of 它: the greedy next token after
// "…它指的是" on sentences such as models/coref_heldout.tsv, with or without an intervention.
#ifndef TOYLLM_TOOLS_INSPECT_REFERENT_ACCURACY_H_
#define TOYLLM_TOOLS_INSPECT_REFERENT_ACCURACY_H_

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "runtime/intervention.h"
#include "runtime/transformer.h"
#include "tokenizer/tokenizer.h"

namespace toyllm {

struct ReferentSentence {
  std::string kind;      // e.g. "animal" or "obstacle": what 它 refers to
  std::string prompt;    // ends where the referent comes next
  std::string referent;  // the piece the greedy continuation should be
  std::string other;     // the other noun
};

// Lines "kind<TAB>prompt<TAB>referent<TAB>other"; '#' lines are comments. Errors name the
// file and line.
absl::StatusOr<std::vector<ReferentSentence>> ReadReferentTsv(const std::string& path);

struct Score {
  int right = 0;
  int total = 0;
  double rate() const { return total == 0 ? 0.0 : static_cast<double>(right) / total; }
};

struct ReferentAccuracy {
  Score all;
  std::map<std::string, Score> by_kind;
};

// Builds the intervention for one prompt's ids (BOS first); nullptr for none.
using InterventionFor = std::function<absl::StatusOr<std::unique_ptr<Intervention>>(const std::vector<int>&)>;

// Runs every sentence (BOS first) and counts greedy next tokens that are the referent.
absl::StatusOr<ReferentAccuracy> GreedyReferentAccuracy(Transformer& transformer, const Tokenizer& tokenizer,
                                                        const std::vector<ReferentSentence>& sentences,
                                                        const InterventionFor& intervention = nullptr);

}  // namespace toyllm

#endif  // TOYLLM_TOOLS_INSPECT_REFERENT_ACCURACY_H_
