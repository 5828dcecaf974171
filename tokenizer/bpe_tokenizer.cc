#include "tokenizer/bpe_tokenizer.h"

#include <algorithm>
#include <array>
#include <string_view>
#include <unordered_map>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "tokenizer/byte_alphabet.h"
#include "tokenizer/normalizer.h"
#include "tokenizer/pre_tokenizer.h"
#include "tokenizer/utf8.h"

namespace toyllm {
namespace {

// Control tokens that close a turn, which llama.cpp also treats as end of generation.
constexpr const char* kEndOfTurnTexts[] = {
    "<|eot_id|>", "<|im_end|>", "<|end|>", "<end_of_turn>", "<|endoftext|>", "<|eom_id|>",
    "<EOT>", "_<EOT>", "<|end_of_text|>", "<｜end▁of▁sentence｜>", "<end_of_utterance>"};

struct Merge {
  int rank;
  int result;  // the id of the merged piece
};

// The merges by (left id, right id): an open-addressing table, probed linearly. Encoding
// looks a pair up for every neighbour of every merge, so this is its hottest loop; a
// node-based std::unordered_map costs a cache miss per lookup more.
class MergeTable {
 public:
  void Reserve(size_t n) {
    size_t size = 16;
    while (size < 2 * n) size *= 2;
    slots_.assign(size, Slot{kEmpty, {}});
    mask_ = size - 1;
  }

  // Keeps the first merge of a pair (the lowest rank), as llama.cpp's map does.
  void Insert(int left, int right, Merge merge) {
    const uint64_t key = Key(left, right);
    for (size_t i = Hash(key);; i = (i + 1) & mask_) {
      if (slots_[i].key == key) return;
      if (slots_[i].key == kEmpty) {
        slots_[i] = {key, merge};
        return;
      }
    }
  }

  const Merge* Find(int left, int right) const {
    const uint64_t key = Key(left, right);
    for (size_t i = Hash(key);; i = (i + 1) & mask_) {
      if (slots_[i].key == key) return &slots_[i].merge;
      if (slots_[i].key == kEmpty) return nullptr;
    }
  }

 private:
  static constexpr uint64_t kEmpty = ~uint64_t{0};  // ids are never negative here
  struct Slot {
    uint64_t key;
    Merge merge;
  };
  static uint64_t Key(int left, int right) {
    return (static_cast<uint64_t>(static_cast<uint32_t>(left)) << 32) | static_cast<uint32_t>(right);
  }
  size_t Hash(uint64_t key) const { return static_cast<size_t>((key * 0x9E3779B97F4A7C15ull) >> 32) & mask_; }

  std::vector<Slot> slots_;
  size_t mask_ = 0;
};

class BpeTokenizer : public Tokenizer {
 public:
  explicit BpeTokenizer(Vocabulary v) : v_(std::move(v)) {}

  absl::Status Init() {
    if (absl::Status s = CheckArrays(); !s.ok()) return s;
    const int n = vocab_size();
    ids_.reserve(n);
    for (int id = 0; id < n; ++id) ids_[v_.tokens[id]] = id;  // a repeated text: the last id, as llama.cpp
    for (int b = 0; b < 256; ++b) byte_ids_[b] = IdOf(ByteToAlphabet(static_cast<uint8_t>(b)));
    if (absl::Status s = IndexMerges(); !s.ok()) return s;
    if (absl::Status s = MakePreTokenizer(); !s.ok()) return s;
    FindSpecials();
    return absl::OkStatus();
  }

  std::vector<int> Encode(std::string_view text, bool add_bos) const override {
    std::vector<int> ids;
    if (add_bos && v_.bos_id >= 0) ids.push_back(v_.bos_id);
    Scratch scratch;
    size_t plain = 0;  // start of the text not yet encoded
    for (size_t i = 0; i < text.size(); ++i) {
      if (!special_first_[static_cast<unsigned char>(text[i])]) continue;
      const int special = SpecialAt(text, i);
      if (special < 0) continue;
      EncodePlain(text.substr(plain, i - plain), scratch, ids);
      ids.push_back(special);
      i += v_.tokens[special].size() - 1;
      plain = i + 1;
    }
    EncodePlain(text.substr(plain), scratch, ids);
    return ids;
  }

