#include "tokenizer/tokenizer_json.h"

#include <sys/stat.h>

#include <map>

#include <nlohmann/json.hpp>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "tokenizer/load_tokenizer.h"
#include "tokenizer/pre_tokenizer.h"
#include "tokenizer/tokenizer.h"

namespace toyllm {
namespace {

using nlohmann::json;

// The contractions as tokenizer.json writes them and as llama.cpp spells them out (which is
// how its named pre-tokenizers hold them; see pre_tokenizer.cc).
constexpr char kHfContractions[] = "(?i:'s|'t|'re|'ve|'m|'ll|'d)";
constexpr char kContractions[] = "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])";

std::string TypeOf(const json& section) {
  if (!section.is_object()) return "";
  auto it = section.find("type");
  return it != section.end() && it->is_string() ? it->get<std::string>() : "";
}

bool Flag(const json& section, const char* key, bool fallback) {
  auto it = section.find(key);
  return it != section.end() && it->is_boolean() ? it->get<bool>() : fallback;
}

// A PCRE2 regex matching the text literally.
std::string Literal(const std::string& text) {
  return absl::StrCat("\\Q", absl::StrReplaceAll(text, {{"\\E", "\\E\\\\E\\Q"}}), "\\E");
}

class Reader {
 public:
  explicit Reader(const std::string& source) : source_(source) {}

  absl::Status Error(const std::string& what) const {
    return absl::InvalidArgumentError(absl::StrCat(source_, ": ", what));
  }
  absl::Status Unsupported(const std::string& what) const {
    return absl::UnimplementedError(absl::StrCat(source_, ": ", what, " is not supported"));
  }

  absl::Status PreTokenizer(const json& p, Vocabulary& v) {
    if (p.is_null()) return absl::OkStatus();
    const std::string type = TypeOf(p);
    if (type == "Sequence") {
      auto it = p.find("pretokenizers");
      if (it == p.end() || !it->is_array()) return Error("pre_tokenizer Sequence has no 'pretokenizers' list");
      for (const json& step : *it) {
        if (absl::Status s = PreTokenizer(step, v); !s.ok()) return s;
      }
      return absl::OkStatus();
    }
    if (type == "ByteLevel") {
      byte_level_ = true;
      v.add_prefix_space = Flag(p, "add_prefix_space", false);
      if (Flag(p, "use_regex", true)) v.pre_regexes.push_back(PreTokenizerRegexes("gpt-2")->front());
      return absl::OkStatus();
    }
    if (type == "Digits") {
      v.pre_regexes.push_back(Flag(p, "individual_digits", false) ? "\\p{N}" : "\\p{N}+");
      return absl::OkStatus();
    }
    if (type == "Split") {
      auto behavior = p.find("behavior");
      if (behavior == p.end() || *behavior != "Isolated" || Flag(p, "invert", false)) {
        return Unsupported("a pre_tokenizer Split other than behavior Isolated, invert false");
      }
      auto pattern = p.find("pattern");
      if (pattern == p.end() || !pattern->is_object()) return Error("pre_tokenizer Split has no pattern");
      if (auto r = pattern->find("Regex"); r != pattern->end() && r->is_string()) {
        v.pre_regexes.push_back(absl::StrReplaceAll(r->get<std::string>(), {{kHfContractions, kContractions}}));
      } else if (auto s = pattern->find("String"); s != pattern->end() && s->is_string()) {
        v.pre_regexes.push_back(Literal(s->get<std::string>()));
      } else {
        return Error("pre_tokenizer Split's pattern is neither a Regex nor a String");
      }
      return absl::OkStatus();
    }
    return Unsupported(absl::StrCat("pre_tokenizer '", type, "'"));
  }

  absl::Status Normalizer(const json& n, Vocabulary& v) {
    if (n.is_null()) return absl::OkStatus();
    const std::string type = TypeOf(n);
    if (type == "Sequence") {
      auto it = n.find("normalizers");
      if (it == n.end() || !it->is_array()) return Error("normalizer Sequence has no 'normalizers' list");
      for (const json& step : *it) {
        if (absl::Status s = Normalizer(step, v); !s.ok()) return s;
      }
      return absl::OkStatus();
    }
    if (type == "NFC" || type == "NFKC" || type == "NFD" || type == "NFKD") {
      if (!v.normalizer.empty() && v.normalizer != type) return Unsupported("more than one normalization form");
      v.normalizer = type;
      return absl::OkStatus();
    }
    return Unsupported(absl::StrCat("normalizer '", type, "'"));
  }

