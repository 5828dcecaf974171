#include "tools/chat/jinja_interpreter.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "tools/chat/jinja_int.h"
#include "tools/chat/jinja_parser.h"

namespace toyllm::jinja {
namespace {

// Errors unwind the recursive evaluation as this exception, caught in Render: it never
// leaves this file.
struct RenderError {
  std::string message;
};

[[noreturn]] void Fail(const std::string& message) { throw RenderError{message}; }

constexpr int64_t kMaxSteps = 2'000'000;    // nodes and loop iterations per render
constexpr size_t kMaxOutput = 16u << 20;    // bytes a render may produce
constexpr int kMaxDepth = 16;               // nested macro calls

enum class Flow { kNormal, kBreak, kContinue };

const char kWhitespace[] = " \t\n\r\f\v";

std::string Strip(const std::string& s, const std::string& chars, bool left, bool right) {
  size_t b = 0, e = s.size();
  if (left) while (b < e && chars.find(s[b]) != std::string::npos) ++b;
  if (right) while (e > b && chars.find(s[e - 1]) != std::string::npos) --e;
  return s.substr(b, e - b);
}

// UTF-8 characters of a string, each as a string (Python indexes by character).
std::vector<std::string> Characters(const std::string& s) {
  std::vector<std::string> out;
  for (size_t i = 0; i < s.size();) {
    size_t n = 1;
    const unsigned char c = s[i];
    if (c >= 0xf0) n = 4; else if (c >= 0xe0) n = 3; else if (c >= 0xc0) n = 2;
    n = std::min(n, s.size() - i);
    out.push_back(s.substr(i, n));
    i += n;
  }
  return out;
}

std::string Title(const std::string& s) {
  std::string out = s;
  bool start = true;
  for (char& c : out) {
    const bool alpha = absl::ascii_isalpha(static_cast<unsigned char>(c));
    c = start ? absl::ascii_toupper(c) : absl::ascii_tolower(c);
    start = !alpha && !absl::ascii_isdigit(static_cast<unsigned char>(c));
  }
  return out;
}

const std::string& AsString(const Value& v, const char* what) {
  if (!v.is_data() || !v.data.is_string()) Fail(absl::StrCat(what, " needs a string"));
  return v.data.get_ref<const std::string&>();
}

int64_t AsInt(const Value& v, const char* what) {
  if (!v.is_data() || !v.data.is_number() || v.data.is_number_float()) Fail(absl::StrCat(what, " needs an integer"));
  return v.data.get<int64_t>();
}

bool IsInteger(const Json& j) { return j.is_number_integer(); }

int64_t Fits(std::optional<int64_t> result, const std::string& what) {
  if (!result) Fail(absl::StrCat(what, " does not fit in a 64-bit integer"));
  return *result;
}

// parts joined by sep, refused beyond what a render may produce.
std::string Joined(const std::vector<std::string>& parts, const std::string& sep) {
  size_t size = parts.empty() ? 0 : sep.size() * (parts.size() - 1);
  for (const std::string& part : parts) size += part.size();
  if (size > kMaxOutput) Fail("a join is too large");
  return absl::StrJoin(parts, sep);
}

// The items a for loop or a filter walks: a list's elements, a dict's keys, a string's characters.
std::vector<Json> Iterate(const Value& v) {
  if (!v.defined()) return {};
  const Json j = v.AsJson();
  if (j.is_array()) return std::vector<Json>(j.begin(), j.end());
  if (j.is_object()) {
    std::vector<Json> keys;
    for (auto it = j.begin(); it != j.end(); ++it) keys.push_back(it.key());
    return keys;
  }
  if (j.is_string()) {
    // A character a step, as a loop over them would count: nested joins of a string with a
    // long separator otherwise grow it sixtyfold a level, past any memory (fuzzer).
    if (j.get_ref<const std::string&>().size() > static_cast<size_t>(kMaxSteps)) {
      Fail("the template does too much work");
    }
    std::vector<Json> out;
    for (std::string& c : Characters(j.get<std::string>())) out.push_back(c);
    return out;
  }
  Fail(absl::StrCat("cannot iterate over ", Repr(j)));
}

// A call's argument by position, else by name; nullptr when it was not given.
const Value* Argument(const std::vector<Value>& args, const std::map<std::string, Value>& kwargs, size_t i,
                      const char* name) {
  if (i < args.size()) return &args[i];
  auto it = kwargs.find(name);
  return it == kwargs.end() ? nullptr : &it->second;
}

// MarkupSafe's escape.
std::string Escape(const std::string& s) {
  return absl::StrReplaceAll(s, {{"&", "&amp;"}, {"<", "&lt;"}, {">", "&gt;"}, {"\"", "&#34;"}, {"'", "&#39;"}});
}

Value Markup(std::string s) {
  Value v = Value::Of(std::move(s));
  v.markup = true;
  return v;
}

Value Lazy(Json list) {
  Value v = Value::Of(std::move(list));
  v.lazy = true;
  return v;
}

// Python's a[i] rules for negative and out-of-range indexes.
bool NormalizeIndex(int64_t& i, int64_t size) {
  if (i < 0) i += size;
  return i >= 0 && i < size;
}

class Interpreter {
 public:
  explicit Interpreter(const Json& variables) {
    frames_.emplace_back();
    for (auto it = variables.begin(); it != variables.end(); ++it) frames_[0][it.key()] = Value::Of(it.value());
    for (const char* f : {"raise_exception", "namespace", "range"}) {
      Value fn;
      fn.kind = Value::Kind::kFunction;
      fn.function = f;
      frames_[0][f] = fn;
    }
  }

