// `stepsim search`'s four stages over a space of plans (search_space.hpp):
//   1. validate: each candidate loaded with the config loader's checks, as `simulate` loads it
//      (no replay); an invalid plan is pruned with the key its error names;
//   2. memory: a plan whose static memory estimate exceeds hardware.memory_GiB is pruned;
//   3. estimate: the rest ranked by the fast estimate (estimate.hpp), ties by enumeration order;
//   4. replay: the best candidates replayed (`simulate --set sim.mode=reduced --json`, a process
//      each, through the sweep's process pool), in rank order, while the next candidate's estimate
//      less the margin is faster than the best replayed step, at most max_replays of them.
// Which candidates are replayed depends only on the inputs, never on -j or timing: a batch run at
// once is accepted in rank order under the same rule, and a replay the rule would not have run is
// left out. Replays are kept in DIR/points (one file per candidate, checked against its settings
// when read back), so an interrupted search resumes where it stopped.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "simulator/search/estimate.hpp"
#include "simulator/search/search_space.hpp"

namespace stepsim::search {

struct SearchOptions {
  std::string binary;               // the stepsim that replays each candidate
  std::string config;               // absolute path of the config
  std::vector<std::string> sets;    // --set values (and --gpus, --tokens-per-step, --global-batch as sets)
  std::vector<std::string> only, fix;  // as given
  std::string out_dir;
  int jobs = 1;
  double margin = 0.10;
  int max_replays = 32;
  int64_t max_plans = kMaxCandidates;  // the most candidates validated (the space's first, in order)
  bool quiet = false;
  // Not empty: stages 1-3 only, then the replays' command lines written here ("-": stdout), one a
  // line, each storing its report where stage 4 reads it back (DIR/points/NNN.json), and
  // DIR/search.json, so that the same search run again afterwards replays none of them.
  std::string emit_jobs;
};

enum class Status { Invalid, OutOfMemory, Estimated, Replayed, ReplayOutOfMemory, ReplayFailed };
const char* to_string(Status s);

struct Evaluated {
  Candidate candidate;
  Status status = Status::Invalid;
  std::string reason_key;  // Invalid: the config key its error names ("other" when none)
  std::string error;       // Invalid, ReplayFailed: the one-line error
  Estimate estimate;       // all but Invalid
  std::map<std::string, std::string> replay;  // Replayed*: the report's fields, flattened
  double replay_number(const std::string& field) const;  // NaN when absent
};

struct SearchResult {
  std::string description;          // "Llama-3.1-8B, 16 H800 GPUs (2 nodes of 8), ..."
  double capacity_GiB = 0;          // hardware.memory_GiB
  double margin = 0;
  int max_replays = 0;
  Space space;                      // what was enumerated (candidates and the full count)
  std::vector<Evaluated> ranked;    // every candidate: replayed by step, failed replays, estimated
                                    // by estimate, out of memory by estimate, invalid by index
  Evaluated config_plan;            // the config's own plan (Invalid when the config is not a plan itself)
  int replays_run = 0;              // replays this run started (not read back from DIR/points)
  std::string stop_reason;          // why the replays stopped
  int best = -1;                    // index into `ranked` of the fastest replayed plan that fits; -1 none
  bool stopped_by_signal = false;
  int signal = 0;
  int jobs_emitted = -1;            // with emit_jobs: the lines written (stage 4 did not run)
};

// The shared --set values each replay runs with (the options' sets, the --fix values of keys the
// search does not vary, sim.mode=reduced).
std::vector<std::string> replay_sets(const SearchOptions& o, const Restrictions& r);

// Runs the stages; progress on stderr unless quiet. Throws ConfigError for bad input: the config
// itself, an empty space, a space where no candidate is valid (one line naming the commonest
// reason), a directory holding another search.
SearchResult run_search(const SearchOptions& o);

}  // namespace stepsim::search
