#include "tools/chat/jinja_parser.h"

#include <algorithm>
#include <cstdlib>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"

namespace toyllm::jinja {
namespace {

struct Token {
  enum class Kind { kName, kString, kNumber, kOp, kEnd };
  Kind kind;
  std::string text;
  Json number;
};

// A piece of the source: text, {{ expression }} or {% statement %} (comments are dropped).
struct Segment {
  enum class Kind { kText, kOutput, kStatement };
  Kind kind;
  std::string text;
  std::vector<Token> tokens;
  int line;
};

// Bounds that keep the recursive parser and interpreter within a thread's stack whatever
// the input: tokens in one tag (a chain a+b+c+... nests one level per operator), nested
// parentheses, brackets and unary operators, and nested blocks.
constexpr size_t kMaxTagTokens = 2048;
constexpr int kMaxNesting = 64;

bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }

absl::Status ErrorAt(int line, const std::string& what) {
  return absl::InvalidArgumentError(absl::StrCat("chat template line ", line, ": ", what));
}

// Lexes the inside of a tag from src[i] up to its closing `close` ("}}" or "%}"); sets
// strip_after for a "-" before it.
absl::StatusOr<std::vector<Token>> LexTag(std::string_view src, size_t& i, std::string_view close,
                                          int line, bool* strip_after) {
  std::vector<Token> tokens;
  while (true) {
    while (i < src.size() && IsSpace(src[i])) ++i;
    if (i >= src.size()) return ErrorAt(line, absl::StrCat("unclosed tag, expected '", std::string(close), "'"));
    if ((src[i] == '-' || src[i] == '+') && src.substr(i + 1, close.size()) == close) {
      *strip_after = src[i] == '-';
      i += 1 + close.size();
      break;
    }
    if (src.substr(i, close.size()) == close) {
      *strip_after = false;
      i += close.size();
      break;
    }
    const char c = src[i];
    if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      size_t j = i;
      while (j < src.size() && (std::isalnum(static_cast<unsigned char>(src[j])) || src[j] == '_')) ++j;
      tokens.push_back({Token::Kind::kName, std::string(src.substr(i, j - i)), nullptr});
      i = j;
    } else if (std::isdigit(static_cast<unsigned char>(c))) {
      size_t j = i;
      bool is_float = false;
      while (j < src.size() && (std::isdigit(static_cast<unsigned char>(src[j])) || src[j] == '_' ||
                                (src[j] == '.' && j + 1 < src.size() && std::isdigit(static_cast<unsigned char>(src[j + 1]))))) {
        is_float |= src[j] == '.';
        ++j;
      }
      std::string digits;
      for (char d : src.substr(i, j - i)) if (d != '_') digits += d;
      Json number = is_float ? Json(std::strtod(digits.c_str(), nullptr))
                             : Json(static_cast<int64_t>(std::strtoll(digits.c_str(), nullptr, 10)));
      tokens.push_back({Token::Kind::kNumber, digits, number});
      i = j;
    } else if (c == '\'' || c == '"') {
      std::string s;
      size_t j = i + 1;
      for (; j < src.size() && src[j] != c; ++j) {
        if (src[j] == '\\' && j + 1 < src.size()) {
          const char e = src[++j];
          s += e == 'n' ? '\n' : e == 't' ? '\t' : e == 'r' ? '\r' : e;
          if (e != 'n' && e != 't' && e != 'r' && e != '\\' && e != '\'' && e != '"') s.insert(s.size() - 1, "\\");
        } else {
          s += src[j];
        }
      }
      if (j >= src.size()) return ErrorAt(line, "unterminated string");
      tokens.push_back({Token::Kind::kString, s, nullptr});
      i = j + 1;
    } else {
      static const char* kOps[] = {"//", "**", "==", "!=", "<=", ">=", "+", "-", "*", "/", "%", "~", "<", ">",
                                   "(", ")", "[", "]", "{", "}", ",", ".", ":", "|", "="};
      bool found = false;
      for (const char* op : kOps) {
        if (src.substr(i, std::char_traits<char>::length(op)) == op) {
          tokens.push_back({Token::Kind::kOp, op, nullptr});
          i += std::char_traits<char>::length(op);
          found = true;
          break;
        }
      }
      if (!found) return ErrorAt(line, absl::StrCat("unexpected character '", std::string(1, c), "'"));
    }
  }
  if (tokens.size() > kMaxTagTokens) return ErrorAt(line, "the tag is too long");
  tokens.push_back({Token::Kind::kEnd, "", nullptr});
  return tokens;
}