  std::string Decode(const std::vector<int>& ids) const override {
    std::string text;
    for (int id : ids) AppendBytes(id, &text);
    return text;
  }

  std::string Piece(int id) const override { return v_.tokens[id]; }
  std::string Readable(int id) const override {
    const TokenType t = Type(id);
    if (t != TokenType::kNormal && t != TokenType::kByte) return v_.tokens[id];
    std::string bytes;
    AppendBytes(id, &bytes);
    return ShowBytes(bytes);
  }
  float Score(int id) const override { return v_.scores.empty() ? 0.0f : v_.scores[id]; }
  TokenType Type(int id) const override {
    return v_.types.empty() ? TokenType::kNormal : static_cast<TokenType>(v_.types[id]);
  }
  const Vocabulary& vocabulary() const override { return v_; }
  bool IsEndOfGeneration(int id) const override { return id >= 0 && id < vocab_size() && end_of_generation_[id]; }
  bool add_bos() const override { return v_.add_bos; }
  int vocab_size() const override { return static_cast<int>(v_.tokens.size()); }
  int bos_id() const override { return v_.bos_id; }
  int eos_id() const override { return v_.eos_id; }
  int unk_id() const override { return v_.unk_id; }

 private:
  int IdOf(const std::string& text) const {
    auto it = ids_.find(text);
    return it == ids_.end() ? -1 : it->second;
  }

  absl::Status CheckArrays() const {
    const int n = vocab_size();
    if (n == 0) return absl::InvalidArgumentError("the vocabulary is empty");
    if (!v_.types.empty() && static_cast<int>(v_.types.size()) != n) {
      return absl::InvalidArgumentError(absl::StrCat("there are ", n, " tokens but ", v_.types.size(), " token types"));
    }
    if (!v_.scores.empty() && static_cast<int>(v_.scores.size()) != n) {
      return absl::InvalidArgumentError(absl::StrCat("there are ", n, " tokens but ", v_.scores.size(), " scores"));
    }
    for (int32_t t : v_.types) {
      if (t < 1 || t > 6) return absl::InvalidArgumentError(absl::StrCat("token type ", t, " is not 1..6"));
    }
    for (auto [name, id] : {std::pair{"bos", v_.bos_id}, std::pair{"eos", v_.eos_id}, std::pair{"eot", v_.eot_id},
                            std::pair{"unknown", v_.unk_id}, std::pair{"padding", v_.pad_id}}) {
      if (id < -1 || id >= n) {
        return absl::InvalidArgumentError(absl::StrCat("the ", name, " id ", id, " is outside the ", n, " tokens"));
      }
    }
    if (v_.add_bos && v_.bos_id < 0) return absl::InvalidArgumentError("add_bos_token is set but there is no BOS token");
    return absl::OkStatus();
  }

  // Each merge "left right" as the ids of left, right and what they make, all of which the
  // vocabulary must hold.
  absl::Status IndexMerges() {
    merges_.Reserve(v_.merges.size());
    for (size_t rank = 0; rank < v_.merges.size(); ++rank) {
      const std::string& merge = v_.merges[rank];
      const size_t space = merge.find(' ', 1);
      if (space == std::string::npos) {
        return absl::InvalidArgumentError(absl::StrCat("merge ", rank, " '", merge, "' is not two pieces"));
      }
      const std::string left = merge.substr(0, space), right = merge.substr(space + 1);
      int ids[3];
      const std::string pieces[3] = {left, right, left + right};
      for (int k = 0; k < 3; ++k) {
        ids[k] = IdOf(pieces[k]);
        if (ids[k] < 0) {
          return absl::InvalidArgumentError(absl::StrCat("merge ", rank, " '", merge, "' makes or uses '", pieces[k],
                                                         "', which is not in the vocabulary"));
        }
      }
      merges_.Insert(ids[0], ids[1], Merge{static_cast<int>(rank), ids[2]});
    }
    return absl::OkStatus();
  }

