// Attention maps as a page to explore in a browser: layer and head selectors; the selected
// head as a heatmap with the tokens on both axes (rows = queries, columns = keys), or every
// head of the layer as a grid of small heatmaps; the focused token's attention drawn as lines
// to the tokens it attends to; and its top weights.
//
// The page is index.html plus one script per layer beside it (attention_layer_script.h),
// which the page loads when that layer is first shown, so that the first map of a real
// model is drawn after reading one layer, not all of them. Nothing comes from the network.
// The page's HTML, CSS and JavaScript are tools/page/attention_page.html.in, built into the
// binary; index.html inlines, as JSON (<script type="application/json" id="attention-data">):
// {"title", "layers": [model layer numbers], "heads": [model head numbers], "positions": T,
//  "token_ids": [T], "token_text": [T], "token_pieces": [T, or none],
//  "layer_files": ["layerL.js" for each layer], "max_error": the weights' precision}.
// Text that is not valid UTF-8 shows as U+FFFD.
#ifndef TOYLLM_TOOLS_PAGE_ATTENTION_PAGE_H_
#define TOYLLM_TOOLS_PAGE_ATTENTION_PAGE_H_

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "tools/inspect/attention_maps.h"

namespace toyllm {

// The page's text.
absl::StatusOr<std::string> RenderAttentionPage(const AttentionMaps& maps,
                                                const std::string& title);

// Writes `dir`/index.html and `dir`/layerL.js for each layer, each atomically.
absl::Status WriteAttentionPage(const std::string& dir, const AttentionMaps& maps,
                                const std::string& title);

}  // namespace toyllm

#endif  // TOYLLM_TOOLS_PAGE_ATTENTION_PAGE_H_
