#include "tools/page/patch_output.h"

#include <nlohmann/json.hpp>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "tools/inspect/heatmap_png.h"
#include "tools/inspect/npy_writer.h"
#include "tools/inspect/text_file.h"
#include "tools/page/attention_output.h"

namespace toyllm {
namespace {

// The tokens' text, "\xE2\x96\x81" shown as a space.
std::vector<std::string> TokenTexts(const Tokenizer& tokenizer, const std::vector<int>& ids) {
  std::vector<std::string> text;
  for (int id : ids) text.push_back(absl::StrReplaceAll(tokenizer.Piece(id), {{"\xE2\x96\x81", " "}}));
  return text;
}

std::string Escape(const std::string& text) {
  return absl::StrReplaceAll(text, {{"&", "&amp;"}, {"<", "&lt;"}, {">", "&gt;"}, {"\"", "&quot;"}});
}

// One heatmap as an HTML table: a row per layer, a cell per column, its value on hover.
std::string Table(const std::string& caption, const std::vector<std::string>& columns,
                  const std::vector<float>& values, int layers, const std::string& hover_prefix) {
  const int cols = static_cast<int>(columns.size());
  std::string html = absl::StrCat("<h2>", Escape(caption), "</h2>\n<table>\n<tr><th></th>");
  for (const std::string& c : columns) absl::StrAppend(&html, "<th>", Escape(c), "</th>");
  absl::StrAppend(&html, "</tr>\n");
  for (int l = 0; l < layers; ++l) {
    absl::StrAppend(&html, "<tr><th>layer ", l, "</th>");
    for (int c = 0; c < cols; ++c) {
      const float v = values[l * cols + c];
      const Rgb color = DivergingColor(v);
      // Dark cells take white text.
      const char* ink = color.r + color.g + color.b < 384 ? "#fff" : "#000";
      absl::StrAppend(&html, absl::StrFormat("<td style=\"background:rgb(%d,%d,%d);color:%s\" title=\"%s\">%.2f</td>",
                                             color.r, color.g, color.b, ink,
                                             Escape(absl::StrFormat("layer %d, %s%s: %.4f", l, hover_prefix,
                                                                    columns[c], v)),
                                             v));
    }
    absl::StrAppend(&html, "</tr>\n");
  }
  return html + "</table>\n";
}

}  // namespace

std::string RenderPatchPage(const PatchMap& map, const PatchMetric& metric, const Tokenizer& tokenizer,
                            const std::string& title) {
  const std::vector<std::string> clean = TokenTexts(tokenizer, map.clean_ids);
  const std::vector<std::string> corrupt = TokenTexts(tokenizer, map.corrupt_ids);
  std::vector<std::string> heads, positions;
  for (int h = 0; h < map.heads; ++h) heads.push_back(absl::StrCat(h));
  for (int p = 0; p < map.positions; ++p) {
    positions.push_back(clean[p] == corrupt[p] ? clean[p] : absl::StrCat(clean[p], "/", corrupt[p]));
  }
  std::string html = absl::StrCat(
      "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>activation patching: ", Escape(title),
      "</title>\n<style>body{font-family:sans-serif;margin:1em}table{border-collapse:collapse}"
      "td,th{border:1px solid #ccc;padding:4px 6px;text-align:center;font-size:13px}"
      "td{min-width:2.5em}</style></head><body>\n<h1>Activation patching</h1>\n<p>model: ",
      Escape(title), "<br>clean: ", Escape(absl::StrJoin(clean, "")), "<br>corrupted: ", Escape(absl::StrJoin(corrupt, "")),
      absl::StrFormat("<br>metric: %s, clean %.4f, corrupted %.4f", Escape(metric.text), map.clean, map.corrupt),
      "</p>\n<p>Each cell: the corrupted prompt rerun with that one component taken from the clean run; "
      "the metric restored, 0 = corrupted, 1 = clean (below 0 in red).</p>\n");
  absl::StrAppend(&html, Table("each head's output (blk.L.kqv_out slice), by layer and head", heads, map.head,
                               map.layers, "head "));
  absl::StrAppend(&html, Table("the residual stream leaving each block (blk.L.resid_post), by layer and position",
                               positions, map.residual, map.layers, "after "));
  absl::StrAppend(&html, Table("each MLP output (blk.L.ffn_out), all positions", {"MLP"}, map.mlp, map.layers, ""));
  return html + "</body></html>\n";
}

absl::Status WritePatchFolder(const std::string& dir, const PatchMap& map, const PatchMetric& metric,
                              const Tokenizer& tokenizer, const std::string& model_path) {
  if (absl::Status s = CreateFolder(dir); !s.ok()) return s;
  const int64_t layers = map.layers;
  for (const auto& [name, values, shape] :
       {std::tuple{"patch.npy", &map.head, std::vector<int64_t>{layers, map.heads}},
        std::tuple{"patch_residual.npy", &map.residual, std::vector<int64_t>{layers, map.positions}},
        std::tuple{"patch_mlp.npy", &map.mlp, std::vector<int64_t>{layers}}}) {
    if (absl::Status s = WriteNpy(absl::StrCat(dir, "/", name), values->data(), shape); !s.ok()) return s;
  }
  const nlohmann::json json = {
      {"model", model_path},
      {"metric", metric.text},
      {"metric_clean", map.clean},
      {"metric_corrupt", map.corrupt},
      {"clean_ids", map.clean_ids},
      {"corrupt_ids", map.corrupt_ids},
      {"clean_text", TokenTexts(tokenizer, map.clean_ids)},
      {"corrupt_text", TokenTexts(tokenizer, map.corrupt_ids)},
      {"layers", map.layers},
      {"heads", map.heads},
      {"positions", map.positions},
      {"head", map.head},
      {"residual", map.residual},
      {"mlp", map.mlp}};
  if (absl::Status s = WriteTextFile(dir + "/patch.json",
                                 json.dump(1, ' ', false, nlohmann::json::error_handler_t::replace));
      !s.ok()) {
    return s;
  }
  if (absl::Status s = WriteTextFile(dir + "/index.html", RenderPatchPage(map, metric, tokenizer, model_path)); !s.ok()) {
    return s;
  }
  if (absl::Status s = WriteHeatmapPng(dir + "/heads.png", map.head, map.layers, map.heads, 32); !s.ok()) return s;
  if (absl::Status s = WriteHeatmapPng(dir + "/residual.png", map.residual, map.layers, map.positions, 16); !s.ok()) {
    return s;
  }
  return WriteHeatmapPng(dir + "/mlp.png", map.mlp, map.layers, 1, 32);
}

}  // namespace toyllm
