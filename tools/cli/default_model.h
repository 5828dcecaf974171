// The model `generate`, `attention`, `explain`, `lens` and `logits` use without -m: the
// project's own coreference model, models/coref.gguf (tools/coref/, scripts/make-coref-model.sh).
#ifndef TOYLLM_TOOLS_CLI_DEFAULT_MODEL_H_
#define TOYLLM_TOOLS_CLI_DEFAULT_MODEL_H_

#include <string>

namespace toyllm {

// The installed copy beside an installed binary (PREFIX/share/toyllm/coref.gguf for
// PREFIX/bin/toyllm), else the source tree's models/coref.gguf, which a binary in the
// build tree uses.
std::string DefaultModelPath();

}  // namespace toyllm

#endif  // TOYLLM_TOOLS_CLI_DEFAULT_MODEL_H_
