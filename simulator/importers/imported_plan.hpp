// What an importer makes of another tool's job: the stepsim keys it maps, each with the argument it
// came from, and the arguments it read but did not import. Written out as a commented YAML plan
// after checking that the plan loads.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "vocabulary/config_error.hpp"

namespace stepsim::importers {

// The one-line error for `what` at line `line` of the imported file `source` (0: the whole file).
inline ConfigError error_at(const std::string& source, int line, const std::string& what) {
  return ConfigError(source + (line > 0 ? ":" + std::to_string(line) : "") + ": " + what);
}

struct PlanEntry {
  std::string key;        // dotted stepsim key
  nlohmann::json value;   // an integer, a bool or a string
  std::string from;       // the source argument(s) or the reason, for the comment ("--num-layers 80")
  int line = 0;           // where in the source file (0: not from one line)
};

struct ImportedPlan {
  std::string tool;                      // "Megatron-LM", "torchtitan"
  std::string source;                    // the file read
  std::vector<std::string> header;       // comment lines: what was read, what was assumed
  std::vector<PlanEntry> entries;        // in the order written
  std::vector<std::string> not_imported;  // arguments with no effect on stepsim's cost model
  std::vector<std::string> unknown;       // arguments stepsim does not know
  std::vector<std::string> notes;         // other things to say on stderr (an override of the file)

  // Adds or replaces `key`.
  void set(const std::string& key, nlohmann::json value, const std::string& from, int line = 0);
  const PlanEntry* find(const std::string& key) const;
};

// The plan as commented YAML. `config_json_base`: the folder a relative model.config_json is
// written against (the output file's folder), or "" for absolute paths.
std::string plan_yaml(const ImportedPlan& plan, const std::string& config_json_base);

// Loads the YAML as `stepsim simulate` would (relative paths against `base_dir`); a problem is one
// ConfigError naming the source argument behind the key at fault.
void check_imported_plan(const ImportedPlan& plan, const std::string& yaml, const std::string& base_dir);

// The one `note:` line for stderr: what was not imported, and what stepsim does not know.
std::string not_imported_note(const ImportedPlan& plan);

}  // namespace stepsim::importers