  std::string Run(const Body& body) {
    std::string out;
    Exec(body, out);
    return out;
  }

 private:
  using Frame = std::map<std::string, Value>;

  void Step() {
    if (++steps_ > kMaxSteps) Fail("the template does too much work");
  }

  Value Lookup(const std::string& name) const {
    for (size_t i = frames_.size(); i-- > barrier_;) {
      auto it = frames_[i].find(name);
      if (it != frames_[i].end()) return it->second;
    }
    auto it = frames_[0].find(name);
    return it == frames_[0].end() ? Value() : it->second;
  }

  Value* FindVariable(const std::string& name) {
    for (size_t i = frames_.size(); i-- > barrier_;) {
      auto it = frames_[i].find(name);
      if (it != frames_[i].end()) return &it->second;
    }
    auto it = frames_[0].find(name);
    return it == frames_[0].end() ? nullptr : &it->second;
  }

  // ---- statements ----

  Flow Exec(const Body& body, std::string& out) {
    for (const auto& node : body) {
      const Flow flow = Exec(*node, out);
      if (flow != Flow::kNormal) return flow;
      if (out.size() > kMaxOutput) Fail("the template's output is too large");
    }
    return Flow::kNormal;
  }

  Flow Exec(const Node& node, std::string& out) {
    Step();
    switch (node.kind) {
      case Node::Kind::kText:
        out += node.text;
        return Flow::kNormal;
      case Node::Kind::kOutput: {
        const Value value = Eval(*node.expr);
        if (value.lazy) Fail("printing a generator (add | list)");
        out += Str(value);
        return Flow::kNormal;
      }
      case Node::Kind::kIf:
        for (size_t i = 0; i < node.branches.size(); ++i) {
          if (i >= node.conditions.size() || Truthy(Eval(*node.conditions[i]))) return Exec(node.branches[i], out);
        }
        return Flow::kNormal;
      case Node::Kind::kFor:
        return ExecFor(node, out);
      case Node::Kind::kSet: {
        Value value = Eval(*node.expr);
        if (!node.attribute.empty()) {
          Value* space = FindVariable(node.targets[0]);
          if (space == nullptr || space->kind != Value::Kind::kNamespace) {
            Fail(absl::StrCat("cannot set an attribute of '", node.targets[0], "', which is not a namespace"));
          }
          (*space->space)[node.attribute] = value.AsJson();
        } else if (node.targets.size() == 1) {
          frames_.back()[node.targets[0]] = value;
        } else {
          Assign(node.targets, value.AsJson());
        }
        return Flow::kNormal;
      }
      case Node::Kind::kSetBlock: {
        std::string text;
        Exec(node.body, text);
        frames_.back()[node.targets[0]] = Value::Of(text);
        return Flow::kNormal;
      }
      case Node::Kind::kMacro: {
        Value macro;
        macro.kind = Value::Kind::kMacro;
        macro.macro = node.macro.get();
        frames_.back()[node.macro->name] = macro;
        return Flow::kNormal;
      }
      case Node::Kind::kFilterBlock: {
        std::string text;
        Exec(node.body, text);
        out += Str(ApplyFilter(node.expr->name, Value::Of(text), {}, {}));
        return Flow::kNormal;
      }
      case Node::Kind::kBreak:
        return Flow::kBreak;
      case Node::Kind::kContinue:
        return Flow::kContinue;
    }
    return Flow::kNormal;
  }

  void Assign(const std::vector<std::string>& targets, const Json& value) {
    if (targets.size() == 1) {
      frames_.back()[targets[0]] = Value::Of(value);
      return;
    }
    if (!value.is_array() || value.size() != targets.size()) {
      Fail(absl::StrCat("cannot unpack ", Repr(value), " into ", targets.size(), " names"));
    }
    for (size_t i = 0; i < targets.size(); ++i) frames_.back()[targets[i]] = Value::Of(value[i]);
  }

  Flow ExecFor(const Node& node, std::string& out) {
    std::vector<Json> items = Iterate(Eval(*node.expr));
    frames_.emplace_back();
    if (!node.conditions.empty()) {
      std::vector<Json> kept;
      for (Json& item : items) {
        Step();
        Assign(node.targets, item);
        if (Truthy(Eval(*node.conditions[0]))) kept.push_back(std::move(item));
      }
      items = std::move(kept);
    }
    const int64_t n = static_cast<int64_t>(items.size());
    for (int64_t i = 0; i < n; ++i) {
      Step();
      Assign(node.targets, items[i]);
      Json loop = {{"index", i + 1}, {"index0", i}, {"revindex", n - i}, {"revindex0", n - i - 1},
                   {"first", i == 0}, {"last", i == n - 1}, {"length", n}};
      if (i > 0) loop["previtem"] = items[i - 1];
      if (i + 1 < n) loop["nextitem"] = items[i + 1];
      frames_.back()["loop"] = Value::Of(loop);
      const Flow flow = Exec(node.body, out);
      if (flow == Flow::kBreak) break;
    }
    frames_.pop_back();
    if (n == 0) {
      frames_.emplace_back();
      Exec(node.else_body, out);
      frames_.pop_back();
    }
    return Flow::kNormal;
  }

  // ---- expressions ----