int LineOf(std::string_view src, size_t pos) {
  int line = 1;
  for (size_t i = 0; i < pos && i < src.size(); ++i) line += src[i] == '\n';
  return line;
}

// Splits the source into segments and applies the whitespace control: "-" strips all
// whitespace on its side; lstrip_blocks drops the spaces before a block tag that starts a
// line, trim_blocks the newline after one.
absl::StatusOr<std::vector<Segment>> Segments(std::string_view src) {
  std::vector<Segment> out;
  size_t i = 0;
  bool strip_next = false, trim_newline = false;
  while (i <= src.size()) {
    size_t open = src.find('{', i);
    while (open != std::string_view::npos && open + 1 < src.size() && src[open + 1] != '{' &&
           src[open + 1] != '%' && src[open + 1] != '#') {
      open = src.find('{', open + 1);
    }
    if (open + 1 >= src.size()) open = std::string_view::npos;
    std::string text(src.substr(i, open == std::string_view::npos ? std::string_view::npos : open - i));
    if (trim_newline && !text.empty() && text[0] == '\n') text.erase(0, 1);
    if (strip_next) {
      size_t k = 0;
      while (k < text.size() && IsSpace(text[k])) ++k;
      text.erase(0, k);
    }
    if (open == std::string_view::npos) {
      if (!text.empty()) out.push_back({Segment::Kind::kText, text, {}, 0});
      break;
    }
    const char type = src[open + 1];
    size_t j = open + 2;
    const char modifier = j < src.size() ? src[j] : '\0';
    if (modifier == '-' || modifier == '+') ++j;
    if (modifier == '-') {
      while (!text.empty() && IsSpace(text.back())) text.pop_back();
    } else if (type != '{' && modifier != '+') {
      // lstrip_blocks: the spaces and tabs between the line's start and the tag go.
      size_t p = open;
      while (p > 0 && (src[p - 1] == ' ' || src[p - 1] == '\t')) --p;
      if (p == 0 || src[p - 1] == '\n') {
        size_t k = text.size();
        while (k > 0 && text.size() - k < open - p && (text[k - 1] == ' ' || text[k - 1] == '\t')) --k;
        text.resize(k);
      }
    }
    if (!text.empty()) out.push_back({Segment::Kind::kText, text, {}, 0});
    const int line = LineOf(src, open);
    if (type == '#') {
      const size_t end = src.find("#}", j);
      if (end == std::string_view::npos) return ErrorAt(line, "unclosed comment");
      strip_next = end > 0 && src[end - 1] == '-';
      trim_newline = true;
      i = end + 2;
      continue;
    }
    bool strip_after = false;
    absl::StatusOr<std::vector<Token>> tokens = LexTag(src, j, type == '{' ? "}}" : "%}", line, &strip_after);
    if (!tokens.ok()) return tokens.status();
    out.push_back({type == '{' ? Segment::Kind::kOutput : Segment::Kind::kStatement, "", *std::move(tokens), line});
    strip_next = strip_after;
    trim_newline = type == '%' && src[j - 3] != '+';
    i = j;
  }
  return out;
}

// Recursive descent over one tag's tokens, with Jinja2's precedence: ternary, or, and, not,
// comparisons, then + -, ~, * / // %, ** (Arithmetic), unary -, then primaries with their .attr, [item],
// (call), | filter and `is` test.
class ExprParser {
 public:
  ExprParser(const std::vector<Token>& tokens, int line) : tokens_(tokens), line_(line) {}

