// The attention renderers, on hand-made maps (2 layers, 3 heads, 6 tokens with a quote,
// "</script>", a newline and Chinese):
//  - WritePng and WriteLayerPng, read back by a small PNG decoder written here (chunks and
//    their CRCs, zlib, row filters), pixel by pixel;
//  - WriteAttentionPage: nothing loaded from the network, the inlined JSON read back equal to
//    the maps' tokens, each layer's script decoded here (base64, uint16 codes) back to the
//    maps within the stated precision, and on a real model to attention.npy by numpy; then
//    the page rendered in headless Chromium and its DOM checked (cells drawn, token labels,
//    the "attends to" lines, layers loaded only when shown, no script error), plus a
//    screenshot.
// Chromium missing skips the browser tests loudly (fails them when TOYLLM_REQUIRE_MODELS=1).
// The suites' names start with attention_page_ so that `ctest -R attention_page` runs them all.
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <regex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "gtest/gtest.h"
#include "tests/test_env.h"
#include "tests/test_util.h"
#include "tools/inspect/attention_maps.h"
#include "tools/page/attention_layer_script.h"
#include "tools/page/attention_page.h"
#include "tools/inspect/attention_png.h"
#include "tools/inspect/png_writer.h"

extern char** environ;

namespace toyllm {
namespace {

using ::toyllm::testing::ModelsRequired;
using ::toyllm::testing::ReadFile;
using ::toyllm::testing::Stories260K;
using ::toyllm::testing::Tok512;
using ::toyllm::testing::TempDir;

constexpr int kT = 6;

// 2 map layers (model layers 3 and 7) x 3 heads (model heads 0, 2, 5) over 6 tokens. Every
// row is causal and sums to 1; row 0 is [1, 0, ...]; the weights differ between heads.
AttentionMaps MakeMaps() {
  AttentionMaps maps;
  maps.layers = {3, 7};
  maps.heads = {0, 2, 5};
  maps.positions = kT;
  maps.token_ids = {1, 940, 29989, 13, 30919, 1095};
  maps.token_pieces = {"<s>", "▁He▁said▁\"hi\"", "</script>", "<0x0A>", "你好", "▁end▁&▁<b>"};
  maps.token_text = {"<s>", " He said \"hi\"", "</script>", "\n", "你好", " end & <b>"};
  for (size_t l = 0; l < maps.layers.size(); ++l) {
    for (size_t h = 0; h < maps.heads.size(); ++h) {
      for (int q = 0; q < kT; ++q) {
        std::vector<float> row(kT, 0.0f);
        float sum = 0;
        for (int k = 0; k <= q; ++k) {
          row[k] = static_cast<float>(1 + (l * 7 + h * 3 + q * 5 + k * 11) % 9);
          if (h == 1 && k == q) row[k] *= 8;  // a head that looks mostly at itself
          sum += row[k];
        }
        for (float& w : row) w /= sum;
        maps.weights.insert(maps.weights.end(), row.begin(), row.end());
      }
    }
  }
  return maps;
}

const std::string kTitle = "Attention: \"test\" <b>&amp;</b> 注意力";

// ---------------------------------------------------------------------------------------
// Reading PNG files back.

uint32_t BigEndian32(const std::string& bytes, size_t at) {
  return (static_cast<uint32_t>(static_cast<uint8_t>(bytes[at])) << 24) |
         (static_cast<uint32_t>(static_cast<uint8_t>(bytes[at + 1])) << 16) |
         (static_cast<uint32_t>(static_cast<uint8_t>(bytes[at + 2])) << 8) |
         static_cast<uint32_t>(static_cast<uint8_t>(bytes[at + 3]));
}

struct Png {
  int width = 0;
  int height = 0;
  std::vector<std::string> chunk_types;
  std::vector<uint8_t> rgb;  // alpha, if any, dropped
  std::string error;         // empty when the file is a valid 8-bit RGB or RGBA PNG