  Value Eval(const Expr& e) {
    Step();
    switch (e.kind) {
      case Expr::Kind::kLiteral:
        return Value::Of(e.value);
      case Expr::Kind::kName:
        return Lookup(e.name);
      case Expr::Kind::kList: {
        Json list = Json::array();
        for (const ExprPtr& item : e.items) list.push_back(Eval(*item).AsJson());
        return Value::Of(list);
      }
      case Expr::Kind::kDict: {
        Json dict = Json::object();
        for (size_t i = 0; i + 1 < e.items.size(); i += 2) {
          const Value key = Eval(*e.items[i]);
          dict[Str(key)] = Eval(*e.items[i + 1]).AsJson();
        }
        return Value::Of(dict);
      }
      case Expr::Kind::kAttribute:
        return Attribute(Eval(*e.items[0]), e.name);
      case Expr::Kind::kItem:
        return Item(Eval(*e.items[0]), Eval(*e.items[1]));
      case Expr::Kind::kSlice:
        return Slice(e);
      case Expr::Kind::kCall:
        return Call(e);
      case Expr::Kind::kFilter: {
        std::vector<Value> args;
        std::map<std::string, Value> kwargs;
        EvalArgs(e.args, args, kwargs);
        return ApplyFilter(e.name, Eval(*e.items[0]), args, kwargs);
      }
      case Expr::Kind::kTest: {
        std::vector<Value> args;
        std::map<std::string, Value> kwargs;
        EvalArgs(e.args, args, kwargs);
        const bool result = ApplyTest(e.name, Eval(*e.items[0]), args);
        return Value::Of(result != e.negated);
      }
      case Expr::Kind::kUnary: {
        const Value a = Eval(*e.items[0]);
        if (e.name == "not") return Value::Of(!Truthy(a));
        const Json j = a.AsJson();
        if (!j.is_number()) Fail(absl::StrCat("unary ", e.name, " needs a number"));
        if (e.name == "+") return a;
        if (!IsInteger(j)) return Value::Of(-j.get<double>());
        return Value::Of(Fits(IntNeg(j.get<int64_t>()), absl::StrCat("-", j.dump())));
      }
      case Expr::Kind::kBinary:
        return Binary(e);
      case Expr::Kind::kTernary:
        if (Truthy(Eval(*e.items[1]))) return Eval(*e.items[0]);
        return e.items[2] ? Eval(*e.items[2]) : Value();
    }
    return Value();
  }

  void EvalArgs(const std::vector<Arg>& in, std::vector<Value>& args, std::map<std::string, Value>& kwargs) {
    for (const Arg& a : in) {
      if (a.name.empty()) args.push_back(Eval(*a.value));
      else kwargs[a.name] = Eval(*a.value);
    }
  }

  Value Attribute(const Value& base, const std::string& name) {
    if (base.kind == Value::Kind::kNamespace) {
      auto it = base.space->find(name);
      return it == base.space->end() ? Value() : Value::Of(*it);
    }
    if (base.is_data() && base.data.is_object()) {
      auto it = base.data.find(name);
      if (it != base.data.end()) return Value::Of(*it);
    }
    return Value();
  }

  Value Item(const Value& base, const Value& key) {
    if (!base.defined()) return Value();
    const Json b = base.AsJson();
    const Json k = key.AsJson();
    if (b.is_object() && k.is_string()) {
      auto it = b.find(k.get<std::string>());
      return it == b.end() ? Value() : Value::Of(*it);
    }
    if ((b.is_array() || b.is_string()) && IsInteger(k)) {
      int64_t i = k.get<int64_t>();
      if (b.is_array()) return NormalizeIndex(i, b.size()) ? Value::Of(b[i]) : Value();
      const std::vector<std::string> chars = Characters(b.get<std::string>());
      return NormalizeIndex(i, chars.size()) ? Value::Of(chars[i]) : Value();
    }
    return Value();
  }

  Value Slice(const Expr& e) {
    const Json base = Eval(*e.items[0]).AsJson();
    auto part = [&](size_t k, bool* given) -> int64_t {
      *given = k < e.items.size() && e.items[k] != nullptr;
      return *given ? AsInt(Eval(*e.items[k]), "a slice") : 0;
    };
    bool has_start, has_stop, has_step;
    int64_t start = part(1, &has_start), stop = part(2, &has_stop), step = part(3, &has_step);
    if (!has_step) step = 1;
    if (step == 0) Fail("a slice's step cannot be zero");
    std::vector<Json> items;
    const bool is_string = base.is_string();
    if (is_string) {
      for (std::string& c : Characters(base.get<std::string>())) items.push_back(c);
    } else if (base.is_array()) {
      items.assign(base.begin(), base.end());
    } else {
      Fail(absl::StrCat("cannot slice ", Repr(base)));
    }
    const int64_t n = static_cast<int64_t>(items.size());
    auto clamp = [&](int64_t i, bool given, int64_t fallback) {
      if (!given) return fallback;
      if (i < 0) i += n;
      return step > 0 ? std::clamp<int64_t>(i, 0, n) : std::clamp<int64_t>(i, -1, n - 1);
    };
    start = clamp(start, has_start, step > 0 ? 0 : n - 1);
    stop = clamp(stop, has_stop, step > 0 ? n : -1);
    Json out = Json::array();
    std::string text;
    // A step past the end may not fit in an int64; then the walk is over anyway.
    for (int64_t i = start; step > 0 ? i < stop : i > stop; i = IntAdd(i, step).value_or(stop)) {
      if (is_string) text += items[i].get<std::string>();
      else out.push_back(items[i]);
    }
    return is_string ? Value::Of(text) : Value::Of(out);
  }

