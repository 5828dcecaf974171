// Renders a parsed template against variables, with Jinja2's semantics for the subset the
// parser accepts: Python's truth, printing and arithmetic, scoped for loops with `loop`,
// namespaces, macros, the usual filters, tests and string / dict methods.
#ifndef TOYLLM_TOOLS_CHAT_JINJA_INTERPRETER_H_
#define TOYLLM_TOOLS_CHAT_JINJA_INTERPRETER_H_

#include <string>

#include "absl/status/statusor.h"
#include "tools/chat/jinja_ast.h"

namespace toyllm::jinja {

// `variables` is an object whose members become the template's top-level names; the
// functions raise_exception, namespace and range are there too. Bounded in work and output
// size, so a hostile template ends with an error instead of running forever.
absl::StatusOr<std::string> Render(const Body& tree, const Json& variables);

}  // namespace toyllm::jinja

#endif  // TOYLLM_TOOLS_CHAT_JINJA_INTERPRETER_H_
