// A parsed template: expressions and statements as Jinja2's grammar has them, for the
// subset real chat templates use (see jinja_parser.h).
#ifndef TOYLLM_TOOLS_CHAT_JINJA_AST_H_
#define TOYLLM_TOOLS_CHAT_JINJA_AST_H_

#include <memory>
#include <string>
#include <vector>

#include "tools/chat/jinja_value.h"

namespace toyllm::jinja {

struct Expr;
using ExprPtr = std::unique_ptr<Expr>;

struct Arg {
  std::string name;  // empty for a positional argument
  ExprPtr value;
};

struct Expr {
  enum class Kind {
    kLiteral,    // value
    kName,       // name
    kList,       // items
    kDict,       // items as key, value pairs
    kAttribute,  // a.name
    kItem,       // a[b]
    kSlice,      // a[b:c:d] (items may be null)
    kCall,       // a(args)
    kFilter,     // a | name(args)
    kTest,       // a is [not] name(args)
    kUnary,      // op a: "not", "-", "+"
    kBinary,     // a op b
    kTernary,    // a if b else c (c may be null)
  };
  Kind kind;
  Json value;
  std::string name;  // name, attribute, filter, test or operator
  bool negated = false;
  std::vector<ExprPtr> items;  // operands, or list / dict elements
  std::vector<Arg> args;
};

struct Node;
using Body = std::vector<std::unique_ptr<Node>>;

struct MacroNode {
  std::string name;
  std::vector<std::string> params;
  std::vector<ExprPtr> defaults;  // per param, null when none
  Body body;
};

struct Node {
  enum class Kind { kText, kOutput, kIf, kFor, kSet, kSetBlock, kMacro, kFilterBlock, kBreak, kContinue };
  Kind kind;
  std::string text;                     // kText
  ExprPtr expr;                         // kOutput, kFor's iterable, kSet's value, kFilterBlock's filter
  std::vector<ExprPtr> conditions;      // kIf: one per branch; kFor: the optional `if`
  std::vector<Body> branches;           // kIf: a body per condition, then the else body
  std::vector<std::string> targets;     // kFor's loop variables; kSet's names (ns.attr as "ns", attr)
  std::string attribute;                // kSet into a namespace: the attribute
  Body body, else_body;                 // kFor, kSetBlock, kFilterBlock
  std::unique_ptr<MacroNode> macro;     // kMacro
};

}  // namespace toyllm::jinja

#endif  // TOYLLM_TOOLS_CHAT_JINJA_AST_H_