  absl::Status MakePreTokenizer() {
    std::vector<std::string> regexes = v_.pre_regexes;
    if (regexes.empty()) {
      const std::string name = v_.pre.empty() ? "default" : v_.pre;
      const std::vector<std::string>* named = PreTokenizerRegexes(name);
      if (named == nullptr) {
        return absl::UnimplementedError(absl::StrCat("pre-tokenizer '", name, "' is unknown (known: ",
                                                     KnownPreTokenizers(), ")"));
      }
      regexes = *named;
    }
    absl::StatusOr<std::unique_ptr<PreTokenizer>> pre = PreTokenizer::Create(regexes);
    if (!pre.ok()) return pre.status();
    pre_ = *std::move(pre);
    if (!v_.normalizer.empty() && !IsNormalizationForm(v_.normalizer)) {
      return absl::UnimplementedError(absl::StrCat("normalizer '", v_.normalizer, "' is not supported"));
    }
    return absl::OkStatus();
  }

  // The tokens matched literally in the text (longest first), and those ending generation.
  void FindSpecials() {
    const int n = vocab_size();
    for (int id = 0; id < n; ++id) {
      const TokenType t = Type(id);
      if ((t == TokenType::kControl || t == TokenType::kUserDefined || t == TokenType::kUnknown) &&
          !v_.tokens[id].empty()) {
        specials_.push_back(id);
      }
    }
    std::stable_sort(specials_.begin(), specials_.end(),
                     [this](int a, int b) { return v_.tokens[a].size() > v_.tokens[b].size(); });
    for (int id : specials_) special_first_[static_cast<unsigned char>(v_.tokens[id][0])] = true;

    end_of_generation_.assign(n, false);
    for (int id : {v_.eos_id, v_.eot_id}) {
      if (id >= 0) end_of_generation_[id] = true;
    }
    for (const char* text : kEndOfTurnTexts) {
      const int id = IdOf(text);
      if (id >= 0 && Type(id) == TokenType::kControl) end_of_generation_[id] = true;
    }
  }

  // One piece of a word being merged, in a linked list over the word's bytes.
  struct Node {
    int id, prev, next;
  };
  // A queued merge of the piece at `left` with its right neighbour.
  struct Pair {
    int rank, left, left_id, right_id, result;
    // The heap's top is the lowest rank, then the leftmost pair.
    bool operator<(const Pair& o) const { return rank != o.rank ? rank > o.rank : left > o.left; }
  };
  // What one Encode call reuses from word to word. Words repeat: a long text merges each
  // distinct word once.
  struct Scratch {
    std::unordered_map<std::string, std::vector<int>> cache;
    std::vector<Node> nodes;
    std::vector<Pair> heap;
  };

  // The special token that starts at text[i], the longest when several do, or -1.
  int SpecialAt(std::string_view text, size_t i) const {
    for (int id : specials_) {
      const std::string& s = v_.tokens[id];
      if (text.compare(i, s.size(), s) == 0) return id;
    }
    return -1;
  }

  void EncodePlain(std::string_view text, Scratch& scratch, std::vector<int>& ids) const {
    if (text.empty()) return;
    std::string owned;
    if (!v_.normalizer.empty()) {
      owned = Normalize(v_.normalizer, text);
      text = owned;
    }
    if (v_.add_prefix_space && text[0] != ' ') {
      std::string prefixed = " ";  // text may lie in owned itself
      prefixed.append(text);
      owned = std::move(prefixed);
      text = owned;
    }
    for (std::string_view word : pre_->Split(text)) {
      auto [it, fresh] = scratch.cache.try_emplace(std::string(word));
      if (fresh) MergeWord(word, scratch, it->second);
      ids.insert(ids.end(), it->second.begin(), it->second.end());
    }
  }