  Value Call(const Expr& e) {
    std::vector<Value> args;
    std::map<std::string, Value> kwargs;
    const Expr& callee = *e.items[0];
    if (callee.kind == Expr::Kind::kAttribute) {
      const Value self = Eval(*callee.items[0]);
      EvalArgs(e.args, args, kwargs);
      return Method(self, callee.name, args, kwargs);
    }
    const Value fn = Eval(callee);
    EvalArgs(e.args, args, kwargs);
    if (fn.kind == Value::Kind::kMacro) return CallMacro(*fn.macro, args, kwargs);
    if (fn.kind != Value::Kind::kFunction) Fail("calling something that is not a function or macro");
    if (fn.function == "raise_exception") {
      Fail(absl::StrCat("the template raised: ", args.empty() ? "" : Str(args[0])));
    }
    if (fn.function == "namespace") {
      Value ns;
      ns.kind = Value::Kind::kNamespace;
      ns.space = std::make_shared<Json>(Json::object());
      for (const Value& a : args) {
        const Json j = a.AsJson();
        if (!j.is_object()) Fail("namespace() takes a dict or name=value arguments");
        for (auto it = j.begin(); it != j.end(); ++it) (*ns.space)[it.key()] = it.value();
      }
      for (const auto& [k, v] : kwargs) (*ns.space)[k] = v.AsJson();
      return ns;
    }
    // range
    int64_t start = 0, stop = 0, step = 1;
    if (args.size() == 1) {
      stop = AsInt(args[0], "range()");
    } else if (args.size() == 2 || args.size() == 3) {
      start = AsInt(args[0], "range()");
      stop = AsInt(args[1], "range()");
      if (args.size() == 3) step = AsInt(args[2], "range()");
    } else {
      Fail("range() takes 1 to 3 arguments");
    }
    if (step == 0) Fail("range() step cannot be zero");
    Json out = Json::array();
    for (int64_t i = start; step > 0 ? i < stop : i > stop; i = IntAdd(i, step).value_or(stop)) {
      Step();
      out.push_back(i);
    }
    return Value::Of(out);
  }

  Value CallMacro(const MacroNode& macro, const std::vector<Value>& args,
                  const std::map<std::string, Value>& kwargs) {
    if (++depth_ > kMaxDepth) Fail("macros nest too deeply");
    if (args.size() > macro.params.size()) Fail(absl::StrCat("macro '", macro.name, "' takes ", macro.params.size(), " arguments"));
    Frame frame;
    for (size_t i = 0; i < macro.params.size(); ++i) {
      auto kw = kwargs.find(macro.params[i]);
      if (i < args.size()) frame[macro.params[i]] = args[i];
      else if (kw != kwargs.end()) frame[macro.params[i]] = kw->second;
      else if (macro.defaults[i]) frame[macro.params[i]] = Eval(*macro.defaults[i]);
      else frame[macro.params[i]] = Value();
    }
    const size_t saved_barrier = barrier_;
    barrier_ = frames_.size();
    frames_.push_back(std::move(frame));
    std::string out;
    Exec(macro.body, out);
    frames_.pop_back();
    barrier_ = saved_barrier;
    --depth_;
    return Value::Of(out);
  }

  Value Method(const Value& self, const std::string& name, const std::vector<Value>& args,
               const std::map<std::string, Value>& kwargs) {
    auto arg = [&](size_t i, const char* key) { return Argument(args, kwargs, i, key); };
    const Json j = self.AsJson();
    if (j.is_string()) {
      const std::string& s = j.get_ref<const std::string&>();
      if (name == "strip" || name == "lstrip" || name == "rstrip") {
        const Value* chars = arg(0, "chars");
        const std::string set = chars && chars->is_data() && !chars->data.is_null() ? AsString(*chars, name.c_str()) : kWhitespace;
        return Value::Of(Strip(s, set, name != "rstrip", name != "lstrip"));
      }
      if (name == "upper") return Value::Of(absl::AsciiStrToUpper(s));
      if (name == "lower") return Value::Of(absl::AsciiStrToLower(s));
      if (name == "title") return Value::Of(Title(s));
      if (name == "capitalize") return Value::Of(s.empty() ? s : absl::AsciiStrToUpper(s.substr(0, 1)) + absl::AsciiStrToLower(s.substr(1)));
      if (name == "startswith" || name == "endswith") {
        const Value* what = arg(0, "prefix");
        if (what == nullptr) Fail(name + "() needs an argument");
        std::vector<Json> options = what->AsJson().is_array() ? Iterate(*what) : std::vector<Json>{what->AsJson()};
        for (const Json& o : options) {
          if (!o.is_string()) Fail(name + "() needs strings");
          const std::string& p = o.get_ref<const std::string&>();
          if (name == "startswith" ? absl::StartsWith(s, p) : absl::EndsWith(s, p)) return Value::Of(true);
        }
        return Value::Of(false);
      }
      if (name == "split") {
        const Value* sep = arg(0, "sep");
        const Value* max = arg(1, "maxsplit");
        int64_t limit = max ? AsInt(*max, "split()") : -1;
        Json out = Json::array();
        if (sep == nullptr || (sep->is_data() && sep->data.is_null())) {
          std::vector<std::string> parts = absl::StrSplit(s, absl::ByAnyChar(kWhitespace), absl::SkipEmpty());
          for (std::string& p : parts) out.push_back(p);
          return Value::Of(out);
        }
        const std::string& d = AsString(*sep, "split()");
        if (d.empty()) Fail("split() separator is empty");
        size_t start = 0;
        while (limit != 0) {
          const size_t at = s.find(d, start);
          if (at == std::string::npos) break;
          out.push_back(s.substr(start, at - start));
          start = at + d.size();
          if (limit > 0) --limit;
        }
        out.push_back(s.substr(start));
        return Value::Of(out);
      }
      if (name == "replace") {
        const Value* old_text = arg(0, "old");
        const Value* new_text = arg(1, "new");
        if (!old_text || !new_text) Fail("replace() takes two arguments");
        return Value::Of(ReplaceText(s, AsString(*old_text, "replace()"), AsString(*new_text, "replace()"),
                                     arg(2, "count") ? AsInt(*arg(2, "count"), "replace()") : -1));
      }
      if (name == "find") {
        const size_t at = s.find(AsString(arg(0, "sub") ? *arg(0, "sub") : Value(), "find()"));
        return Value::Of(at == std::string::npos ? int64_t{-1} : static_cast<int64_t>(Characters(s.substr(0, at)).size()));
      }
      if (name == "join") {
        std::vector<std::string> parts;
        for (const Json& item : Iterate(args.empty() ? Value() : args[0])) parts.push_back(Str(Value::Of(item)));
        return Value::Of(Joined(parts, s));
      }
    }
    if (j.is_object() && self.kind == Value::Kind::kData) {
      if (name == "get") {
        const Value* key = arg(0, "key");
        if (key == nullptr) Fail("get() needs a key");
        auto it = j.find(Str(*key));
        if (it != j.end()) return Value::Of(*it);
        const Value* fallback = arg(1, "default");
        return fallback ? *fallback : Value::Of(nullptr);
      }
      if (name == "items") return ApplyFilter("items", self, {}, {});
      if (name == "keys") return Value::Of(Json(Iterate(self)));
      if (name == "values") {
        Json out = Json::array();
        for (auto it = j.begin(); it != j.end(); ++it) out.push_back(it.value());
        return Value::Of(out);
      }
    }
    Fail(absl::StrCat("unsupported method '", name, "' on ", self.defined() ? Repr(j) : "an undefined value"));
  }

