// The values a chat template computes with: JSON data (what the conversation is made of),
// and the few things Jinja adds — undefined, a namespace whose attributes `set` may change,
// a macro, a built-in function. Printing and comparing follow Python, as Jinja2 does.
#ifndef TOYLLM_TOOLS_CHAT_JINJA_VALUE_H_
#define TOYLLM_TOOLS_CHAT_JINJA_VALUE_H_

#include <memory>
#include <string>

#include "nlohmann/json.hpp"

namespace toyllm::jinja {

using Json = nlohmann::ordered_json;

struct MacroNode;

struct Value {
  enum class Kind { kUndefined, kData, kNamespace, kMacro, kFunction };
  Kind kind = Kind::kUndefined;
  Json data;                      // kData
  std::shared_ptr<Json> space;    // kNamespace: an object, shared by every copy
  const MacroNode* macro = nullptr;
  std::string function;           // kFunction: a built-in's name
  // Jinja2 details that change output: tojson and safe return Markup, a string that escapes
  // plain strings added to it; map, select and friends return generators, which tojson,
  // length and printing refuse.
  bool markup = false;
  bool lazy = false;

  static Value Of(Json j) {
    Value v;
    v.kind = Kind::kData;
    v.data = std::move(j);
    return v;
  }
  bool defined() const { return kind != Kind::kUndefined; }
  bool is_data() const { return kind == Kind::kData; }
  // The JSON of data and namespaces; null otherwise.
  Json AsJson() const;
};

// Python's truth: empty strings, lists, dicts, 0 and None are false; undefined too.
bool Truthy(const Value& v);
// Python's str(): None, True, 1.0, ['a', 1], {'k': 'v'}; undefined prints nothing.
std::string Str(const Value& v);
std::string Repr(const Json& j);
// Jinja2's tojson filter: json.dumps(sort_keys=True) with <, >, & and ' escaped for HTML.
std::string ToJson(const Json& j, int indent);
bool Equal(const Json& a, const Json& b);
// Python ordering of two numbers or two strings; false when they are neither.
bool Less(const Json& a, const Json& b, bool* comparable);

}  // namespace toyllm::jinja

#endif  // TOYLLM_TOOLS_CHAT_JINJA_VALUE_H_
