// A config as a tree, with --set values applied: what `stepsim search` writes its best plan from.
// (Defined in config_loader.cpp, beside the --set rules it shares.)
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace stepsim {

// The config's tree (`text`, read from `path`) with `overrides` applied as --set applies them (a
// batch or split given the other way replaced), its relative file paths made absolute: a config
// that loads from any folder into the plan load_plan(path, overrides) gives. Not checked: load it
// to check it. Throws ConfigError on malformed YAML or a bad --set.
nlohmann::json config_tree(const std::string& path, const std::string& text, const std::vector<std::string>& overrides);

}  // namespace stepsim