  bool AtEnd() const { return Peek().kind == Token::Kind::kEnd; }
  const Token& Peek(int ahead = 0) const {
    const size_t k = std::min(pos_ + ahead, tokens_.size() - 1);
    return tokens_[k];
  }
  bool IsOp(const char* op, int ahead = 0) const {
    return Peek(ahead).kind == Token::Kind::kOp && Peek(ahead).text == op;
  }
  bool IsName(const char* name, int ahead = 0) const {
    return Peek(ahead).kind == Token::Kind::kName && Peek(ahead).text == name;
  }
  bool AcceptOp(const char* op) {
    if (!IsOp(op)) return false;
    ++pos_;
    return true;
  }
  bool AcceptName(const char* name) {
    if (!IsName(name)) return false;
    ++pos_;
    return true;
  }
  absl::Status ExpectOp(const char* op) {
    if (AcceptOp(op)) return absl::OkStatus();
    return Error(absl::StrCat("expected '", op, "'"));
  }
  absl::StatusOr<std::string> Name() {
    if (Peek().kind != Token::Kind::kName) return Error("expected a name");
    return tokens_[pos_++].text;
  }
  absl::Status Error(const std::string& what) const {
    return ErrorAt(line_, absl::StrCat(what, AtEnd() ? " at the end of the tag" : " near '" + Peek().text + "'"));
  }
  absl::Status ExpectEnd() { return AtEnd() ? absl::OkStatus() : Error("unexpected tokens"); }

  absl::StatusOr<ExprPtr> Expression() { return Ternary(); }

  // `or`-level expression without a trailing `if` (a for loop's iterable).
  absl::StatusOr<ExprPtr> NoTernary() { return Or(); }

 private:
  static ExprPtr Make(Expr::Kind kind) {
    auto e = std::make_unique<Expr>();
    e->kind = kind;
    return e;
  }
  static ExprPtr Binary(std::string op, ExprPtr a, ExprPtr b) {
    ExprPtr e = Make(Expr::Kind::kBinary);
    e->name = std::move(op);
    e->items.push_back(std::move(a));
    e->items.push_back(std::move(b));
    return e;
  }

  // Counts one level of nesting while it lives.
  struct Nested {
    explicit Nested(int& depth) : depth(++depth) {}
    ~Nested() { --depth; }
    int& depth;
  };

