// What a search writes into its directory, from its result: search.csv (every valid plan, ranked,
// with a "why" against the best), pruned.csv (every plan pruned before a replay and why),
// summary.txt (the summary printed on stdout), pareto.png (step against peak memory) and
// best.yaml (the winning plan as a config `stepsim simulate` loads). Nothing in them depends on
// timing or the machine's load: the same search gives the same bytes.
#pragma once

#include <string>
#include <vector>

#include "simulator/search/search.hpp"

namespace stepsim::search {

// The files written into `dir` (for claiming them before any work runs).
std::vector<std::pair<std::string, std::string>> output_files(const std::string& dir);  // (path, option)

// "+12 % bubble, -3 % exposed comm": how `e` differs from `best` by term (compute, bubble, exposed
// communication), each as a share of the best's step, largest first, those of 0.5 % or more.
// Replayed plans compare replays; others compare estimates.
std::string why_vs_best(const Evaluated& e, const Evaluated& best);

// Writes the files and returns the summary (also summary.txt). `top`: rows of the printed table.
std::string write_search_outputs(const SearchOptions& o, const SearchResult& r, int top);

}  // namespace stepsim::search
