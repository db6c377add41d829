// A search's space of plans: the keys `stepsim search` varies, the values each takes for a model
// and cluster (every TP within the NVLink domain dividing the heads and KV heads, every PP dividing
// the layers, ...), narrowed by --only and --fix, enumerated in a fixed order so that candidate
// numbers mean the same thing on every run.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "vocabulary/plan.hpp"

namespace stepsim::search {

// The keys a search varies, slowest first (the enumeration's and the table's column order).
const std::vector<std::string>& search_keys();

// What --only, --fix and the --set values of search keys leave of each key: a key absent from
// `values` takes the values the rules below generate.
struct Restrictions {
  std::map<std::string, std::vector<std::string>> values;  // search key -> the only values it takes
  std::vector<std::string> shared_sets;                    // --fix of other config keys: key=value for every plan
};

// Parses --only key=v1,v2 and --fix key=value (and the --set values of search keys, which fix them
// too). Throws ConfigError naming the option, the key and the fix: an unknown key, a value of the
// wrong type, --only of a key the search does not vary, a key given twice, --fix against --only or
// --set of another value.
Restrictions parse_restrictions(const std::vector<std::string>& only, const std::vector<std::string>& fix,
                                const std::vector<std::string>& sets);

struct Candidate {
  int64_t index = 0;                                        // position in the enumeration
  // (search key, YAML value), in search_keys() order; then parallel.stage_layers "[]" where the
  // plan's pipeline does not fit the config's own list (enumerate_space).
  std::vector<std::pair<std::string, std::string>> values;
  std::vector<std::string> overrides() const;               // "key=value" for --set
  std::string value(const std::string& key) const;          // "" when absent
  void set(const std::string& key, const std::string& v);   // replaces the key's value, or adds it
};

struct Space {
  std::vector<Candidate> candidates;  // at most the limit, in enumeration order
  uint64_t total = 0;                 // every plan the space holds (may exceed candidates.size())
  // When a key took no value at all (an empty space): the key and the choices before it.
  std::string empty_key, empty_after;
  bool truncated() const { return total > candidates.size(); }
};

// The most candidates a search validates by default (--max-plans); a larger space is cut to its
// first ones in enumeration order, and the search says so.
inline constexpr size_t kMaxCandidates = 50000;

// Every candidate of the space around `base` (the config's plan: its model, cluster and batch),
// keys in search_keys() order. The generated values (where --only / --fix do not give them):
//   parallel.tp           divisors of the NVLink domain dividing the attention heads, and dividing
//                         or a multiple of the KV heads
//   parallel.cp           1, 2, 4, 8 with 2 cp dividing seq_len and tp x cp dividing the GPUs
//   parallel.cp_comm_type  with CP the config's own type (p2p unless it sets another; --only gives
//                         more, applied to the plans with CP only); without CP none (p2p to clear another)
//   parallel.pp           up to the layers, with tp x cp x pp dividing the GPUs (a pp that does not
//                         divide the layers gets uneven stages, balanced by layer_partition)
//   parallel.ep           (MoE) divisors of the routed experts dividing the GPUs of a stage
//   schedule              at PP 1: 1f1b and each schedule that shards parameters (fsdp); at PP > 1
//                         every registered pipeline schedule (schedules/registry.cpp) but the
//                         profiler capture
//   parallel.virtual_stages  for a schedule with virtual stages (interleaved): 2..8 dividing layers / pp
//   parallel.zero         1 and 2 beside a pipeline schedule, 3 with one that shards parameters
//   parallel.fsdp_shard_size  with ZeRO-3: 0 (all) and HSDP groups of gpus_per_node x 2^k GPUs
//                         dividing the replicas x CP
//   parallel.micro_batch_size  divisors up to 16 of the sequences per replica
//   parallel.microbatches  where the batch does not split evenly over the replicas (FSDP), the counts
//                         giving microbatches of about 1, 2, 4, ... 16 sequences of the largest share
//   parallel.recompute    none, selective, full (and the config's own shorthand)
//   parallel.tp_comm_overlap, overlap_grad_reduce, overlap_param_gather: true where they apply
// A value of "" means the key is left as the config has it.
Space enumerate_space(const Plan& base, const Restrictions& r, size_t limit = kMaxCandidates);

}  // namespace stepsim::search
