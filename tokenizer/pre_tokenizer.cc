#include "tokenizer/pre_tokenizer.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include <map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "tokenizer/utf8.h"

namespace toyllm {
namespace {

// llama.cpp's regexes (src/llama-vocab.cpp, llm_tokenizer_bpe), by the names its converter
// writes into tokenizer.ggml.pre. Where the model's tokenizer.json says (?i:'s|'t|...),
// llama.cpp spells the contractions out ('[sS]|'[tT]...), which also keeps case folding
// from matching look-alikes such as U+017F 'ſ'.
constexpr char kGpt2[] = "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)";
constexpr char kContractions[] = "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])";
const std::string kLlama3 = absl::StrCat(kContractions,
    "|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+");
const std::string kQwen2 = absl::StrCat(kContractions,
    "|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+");
constexpr char kCjk[] = "[一-龥ࠀ-一가-퟿]+";

const std::map<std::string, std::vector<std::string>>& Table() {
  static const auto* table = [] {
    const std::vector<std::string> llama3 = {kLlama3};
    const std::vector<std::string> qwen2 = {kQwen2};
    const std::vector<std::string> gpt2 = {kGpt2};
    const std::vector<std::string> starcoder = {"\\p{N}", kGpt2};
    // Greek Extended and letterlike code points as escapes: several are canonically
    // equivalent to other letters (U+1F7D to U+03CE), and a normalising editor would change them.
    const std::vector<std::string> deepseek_llm = {
        "[\r\n]",
        "\\s?[A-Za-zµÀ-ÖØ-öø-ƺƼ-ƿǄ-ʓʕ-ʯͰ-ͳͶͷͻ-ͽͿΆΈ-ΊΌΎ-ΡΣ-ϵϷ-ҁҊ-ԯԱ-ՖႠ-ჅᎠ-Ᏽᏸ-ᏽᲐ-ᲺᲽ-Ჿᴀ-ᴫᵫ-ᵷᵹ-ᶚḀ-ἕἘ-Ἕἠ-ὅὈ-Ὅὐ-"
        "\\x{1F57}\\x{1F59}\\x{1F5B}\\x{1F5D}\\x{1F5F}-\\x{1F7D}\\x{1F80}-\\x{1FB4}\\x{1FB6}-\\x{1FBC}\\x{1FBE}\\x{1FC2}-\\x{1FC4}"
        "\\x{1FC6}-\\x{1FCC}\\x{1FD0}-\\x{1FD3}\\x{1FD6}-\\x{1FDB}\\x{1FE0}-\\x{1FEC}\\x{1FF2}-\\x{1FF4}\\x{1FF6}-\\x{1FFC}"
        "\\x{2102}\\x{2107}\\x{210A}-\\x{2113}\\x{2115}\\x{2119}-\\x{211D}\\x{2124}\\x{2126}\\x{2128}\\x{212A}-\\x{212D}"
        "\\x{212F}-\\x{2134}\\x{2139}\\x{213C}-\\x{213F}\\x{2145}-\\x{2149}\\x{214E}\\x{2183}\\x{2184}"
        "Ⰰ-ⱻⱾ-ⳤⳫ-ⳮⳲⳳꙀ-ꙭꚀ-ꚛꜢ-ꝯꝱ-ꞇꞋ-ꞎꭰ-ꮿﬀ-ﬆﬓ-"
        "ﬗＡ-Ｚａ-ｚ𐐀-𐑏𐒰-𐓓𐓘-𐓻𐲀-𐲲𐳀-𐳲𑢠-𑣟𞤀-𞥃]+",
        "\\s?[!-/:-~！-／：-～‘-‟　-。]+",
        "\\s+$",
        kCjk,
        "\\p{N}+",
    };
    const std::vector<std::string> deepseek_coder = {"[\r\n]", "\\s?\\p{L}+", "\\s?\\p{P}+", kCjk, "\\p{N}"};
    const std::vector<std::string> falcon = {"[\\p{P}\\$\\+<=>\\^~\\|`]+", kGpt2, "[0-9][0-9][0-9]"};
    const std::vector<std::string> bloom = {" ?[^(\\s|.,!?…。，、।۔،)]+"};
    return new std::map<std::string, std::vector<std::string>>{
        {"default", {"[\\p{P}\\$\\+<=>\\^~\\|]+", kGpt2, "\\p{N}+", "[0-9][0-9][0-9]"}},
        {"llama-bpe", llama3}, {"llama3", llama3}, {"llama-v3", llama3}, {"falcon3", llama3},
        {"dbrx", llama3}, {"smaug-bpe", llama3}, {"chatglm-bpe", llama3},
        {"qwen2", qwen2}, {"deepseek-r1-qwen", qwen2}, {"stablelm2", qwen2},
        {"gpt-2", gpt2}, {"phi-2", gpt2}, {"mpt", gpt2}, {"olmo", gpt2}, {"jais", gpt2},
        {"roberta-bpe", gpt2},
        {"starcoder", starcoder}, {"refact", starcoder}, {"command-r", starcoder},
        {"smollm", starcoder}, {"codeshell", starcoder}, {"exaone", starcoder},
        {"deepseek-llm", deepseek_llm}, {"deepseek-coder", deepseek_coder},
        {"falcon", falcon},
        {"bloom", bloom}, {"poro-chat", bloom}, {"gpt3-finnish", bloom},
        {"viking", {bloom[0], "\\p{N}"}},
    };
  }();
  return *table;
}

// A JIT stack larger than PCRE2's 32 KiB default: \s+(?!\S) backtracks once per character
// of a run of spaces.
constexpr size_t kJitStackBytes = 8 << 20;

}  // namespace

struct PreTokenizer::Compiled {
  pcre2_code* code = nullptr;
  ~Compiled() { pcre2_code_free(code); }
};

const std::vector<std::string>* PreTokenizerRegexes(const std::string& name) {
  auto it = Table().find(name);
  return it == Table().end() ? nullptr : &it->second;
}

std::string KnownPreTokenizers() {
  std::vector<std::string> names;
  for (const auto& [name, regexes] : Table()) names.push_back(name);
  return absl::StrJoin(names, ", ");
}

std::string PreTokenizerName(const std::vector<std::string>& regexes) {
  // The canonical names first: those llama.cpp's converter writes today.
  for (const char* name : {"llama-bpe", "qwen2", "gpt-2", "starcoder", "deepseek-llm",
                           "deepseek-coder", "falcon", "bloom", "viking", "default"}) {
    if (*PreTokenizerRegexes(name) == regexes) return name;
  }
  return "";
}

absl::StatusOr<std::unique_ptr<PreTokenizer>> PreTokenizer::Create(const std::vector<std::string>& regexes) {
  std::unique_ptr<PreTokenizer> pre(new PreTokenizer);
  for (const std::string& regex : regexes) {
    int error = 0;
    PCRE2_SIZE offset = 0;
    // UTF and UCP: \s, \p{L} and [^...] work on code points; MATCH_INVALID_UTF: a text
    // that is not UTF-8 still splits (its bad bytes match nothing); DOLLAR_ENDONLY: `$`
    // is the end of the piece, as in the ECMAScript regexes llama.cpp runs.
    pcre2_code* code = pcre2_compile(
        reinterpret_cast<PCRE2_SPTR>(regex.data()), regex.size(),
        PCRE2_UTF | PCRE2_UCP | PCRE2_MATCH_INVALID_UTF | PCRE2_DOLLAR_ENDONLY, &error, &offset, nullptr);
    if (code == nullptr) {
      PCRE2_UCHAR message[256];
      pcre2_get_error_message(error, message, sizeof(message));
      return absl::InvalidArgumentError(absl::StrCat("the pre-tokenizer regex '", regex, "' is rejected at offset ",
                                                     offset, ": ", reinterpret_cast<const char*>(message)));
    }
    pcre2_jit_compile(code, PCRE2_JIT_COMPLETE);  // without JIT it is slower, not wrong
    auto compiled = std::make_unique<Compiled>();
    compiled->code = code;
    pre->regexes_.push_back(std::move(compiled));
  }
  return pre;
}

PreTokenizer::~PreTokenizer() = default;

std::vector<std::string_view> PreTokenizer::Split(std::string_view text) const {
  std::vector<std::string_view> pieces;
  if (!text.empty()) pieces.push_back(text);
  pcre2_match_context* context = pcre2_match_context_create(nullptr);
  pcre2_jit_stack* stack = pcre2_jit_stack_create(32 << 10, kJitStackBytes, nullptr);
  pcre2_jit_stack_assign(context, nullptr, stack);
  for (const std::unique_ptr<Compiled>& regex : regexes_) {
    pcre2_match_data* match = pcre2_match_data_create_from_pattern(regex->code, nullptr);
    std::vector<std::string_view> next;
    for (std::string_view piece : pieces) {
      const auto* subject = reinterpret_cast<PCRE2_SPTR>(piece.data());
      size_t start = 0;  // where the next search begins
      size_t done = 0;   // the piece's bytes already emitted
      while (start < piece.size()) {
        const int rc = pcre2_match(regex->code, subject, piece.size(), start, 0, match, context);
        // No match, or PCRE2 gave up (a resource limit): the rest stays one piece.
        if (rc < 0) break;
        const PCRE2_SIZE* ovector = pcre2_get_ovector_pointer(match);
        const size_t begin = ovector[0], end = ovector[1];
        if (end == begin) {  // an empty match cuts nothing; step over a character
          if (begin >= piece.size()) break;
          start = begin + Utf8Length(piece, begin);
          continue;
        }
        if (begin > done) next.push_back(piece.substr(done, begin - done));
        next.push_back(piece.substr(begin, end - begin));
        done = start = end;
      }
      if (done < piece.size()) next.push_back(piece.substr(done));
    }
    pcre2_match_data_free(match);
    pieces = std::move(next);
  }
  pcre2_jit_stack_free(stack);
  pcre2_match_context_free(context);
  return pieces;
}

}  // namespace toyllm
