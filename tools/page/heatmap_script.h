// The heatmap drawing both pages share (tools/page/heatmap.js), put into a page's template.
#ifndef TOYLLM_TOOLS_PAGE_HEATMAP_SCRIPT_H_
#define TOYLLM_TOOLS_PAGE_HEATMAP_SCRIPT_H_

#include <string>
#include <string_view>

namespace toyllm {

// `page` with heatmap.js where {{HEATMAP_JS}} stands.
std::string WithHeatmapScript(std::string_view page);

}  // namespace toyllm

#endif  // TOYLLM_TOOLS_PAGE_HEATMAP_SCRIPT_H_
