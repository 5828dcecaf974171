#include "tools/chat/jinja_value.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstdio>
#include <vector>

namespace toyllm::jinja {
namespace {

// Python's repr of a float: the shortest text that reads back to the same double.
std::string FloatRepr(double d) {
  if (std::isnan(d)) return "nan";
  if (std::isinf(d)) return d > 0 ? "inf" : "-inf";
  char buf[32];
  for (int precision = 1; precision <= 17; ++precision) {
    std::snprintf(buf, sizeof buf, "%.*g", precision, d);
    if (std::strtod(buf, nullptr) == d) break;
  }
  std::string s = buf;
  // Python writes exponents as e+16 / e-05 like printf, and 1.0 where printf writes 1.
  const size_t e = s.find('e');
  if (e == std::string::npos) {
    if (s.find('.') == std::string::npos) s += ".0";
  } else if (d == std::floor(d) && std::fabs(d) < 1e16) {
    std::snprintf(buf, sizeof buf, "%.1f", d);
    s = buf;
  }
  return s;
}

std::string PyQuote(const std::string& s) {
  const bool single = s.find('\'') == std::string::npos || s.find('"') != std::string::npos;
  const char quote = single ? '\'' : '"';
  std::string out(1, quote);
  for (unsigned char c : s) {
    if (c == '\\') out += "\\\\";
    else if (c == quote) out += std::string("\\") + static_cast<char>(c);
    else if (c == '\n') out += "\\n";
    else if (c == '\r') out += "\\r";
    else if (c == '\t') out += "\\t";
    else if (c < 0x20 || c == 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out + quote;
}

// Decodes one UTF-8 character at s[i] (advancing i); malformed bytes decode as themselves.
uint32_t NextCodepoint(const std::string& s, size_t& i) {
  const unsigned char c = s[i];
  int n = c < 0x80 ? 0 : (c >> 5) == 6 ? 1 : (c >> 4) == 14 ? 2 : (c >> 3) == 30 ? 3 : -1;
  if (n <= 0 || i + n >= s.size()) {
    ++i;
    return c;
  }
  uint32_t cp = c & (0x3f >> n);
  for (int k = 1; k <= n; ++k) cp = cp << 6 | (static_cast<unsigned char>(s[i + k]) & 0x3f);
  i += n + 1;
  return cp;
}

void JsonString(const std::string& s, std::string& out) {
  out += '"';
  for (size_t i = 0; i < s.size();) {
    const uint32_t cp = NextCodepoint(s, i);
    char buf[16];
    switch (cp) {
      case '"': out += "\\\""; continue;
      case '\\': out += "\\\\"; continue;
      case '\n': out += "\\n"; continue;
      case '\r': out += "\\r"; continue;
      case '\t': out += "\\t"; continue;
      case '\b': out += "\\b"; continue;
      case '\f': out += "\\f"; continue;
      case '<': case '>': case '&': case '\'':
        std::snprintf(buf, sizeof buf, "\\u%04x", cp);
        out += buf;
        continue;
      default: break;
    }
    if (cp < 0x20 || cp >= 0x7f) {
      if (cp >= 0x10000) {
        const uint32_t v = cp - 0x10000;
        std::snprintf(buf, sizeof buf, "\\u%04x\\u%04x", 0xd800 + (v >> 10), 0xdc00 + (v & 0x3ff));
      } else {
        std::snprintf(buf, sizeof buf, "\\u%04x", cp);
      }
      out += buf;
    } else {
      out += static_cast<char>(cp);
    }
  }
  out += '"';
}

void DumpJson(const Json& j, int indent, int depth, std::string& out) {
  const std::string item_sep = indent >= 0 ? "," : ", ";
  auto newline = [&](int d) {
    if (indent >= 0) out += "\n" + std::string(static_cast<size_t>(indent * d), ' ');
  };
  switch (j.type()) {
    case Json::value_t::null: out += "null"; return;
    case Json::value_t::boolean: out += j.get<bool>() ? "true" : "false"; return;
    case Json::value_t::number_integer: out += std::to_string(j.get<int64_t>()); return;
    case Json::value_t::number_unsigned: out += std::to_string(j.get<uint64_t>()); return;
    case Json::value_t::number_float: {
      const double d = j.get<double>();
      out += std::isnan(d) ? "NaN" : std::isinf(d) ? (d > 0 ? "Infinity" : "-Infinity") : FloatRepr(d);
      return;
    }
    case Json::value_t::string: JsonString(j.get<std::string>(), out); return;
    case Json::value_t::array: {
      if (j.empty()) { out += "[]"; return; }
      out += "[";
      bool first = true;
      for (const Json& e : j) {
        if (!first) out += item_sep;
        first = false;
        newline(depth + 1);
        DumpJson(e, indent, depth + 1, out);
      }
      newline(depth);
      out += "]";
      return;
    }
    case Json::value_t::object: {
      if (j.empty()) { out += "{}"; return; }
      std::vector<std::string> keys;
      for (auto it = j.begin(); it != j.end(); ++it) keys.push_back(it.key());
      std::sort(keys.begin(), keys.end());
      out += "{";
      bool first = true;
      for (const std::string& k : keys) {
        if (!first) out += item_sep;
        first = false;
        newline(depth + 1);
        JsonString(k, out);
        out += ": ";
        DumpJson(j.at(k), indent, depth + 1, out);
      }
      newline(depth);
      out += "}";
      return;
    }
    default: out += "null"; return;
  }
}

}  // namespace

Json Value::AsJson() const {
  if (kind == Kind::kData) return data;
  if (kind == Kind::kNamespace) return *space;
  return nullptr;
}

bool Truthy(const Value& v) {
  if (v.kind == Value::Kind::kUndefined) return false;
  if (v.kind != Value::Kind::kData) return true;
  const Json& j = v.data;
  switch (j.type()) {
    case Json::value_t::null: return false;
    case Json::value_t::boolean: return j.get<bool>();
    case Json::value_t::number_integer: return j.get<int64_t>() != 0;
    case Json::value_t::number_unsigned: return j.get<uint64_t>() != 0;
    case Json::value_t::number_float: return j.get<double>() != 0.0;
    case Json::value_t::string: return !j.get_ref<const std::string&>().empty();
    default: return !j.empty();
  }
}

std::string Repr(const Json& j) {
  switch (j.type()) {
    case Json::value_t::null: return "None";
    case Json::value_t::boolean: return j.get<bool>() ? "True" : "False";
    case Json::value_t::number_integer: return std::to_string(j.get<int64_t>());
    case Json::value_t::number_unsigned: return std::to_string(j.get<uint64_t>());
    case Json::value_t::number_float: return FloatRepr(j.get<double>());
    case Json::value_t::string: return PyQuote(j.get<std::string>());
    case Json::value_t::array: {
      std::string out = "[";
      for (size_t i = 0; i < j.size(); ++i) out += (i ? ", " : "") + Repr(j[i]);
      return out + "]";
    }
    case Json::value_t::object: {
      std::string out = "{";
      bool first = true;
      for (auto it = j.begin(); it != j.end(); ++it) {
        out += (first ? "" : ", ") + PyQuote(it.key()) + ": " + Repr(it.value());
        first = false;
      }
      return out + "}";
    }
    default: return "None";
  }
}

std::string Str(const Value& v) {
  switch (v.kind) {
    case Value::Kind::kUndefined: return "";
    case Value::Kind::kNamespace: return "<Namespace " + Repr(*v.space) + ">";
    case Value::Kind::kMacro: return "<Macro>";
    case Value::Kind::kFunction: return "<function " + v.function + ">";
    case Value::Kind::kData: break;
  }
  if (v.data.is_string()) return v.data.get<std::string>();
  return Repr(v.data);
}

std::string ToJson(const Json& j, int indent) {
  std::string out;
  DumpJson(j, indent, 0, out);
  return out;
}

bool Equal(const Json& a, const Json& b) {
  if (a.is_number() && b.is_number()) return a.get<double>() == b.get<double>();
  if (a.is_boolean() && b.is_number()) return (a.get<bool>() ? 1.0 : 0.0) == b.get<double>();
  if (a.is_number() && b.is_boolean()) return Equal(b, a);
  return a == b;
}

bool Less(const Json& a, const Json& b, bool* comparable) {
  *comparable = true;
  if (a.is_number() && b.is_number()) return a.get<double>() < b.get<double>();
  if (a.is_string() && b.is_string()) return a.get_ref<const std::string&>() < b.get_ref<const std::string&>();
  *comparable = false;
  return false;
}

}  // namespace toyllm::jinja
