// Renders a chat template file against each variable set of a JSON list and prints the
// results as a JSON list of {"text": ...} or {"error": ...}: the side of
// tests/chat_templates_vs_jinja2.py that runs the project's interpreter.
#include <fstream>
#include <iostream>
#include <sstream>

#include "nlohmann/json.hpp"
#include "tools/chat/chat_template.h"

int main(int argc, char** argv) {
  if (argc != 3) {
    std::cerr << "usage: chat_template_render TEMPLATE VARIABLES.json\n";
    return 2;
  }
  std::ifstream template_in(argv[1], std::ios::binary), variables_in(argv[2], std::ios::binary);
  std::stringstream source, variables;
  source << template_in.rdbuf();
  variables << variables_in.rdbuf();
  nlohmann::ordered_json cases = nlohmann::ordered_json::parse(variables.str(), nullptr, false);
  if (!template_in || !variables_in || !cases.is_array()) {
    std::cerr << "chat_template_render: cannot read " << argv[1] << " or " << argv[2] << "\n";
    return 2;
  }
  nlohmann::ordered_json results = nlohmann::ordered_json::array();
  absl::StatusOr<toyllm::ChatTemplate> parsed = toyllm::ChatTemplate::Parse(source.str());
  for (const nlohmann::ordered_json& vars : cases) {
    if (!parsed.ok()) {
      results.push_back({{"load_error", std::string(parsed.status().message())}});
      continue;
    }
    absl::StatusOr<std::string> text = parsed->Render(vars);
    if (text.ok()) results.push_back({{"text", *text}});
    else results.push_back({{"error", std::string(text.status().message())}});
  }
  std::cout << results.dump(1, ' ', false, nlohmann::ordered_json::error_handler_t::replace) << "\n";
  return 0;
}
