// Reads a YAML config (and a HF config.json it may point to), applies --set overrides, checks every
// key and value, and returns a validated Plan. Throws ConfigError on any bad input.
#pragma once

#include <string>
#include <vector>

#include "vocabulary/plan.hpp"

namespace stepsim {

// The default config, resolved against the source tree so the binary works from any directory.
std::string default_config_path();

// A file shipped in the source tree (e.g. "workloads/models/llama-3.1-70b.config.json"), as an
// absolute path.
std::string shipped_path(const std::string& relative);

// overrides are "dotted.key=value" strings; values are parsed as YAML.
Plan load_plan(const std::string& path, const std::vector<std::string>& overrides = {});
// The same for a config file whose text was read already (io::read_input_file): what load_plan
// makes of `path` holding `text` (the Python module loads a plan again from the text it read).
Plan load_plan_text(const std::string& text, const std::string& path, const std::vector<std::string>& overrides = {});

// Whether `dotted_key` is a config key (the importers ask before writing one).
bool is_config_key(const std::string& dotted_key);

// The shipped GPU presets' names, for messages: "h800, h100-sxm, ...".
std::string hardware_preset_names();

// Checks one "dotted.key=value" override against the schema alone (key known, value of the right
// type and range) without a config; sweeps use it to reject a bad --grid before running anything.
void check_override(const std::string& key_equals_value);

// Where a check made after loading names as the origin of a problem with `key` (one of `related`
// keys also bears on it): the --set that gave `key`, else the first --set that gave a related
// key, as "--set k=v (with FILE)"; else the config file.
std::string origin_of(const Plan& plan, const std::string& key, const std::vector<std::string>& related = {});

// Checks a hardware profile's text (a `hardware:` map) key by key against the schema's types and
// ranges, as loading it with hardware.profile would; `calibrate` checks what it derived with it.
void check_hardware_profile(const std::string& yaml_text, const std::string& source);

// Same, from YAML text (tests, importers); `source` names it in messages; relative paths in it are
// read against `base_dir` (default: the current directory).
Plan load_plan_from_string(const std::string& yaml_text, const std::string& source,
                           const std::vector<std::string>& overrides = {}, const std::string& base_dir = "");

}  // namespace stepsim