  absl::StatusOr<ExprPtr> Ternary() {
    Nested nested(depth_);
    if (depth_ > kMaxNesting) return Error("expressions nest too deeply");
    absl::StatusOr<ExprPtr> a = Or();
    if (!a.ok()) return a;
    while (AcceptName("if")) {
      absl::StatusOr<ExprPtr> cond = Or();
      if (!cond.ok()) return cond;
      ExprPtr e = Make(Expr::Kind::kTernary);
      e->items.push_back(*std::move(a));
      e->items.push_back(*std::move(cond));
      if (AcceptName("else")) {
        absl::StatusOr<ExprPtr> c = Ternary();
        if (!c.ok()) return c;
        e->items.push_back(*std::move(c));
      } else {
        e->items.push_back(nullptr);
      }
      a = std::move(e);
    }
    return a;
  }
  absl::StatusOr<ExprPtr> Or() {
    absl::StatusOr<ExprPtr> a = And();
    while (a.ok() && AcceptName("or")) {
      absl::StatusOr<ExprPtr> b = And();
      if (!b.ok()) return b;
      a = Binary("or", *std::move(a), *std::move(b));
    }
    return a;
  }
  absl::StatusOr<ExprPtr> And() {
    absl::StatusOr<ExprPtr> a = Not();
    while (a.ok() && AcceptName("and")) {
      absl::StatusOr<ExprPtr> b = Not();
      if (!b.ok()) return b;
      a = Binary("and", *std::move(a), *std::move(b));
    }
    return a;
  }
  absl::StatusOr<ExprPtr> Not() {
    Nested nested(depth_);
    if (depth_ > kMaxNesting) return Error("expressions nest too deeply");
    if (AcceptName("not")) {
      absl::StatusOr<ExprPtr> a = Not();
      if (!a.ok()) return a;
      ExprPtr e = Make(Expr::Kind::kUnary);
      e->name = "not";
      e->items.push_back(*std::move(a));
      return e;
    }
    return Compare();
  }
  absl::StatusOr<ExprPtr> Compare() {
    absl::StatusOr<ExprPtr> a = Arithmetic();
    while (a.ok()) {
      std::string op;
      for (const char* o : {"==", "!=", "<", "<=", ">", ">="}) {
        if (IsOp(o)) op = o;
      }
      if (!op.empty()) {
        ++pos_;
      } else if (IsName("in")) {
        ++pos_;
        op = "in";
      } else if (IsName("not") && IsName("in", 1)) {
        pos_ += 2;
        op = "not in";
      } else {
        break;
      }
      absl::StatusOr<ExprPtr> b = Arithmetic();
      if (!b.ok()) return b;
      a = Binary(op, *std::move(a), *std::move(b));
    }
    return a;
  }
  // The binary operators tighter than comparisons, loosest level first; each level is
  // left-associative, as in Jinja2.
  absl::StatusOr<ExprPtr> Arithmetic(size_t level = 0) {
    static const std::vector<std::vector<std::string>> kLevels = {{"+", "-"}, {"~"}, {"*", "/", "//", "%"}, {"**"}};
    if (level == kLevels.size()) return Unary();
    absl::StatusOr<ExprPtr> a = Arithmetic(level + 1);
    while (a.ok()) {
      const auto& ops = kLevels[level];
      auto op = std::find_if(ops.begin(), ops.end(), [&](const std::string& o) { return IsOp(o.c_str()); });
      if (op == ops.end()) break;
      ++pos_;
      absl::StatusOr<ExprPtr> b = Arithmetic(level + 1);
      if (!b.ok()) return b;
      a = Binary(*op, *std::move(a), *std::move(b));
    }
    return a;
  }
  absl::StatusOr<ExprPtr> Unary() {
    Nested nested(depth_);
    if (depth_ > kMaxNesting) return Error("expressions nest too deeply");
    if (IsOp("-") || IsOp("+")) {
      const std::string op = tokens_[pos_++].text;
      absl::StatusOr<ExprPtr> a = Unary();
      if (!a.ok()) return a;
      ExprPtr e = Make(Expr::Kind::kUnary);
      e->name = op;
      e->items.push_back(*std::move(a));
      return e;
    }
    absl::StatusOr<ExprPtr> a = Primary();
    if (!a.ok()) return a;
    return Postfix(*std::move(a));
  }

  absl::Status Args(std::vector<Arg>& args) {
    // After "(": positional and name=value arguments up to ")".
    while (!AcceptOp(")")) {
      if (!args.empty() && !AcceptOp(",")) return Error("expected ',' or ')'");
      if (AcceptOp(")")) break;
      Arg arg;
      if (Peek().kind == Token::Kind::kName && IsOp("=", 1)) {
        arg.name = tokens_[pos_].text;
        pos_ += 2;
      }
      absl::StatusOr<ExprPtr> value = Expression();
      if (!value.ok()) return value.status();
      arg.value = *std::move(value);
      args.push_back(std::move(arg));
    }
    return absl::OkStatus();
  }