  static std::string ReplaceText(const std::string& s, const std::string& old_text, const std::string& new_text,
                                 int64_t count) {
    if (old_text.empty()) {
      if (count == 0) return s;
      // Python inserts the replacement between every character and at both ends.
      std::string out = new_text;
      int64_t done = 1;
      for (const std::string& c : Characters(s)) {
        out += c;
        if (count < 0 || done < count) {
          out += new_text;
          ++done;
        }
      }
      return out;
    }
    std::string out;
    size_t start = 0;
    while (count != 0) {
      const size_t at = s.find(old_text, start);
      if (at == std::string::npos) break;
      out += s.substr(start, at - start) + new_text;
      start = at + old_text.size();
      if (count > 0) --count;
    }
    return out + s.substr(start);
  }

  Value Binary(const Expr& e) {
    const std::string& op = e.name;
    if (op == "and") {
      Value a = Eval(*e.items[0]);
      return Truthy(a) ? Eval(*e.items[1]) : a;
    }
    if (op == "or") {
      Value a = Eval(*e.items[0]);
      return Truthy(a) ? a : Eval(*e.items[1]);
    }
    const Value av = Eval(*e.items[0]);
    const Value bv = Eval(*e.items[1]);
    if (op == "~") return Value::Of(Str(av) + Str(bv));
    const Json a = av.AsJson(), b = bv.AsJson();
    if (op == "==") return Value::Of(av.defined() == bv.defined() && Equal(a, b));
    if (op == "!=") return Value::Of(!(av.defined() == bv.defined() && Equal(a, b)));
    if (op == "in" || op == "not in") return Value::Of(Contains(bv, av) == (op == "in"));
    if (op == "<" || op == ">" || op == "<=" || op == ">=") {
      bool comparable;
      const bool less = Less(a, b, &comparable);
      const bool greater = Less(b, a, &comparable);
      if (!comparable) Fail(absl::StrCat("cannot compare ", Repr(a), " and ", Repr(b)));
      if (op == "<") return Value::Of(less);
      if (op == ">") return Value::Of(greater);
      if (op == "<=") return Value::Of(!greater);
      return Value::Of(!less);
    }
    if (op == "+") {
      if (a.is_string() && b.is_string()) {
        // Markup + str escapes the str, and so does str + Markup.
        if (av.markup || bv.markup) {
          return Markup((av.markup ? a.get<std::string>() : Escape(a.get<std::string>())) +
                        (bv.markup ? b.get<std::string>() : Escape(b.get<std::string>())));
        }
        return Value::Of(a.get<std::string>() + b.get<std::string>());
      }
      if (a.is_array() && b.is_array()) {
        Json out = a;
        for (const Json& x : b) out.push_back(x);
        return Value::Of(out);
      }
    }
    if (op == "*" && (a.is_string() || a.is_array()) && IsInteger(b)) {
      const int64_t n = b.get<int64_t>();
      if (n > 0 && static_cast<uint64_t>(n) > kMaxOutput / std::max<size_t>(1, a.dump().size())) {
        Fail("a repetition is too large");
      }
      if (a.is_string()) {
        std::string out;
        for (int64_t i = 0; i < n; ++i) out += a.get<std::string>();
        return Value::Of(out);
      }
      Json out = Json::array();
      for (int64_t i = 0; i < n; ++i) for (const Json& x : a) out.push_back(x);
      return Value::Of(out);
    }
    if (!a.is_number() || !b.is_number() || a.is_boolean() || b.is_boolean()) {
      Fail(absl::StrCat("unsupported operands for ", op, ": ", Repr(a), " and ", Repr(b)));
    }
    const bool ints = IsInteger(a) && IsInteger(b);
    const double x = a.get<double>(), y = b.get<double>();
    if (op == "/") {
      if (y == 0) Fail("division by zero");
      return Value::Of(x / y);
    }
    if (ints) {
      const int64_t i = a.get<int64_t>(), k = b.get<int64_t>();
      const std::string what = absl::StrCat(i, " ", op, " ", k);
      if (op == "+") return Value::Of(Fits(IntAdd(i, k), what));
      if (op == "-") return Value::Of(Fits(IntSub(i, k), what));
      if (op == "*") return Value::Of(Fits(IntMul(i, k), what));
      if (k == 0 && (op == "//" || op == "%")) Fail("division by zero");
      if (op == "//") return Value::Of(Fits(IntFloorDiv(i, k), what));
      if (op == "%") return Value::Of(IntMod(i, k));
      if (op == "**" && k >= 0) return Value::Of(Fits(IntPow(i, k), what));
    }
    if (op == "+") return Value::Of(x + y);
    if (op == "-") return Value::Of(x - y);
    if (op == "*") return Value::Of(x * y);
    if (y == 0 && (op == "//" || op == "%")) Fail("division by zero");
    if (op == "//") return Value::Of(std::floor(x / y));
    if (op == "%") return Value::Of(x - y * std::floor(x / y));
    return Value::Of(std::pow(x, y));
  }