  // BPE on one word: a linked list of pieces, each starting as one byte, and a queue of the
  // adjacent pairs that have a merge, lowest rank (then leftmost) first. A queued pair is
  // stale once either piece has changed or gone, which its recorded ids tell: a piece only
  // grows, and a piece merged into its left neighbour gets id -1.
  void MergeWord(std::string_view word, Scratch& scratch, std::vector<int>& out) const {
    if (v_.ignore_merges) {
      std::string text;
      AppendAlphabetText(word, &text);
      auto it = ids_.find(text);
      if (it != ids_.end()) {
        out.push_back(it->second);
        return;
      }
    }
    const int n = static_cast<int>(word.size());
    std::vector<Node>& pieces = scratch.nodes;
    pieces.resize(n);
    for (int i = 0; i < n; ++i) pieces[i] = {byte_ids_[static_cast<unsigned char>(word[i])], i - 1, i + 1 < n ? i + 1 : -1};
    std::vector<Pair>& heap = scratch.heap;
    heap.clear();
    const auto consider = [&](int left) {
      if (left < 0 || pieces[left].next < 0) return;
      const int l = pieces[left].id, r = pieces[pieces[left].next].id;
      if (l < 0 || r < 0) return;
      if (const Merge* m = merges_.Find(l, r)) {
        heap.push_back({m->rank, left, l, r, m->result});
        std::push_heap(heap.begin(), heap.end());
      }
    };
    for (int i = 0; i + 1 < n; ++i) consider(i);
    while (!heap.empty()) {
      std::pop_heap(heap.begin(), heap.end());
      const Pair p = heap.back();
      heap.pop_back();
      Node& left = pieces[p.left];
      if (left.id != p.left_id || left.next < 0 || pieces[left.next].id != p.right_id) continue;
      const Node right = pieces[left.next];
      pieces[left.next].id = -1;  // gone: pairs queued with it on the left are stale
      left.id = p.result;
      left.next = right.next;
      if (right.next >= 0) pieces[right.next].prev = p.left;
      consider(left.prev);
      consider(p.left);
    }
    for (int i = 0; i >= 0 && i < n; i = pieces[i].next) {
      // A byte the vocabulary lacks: llama.cpp drops it too, unless there is an unknown token.
      if (pieces[i].id >= 0) {
        out.push_back(pieces[i].id);
      } else if (v_.unk_id >= 0) {
        out.push_back(v_.unk_id);
      }
    }
  }

  void AppendBytes(int id, std::string* out) const {
    if (id < 0 || id >= vocab_size()) return;
    const std::string& piece = v_.tokens[id];
    switch (Type(id)) {
      case TokenType::kControl:
      case TokenType::kUnused:
        return;
      case TokenType::kUserDefined:
      case TokenType::kUnknown:
        out->append(piece);
        return;
      case TokenType::kByte:  // <0xAB>, from a vocabulary with byte fallback
        if (int byte; piece.size() == 6 && piece.compare(0, 3, "<0x") == 0 &&
                      absl::SimpleHexAtoi(piece.substr(3, 2), &byte)) {
          out->push_back(static_cast<char>(byte));
          return;
        }
        break;
      case TokenType::kNormal:
        break;
    }
    AppendAlphabetBytes(piece, out);
  }

  Vocabulary v_;
  std::unordered_map<std::string, int> ids_;
  std::array<int, 256> byte_ids_;
  MergeTable merges_;
  std::unique_ptr<PreTokenizer> pre_;
  std::vector<int> specials_;
  std::array<bool, 256> special_first_{};
  std::vector<bool> end_of_generation_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<Tokenizer>> NewBpeTokenizer(Vocabulary vocabulary) {
  auto tokenizer = std::make_unique<BpeTokenizer>(std::move(vocabulary));
  if (absl::Status s = tokenizer->Init(); !s.ok()) return s;
  return tokenizer;
}

}  // namespace toyllm