  absl::StatusOr<ExprPtr> Postfix(ExprPtr a) {
    while (true) {
      if (AcceptOp(".")) {
        absl::StatusOr<std::string> name = Name();
        if (!name.ok()) return name.status();
        ExprPtr e = Make(Expr::Kind::kAttribute);
        e->name = *name;
        e->items.push_back(std::move(a));
        a = std::move(e);
      } else if (AcceptOp("[")) {
        std::vector<ExprPtr> parts(1);
        bool slice = false;
        while (!IsOp("]")) {
          if (AcceptOp(":")) {
            slice = true;
            parts.emplace_back();
            continue;
          }
          if (parts.back() != nullptr) return Error("expected ']'");
          absl::StatusOr<ExprPtr> part = Expression();
          if (!part.ok()) return part;
          parts.back() = *std::move(part);
        }
        ++pos_;
        if (!slice && parts[0] == nullptr) return Error("empty subscript");
        if (parts.size() > 3) return Error("a slice has at most three parts");
        ExprPtr e = Make(slice ? Expr::Kind::kSlice : Expr::Kind::kItem);
        e->items.push_back(std::move(a));
        for (ExprPtr& p : parts) e->items.push_back(std::move(p));
        a = std::move(e);
      } else if (AcceptOp("(")) {
        ExprPtr e = Make(Expr::Kind::kCall);
        e->items.push_back(std::move(a));
        if (absl::Status s = Args(e->args); !s.ok()) return s;
        a = std::move(e);
      } else if (AcceptOp("|")) {
        absl::StatusOr<std::string> name = Name();
        if (!name.ok()) return name.status();
        if (!IsKnownFilter(*name)) return ErrorAt(line_, absl::StrCat("unsupported filter '", *name, "'"));
        ExprPtr e = Make(Expr::Kind::kFilter);
        e->name = *name;
        e->items.push_back(std::move(a));
        if (AcceptOp("(")) {
          if (absl::Status s = Args(e->args); !s.ok()) return s;
        }
        a = std::move(e);
      } else if (AcceptName("is")) {
        ExprPtr e = Make(Expr::Kind::kTest);
        e->negated = AcceptName("not");
        absl::StatusOr<std::string> name = Name();
        if (!name.ok()) return name.status();
        if (!IsKnownTest(*name)) return ErrorAt(line_, absl::StrCat("unsupported test '", *name, "'"));
        e->name = *name;
        e->items.push_back(std::move(a));
        if (AcceptOp("(")) {
          if (absl::Status s = Args(e->args); !s.ok()) return s;
        } else if (Peek().kind == Token::Kind::kString || Peek().kind == Token::Kind::kNumber ||
                   (Peek().kind == Token::Kind::kName && !IsName("and") && !IsName("or") && !IsName("if") &&
                    !IsName("else") && !IsName("in") && !IsName("not"))) {
          // A test's single argument may follow without parentheses: `x is divisibleby 3`.
          absl::StatusOr<ExprPtr> arg = Primary();
          if (!arg.ok()) return arg;
          e->args.push_back({"", *std::move(arg)});
        }
        a = std::move(e);
      } else {
        return a;
      }
    }
  }

