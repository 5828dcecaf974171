// Attention maps as one self-contained HTML page to explore in a browser: layer and head
// selectors; the selected head as a heatmap with the tokens on both axes (rows = queries,
// columns = keys), or every head of the layer as a grid of small heatmaps; the focused
// token's attention drawn as lines to the tokens it attends to; and its top weights.
//
// The page's HTML, CSS and JavaScript are tools/attention_page.html.in, built into the
// binary; the maps are inlined in it as JSON (<script type="application/json"
// id="attention-data">), so the file loads nothing from the network or from other files.
//
// The JSON: {"title", "layers": [model layer numbers], "heads": [model head numbers],
// "positions": T, "token_ids": [T], "token_text": [T], "token_pieces": [T, or none],
// "weights": [layer][head][query][key]}
// with each weight in its shortest decimal form, reading back as the same float (whole
// numbers as integers; NaN and infinities as null). Text that is not valid UTF-8 shows as U+FFFD.
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

// Writes the page to `path`, atomically.
absl::Status WriteAttentionPage(const std::string& path, const AttentionMaps& maps,
                                const std::string& title);

}  // namespace toyllm

#endif  // TOYLLM_TOOLS_PAGE_ATTENTION_PAGE_H_