  absl::StatusOr<Vocabulary> Read(const json& root, const json& config) {
    if (!root.is_object()) return Error("not a tokenizer.json (the top level is not an object)");
    auto model = root.find("model");
    if (model == root.end() || !model->is_object()) return Error("no 'model' section");
    const std::string type = TypeOf(*model);
    if (type != "BPE") return Unsupported(absl::StrCat("model type '", type, "' (only BPE)"));
    if (Flag(*model, "byte_fallback", false)) return Unsupported("a BPE model with byte_fallback");
    Vocabulary v;
    v.model = "gpt2";
    v.ignore_merges = Flag(*model, "ignore_merges", false);

    std::map<int64_t, std::pair<std::string, TokenType>> entries;
    auto vocab = model->find("vocab");
    if (vocab == model->end() || !vocab->is_object()) return Error("model has no 'vocab' object");
    for (auto it = vocab->begin(); it != vocab->end(); ++it) {
      if (!it->is_number_integer() || it->get<int64_t>() < 0 || it->get<int64_t>() >= (1 << 24)) {
        return Error(absl::StrCat("vocab entry '", it.key(), "' has no id in 0..2^24"));
      }
      auto [at, fresh] = entries.emplace(it->get<int64_t>(), std::pair{it.key(), TokenType::kNormal});
      if (!fresh) {
        return Error(absl::StrCat("id ", at->first, " is given to both '", at->second.first, "' and '", it.key(), "'"));
      }
    }
    if (auto added = root.find("added_tokens"); added != root.end() && added->is_array()) {
      for (const json& t : *added) {
        auto id = t.find("id"), content = t.find("content");
        if (!t.is_object() || id == t.end() || !id->is_number_integer() || content == t.end() ||
            !content->is_string() || id->get<int64_t>() < 0 || id->get<int64_t>() >= (1 << 24)) {
          return Error("an added_tokens entry lacks an id in 0..2^24 or a content string");
        }
        const std::string text = content->get<std::string>();
        // As llama.cpp's converter: special tokens, and ones that look it, are control tokens.
        const bool control = Flag(t, "special", false) ||
                             (absl::StartsWith(text, "<|") && absl::EndsWith(text, "|>"));
        auto& entry = entries[id->get<int64_t>()];
        if (!entry.first.empty() && entry.first != text) {
          return Error(absl::StrCat("id ", id->get<int64_t>(), " is given to both '", entry.first, "' and '", text, "'"));
        }
        entry = {text, control ? TokenType::kControl : TokenType::kUserDefined};
      }
    }
    if (entries.empty()) return Error("the vocabulary is empty");
    const int64_t n = entries.rbegin()->first + 1;
    // A few skipped ids are padding; many are a broken file, not a vocabulary to allocate.
    if (n > static_cast<int64_t>(entries.size()) + 4096) {
      return Error(absl::StrCat("the ids run to ", n - 1, " but there are only ", entries.size(), " tokens"));
    }
    v.tokens.resize(n);
    v.types.assign(n, static_cast<int32_t>(TokenType::kNormal));
    for (int64_t id = 0; id < n; ++id) {
      auto it = entries.find(id);
      // Ids the file skips become unused padding entries, as llama.cpp's converter writes them.
      if (it == entries.end()) {
        v.tokens[id] = absl::StrCat("[PAD", id, "]");
        v.types[id] = static_cast<int32_t>(TokenType::kUnused);
        continue;
      }
      v.tokens[id] = it->second.first;
      v.types[id] = static_cast<int32_t>(it->second.second);
    }

    auto merges = model->find("merges");
    if (merges == model->end() || !merges->is_array()) return Error("model has no 'merges' list");
    for (const json& m : *merges) {
      if (m.is_string()) {
        v.merges.push_back(m.get<std::string>());
      } else if (m.is_array() && m.size() == 2 && m[0].is_string() && m[1].is_string()) {
        v.merges.push_back(absl::StrCat(m[0].get<std::string>(), " ", m[1].get<std::string>()));
      } else {
        return Error(absl::StrCat("merge ", v.merges.size(), " is neither \"a b\" nor [\"a\", \"b\"]"));
      }
    }

    if (auto n = root.find("normalizer"); n != root.end()) {
      if (absl::Status s = Normalizer(*n, v); !s.ok()) return s;
    }
    if (auto p = root.find("pre_tokenizer"); p != root.end()) {
      if (absl::Status s = PreTokenizer(*p, v); !s.ok()) return s;
    }
    if (auto d = root.find("decoder"); d != root.end() && TypeOf(*d) == "ByteLevel") byte_level_ = true;
    if (!byte_level_) return Unsupported("a BPE model without ByteLevel (not byte-level BPE)");
    v.pre = PreTokenizerName(v.pre_regexes);
    if (!v.pre.empty()) v.pre_regexes.clear();

    const auto id_of = [&v](const json& token) -> int {
      std::string text;
      if (token.is_string()) text = token.get<std::string>();
      if (token.is_object() && token.contains("content") && token["content"].is_string()) {
        text = token["content"].get<std::string>();
      }
      if (text.empty()) return -1;
      for (int id = 0; id < static_cast<int>(v.tokens.size()); ++id) {
        if (v.tokens[id] == text && v.types[id] != static_cast<int32_t>(TokenType::kNormal)) return id;
      }
      return -1;
    };
    if (config.is_object()) {
      if (config.contains("bos_token")) v.bos_id = id_of(config["bos_token"]);
      if (config.contains("eos_token")) v.eos_id = id_of(config["eos_token"]);
      if (config.contains("pad_token")) v.pad_id = id_of(config["pad_token"]);
      // Without the key, transformers adds BOS when the model has one (Llama 3).
      v.add_bos = Flag(config, "add_bos_token", v.bos_id >= 0);
    }
    return v;
  }