  absl::StatusOr<ExprPtr> Primary() {
    const Token& t = Peek();
    if (t.kind == Token::Kind::kString) {
      // Adjacent strings join, as in Python.
      std::string s;
      while (Peek().kind == Token::Kind::kString) s += tokens_[pos_++].text;
      ExprPtr e = Make(Expr::Kind::kLiteral);
      e->value = s;
      return e;
    }
    if (t.kind == Token::Kind::kNumber) {
      ExprPtr e = Make(Expr::Kind::kLiteral);
      e->value = t.number;
      ++pos_;
      return e;
    }
    if (t.kind == Token::Kind::kName) {
      ++pos_;
      ExprPtr e = Make(Expr::Kind::kLiteral);
      if (t.text == "true" || t.text == "True") e->value = true;
      else if (t.text == "false" || t.text == "False") e->value = false;
      else if (t.text == "none" || t.text == "None") e->value = nullptr;
      else {
        e->kind = Expr::Kind::kName;
        e->name = t.text;
      }
      return e;
    }
    if (AcceptOp("(")) {
      absl::StatusOr<ExprPtr> inner = Expression();
      if (!inner.ok()) return inner;
      if (IsOp(",")) {  // a tuple: a list for our purposes
        ExprPtr list = Make(Expr::Kind::kList);
        list->items.push_back(*std::move(inner));
        while (AcceptOp(",") && !IsOp(")")) {
          absl::StatusOr<ExprPtr> item = Expression();
          if (!item.ok()) return item;
          list->items.push_back(*std::move(item));
        }
        inner = std::move(list);
      }
      if (absl::Status s = ExpectOp(")"); !s.ok()) return s;
      return inner;
    }
    if (AcceptOp("[")) {
      ExprPtr list = Make(Expr::Kind::kList);
      while (!AcceptOp("]")) {
        if (!list->items.empty() && !AcceptOp(",")) return Error("expected ',' or ']'");
        if (AcceptOp("]")) break;
        absl::StatusOr<ExprPtr> item = Expression();
        if (!item.ok()) return item;
        list->items.push_back(*std::move(item));
      }
      return list;
    }
    if (AcceptOp("{")) {
      ExprPtr dict = Make(Expr::Kind::kDict);
      while (!AcceptOp("}")) {
        if (!dict->items.empty() && !AcceptOp(",")) return Error("expected ',' or '}'");
        if (AcceptOp("}")) break;
        absl::StatusOr<ExprPtr> key = Expression();
        if (!key.ok()) return key;
        if (absl::Status s = ExpectOp(":"); !s.ok()) return s;
        absl::StatusOr<ExprPtr> value = Expression();
        if (!value.ok()) return value;
        dict->items.push_back(*std::move(key));
        dict->items.push_back(*std::move(value));
      }
      return dict;
    }
    return Error("expected an expression");
  }

  const std::vector<Token>& tokens_;
  size_t pos_ = 0;
  const int line_;
  int depth_ = 0;
};

// Builds the statement tree from the segments, one block at a time.
class TreeBuilder {
 public:
  explicit TreeBuilder(std::vector<Segment> segments) : segments_(std::move(segments)) {}

  // Parses nodes until a statement whose keyword is in `ends` (left unconsumed, its name in
  // *end) or the end of the template (allowed only at the top).
  absl::Status Block(Body& body, const std::vector<std::string>& ends, std::string* end) {
    if (++depth_ > kMaxNesting) return ErrorAt(next_ > 0 ? segments_[next_ - 1].line : 0, "blocks nest too deeply");
    const absl::Status status = BlockBody(body, ends, end);
    --depth_;
    return status;
  }

 private:
  absl::Status BlockBody(Body& body, const std::vector<std::string>& ends, std::string* end) {
    while (next_ < segments_.size()) {
      Segment& seg = segments_[next_];
      if (seg.kind == Segment::Kind::kText) {
        auto node = std::make_unique<Node>();
        node->kind = Node::Kind::kText;
        node->text = seg.text;
        body.push_back(std::move(node));
        ++next_;
        continue;
      }
      ExprParser p(seg.tokens, seg.line);
      if (seg.kind == Segment::Kind::kOutput) {
        absl::StatusOr<ExprPtr> e = p.Expression();
        if (!e.ok()) return e.status();
        if (absl::Status s = p.ExpectEnd(); !s.ok()) return s;
        auto node = std::make_unique<Node>();
        node->kind = Node::Kind::kOutput;
        node->expr = *std::move(e);
        body.push_back(std::move(node));
        ++next_;
        continue;
      }
      absl::StatusOr<std::string> keyword = p.Name();
      if (!keyword.ok()) return keyword.status();
      for (const std::string& e : ends) {
        if (*keyword == e) {
          *end = e;
          return absl::OkStatus();
        }
      }
      ++next_;
      absl::StatusOr<std::unique_ptr<Node>> node = Statement(*keyword, p, seg.line);
      if (!node.ok()) return node.status();
      body.push_back(*std::move(node));
    }
    if (!ends.empty()) {
      return ErrorAt(segments_.empty() ? 0 : segments_.back().line,
                     absl::StrCat("missing {% ", ends.back(), " %}"));
    }
    return absl::OkStatus();
  }

