// What a search directory holds: DIR/search.json (the search: config, --set, --only, --fix), the
// replays' reports DIR/points/NNN.json and their stderr NNN.err (NNN: the candidate's number in the
// enumeration; the config's own plan is the number after the last), and the outputs
// (search.csv, pruned.csv, summary.txt, pareto.png, best.yaml).
#pragma once

#include <string>
#include <vector>

namespace stepsim::search {

struct SearchManifest {
  std::string config;
  std::vector<std::string> sets, only, fix;
  bool operator==(const SearchManifest&) const = default;
};

// A directory belongs to one search: refused (ConfigError naming -o) when it holds another
// search's search.json, a search.json that is not one, or point files without one. The same search
// again resumes in it (its points are read back). Nothing is deleted.
void claim_search_dir(const std::string& dir, const SearchManifest& m);
// Creates DIR/points and writes DIR/search.json.
void write_search_manifest(const std::string& dir, const SearchManifest& m);

}  // namespace stepsim::search