 private:
  const std::string& source_;
  bool byte_level_ = false;
};

}  // namespace

void PadVocabulary(int n, Vocabulary& v) {
  if (static_cast<int>(v.tokens.size()) >= n) return;
  v.types.resize(v.tokens.size(), static_cast<int32_t>(TokenType::kNormal));
  for (int id = static_cast<int>(v.tokens.size()); id < n; ++id) {
    v.tokens.push_back(absl::StrCat("[PAD", id, "]"));
    v.types.push_back(static_cast<int32_t>(TokenType::kUnused));
  }
}

absl::StatusOr<Vocabulary> ParseTokenizerJson(const std::string& text, const std::string& config_text,
                                              const std::string& source) {
  const json root = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (root.is_discarded()) return absl::InvalidArgumentError(absl::StrCat(source, ": not JSON"));
  json config;
  if (!config_text.empty()) {
    config = json::parse(config_text, nullptr, false);
    if (config.is_discarded()) {
      return absl::InvalidArgumentError(absl::StrCat(source, ": tokenizer_config.json beside it is not JSON"));
    }
  }
  // The reader checks every type it reads; this only guards against one it missed.
  try {
    return Reader(source).Read(root, config);
  } catch (const json::exception& e) {
    return absl::InvalidArgumentError(absl::StrCat(source, ": malformed tokenizer.json (", e.what(), ")"));
  }
}

absl::StatusOr<Vocabulary> ReadTokenizerJson(const std::string& path) {
  absl::StatusOr<std::string> text = ReadTokenizerFile(path);
  if (!text.ok()) return text.status();
  const size_t slash = path.rfind('/');
  const std::string config_path =
      (slash == std::string::npos ? std::string() : path.substr(0, slash + 1)) + "tokenizer_config.json";
  std::string config;
  struct stat st;
  if (stat(config_path.c_str(), &st) == 0) {
    absl::StatusOr<std::string> c = ReadTokenizerFile(config_path);
    if (!c.ok()) return c.status();
    config = *std::move(c);
  }
  return ParseTokenizerJson(*text, config, path);
}

}  // namespace toyllm
