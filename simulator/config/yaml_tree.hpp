// Parses YAML text into a JSON tree with typed scalars (int, float, bool, null, string), so the
// rest of config handling works on one plain tree. Quoted scalars stay strings.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace stepsim {

// Throws ConfigError naming `source`, the line and column on malformed YAML.
nlohmann::json yaml_text_to_json(const std::string& text, const std::string& source = "--set");

}  // namespace stepsim