  static bool Contains(const Value& container, const Value& item) {
    const Json c = container.AsJson(), i = item.AsJson();
    if (c.is_string()) {
      if (!i.is_string()) Fail("'in <string>' needs a string on the left");
      return c.get_ref<const std::string&>().find(i.get<std::string>()) != std::string::npos;
    }
    if (c.is_array()) {
      for (const Json& x : c) if (Equal(x, i)) return true;
      return false;
    }
    if (c.is_object()) return i.is_string() && c.contains(i.get<std::string>());
    if (!container.defined()) return false;
    Fail(absl::StrCat("'in' needs a string, list or dict, not ", Repr(c)));
  }

  bool ApplyTest(const std::string& name, const Value& v, const std::vector<Value>& args) {
    const Json j = v.AsJson();
    auto arg = [&](size_t i) -> Json {
      if (i >= args.size()) Fail(absl::StrCat("test '", name, "' needs an argument"));
      return args[i].AsJson();
    };
    if (name == "defined") return v.defined();
    if (name == "undefined") return !v.defined();
    if (!v.defined() && name != "callable") return false;
    if (name == "none") return v.is_data() && j.is_null();
    if (name == "string") return v.is_data() && j.is_string();
    if (name == "number") return v.is_data() && j.is_number();
    if (name == "integer") return v.is_data() && j.is_number_integer();
    if (name == "float") return v.is_data() && j.is_number_float();
    if (name == "boolean") return v.is_data() && j.is_boolean();
    if (name == "true") return v.is_data() && j.is_boolean() && j.get<bool>();
    if (name == "false") return v.is_data() && j.is_boolean() && !j.get<bool>();
    if (name == "mapping") return (v.is_data() && j.is_object()) || v.kind == Value::Kind::kNamespace;
    if (name == "iterable" || name == "sequence") return v.is_data() && (j.is_string() || j.is_array() || j.is_object());
    if (name == "callable") return v.kind == Value::Kind::kMacro || v.kind == Value::Kind::kFunction;
    if (name == "lower") return j.is_string() && absl::AsciiStrToLower(j.get<std::string>()) == j.get<std::string>();
    if (name == "upper") return j.is_string() && absl::AsciiStrToUpper(j.get<std::string>()) == j.get<std::string>();
    if (name == "odd" || name == "even") {
      const int64_t i = AsInt(v, "odd/even");
      return (IntMod(i, 2) == 1) == (name == "odd");
    }
    if (name == "divisibleby") {
      const int64_t d = AsInt(args.empty() ? Value() : args[0], "divisibleby");
      if (d == 0) Fail("divisibleby 0");
      return IntMod(AsInt(v, "divisibleby"), d) == 0;
    }
    if (name == "equalto" || name == "eq") return Equal(j, arg(0));
    if (name == "ne") return !Equal(j, arg(0));
    if (name == "sameas") return j.type() == arg(0).type() && (j.is_null() || j.is_boolean() ? j == arg(0) : false);
    if (name == "in") return Contains(args.empty() ? Value() : args[0], v);
    bool comparable;
    const Json other = arg(0);
    if (name == "gt") return Less(other, j, &comparable);
    if (name == "lt") return Less(j, other, &comparable);
    if (name == "ge") return !Less(j, other, &comparable);
    if (name == "le") return !Less(other, j, &comparable);
    Fail(absl::StrCat("unsupported test '", name, "'"));
  }