  // Consumes the statement that ended a block and checks it has nothing after its keyword.
  absl::Status EndTag() {
    ExprParser p(segments_[next_].tokens, segments_[next_].line);
    (void)p.Name();
    ++next_;
    return p.ExpectEnd();
  }

  absl::StatusOr<std::unique_ptr<Node>> Statement(const std::string& keyword, ExprParser& p, int line) {
    auto node = std::make_unique<Node>();
    std::string end;
    if (keyword == "if") {
      node->kind = Node::Kind::kIf;
      ExprParser* condition = &p;
      std::unique_ptr<ExprParser> elif;
      while (true) {
        absl::StatusOr<ExprPtr> cond = condition->Expression();
        if (!cond.ok()) return cond.status();
        if (absl::Status s = condition->ExpectEnd(); !s.ok()) return s;
        node->conditions.push_back(*std::move(cond));
        node->branches.emplace_back();
        if (absl::Status s = Block(node->branches.back(), {"elif", "else", "endif"}, &end); !s.ok()) return s;
        if (end != "elif") break;
        elif = std::make_unique<ExprParser>(segments_[next_].tokens, segments_[next_].line);
        (void)elif->Name();
        ++next_;
        condition = elif.get();
      }
      if (end == "else") {
        if (absl::Status s = EndTag(); !s.ok()) return s;
        node->branches.emplace_back();
        if (absl::Status s = Block(node->branches.back(), {"endif"}, &end); !s.ok()) return s;
      }
      if (absl::Status s = EndTag(); !s.ok()) return s;
      return node;
    }
    if (keyword == "for") {
      node->kind = Node::Kind::kFor;
      do {
        absl::StatusOr<std::string> target = p.Name();
        if (!target.ok()) return target.status();
        node->targets.push_back(*target);
      } while (p.AcceptOp(","));
      if (!p.AcceptName("in")) return p.Error("expected 'in'");
      absl::StatusOr<ExprPtr> iterable = p.NoTernary();
      if (!iterable.ok()) return iterable.status();
      node->expr = *std::move(iterable);
      if (p.AcceptName("if")) {
        absl::StatusOr<ExprPtr> cond = p.NoTernary();
        if (!cond.ok()) return cond.status();
        node->conditions.push_back(*std::move(cond));
      }
      if (p.AcceptName("recursive")) return p.Error("recursive loops are not supported");
      if (absl::Status s = p.ExpectEnd(); !s.ok()) return s;
      if (absl::Status s = Block(node->body, {"else", "endfor"}, &end); !s.ok()) return s;
      if (end == "else") {
        if (absl::Status s = EndTag(); !s.ok()) return s;
        if (absl::Status s = Block(node->else_body, {"endfor"}, &end); !s.ok()) return s;
      }
      if (absl::Status s = EndTag(); !s.ok()) return s;
      return node;
    }
    if (keyword == "set") {
      absl::StatusOr<std::string> target = p.Name();
      if (!target.ok()) return target.status();
      node->targets.push_back(*target);
      if (p.AcceptOp(".")) {
        absl::StatusOr<std::string> attribute = p.Name();
        if (!attribute.ok()) return attribute.status();
        node->attribute = *attribute;
      } else {
        while (p.AcceptOp(",")) {
          absl::StatusOr<std::string> more = p.Name();
          if (!more.ok()) return more.status();
          node->targets.push_back(*more);
        }
      }
      if (p.AtEnd() && node->attribute.empty() && node->targets.size() == 1) {
        node->kind = Node::Kind::kSetBlock;
        if (absl::Status s = Block(node->body, {"endset"}, &end); !s.ok()) return s;
        if (absl::Status s = EndTag(); !s.ok()) return s;
        return node;
      }
      node->kind = Node::Kind::kSet;
      if (absl::Status s = p.ExpectOp("="); !s.ok()) return s;
      absl::StatusOr<ExprPtr> value = p.Expression();
      if (!value.ok()) return value.status();
      node->expr = *std::move(value);
      if (absl::Status s = p.ExpectEnd(); !s.ok()) return s;
      return node;
    }
    if (keyword == "macro") {
      node->kind = Node::Kind::kMacro;
      node->macro = std::make_unique<MacroNode>();
      absl::StatusOr<std::string> name = p.Name();
      if (!name.ok()) return name.status();
      node->macro->name = *name;
      if (absl::Status s = p.ExpectOp("("); !s.ok()) return s;
      while (!p.AcceptOp(")")) {
        if (!node->macro->params.empty() && !p.AcceptOp(",")) return p.Error("expected ',' or ')'");
        absl::StatusOr<std::string> param = p.Name();
        if (!param.ok()) return param.status();
        node->macro->params.push_back(*param);
        node->macro->defaults.emplace_back();
        if (p.AcceptOp("=")) {
          absl::StatusOr<ExprPtr> value = p.Expression();
          if (!value.ok()) return value.status();
          node->macro->defaults.back() = *std::move(value);
        }
      }
      if (absl::Status s = p.ExpectEnd(); !s.ok()) return s;
      if (absl::Status s = Block(node->macro->body, {"endmacro"}, &end); !s.ok()) return s;
      if (absl::Status s = EndTag(); !s.ok()) return s;
      return node;
    }
    if (keyword == "filter") {
      node->kind = Node::Kind::kFilterBlock;
      absl::StatusOr<std::string> name = p.Name();
      if (!name.ok()) return name.status();
      if (!IsKnownFilter(*name)) return ErrorAt(line, absl::StrCat("unsupported filter '", *name, "'"));
      node->expr = std::make_unique<Expr>();
      node->expr->kind = Expr::Kind::kFilter;
      node->expr->name = *name;
      if (p.AcceptOp("(")) return p.Error("filter blocks with arguments are not supported");
      if (absl::Status s = p.ExpectEnd(); !s.ok()) return s;
      if (absl::Status s = Block(node->body, {"endfilter"}, &end); !s.ok()) return s;
      if (absl::Status s = EndTag(); !s.ok()) return s;
      return node;
    }
    if (keyword == "break" || keyword == "continue") {
      node->kind = keyword == "break" ? Node::Kind::kBreak : Node::Kind::kContinue;
      if (absl::Status s = p.ExpectEnd(); !s.ok()) return s;
      return node;
    }
    return ErrorAt(line, absl::StrCat("unsupported statement '", keyword, "'"));
  }

