#include "simulator/search/search_space.hpp"

#include <algorithm>
#include <cstdlib>
#include <functional>
#include <set>

#include "schedules/registry.hpp"
#include "simulator/config/config_loader.hpp"
#include "simulator/io/json_text.hpp"
#include "simulator/sweep/grid.hpp"
#include "vocabulary/config_error.hpp"
#include "vocabulary/plan_names.hpp"

namespace stepsim::search {
namespace {

constexpr int64_t kMaxCp = 8;
constexpr int64_t kMaxVirtualStages = 8;
constexpr int64_t kMaxMicroBatch = 16;
// Counting stops here: a space this large is reported as "more than" it.
constexpr uint64_t kCountCap = 100'000'000;

std::string joined(const std::vector<std::string>& xs) {
  std::string s;
  for (const auto& x : xs) s += (s.empty() ? "" : ", ") + x;
  return s;
}

bool is_search_key(const std::string& key) {
  const auto& keys = search_keys();
  return std::find(keys.begin(), keys.end(), key) != keys.end();
}

// A YAML value as the enumeration reads it: quotes removed.
std::string bare(const std::string& v) {
  std::string s = v;
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.erase(s.begin());
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.pop_back();
  if (s.size() >= 2 && (s.front() == '"' || s.front() == '\'') && s.back() == s.front()) s = s.substr(1, s.size() - 2);
  return s;
}

int64_t as_int(const std::string& v, int64_t fallback) {
  const std::string s = bare(v);
  char* end = nullptr;
  const long long x = std::strtoll(s.c_str(), &end, 10);
  return end && *end == '\0' && !s.empty() ? int64_t(x) : fallback;
}

std::vector<int64_t> divisors(int64_t n) {
  std::vector<int64_t> d;
  for (int64_t k = 1; k <= n; ++k)
    if (n % k == 0) d.push_back(k);
  return d;
}

std::vector<std::string> texts(const std::vector<int64_t>& xs) {
  std::vector<std::string> out;
  for (const int64_t x : xs) out.push_back(std::to_string(x));
  return out;
}

// What the enumeration knows of a schedule, from its traits and the settings it needs.
struct ScheduleFacts {
  std::string name;
  bool shards_parameters = false;
  bool virtual_stages = false;  // takes parallel.virtual_stages > 1
};

std::vector<ScheduleFacts> schedule_facts(const Plan& base) {
  std::vector<ScheduleFacts> out;
  for (const auto& e : sched::schedule_registry()) {
    Plan probe = base;
    probe.parallel.schedule = stepsim::Schedule(e.name);
    probe.parallel.pp = 2;
    probe.parallel.microbatches = 8;
    probe.parallel.virtual_stages = 2;
    const auto s = sched::make_unchecked_schedule(probe);
    if (s->is_profile_capture()) continue;  // not a training step
    ScheduleFacts f{e.name, s->shards_parameters(), true};
    for (const auto& n : s->settings_needed(probe))
      if (n.key == "parallel.virtual_stages") f.virtual_stages = false;
    out.push_back(f);
  }
  return out;
}

}  // namespace

const std::vector<std::string>& search_keys() {
  static const std::vector<std::string> keys = {
      "parallel.tp",         "parallel.cp",        "parallel.cp_comm_type", "parallel.pp",
      "parallel.ep",         "schedule",           "parallel.virtual_stages",
      "parallel.zero",       "parallel.fsdp_shard_size", "parallel.micro_batch_size", "parallel.microbatches",
      "parallel.recompute",  "parallel.tp_comm_overlap", "parallel.overlap_grad_reduce",
      "parallel.overlap_param_gather", "parallel.cpu_offload_layers"};
  return keys;
}

std::string Candidate::value(const std::string& key) const {
  for (const auto& [k, v] : values)
    if (k == key) return v;
  return "";
}

void Candidate::set(const std::string& key, const std::string& v) {
  for (auto& [k, old] : values)
    if (k == key) {
      old = v;
      return;
    }
  values.emplace_back(key, v);
}

std::vector<std::string> Candidate::overrides() const {
  std::vector<std::string> out;
  for (const auto& [k, v] : values)
    if (!v.empty()) out.push_back(k + "=" + v);
  return out;
}

Restrictions parse_restrictions(const std::vector<std::string>& only, const std::vector<std::string>& fix,
                                const std::vector<std::string>& sets) {
  Restrictions r;
  std::map<std::string, std::string> given_by;  // key -> the option that gave it, for messages
  std::map<std::string, std::string> shared;    // non-search --fix keys
  const auto checked = [](const std::string& option, const std::string& key, const std::string& value) {
    try {
      check_override(key + "=" + value);
    } catch (const ConfigError& e) {
      std::string msg = e.what();
      if (msg.rfind("--set", 0) == 0) msg.replace(0, 5, option);
      throw ConfigError(msg);
    }
  };
  for (const auto& text : only) {
    sweep::GridAxis axis;
    try {
      axis = sweep::parse_grid_axis(text);
    } catch (const ConfigError& e) {
      std::string msg = e.what();
      if (msg.rfind("--grid", 0) == 0) msg.replace(0, 6, "--only");
      throw ConfigError(msg);
    }
    if (!is_config_key(axis.key) || !is_search_key(axis.key))
      throw ConfigError("--only " + axis.key + ": " +
                        (is_config_key(axis.key) ? "not a key the search varies; give it one value with --fix " + axis.key + "=VALUE"
                                                 : "unknown key") +
                        " (the search varies " + joined(search_keys()) + ")");
    if (r.values.count(axis.key)) throw ConfigError("--only " + axis.key + ": given twice; list all its values in one --only");
    std::set<std::string> seen;
    std::vector<std::string> values;
    for (const auto& v : axis.values) {
      checked("--only", axis.key, v);
      if (seen.insert(bare(v)).second) values.push_back(v);
    }
    r.values[axis.key] = values;
    given_by[axis.key] = "--only " + text;
  }
  const auto fix_one = [&](const std::string& option, const std::string& text) {
    const auto eq = text.find('=');
    if (eq == std::string::npos || eq == 0)
      throw ConfigError(option + " " + text + ": expected key=value, for example " + option + " schedule=interleaved");
    const std::string key = text.substr(0, eq), value = text.substr(eq + 1);
    if (value.find_first_of("\n\r") != std::string::npos)
      throw ConfigError(option + " " + key + ": the value holds a line break; write it on one line");
    checked(option, key, value);
    if (!is_search_key(key)) {
      if (option == "--set") return;  // the config's own override, passed to every plan as it is
      if (shared.count(key) && bare(shared[key]) != bare(value))
        throw ConfigError(option + " " + key + "=" + value + ": contradicts " + given_by[key] + "; give the key one value");
      if (!shared.count(key)) r.shared_sets.push_back(key + "=" + value);
      shared[key] = value;
      given_by[key] = option + " " + text;
      return;
    }
    const auto it = r.values.find(key);
    if (it != r.values.end()) {
      const bool listed = std::any_of(it->second.begin(), it->second.end(), [&](const std::string& v) { return bare(v) == bare(value); });
      const bool by_only = given_by[key].rfind("--only", 0) == 0;
      if (!listed || !by_only)
        throw ConfigError(option + " " + key + "=" + value + ": contradicts " + given_by[key] +
                          "; give the key one value (--fix) or a list (--only), not both");
    }
    r.values[key] = {value};
    given_by[key] = option + " " + text;
  };
  for (const auto& s : sets) fix_one("--set", s);
  for (const auto& f : fix) fix_one("--fix", f);
  return r;
}

Space enumerate_space(const Plan& base, const Restrictions& r, size_t limit) {
  Space space;
  const ModelConfig& m = base.model;
  const int64_t gpus = base.gpus(), nvlink = base.nvlink_ranks(), layers = m.num_hidden_layers;
  const auto facts = schedule_facts(base);
  const auto& keys = search_keys();
  std::string base_recompute;
  for (const auto& n : kRecomputeShorthands)
    if (n.value == base.parallel.recompute) base_recompute = n.name;

  // The values of key k given the choices so far (chosen[i] for keys[i], i < k).
  std::vector<std::string> chosen(keys.size());
  const auto value_of = [&](const std::string& key) {
    const auto at = size_t(std::find(keys.begin(), keys.end(), key) - keys.begin());
    return chosen[at];
  };
  const auto facts_of = [&](const std::string& name) -> const ScheduleFacts* {
    for (const auto& f : facts)
      if (f.name == name) return &f;
    return nullptr;
  };
  const auto generated = [&](const std::string& key) -> std::vector<std::string> {
    const int64_t tp = as_int(value_of("parallel.tp"), 1), cp = as_int(value_of("parallel.cp"), 1);
    const int64_t pp = as_int(value_of("parallel.pp"), 1);
    if (key == "parallel.tp") {
      std::vector<int64_t> out;
      for (const int64_t d : divisors(nvlink)) {
        const int64_t kv = m.kv_heads();
        if (m.num_attention_heads % d == 0 && (kv % d == 0 || d % kv == 0)) out.push_back(d);
      }
      return texts(out);
    }
    if (key == "parallel.cp") {
      std::vector<int64_t> out;
      for (int64_t c = 1; c <= kMaxCp; c *= 2)
        if ((c == 1 || base.train.seq_len % (2 * c) == 0) && gpus % (tp * c) == 0) out.push_back(c);
      return texts(out);
    }
    // Context parallelism's exchange: the config's own type (Megatron's default p2p unless it sets
    // another); `--only parallel.cp_comm_type=p2p,a2a` compares them. Without CP nothing, or p2p
    // (inert) to clear a config's other type.
    if (key == "parallel.cp_comm_type") {
      if (cp == 1) return {base.parallel.cp_comm_type == CpCommType::P2p ? "" : "p2p"};
      return {to_string(base.parallel.cp_comm_type)};
    }
    if (key == "parallel.pp") {  // stepsim balances the stages when pp does not divide the layers
      std::vector<int64_t> out;
      if (gpus % (tp * cp) != 0) return {"1"};
      for (const int64_t d : divisors(gpus / (tp * cp)))
        if (d <= layers) out.push_back(d);
      return texts(out);
    }
    if (key == "parallel.ep") {
      if (!m.is_moe()) return {""};
      std::vector<int64_t> out;
      const int64_t stage = gpus / std::max<int64_t>(1, pp);
      for (const int64_t d : divisors(m.n_routed_experts))
        if (stage % d == 0) out.push_back(d);
      return texts(out);
    }
    if (key == "schedule") {
      std::vector<std::string> out;
      for (const auto& f : facts)
        if (f.shards_parameters ? pp == 1 : (pp > 1 || f.name == "1f1b")) out.push_back(f.name);
      return out;
    }
    const ScheduleFacts* f = facts_of(bare(value_of("schedule")));
    const bool shards = f != nullptr && f->shards_parameters;
    if (key == "parallel.virtual_stages") {
      if (f == nullptr || !f->virtual_stages) return {""};
      std::vector<int64_t> out;
      for (int64_t v = 2; v <= kMaxVirtualStages; ++v)
        if (layers % (pp * v) == 0) out.push_back(v);
      return texts(out);
    }
    const int64_t replicas = gpus / std::max<int64_t>(1, tp * cp * pp);
    if (key == "parallel.zero") return shards ? std::vector<std::string>{"3"} : std::vector<std::string>{"1", "2"};
    if (key == "parallel.fsdp_shard_size") {
      if (as_int(value_of("parallel.zero"), 1) != 3) return {""};
      std::vector<std::string> out = {""};
      const int64_t holders = replicas * cp;
      for (int64_t s = base.cluster.gpus_per_node; s < holders; s *= 2)
        if (holders % s == 0) out.push_back(std::to_string(s));
      return out;
    }
    const int64_t batch = base.train.global_batch;
    const bool uneven = replicas > 0 && batch % replicas != 0;  // FSDP only: some replicas run one more
    if (key == "parallel.micro_batch_size") {
      if (r.values.count("parallel.microbatches") || uneven) return {""};  // given as a count instead
      if (replicas <= 0) return {"1"};
      std::vector<int64_t> out;
      for (const int64_t d : divisors(std::min<int64_t>(batch / replicas, kMaxMicroBatch)))
        if ((batch / replicas) % d == 0) out.push_back(d);
      return texts(out);
    }
    if (key == "parallel.microbatches") {
      // An uneven split has no one microbatch size: the counts giving microbatches of about 1, 2, 4,
      // ... sequences (up to 16) of the largest replica's share.
      if (!uneven || !value_of("parallel.micro_batch_size").empty()) return {""};
      const int64_t most = (batch + replicas - 1) / replicas;
      std::vector<int64_t> out;
      for (int64_t s = 1; s <= std::min<int64_t>(kMaxMicroBatch, most); s *= 2) {
        const int64_t m = (most + s - 1) / s;
        if (out.empty() || out.back() != m) out.push_back(m);
      }
      return texts(out);
    }
    if (key == "parallel.recompute") {
      std::vector<std::string> out = {"none", "selective", "full"};
      if (!base_recompute.empty() && std::find(out.begin(), out.end(), base_recompute) == out.end())
        out.push_back(base_recompute);
      return out;
    }
    if (key == "parallel.tp_comm_overlap") return tp > 1 ? std::vector<std::string>{"true"} : std::vector<std::string>{""};
    if (key == "parallel.overlap_grad_reduce" || key == "parallel.overlap_param_gather") {
      if (as_int(value_of("parallel.zero"), 1) == 3) return {""};
      const int64_t ep = as_int(value_of("parallel.ep"), 1);
      const bool buckets = replicas * cp > 1 || (m.is_moe() && gpus / std::max<int64_t>(1, pp) / std::max<int64_t>(1, ep) > 1);
      return buckets ? std::vector<std::string>{"true"} : std::vector<std::string>{""};
    }
    return {""};
  };

  // The config's own parallel.stage_layers lists one count per stage of its pipeline: a plan whose
  // pipeline has as many stages keeps it; any other clears it, so the software profile's rule
  // (software.pipeline_split) splits that plan's layers, as it would the config's without the list.
  const auto clears_stage_layers = [&] {
    if (base.parallel.stage_layers.empty()) return false;
    Plan probe = base;
    const std::string pp = value_of("parallel.pp"), schedule = bare(value_of("schedule")),
                      virtual_stages = value_of("parallel.virtual_stages");
    if (!pp.empty()) probe.parallel.pp = as_int(pp, base.parallel.pp);
    if (!virtual_stages.empty()) probe.parallel.virtual_stages = as_int(virtual_stages, base.parallel.virtual_stages);
    if (const auto named = sched::schedule_named(schedule)) probe.parallel.schedule = *named;
    return sched::path_stages(probe) != int64_t(base.parallel.stage_layers.size());
  };

  bool stop = false;
  const std::function<void(size_t)> walk = [&](size_t k) {
    if (stop) return;
    if (k == keys.size()) {
      if (space.candidates.size() < limit) {
        Candidate c;
        c.index = int64_t(space.total);
        for (size_t i = 0; i < keys.size(); ++i) c.values.emplace_back(keys[i], chosen[i]);
        if (clears_stage_layers()) c.values.emplace_back("parallel.stage_layers", "[]");
        space.candidates.push_back(std::move(c));
      }
      if (++space.total >= kCountCap) stop = true;
      return;
    }
    // --only / --fix values of the CP exchange type apply to the plans with CP; the others have none.
    const bool inert = keys[k] == "parallel.cp_comm_type" && as_int(value_of("parallel.cp"), 1) == 1;
    const auto given = inert ? r.values.end() : r.values.find(keys[k]);
    const std::vector<std::string> values = given != r.values.end() ? given->second : generated(keys[k]);
    if (values.empty() && space.empty_key.empty()) {
      space.empty_key = keys[k];
      for (size_t i = 0; i < k; ++i)
        if (!chosen[i].empty()) space.empty_after += (space.empty_after.empty() ? "" : ", ") + keys[i] + "=" + chosen[i];
    }
    for (const auto& v : values) {
      chosen[k] = v;
      walk(k + 1);
      if (stop) return;
    }
    chosen[k].clear();
  };
  walk(0);
  return space;
}

}  // namespace stepsim::search
