// JSON input files read strictly: what nlohmann::json would accept silently is an error.
#pragma once

#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "vocabulary/config_error.hpp"

namespace stepsim::io {

// Parses a JSON input file, refusing what nlohmann::json accepts silently: a key given twice in one
// object (the last one would win unseen) and nesting deeper than `max_depth`. Those throw
// ConfigError with the reason (the caller adds the file's name); syntax errors throw
// nlohmann::json::exception as json::parse does.
template <class Input>
nlohmann::json parse_json_strictly(Input&& input, int max_depth) {
  std::vector<std::set<std::string>> keys;  // the keys seen so far in each open object
  return nlohmann::json::parse(std::forward<Input>(input),
                               [&](int depth, nlohmann::json::parse_event_t event, nlohmann::json& parsed) {
                                 using E = nlohmann::json::parse_event_t;
                                 if (depth > max_depth)
                                   throw ConfigError("nested more than " + std::to_string(max_depth) + " levels deep");
                                 if (event == E::object_start) keys.emplace_back();
                                 if (event == E::object_end && !keys.empty()) keys.pop_back();
                                 if (event == E::key && !keys.empty() && !keys.back().insert(parsed.get<std::string>()).second)
                                   throw ConfigError("key \"" + parsed.get<std::string>() +
                                                     "\" given twice in one object; keep one");
                                 return true;
                               });
}

}  // namespace stepsim::io
