// The files `toyllm patch` writes into a folder: patch.npy [layers, heads] (each head's
// restored fraction), patch_residual.npy [layers, positions], patch_mlp.npy [layers],
// patch.json (the same with the tokens and the metric), index.html (the maps as tables with
// token labels and values on hover) and heads.png, residual.png, mlp.png.
#ifndef TOYLLM_TOOLS_PAGE_PATCH_OUTPUT_H_
#define TOYLLM_TOOLS_PAGE_PATCH_OUTPUT_H_

#include <string>

#include "absl/status/statusor.h"
#include "tokenizer/tokenizer.h"
#include "tools/inspect/activation_patch.h"

namespace toyllm {

// The page's text.
std::string RenderPatchPage(const PatchMap& map, const PatchMetric& metric, const Tokenizer& tokenizer,
                            const std::string& title);

absl::Status WritePatchFolder(const std::string& dir, const PatchMap& map, const PatchMetric& metric,
                              const Tokenizer& tokenizer, const std::string& model_path);

}  // namespace toyllm

#endif  // TOYLLM_TOOLS_PAGE_PATCH_OUTPUT_H_
