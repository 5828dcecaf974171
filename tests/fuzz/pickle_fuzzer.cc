// The restricted unpickler (models/pickle_reader.h) on raw bytes: a checkpoint's data.pkl
// without the ZIP around it, whose sizes would otherwise stop most mutations. The input is
// copied to instrumented memory of exactly its size, so ASan sees any read past its end.
#include <set>
#include <vector>

#include "models/pickle_reader.h"
#include "tests/fuzz/fuzz_targets.h"

namespace toyllm::fuzz {

void PickleInput(const uint8_t* data, size_t size) {
  const std::vector<uint8_t> bytes(data, data + size);
  absl::StatusOr<Pickle> pickle = Pickle::Parse(bytes);
  if (!pickle.ok()) return;
  // Every object reachable from the root, as a reader of the state dict may visit it.
  // Containers can hold themselves through the memo, so each id is visited once.
  std::set<int> seen;
  std::vector<int> pending(pickle->root().items);
  (void)pickle->Find(pickle->root(), "model");
  while (!pending.empty()) {
    const int id = pending.back();
    pending.pop_back();
    if (!seen.insert(id).second) continue;
    const PickleObject& o = pickle->at(id);
    if (o.kind == PickleKind::kTensor) (void)pickle->tensor(o).storage.key.size();
    if (o.kind == PickleKind::kDict) (void)pickle->Find(o, "model_args");
    pending.insert(pending.end(), o.items.begin(), o.items.end());
  }
}

}  // namespace toyllm::fuzz