  std::vector<uint8_t> Pixel(int x, int y) const {
    const size_t at = (static_cast<size_t>(y) * width + x) * 3;
    return {rgb[at], rgb[at + 1], rgb[at + 2]};
  }
};

int Paeth(int a, int b, int c) {
  const int p = a + b - c, pa = std::abs(p - a), pb = std::abs(p - b), pc = std::abs(p - c);
  return pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
}

Png ReadPng(const std::string& bytes) {
  Png png;
  auto fail = [&png](const std::string& why) {
    png.error = why;
    return png;
  };
  if (bytes.compare(0, 8, "\x89PNG\r\n\x1a\n") != 0) return fail("no PNG signature");
  std::string ihdr, idat;
  size_t at = 8;
  while (at < bytes.size()) {
    if (at + 12 > bytes.size()) return fail("truncated chunk header");
    const uint32_t length = BigEndian32(bytes, at);
    if (at + 12 + length > bytes.size()) return fail("truncated chunk");
    const std::string type = bytes.substr(at + 4, 4);
    const std::string data = bytes.substr(at + 8, length);
    const uLong crc = crc32(0L, reinterpret_cast<const Bytef*>(bytes.data() + at + 4), 4 + length);
    if (crc != BigEndian32(bytes, at + 8 + length)) return fail("bad CRC in " + type);
    png.chunk_types.push_back(type);
    if (type == "IHDR") ihdr = data;
    if (type == "IDAT") idat += data;
    at += 12 + length;
    if (type == "IEND") break;
  }
  if (at != bytes.size()) return fail("bytes after IEND");
  if (png.chunk_types.empty() || png.chunk_types.front() != "IHDR" ||
      png.chunk_types.back() != "IEND" || ihdr.size() != 13) {
    return fail("IHDR first and IEND last are required");
  }
  png.width = static_cast<int>(BigEndian32(ihdr, 0));
  png.height = static_cast<int>(BigEndian32(ihdr, 4));
  const int depth = ihdr[8], color = ihdr[9];
  if (depth != 8 || (color != 2 && color != 6) || ihdr[10] != 0 || ihdr[11] != 0 || ihdr[12] != 0) {
    return fail("not 8-bit RGB/RGBA, or interlaced");
  }
  const size_t bpp = color == 2 ? 3 : 4, stride = bpp * png.width;
  std::vector<uint8_t> raw((stride + 1) * png.height);
  uLongf raw_size = raw.size();
  if (uncompress(raw.data(), &raw_size, reinterpret_cast<const Bytef*>(idat.data()), idat.size()) !=
          Z_OK ||
      raw_size != raw.size()) {
    return fail("IDAT does not inflate to the image size");
  }
  std::vector<uint8_t> image(stride * png.height);
  for (int y = 0; y < png.height; ++y) {
    const uint8_t filter = raw[y * (stride + 1)];
    const uint8_t* in = &raw[y * (stride + 1) + 1];
    uint8_t* out = &image[y * stride];
    const uint8_t* up = y > 0 ? &image[(y - 1) * stride] : nullptr;
    for (size_t i = 0; i < stride; ++i) {
      const int a = i >= bpp ? out[i - bpp] : 0, b = up ? up[i] : 0,
                c = up && i >= bpp ? up[i - bpp] : 0;
      const int predictor = filter == 0 ? 0 : filter == 1 ? a : filter == 2 ? b
                          : filter == 3 ? (a + b) / 2 : filter == 4 ? Paeth(a, b, c) : -1;
      if (predictor < 0) return fail("bad filter type");
      out[i] = static_cast<uint8_t>(in[i] + predictor);
    }
  }
  for (size_t i = 0; i < image.size(); i += bpp) {
    png.rgb.insert(png.rgb.end(), &image[i], &image[i] + 3);
  }
  return png;
}

std::vector<uint8_t> Color(const Rgb& c) { return {c.r, c.g, c.b}; }
double Luminance(const Rgb& c) { return 0.2126 * c.r + 0.7152 * c.g + 0.0722 * c.b; }

// ---------------------------------------------------------------------------------------
// PNG writer.

TEST(attention_page_PngWriter, SmallImageReadsBackExactly) {
  const std::string path = TempDir() + "/small.png";
  const std::vector<uint8_t> rgb = {255, 0, 0,   0, 255, 0,   0, 0, 255,
                                    0, 0, 0,     128, 64, 32, 255, 255, 255};
  ASSERT_TRUE(WritePng(path, 3, 2, rgb).ok());
  const Png png = ReadPng(ReadFile(path));
  ASSERT_EQ(png.error, "");
  EXPECT_EQ(png.width, 3);
  EXPECT_EQ(png.height, 2);
  EXPECT_EQ(png.chunk_types, (std::vector<std::string>{"IHDR", "IDAT", "IEND"}));
  EXPECT_EQ(png.rgb, rgb);
}

TEST(attention_page_PngWriter, RejectsBadSizesAndLeavesNoFile) {
  const std::string dir = TempDir();
  EXPECT_EQ(WritePng(dir + "/a.png", 2, 2, std::vector<uint8_t>(11)).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(WritePng(dir + "/b.png", 0, 2, {}).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_FALSE(WritePng(dir + "/no/such/dir/c.png", 1, 1, {1, 2, 3}).ok());
  EXPECT_FALSE(testing::PathExists(dir + "/a.png"));
  EXPECT_FALSE(testing::PathExists(dir + "/b.png"));
}

// ---------------------------------------------------------------------------------------
// The picture of a layer.

TEST(attention_page_LayerPng, ColorsGetDarkerWithWeight) {
  EXPECT_GT(Luminance(AttentionColor(0.0f)), 240);
  EXPECT_LT(Luminance(AttentionColor(1.0f)), 60);
  for (int i = 1; i <= 20; ++i) {
    EXPECT_LT(Luminance(AttentionColor(i / 20.0f)), Luminance(AttentionColor((i - 1) / 20.0f)))
        << "weight " << i / 20.0;
  }
  EXPECT_EQ(AttentionColor(-1.0f), AttentionColor(0.0f));  // clamped
  EXPECT_EQ(AttentionColor(7.0f), AttentionColor(1.0f));
  const Rgb nan = AttentionColor(std::nanf(""));
  EXPECT_GT(nan.r, 200);
  EXPECT_LT(nan.g, 100);  // red: unlike any weight
}

TEST(attention_page_LayerPng, LayerPictureHasEveryHeadsCellsAndGaps) {
  const AttentionMaps maps = MakeMaps();
  const LayerPngLayout layout = LayerPngLayoutFor(3, kT);
  // 3 heads in a 2 x 2 grid; cells of 256 / 6 = 42 pixels; 2-pixel gaps.
  EXPECT_EQ(layout.cell, 42);
  EXPECT_EQ(layout.gap, 2);
  EXPECT_EQ(layout.columns, 2);
  EXPECT_EQ(layout.rows, 2);
  EXPECT_EQ(layout.width, 2 + 2 * (6 * 42 + 2));
  EXPECT_EQ(layout.height, layout.width);
  EXPECT_EQ(LayerPngLayoutFor(1, 1000).cell, 2);

  const std::string dir = TempDir();
  for (int l = 0; l < 2; ++l) {
    SCOPED_TRACE("map layer " + std::to_string(l));
    const std::string path = dir + "/layer" + std::to_string(l) + ".png";
    ASSERT_TRUE(WriteLayerPng(path, maps, l).ok());
    const Png png = ReadPng(ReadFile(path));
    ASSERT_EQ(png.error, "");
    ASSERT_EQ(png.width, 510);
    ASSERT_EQ(png.height, 510);

    // Spot checks at coordinates worked out by hand: head 0 starts at (2, 2), head 1 at
    // (256, 2), head 2 at (2, 256); the fourth place of the grid is empty.
    const std::vector<uint8_t> gap = Color(kAttentionGapColor);
    const std::vector<uint8_t> one = Color(AttentionColor(1.0f)), zero = Color(AttentionColor(0.0f));
    EXPECT_EQ(png.Pixel(0, 0), gap);
    EXPECT_EQ(png.Pixel(1, 300), gap);
    EXPECT_EQ(png.Pixel(254, 10), gap);  // between heads 0 and 1
    EXPECT_EQ(png.Pixel(255, 10), gap);
    EXPECT_EQ(png.Pixel(10, 254), gap);  // between heads 0 and 2
    EXPECT_EQ(png.Pixel(400, 400), gap);  // no fourth head
    EXPECT_EQ(png.Pixel(509, 509), gap);
    EXPECT_EQ(png.Pixel(2, 2), one);    // head 0, query 0 -> key 0: weight 1
    EXPECT_EQ(png.Pixel(43, 43), one);  // its last pixel
    EXPECT_EQ(png.Pixel(256, 2), one);  // head 1, the same cell
    EXPECT_EQ(png.Pixel(2, 256), one);  // head 2
    EXPECT_EQ(png.Pixel(44, 2), zero);  // query 0 -> key 1: masked, weight 0
    EXPECT_EQ(png.Pixel(2 + 5 * 42, 43), zero);
    EXPECT_NE(one, zero);

    // Every pixel: each cell in its weight's color, everything else gap.
    std::vector<uint8_t> expected(png.rgb.size());
    for (size_t i = 0; i < expected.size(); i += 3) {
      std::copy(gap.begin(), gap.end(), expected.begin() + i);
    }
    for (int h = 0; h < 3; ++h) {
      for (int q = 0; q < kT; ++q) {
        for (int k = 0; k < kT; ++k) {
          const std::vector<uint8_t> c = Color(AttentionColor(maps.at(l, h, q, k)));
          const int x0 = 2 + (h % 2) * 254 + k * 42, y0 = 2 + (h / 2) * 254 + q * 42;
          ASSERT_EQ(layout.X(h, k), x0);
          ASSERT_EQ(layout.Y(h, q), y0);
          for (int y = y0; y < y0 + 42; ++y) {
            for (int x = x0; x < x0 + 42; ++x) {
              std::copy(c.begin(), c.end(), expected.begin() + (static_cast<size_t>(y) * 510 + x) * 3);
            }
          }
        }
      }
    }
    EXPECT_TRUE(png.rgb == expected) << "some pixel is not its cell's color or the gap's";
  }
}

TEST(attention_page_LayerPng, RejectsBadLayerAndShape) {
  AttentionMaps maps = MakeMaps();
  const std::string dir = TempDir();
  EXPECT_EQ(WriteLayerPng(dir + "/x.png", maps, 2).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(WriteLayerPng(dir + "/x.png", maps, -1).code(), absl::StatusCode::kInvalidArgument);
  maps.weights.pop_back();
  EXPECT_EQ(WriteLayerPng(dir + "/x.png", maps, 0).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_FALSE(testing::PathExists(dir + "/x.png"));
}

// ---------------------------------------------------------------------------------------
// The page: its file.

// The JSON between <script type="application/json" id="attention-data"> and the first
// "</script>" after it, as the browser's HTML parser would cut it.
std::string InlinedJson(const std::string& page) {
  const std::string open = "<script type=\"application/json\" id=\"attention-data\">";
  const size_t start = page.find(open);
  if (start == std::string::npos) return "";
  const size_t end = page.find("</script>", start);
  if (end == std::string::npos) return "";
  return page.substr(start + open.size(), end - start - open.size());
}

size_t Count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// A layer script read back: its header, and its weights decoded by a base64 reader of its own.
struct LayerScript {
  nlohmann::json header;
  std::vector<uint16_t> codes;
  std::string error;  // empty when the file has the documented form
};

LayerScript ReadLayerScript(const std::string& text) {
  LayerScript script;
  const std::string open = "toyllmAttentionLayer(", close = "});\n";
  if (text.compare(0, open.size(), open) != 0 || text.size() < open.size() + close.size() ||
      text.compare(text.size() - close.size(), close.size(), close) != 0) {
    script.error = "not one toyllmAttentionLayer({...}) call";
    return script;
  }
  try {
    script.header = nlohmann::json::parse(text.substr(open.size(), text.size() - open.size() - 3));
  } catch (const std::exception& e) {
    script.error = e.what();
    return script;
  }
  const std::string base64 = script.header["weights"].get<std::string>();
  const std::string alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string bytes;
  uint32_t bits = 0;
  int count = 0;
  for (char c : base64) {
    if (c == '=') break;
    const size_t v = alphabet.find(c);
    if (v == std::string::npos) {
      script.error = "not base64";
      return script;
    }
    bits = bits << 6 | static_cast<uint32_t>(v);
    count += 6;
    if (count >= 8) {
      count -= 8;
      bytes.push_back(static_cast<char>(bits >> count & 0xff));
    }
  }
  if (bytes.size() % 2 != 0) script.error = "an odd number of bytes";
  for (size_t i = 0; i + 1 < bytes.size(); i += 2) {
    script.codes.push_back(static_cast<uint8_t>(bytes[i]) | static_cast<uint8_t>(bytes[i + 1]) << 8);
  }
  return script;
}

// The weight a code stands for, as the page reads it.
double Decoded(uint16_t code) { return code > kAttentionLevels ? NAN : code / 65534.0; }

TEST(attention_page_File, FileIsSelfContainedAndItsJsonIsTheMaps) {
  const AttentionMaps maps = MakeMaps();
  const std::string dir = TempDir();
  ASSERT_TRUE(WriteAttentionPage(dir, maps, kTitle).ok());
  EXPECT_EQ(testing::ListDir(dir), (std::vector<std::string>{"index.html", "layer3.js", "layer7.js"}));
  const std::string page = ReadFile(dir + "/index.html");
  ASSERT_FALSE(page.empty());

  // Nothing to fetch: no URLs, no external scripts, styles, fonts or images.
  for (const char* external : {"http://", "https://", "//cdn", "<link", " src=", "@import", "url("}) {
    EXPECT_EQ(page.find(external), std::string::npos) << external;
  }
  // Every "</script>" closes a <script>: the token "</script>" did not get out of the JSON.
  EXPECT_EQ(Count(page, "</script>"), Count(page, "<script"));
  EXPECT_EQ(Count(page, "{{ATTENTION_JSON}}"), 0u);

  const std::string text = InlinedJson(page);
  ASSERT_FALSE(text.empty());
  EXPECT_EQ(text.find('<'), std::string::npos);
  nlohmann::json json;
  ASSERT_NO_THROW(json = nlohmann::json::parse(text)) << text.substr(0, 300);
  EXPECT_EQ(json["title"], kTitle);
  EXPECT_EQ(json["layers"], nlohmann::json(maps.layers));
  EXPECT_EQ(json["heads"], nlohmann::json(maps.heads));
  EXPECT_EQ(json["positions"], kT);
  EXPECT_EQ(json["token_ids"].get<std::vector<int>>(), maps.token_ids);
  EXPECT_EQ(json["token_text"].get<std::vector<std::string>>(), maps.token_text);
  EXPECT_EQ(json["token_pieces"].get<std::vector<std::string>>(), maps.token_pieces);
  EXPECT_EQ(json["layer_files"], nlohmann::json({"layer3.js", "layer7.js"}));
  EXPECT_NEAR(json["max_error"].get<double>(), 7.63e-6, 1e-8);
  EXPECT_FALSE(json.contains("weights"));  // they are in the layer files

  // Each layer's file: the lower triangle of each head, each weight within 0.5 / 65534.
  for (int l = 0; l < 2; ++l) {
    SCOPED_TRACE("map layer " + std::to_string(l));
    const LayerScript script = ReadLayerScript(ReadFile(dir + "/layer" + std::to_string(maps.layers[l]) + ".js"));
    ASSERT_EQ(script.error, "");
    EXPECT_EQ(script.header["layer"], maps.layers[l]);
    EXPECT_EQ(script.header["heads"], nlohmann::json(maps.heads));
    EXPECT_EQ(script.header["positions"], kT);
    EXPECT_EQ(script.header["triangle"], true);
    EXPECT_EQ(script.header["levels"], 65534);
    ASSERT_EQ(script.codes.size(), 3u * kT * (kT + 1) / 2);
    size_t at = 0;
    double worst = 0;
    for (int h = 0; h < 3; ++h) {
      for (int q = 0; q < kT; ++q) {
        for (int k = 0; k <= q; ++k) {
          worst = std::max(worst, std::fabs(Decoded(script.codes[at++]) - maps.at(l, h, q, k)));
        }
      }
    }
    EXPECT_LE(worst, kAttentionMaxError);
    EXPECT_GT(worst, 0.0);  // quantized: not a copy of the floats that could not fail
  }
}

TEST(attention_page_File, FullRowsWhenNotCausalAndNonFiniteWeightsMarked) {
  AttentionMaps maps = MakeMaps();
  maps.weights[1] = 0.25f;                    // layer 0, head 0, query 0 -> key 1: above the diagonal
  maps.weights[kT * kT + kT] = std::nanf("");  // layer 0, head 1, query 1 -> key 0
  maps.weights[3 * kT * kT + 7] = 2.0f;       // layer 1, head 0, query 1 -> key 1: clamped to 1
  const std::string dir = TempDir();
  ASSERT_TRUE(WriteAttentionPage(dir, maps, kTitle).ok());
  const LayerScript full = ReadLayerScript(ReadFile(dir + "/layer3.js"));
  ASSERT_EQ(full.error, "");
  EXPECT_EQ(full.header["triangle"], false);
  ASSERT_EQ(full.codes.size(), 3u * kT * kT);
  for (size_t i = 0; i < full.codes.size(); ++i) {
    if (i == static_cast<size_t>(kT * kT + kT)) {
      EXPECT_EQ(full.codes[i], 65535);
    } else {
      EXPECT_NEAR(Decoded(full.codes[i]), maps.weights[i], kAttentionMaxError) << i;
    }
  }
  const LayerScript clamped = ReadLayerScript(ReadFile(dir + "/layer7.js"));
  ASSERT_EQ(clamped.error, "");
  EXPECT_EQ(clamped.header["triangle"], true);
  EXPECT_EQ(clamped.codes[2], 65534);  // rows 0 (1 key) and 1 (2 keys): the second key of row 1
}

TEST(attention_page_File, InvalidUtf8BecomesReplacementCharacter) {
  AttentionMaps maps = MakeMaps();
  maps.token_text[4] = "\xe4\xbd";  // half of 你
  const std::string dir = TempDir();
  ASSERT_TRUE(WriteAttentionPage(dir, maps, "t").ok());
  const nlohmann::json json = nlohmann::json::parse(InlinedJson(ReadFile(dir + "/index.html")));
  EXPECT_EQ(json["token_text"][4], "\xef\xbf\xbd");
}

TEST(attention_page_File, RejectsMapsOfTheWrongShape) {
  const std::string dir = TempDir();
  AttentionMaps maps = MakeMaps();
  maps.token_text.pop_back();
  EXPECT_EQ(WriteAttentionPage(dir, maps, "t").code(), absl::StatusCode::kInvalidArgument);
  maps = MakeMaps();
  maps.weights.resize(10);
  EXPECT_EQ(WriteAttentionPage(dir, maps, "t").code(), absl::StatusCode::kInvalidArgument);
  maps = MakeMaps();
  maps.heads.clear();
  EXPECT_EQ(WriteAttentionPage(dir, maps, "t").code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(testing::ListDir(dir), std::vector<std::string>{});
}

// ---------------------------------------------------------------------------------------
// The page in a browser.

std::string ChromiumPath() {
  for (const char* path : {"/usr/bin/chromium", "/usr/bin/chromium-browser"}) {
    if (access(path, X_OK) == 0) return path;
  }
  return "";
}

#define REQUIRE_CHROMIUM(path)                                                               \
  do {                                                                                       \
    if ((path).empty()) {                                                                    \
      if (ModelsRequired()) FAIL() << "chromium is missing (scripts/install-deps.sh)";       \
      std::cerr << "\n*** CHROMIUM MISSING: the attention page is not rendered "             \
                   "(scripts/install-deps.sh installs it) ***\n\n";                          \
      GTEST_SKIP() << "CHROMIUM MISSING: run scripts/install-deps.sh";                       \
    }                                                                                        \
  } while (0)

struct Browser {
  bool finished = false;
  int exit_code = -1;
  std::string out, err;
};

// Runs headless Chromium on `url` with a fresh profile, stdout and stderr to files, and kills
// it (with everything it started) if it takes longer than two minutes.
Browser RunChromium(const std::string& url, const std::vector<std::string>& extra) {
  const std::string dir = TempDir();
  std::vector<std::string> args = {
      ChromiumPath(), "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
      "--no-first-run", "--disable-background-networking", "--disable-component-update",
      "--disable-sync", "--user-data-dir=" + dir + "/profile", "--virtual-time-budget=5000"};
  args.insert(args.end(), extra.begin(), extra.end());
  args.push_back(url);
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 1, (dir + "/out").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&actions, 2, (dir + "/err").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
  posix_spawnattr_setpgroup(&attr, 0);  // its own group, to end it whole
  pid_t pid = -1;
  const int spawned = posix_spawn(&pid, argv[0], &actions, &attr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  Browser result;
  if (spawned != 0) return result;

  const auto deadline = std::chrono::steady_clock::now() + std::chrono::minutes(2);
  int status = 0;
  while (waitpid(pid, &status, WNOHANG) == 0) {
    if (std::chrono::steady_clock::now() > deadline) {
      kill(-pid, SIGKILL);
      waitpid(pid, &status, 0);
      result.err = "timed out\n";
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  kill(-pid, SIGKILL);  // helpers it may have left behind
  std::filesystem::remove_all(dir + "/profile");
  if (result.err.empty() && WIFEXITED(status)) {
    result.finished = true;
    result.exit_code = WEXITSTATUS(status);
  }
  result.out = ReadFile(dir + "/out");
  result.err += ReadFile(dir + "/err");
  return result;
}

// The rendered DOM of `path` with `fragment` (e.g. "#layer=7&head=all") as the address's.
std::string DumpDom(const std::string& path, const std::string& fragment) {
  const Browser run = RunChromium("file://" + path + fragment, {"--dump-dom"});
  EXPECT_TRUE(run.finished && run.exit_code == 0)
      << "chromium: exit " << run.exit_code << "\n" << run.err.substr(0, 3000);
  EXPECT_NE(run.out.find("</html>"), std::string::npos) << run.err.substr(0, 3000);
  return run.out;
}

// The value of attribute `name` in the first `<tag ...>` whose text contains `marker`.
std::string Attribute(const std::string& dom, const std::string& tag, const std::string& marker,
                      const std::string& name) {
  const std::regex tags("<" + tag + "\\b[^>]*>");
  for (auto it = std::sregex_iterator(dom.begin(), dom.end(), tags); it != std::sregex_iterator(); ++it) {
    const std::string text = it->str();
    if (text.find(marker) == std::string::npos) continue;
    std::smatch value;
    if (std::regex_search(text, value, std::regex("\\s" + name + "=\"([^\"]*)\""))) return value[1];
    return "<no " + name + ">";
  }
  return "<no " + tag + " with " + marker + ">";
}

std::string Body(const std::string& dom, const std::string& name) {
  return Attribute(dom, "body", "", name);
}

// Nonzero keys of a row, heaviest first.
std::vector<int> KeysByWeight(const AttentionMaps& maps, int l, int h, int q) {
  std::vector<int> keys;
  for (int k = 0; k < kT; ++k) {
    if (maps.at(l, h, q, k) > 0) keys.push_back(k);
  }
  std::stable_sort(keys.begin(), keys.end(),
                   [&](int a, int b) { return maps.at(l, h, q, a) > maps.at(l, h, q, b); });
  return keys;
}

// The keys listed in the page's "attends most to" panel, in order.
std::vector<int> TopKeys(const std::string& dom) {
  const std::regex item("class=\"top-item\" data-key=\"(\\d+)\"");
  std::vector<int> keys;
  for (auto it = std::sregex_iterator(dom.begin(), dom.end(), item); it != std::sregex_iterator(); ++it) {
    keys.push_back(std::stoi((*it)[1]));
  }
  return keys;
}

TEST(attention_page_Browser, OneHeadWithTokensLinesAndTopWeights) {
  REQUIRE_CHROMIUM(ChromiumPath());
  const AttentionMaps maps = MakeMaps();
  const std::string dir = TempDir();
  ASSERT_TRUE(WriteAttentionPage(dir, maps, kTitle).ok());
  const std::string dom = DumpDom(dir + "/index.html", "");
  ASSERT_FALSE(dom.empty());

  EXPECT_EQ(Body(dom, "data-ready"), "1");
  EXPECT_EQ(Body(dom, "data-error"), "<no data-error>") << dom.substr(0, 2000);
  // The first view: map layer 0 (model layer 3), head 0, the last token focused.
  EXPECT_EQ(Body(dom, "data-layer"), "3");
  EXPECT_EQ(Body(dom, "data-loaded"), "3");  // layer 7's file is not read until it is shown
  EXPECT_EQ(Body(dom, "data-head"), "0");
  EXPECT_EQ(Body(dom, "data-cells"), std::to_string(kT * kT));
  EXPECT_EQ(Body(dom, "data-query"), "5");
  EXPECT_EQ(Body(dom, "data-lines"), "6");  // all 6 keys have weight
  EXPECT_EQ(Attribute(dom, "canvas", "id=\"heatmap\"", "data-rows"), "6");
  EXPECT_EQ(Attribute(dom, "canvas", "id=\"heatmap\"", "data-cols"), "6");
  EXPECT_EQ(Count(dom, "<path "), 6u);  // one line per key

  // The title, escaped as text: no <b> element made from it.
  EXPECT_NE(dom.find("<title>Attention: \"test\" &lt;b&gt;&amp;amp;&lt;/b&gt; 注意力</title>"),
            std::string::npos);
  EXPECT_EQ(dom.find("<b>"), std::string::npos);
  // Tokens along both axes, as text.
  EXPECT_EQ(Count(dom, "class=\"row-label\"") + Count(dom, "class=\"row-label focus\""), 6u);
  EXPECT_EQ(Count(dom, "class=\"col-label\""), 6u);
  for (const char* token : {"&lt;/script&gt;", "你好", " He said \"hi\"", "↵", " end &amp; &lt;b&gt;"}) {
    EXPECT_GE(Count(dom, token), 3u) << token;  // row label, column label, lines view
  }
  // The top weights of the focused query, heaviest first.
  const std::vector<int> keys = KeysByWeight(maps, 0, 0, 5);
  EXPECT_EQ(TopKeys(dom), std::vector<int>(keys.begin(), keys.begin() + 5));
  char top[16];
  std::snprintf(top, sizeof(top), "%.3f", maps.at(0, 0, 5, keys[0]));
  EXPECT_NE(dom.find(std::string("<span class=\"val\">") + top + "</span>"), std::string::npos) << top;
}

TEST(attention_page_Browser, AllHeadsAndAnotherQueryFromTheAddress) {
  REQUIRE_CHROMIUM(ChromiumPath());
  const AttentionMaps maps = MakeMaps();
  const std::string dir = TempDir(), path = dir + "/index.html";
  ASSERT_TRUE(WriteAttentionPage(dir, maps, kTitle).ok());

  const std::string all = DumpDom(path, "#layer=7&head=all");
  EXPECT_EQ(Body(all, "data-ready"), "1");
  EXPECT_EQ(Body(all, "data-error"), "<no data-error>");
  EXPECT_EQ(Body(all, "data-layer"), "7");
  EXPECT_EQ(Body(all, "data-loaded"), "7");
  EXPECT_EQ(Body(all, "data-head"), "all");
  EXPECT_EQ(Body(all, "data-cells"), std::to_string(3 * kT * kT));
  EXPECT_EQ(Count(all, "class=\"head-map\""), 3u);
  for (const char* head : {"data-head=\"0\"", "data-head=\"2\"", "data-head=\"5\""}) {
    EXPECT_NE(all.find(std::string("<figure class=\"head-map\" ") + head), std::string::npos) << head;
  }

  const std::string one = DumpDom(path, "#layer=7&head=5&query=2");
  EXPECT_EQ(Body(one, "data-error"), "<no data-error>");
  EXPECT_EQ(Body(one, "data-layer"), "7");
  EXPECT_EQ(Body(one, "data-head"), "5");
  EXPECT_EQ(Body(one, "data-cells"), std::to_string(kT * kT));
  EXPECT_EQ(Body(one, "data-query"), "2");
  EXPECT_EQ(Body(one, "data-lines"), "3");  // query 2 sees keys 0..2
  EXPECT_EQ(Count(one, "class=\"top-item\""), 3u);
  EXPECT_EQ(TopKeys(one), KeysByWeight(maps, 1, 2, 2));
}

TEST(attention_page_Browser, MissingLayerFileIsReportedAndOthersStillDraw) {
  REQUIRE_CHROMIUM(ChromiumPath());
  const std::string dir = TempDir(), path = dir + "/index.html";
  ASSERT_TRUE(WriteAttentionPage(dir, MakeMaps(), kTitle).ok());
  ASSERT_EQ(std::remove((dir + "/layer3.js").c_str()), 0);

  const std::string seven = DumpDom(path, "#layer=7&head=0");  // never needs layer 3
  EXPECT_EQ(Body(seven, "data-error"), "<no data-error>");
  EXPECT_EQ(Body(seven, "data-ready"), "1");
  EXPECT_EQ(Body(seven, "data-cells"), std::to_string(kT * kT));

  const std::string three = DumpDom(path, "");
  EXPECT_NE(Body(three, "data-error").find("cannot load layer3.js"), std::string::npos)
      << Body(three, "data-error");
  EXPECT_EQ(Body(three, "data-ready"), "<no data-ready>");

  // A file of another layer, and one of another page, are refused with their reason.
  testing::WriteFile(dir + "/layer3.js", ReadFile(dir + "/layer7.js"));
  const std::string other = DumpDom(path, "");
  EXPECT_NE(Body(other, "data-error").find("layer3.js did not hold the weights of layer 3"),
            std::string::npos) << Body(other, "data-error");
  AttentionMaps longer = MakeMaps();
  longer.layers = {3};
  longer.heads = {0};
  longer.positions = 1;
  longer.weights = {1.0f};
  longer.token_ids.resize(1);
  longer.token_text.resize(1);
  longer.token_pieces.resize(1);
  testing::WriteFile(dir + "/layer3.js", RenderLayerScript(longer, 0));
  const std::string misfit = DumpDom(path, "");
  EXPECT_NE(Body(misfit, "data-error").find("the weights of layer 3 do not fit this page"),
            std::string::npos) << Body(misfit, "data-error");
}

// A longer context, drawn a pixel per cell: 300 tokens, 2 layers x 4 heads, a head's rows
// peaked at key (q * (h + 1)) % (q + 1) over a flat rest.
TEST(attention_page_Browser, LongContextDrawsEveryCellAndItsTopWeights) {
  REQUIRE_CHROMIUM(ChromiumPath());
  constexpr int kLong = 300;
  AttentionMaps maps;
  maps.layers = {0, 1};
  maps.heads = {0, 1, 2, 3};
  maps.positions = kLong;
  for (int q = 0; q < kLong; ++q) {
    maps.token_ids.push_back(q);
    maps.token_text.push_back("t" + std::to_string(q));
  }
  for (int l = 0; l < 2; ++l) {
    for (int h = 0; h < 4; ++h) {
      for (int q = 0; q < kLong; ++q) {
        std::vector<float> row(kLong, 0.0f);
        const int peak = (q * (h + 1) + l) % (q + 1);
        for (int k = 0; k <= q; ++k) row[k] = (k == peak ? 0.5f : 0.0f) + 0.5f / (q + 1) * (1 + k % 3) / 2;
        maps.weights.insert(maps.weights.end(), row.begin(), row.end());
      }
    }
  }
  const std::string dir = TempDir();
  ASSERT_TRUE(WriteAttentionPage(dir, maps, "long").ok());
  const std::string grid = DumpDom(dir + "/index.html", "#layer=1&head=all&query=250");
  EXPECT_EQ(Body(grid, "data-error"), "<no data-error>");
  EXPECT_EQ(Body(grid, "data-ready"), "1");
  EXPECT_EQ(Body(grid, "data-loaded"), "1");
  EXPECT_EQ(Body(grid, "data-cells"), std::to_string(4 * kLong * kLong));
  EXPECT_EQ(Body(grid, "data-query"), "250");

  const std::string one = DumpDom(dir + "/index.html", "#layer=0&head=2&query=250");
  EXPECT_EQ(Body(one, "data-error"), "<no data-error>");
  EXPECT_EQ(Body(one, "data-cells"), std::to_string(kLong * kLong));
  EXPECT_EQ(Attribute(one, "canvas", "id=\"heatmap\"", "data-rows"), std::to_string(kLong));
  const std::vector<int> top = TopKeys(one);
  ASSERT_EQ(top.size(), 5u);
  EXPECT_EQ(top[0], (250 * 3) % 251);  // the peak
  char weight[16];
  std::snprintf(weight, sizeof(weight), "%.3f", maps.at(0, 2, 250, top[0]));
  EXPECT_NE(one.find(std::string("<span class=\"val\">") + weight + "</span>"), std::string::npos) << weight;
}

// `toyllm attention` on stories260K: numpy decodes every layer file back to attention.npy.
TEST(attention_page_Cli, LayerFilesDecodeToTheNpyWithinThePrecision) {
  TOYLLM_REQUIRE_FILE(Stories260K());
  TOYLLM_REQUIRE_FILE(Tok512());
  if (access("/usr/bin/python3", X_OK) != 0) GTEST_SKIP() << "no /usr/bin/python3 with numpy";
  const std::string dir = TempDir() + "/maps";
  const testing::RunResult run = testing::RunToyllm(
      {"attention", "-m", Stories260K(), "--tokenizer", Tok512(), "-p",
       "Lily saw a big dog. She was scared of it because it was loud.", "--layers", "1,4",
       "--heads", "0,3-5", "-o", dir});
  ASSERT_TRUE(testing::Succeeds(run)) << testing::Describe(run);
  EXPECT_EQ(testing::ListDir(dir), (std::vector<std::string>{"attention.npy", "index.html", "layer1.js",
                                                             "layer1.png", "layer4.js", "layer4.png",
                                                             "tokens.json"}));
  const std::string script = dir + "/check.py";
  testing::WriteFile(script, R"(import base64, json, sys
import numpy as np
folder = sys.argv[1]
maps = np.load(folder + "/attention.npy")
L, H, T, _ = maps.shape
worst = 0.0
for i, layer in enumerate([1, 4]):
    text = open(folder + "/layer%d.js" % layer).read()
    f = json.loads(text[len("toyllmAttentionLayer("):-len(");\n")])
    assert f["layer"] == layer and f["heads"] == [0, 3, 4, 5] and f["positions"] == T, f
    assert f["triangle"] and f["levels"] == 65534
    codes = np.frombuffer(base64.b64decode(f["weights"]), dtype="<u2")
    rows, cols = np.tril_indices(T)
    assert codes.size == H * rows.size, codes.size
    decoded = codes.reshape(H, rows.size).astype(np.float64) / 65534
    assert np.all(np.triu(maps[i], 1) == 0)
    worst = max(worst, float(np.abs(decoded - maps[i][:, rows, cols]).max()))
print("max error %.3g" % worst)
sys.exit(0 if 0 < worst <= 0.5 / 65534 else 1)
)");
  FILE* pipe = popen(("/usr/bin/python3 " + script + " " + dir + " 2>&1").c_str(), "r");
  ASSERT_NE(pipe, nullptr);
  std::string out;
  char buffer[4096];
  while (size_t n = fread(buffer, 1, sizeof(buffer), pipe)) out.append(buffer, n);
  EXPECT_EQ(pclose(pipe), 0) << out;
  EXPECT_NE(out.find("max error"), std::string::npos) << out;
  std::cout << out;
}

TEST(attention_page_Browser, Screenshot) {
  REQUIRE_CHROMIUM(ChromiumPath());
  const std::string dir = TempDir();
  ASSERT_TRUE(WriteAttentionPage(dir, MakeMaps(), kTitle).ok());
  const std::string shot = dir + "/page.png";
  const Browser run = RunChromium("file://" + dir + "/index.html",
                                  {"--screenshot=" + shot, "--window-size=1200,900",
                                   "--hide-scrollbars"});
  ASSERT_TRUE(run.finished && run.exit_code == 0) << run.err.substr(0, 3000);
  const Png png = ReadPng(ReadFile(shot));
  ASSERT_EQ(png.error, "");
  EXPECT_EQ(png.width, 1200);
  EXPECT_EQ(png.height, 900);
  // Drawn, not blank: the heatmap's blues and the text make many colors.
  std::set<uint32_t> colors;
  for (size_t i = 0; i < png.rgb.size(); i += 3) {
    colors.insert(png.rgb[i] << 16 | png.rgb[i + 1] << 8 | png.rgb[i + 2]);
  }
  EXPECT_GT(colors.size(), 50u);
  std::cout << "screenshot: " << shot << "\n";
}

}  // namespace
}  // namespace toyllm
