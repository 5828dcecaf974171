// Jinja2 template text to a tree, with the environment Hugging Face renders chat templates
// in: trim_blocks and lstrip_blocks on, loop controls (break, continue) enabled. What the
// parser does not know — a statement, filter or test outside the subset real templates
// use — is an error here, so that a template is rejected at load rather than misrendered.
#ifndef TOYLLM_TOOLS_CHAT_JINJA_PARSER_H_
#define TOYLLM_TOOLS_CHAT_JINJA_PARSER_H_

#include <string_view>

#include "absl/status/statusor.h"
#include "tools/chat/jinja_ast.h"

namespace toyllm::jinja {

absl::StatusOr<Body> Parse(std::string_view source);

// The filters and tests the interpreter implements (the parser checks names against them).
bool IsKnownFilter(const std::string& name);
bool IsKnownTest(const std::string& name);

}  // namespace toyllm::jinja

#endif  // TOYLLM_TOOLS_CHAT_JINJA_PARSER_H_