  std::vector<Segment> segments_;
  size_t next_ = 0;
  int depth_ = 0;
};

}  // namespace

bool IsKnownFilter(const std::string& name) {
  static const char* kFilters[] = {"length", "count", "trim", "items", "lower", "upper", "safe", "list",
                                   "join", "indent", "string", "selectattr", "rejectattr", "select",
                                   "reject", "map", "unique", "default", "d", "tojson", "replace", "first",
                                   "last", "capitalize", "title", "int", "float", "abs", "round", "e",
                                   "escape", "dictsort", "sum", "min", "max", "reverse", "sort", "wordcount"};
  for (const char* f : kFilters) if (name == f) return true;
  return false;
}

bool IsKnownTest(const std::string& name) {
  static const char* kTests[] = {"defined", "undefined", "none", "string", "number", "integer", "float",
                                 "mapping", "iterable", "sequence", "boolean", "true", "false", "odd",
                                 "even", "divisibleby", "equalto", "eq", "ne", "sameas", "in", "lower",
                                 "upper", "callable", "gt", "lt", "ge", "le"};
  for (const char* t : kTests) if (name == t) return true;
  return false;
}

absl::StatusOr<Body> Parse(std::string_view source) {
  absl::StatusOr<std::vector<Segment>> segments = Segments(source);
  if (!segments.ok()) return segments.status();
  TreeBuilder builder(*std::move(segments));
  Body body;
  std::string end;
  if (absl::Status s = builder.Block(body, {}, &end); !s.ok()) return s;
  return body;
}

}  // namespace toyllm::jinja