  Value ApplyFilter(const std::string& name, const Value& v, const std::vector<Value>& args,
                    const std::map<std::string, Value>& kwargs) {
    auto arg = [&](size_t i, const char* key) { return Argument(args, kwargs, i, key); };
    const Json j = v.AsJson();
    if (v.lazy && (name == "tojson" || name == "length" || name == "count" || name == "string")) {
      Fail(absl::StrCat(name, " of a generator (add | list)"));
    }
    if (name == "safe") return Markup(Str(v));
    if (name == "default" || name == "d") {
      const Value* fallback = arg(0, "default_value");
      const Value* boolean = arg(1, "boolean");
      const bool use = boolean && Truthy(*boolean) ? !Truthy(v) : !v.defined();
      return use ? (fallback ? *fallback : Value::Of("")) : v;
    }
    if (name == "length" || name == "count") {
      if (!v.defined()) return Value::Of(0);
      if (j.is_string()) return Value::Of(static_cast<int64_t>(Characters(j.get<std::string>()).size()));
      if (j.is_array() || j.is_object()) return Value::Of(static_cast<int64_t>(j.size()));
      Fail(absl::StrCat("length of ", Repr(j)));
    }
    if (name == "string") return Value::Of(Str(v));
    if (name == "trim") {
      const Value* chars = arg(0, "chars");
      Value out = Value::Of(Strip(Str(v), chars ? AsString(*chars, "trim") : kWhitespace, true, true));
      out.markup = v.markup;
      return out;
    }
    if (name == "lower") return Value::Of(absl::AsciiStrToLower(Str(v)));
    if (name == "upper") return Value::Of(absl::AsciiStrToUpper(Str(v)));
    if (name == "title") return Value::Of(Title(Str(v)));
    if (name == "capitalize") {
      const std::string s = Str(v);
      return Value::Of(s.empty() ? s : absl::AsciiStrToUpper(s.substr(0, 1)) + absl::AsciiStrToLower(s.substr(1)));
    }
    if (name == "e" || name == "escape") return Markup(v.markup ? Str(v) : Escape(Str(v)));
    if (name == "items") {
      Json out = Json::array();
      if (!v.defined()) return Value::Of(out);
      if (!j.is_object()) Fail("items needs a dict");
      for (auto it = j.begin(); it != j.end(); ++it) out.push_back(Json::array({it.key(), it.value()}));
      return Value::Of(out);
    }
    if (name == "list") return Value::Of(Json(Iterate(v)));
    if (name == "first" || name == "last") {
      std::vector<Json> items = Iterate(v);
      if (items.empty()) return Value();
      return Value::Of(name == "first" ? items.front() : items.back());
    }
    if (name == "reverse") {
      if (j.is_string()) {
        std::vector<std::string> chars = Characters(j.get<std::string>());
        std::reverse(chars.begin(), chars.end());
        return Value::Of(absl::StrJoin(chars, ""));
      }
      std::vector<Json> items = Iterate(v);
      std::reverse(items.begin(), items.end());
      return Value::Of(Json(items));
    }
    if (name == "join") {
      const Value* sep = arg(0, "d");
      const Value* attribute = arg(1, "attribute");
      std::vector<std::string> parts;
      for (const Json& item : Iterate(v)) {
        parts.push_back(Str(attribute ? Attribute(Value::Of(item), Str(*attribute)) : Value::Of(item)));
      }
      return Value::Of(Joined(parts, sep ? Str(*sep) : ""));
    }
    if (name == "indent") {
      const Value* width = arg(0, "width");
      const Value* first = arg(1, "first");
      const Value* blank = arg(2, "blank");
      std::string pad = "    ";
      if (width && width->AsJson().is_string()) pad = Str(*width);
      if (width && !width->AsJson().is_string()) {
        const int64_t spaces = AsInt(*width, "indent");
        if (spaces > static_cast<int64_t>(kMaxOutput)) Fail("an indent is too large");
        pad = std::string(static_cast<size_t>(std::max<int64_t>(0, spaces)), ' ');
      }
      // Jinja2 appends a newline, splits into lines and joins them back.
      std::vector<std::string> lines = absl::StrSplit(Str(v) + "\n", '\n');
      lines.pop_back();
      std::string out;
      for (size_t i = 0; i < lines.size(); ++i) {
        if (i > 0) out += "\n";
        if (i > 0 && (!lines[i].empty() || (blank && Truthy(*blank)))) out += pad;
        out += lines[i];
      }
      if (first && Truthy(*first)) out = pad + out;
      return Value::Of(out);
    }
    if (name == "replace") {
      const Value* old_text = arg(0, "old");
      const Value* new_text = arg(1, "new");
      if (!old_text || !new_text) Fail("replace takes two arguments");
      return Value::Of(ReplaceText(Str(v), Str(*old_text), Str(*new_text),
                                   arg(2, "count") ? AsInt(*arg(2, "count"), "replace") : -1));
    }
    if (name == "tojson") {
      const Value* indent = arg(0, "indent");
      return Markup(ToJson(j, indent && indent->is_data() && !indent->data.is_null() ? static_cast<int>(AsInt(*indent, "tojson")) : -1));
    }
    // Jinja2 walks these only when the sequence is truthy: none gives an empty result.
    if ((name == "selectattr" || name == "rejectattr" || name == "select" || name == "reject" || name == "map") &&
        !Truthy(v)) {
      return Lazy(Json::array());
    }
    if (name == "selectattr" || name == "rejectattr" || name == "select" || name == "reject") {
      const bool by_attribute = name == "selectattr" || name == "rejectattr";
      const bool keep = name == "selectattr" || name == "select";
      size_t next = 0;
      std::string attribute;
      if (by_attribute) {
        if (args.empty()) Fail(name + " needs an attribute");
        attribute = Str(args[next++]);
      }
      std::string test;
      if (next < args.size()) test = Str(args[next++]);
      if (!test.empty() && !IsKnownTest(test)) Fail(absl::StrCat("unsupported test '", test, "'"));
      const std::vector<Value> test_args(args.begin() + std::min(next, args.size()), args.end());
      Json out = Json::array();
      for (const Json& item : Iterate(v)) {
        const Value subject = by_attribute ? Attribute(Value::Of(item), attribute) : Value::Of(item);
        const bool pass = test.empty() ? Truthy(subject) : ApplyTest(test, subject, test_args);
        if (pass == keep) out.push_back(item);
      }
      return Lazy(out);
    }
    if (name == "map") {
      Json out = Json::array();
      auto attribute = kwargs.find("attribute");
      if (attribute != kwargs.end()) {
        auto fallback = kwargs.find("default");
        for (const Json& item : Iterate(v)) {
          Value x = Attribute(Value::Of(item), Str(attribute->second));
          if (!x.defined() && fallback != kwargs.end()) x = fallback->second;
          out.push_back(x.AsJson());
        }
        return Lazy(out);
      }
      if (args.empty()) Fail("map needs a filter name or attribute=");
      const std::string filter = Str(args[0]);
      if (filter == "map" || !IsKnownFilter(filter)) Fail(absl::StrCat("unsupported filter '", filter, "'"));
      const std::vector<Value> rest(args.begin() + 1, args.end());
      for (const Json& item : Iterate(v)) out.push_back(ApplyFilter(filter, Value::Of(item), rest, {}).AsJson());
      return Lazy(out);
    }
    if (name == "unique") {
      Json out = Json::array();
      std::vector<Json> seen;
      for (const Json& item : Iterate(v)) {
        const Json key = item.is_string() ? Json(absl::AsciiStrToLower(item.get<std::string>())) : item;
        if (std::none_of(seen.begin(), seen.end(), [&](const Json& s) { return Equal(s, key); })) {
          seen.push_back(key);
          out.push_back(item);
        }
      }
      return Value::Of(out);
    }
    if (name == "int") {
      if (IsInteger(j)) return Value::Of(j.get<int64_t>());
      if (j.is_number()) return Value::Of(Fits(IntFromDouble(j.get<double>()), absl::StrCat("int(", j.dump(), ")")));
      if (j.is_string()) {
        char* end = nullptr;
        const std::string s = Strip(j.get<std::string>(), kWhitespace, true, true);
        const long long i = std::strtoll(s.c_str(), &end, 10);
        return Value::Of(end != s.c_str() && *end == '\0' ? static_cast<int64_t>(i) : int64_t{0});
      }
      return Value::Of(0);
    }
    if (name == "float") {
      if (j.is_number()) return Value::Of(j.get<double>());
      if (j.is_string()) return Value::Of(std::strtod(j.get<std::string>().c_str(), nullptr));
      return Value::Of(0.0);
    }
    if (name == "abs") {
      if (IsInteger(j)) {
        const int64_t i = j.get<int64_t>();
        return Value::Of(i < 0 ? Fits(IntNeg(i), absl::StrCat("abs(", i, ")")) : i);
      }
      if (j.is_number()) return Value::Of(std::fabs(j.get<double>()));
      Fail("abs needs a number");
    }
    if (name == "round") {
      const int64_t precision = arg(0, "precision") ? AsInt(*arg(0, "precision"), "round") : 0;
      if (!j.is_number()) Fail("round needs a number");
      const double scale = std::pow(10.0, static_cast<double>(precision));
      return Value::Of(std::round(j.get<double>() * scale) / scale);
    }
    if (name == "sum") {
      Json total = 0;
      for (const Json& item : Iterate(v)) {
        if (!item.is_number()) Fail("sum needs numbers");
        total = IsInteger(total) && IsInteger(item)
                    ? Json(Fits(IntAdd(total.get<int64_t>(), item.get<int64_t>()), "a sum"))
                                                    : Json(total.get<double>() + item.get<double>());
      }
      return Value::Of(total);
    }
    if (name == "min" || name == "max" || name == "sort" || name == "dictsort") {
      std::vector<Json> items = name == "dictsort" ? std::vector<Json>(ApplyFilter("items", v, {}, {}).data)
                                                   : Iterate(v);
      auto key = [&](const Json& x) -> Json {
        const Json k = name == "dictsort" ? x[0] : x;
        return k.is_string() ? Json(absl::AsciiStrToLower(k.get<std::string>())) : k;
      };
      std::stable_sort(items.begin(), items.end(), [&](const Json& a, const Json& b) {
        bool comparable;
        const bool less = Less(key(a), key(b), &comparable);
        if (!comparable) Fail("cannot order these values");
        return less;
      });
      const Value* reverse = arg(0, "reverse");
      if (name != "min" && name != "max" && reverse && Truthy(*reverse)) std::reverse(items.begin(), items.end());
      if (name == "min") return items.empty() ? Value() : Value::Of(items.front());
      if (name == "max") return items.empty() ? Value() : Value::Of(items.back());
      return Value::Of(Json(items));
    }
    if (name == "wordcount") {
      std::vector<std::string> words = absl::StrSplit(Str(v), absl::ByAnyChar(kWhitespace), absl::SkipEmpty());
      return Value::Of(static_cast<int64_t>(words.size()));
    }
    Fail(absl::StrCat("unsupported filter '", name, "'"));
  }

  std::vector<Frame> frames_;
  size_t barrier_ = 1;  // frames below this (except the top level) are a macro caller's
  int64_t steps_ = 0;
  int depth_ = 0;
};

}  // namespace

absl::StatusOr<std::string> Render(const Body& tree, const Json& variables) {
  try {
    Interpreter interpreter(variables);
    return interpreter.Run(tree);
  } catch (const RenderError& e) {
    return absl::InvalidArgumentError(absl::StrCat("chat template: ", e.message));
  } catch (const nlohmann::json::exception& e) {
    return absl::InvalidArgumentError(absl::StrCat("chat template: ", e.what()));
  }
}

}  // namespace toyllm::jinja
