#include "simulator/config/config_loader.hpp"

#include <yaml-cpp/yaml.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "simulator/config/config_error.hpp"
#include "simulator/config/hf_config.hpp"
#include "simulator/config/straggler_config.hpp"
#include "simulator/config/validate_plan.hpp"
#include "simulator/config/yaml_tree.hpp"

namespace stepsim {
namespace {

using nlohmann::json;

enum class Kind { PositiveInt, NonNegativeInt, PositiveNumber, NonNegativeNumber, Text, Bool, Choice, StragglerList };

// One accepted key: its type and where its value goes in the Plan.
struct Field {
  Kind kind;
  std::function<void(Plan&, const json&)> store;
  std::vector<std::string> choices = {};
  std::string help = {};
};

template <typename T>
std::function<void(Plan&, const json&)> into(T Plan::*section, int64_t T::*member) {
  return [=](Plan& p, const json& v) { (p.*section).*member = v.get<int64_t>(); };
}
template <typename T>
std::function<void(Plan&, const json&)> into(T Plan::*section, double T::*member) {
  return [=](Plan& p, const json& v) { (p.*section).*member = v.get<double>(); };
}
template <typename T>
std::function<void(Plan&, const json&)> into(T Plan::*section, std::string T::*member) {
  return [=](Plan& p, const json& v) { (p.*section).*member = v.get<std::string>(); };
}
template <typename T>
std::function<void(Plan&, const json&)> into(T Plan::*section, bool T::*member) {
  return [=](Plan& p, const json& v) { (p.*section).*member = v.get<bool>(); };
}

// Model keys shared by the YAML model section and HF config.json files.
const std::map<std::string, int64_t ModelConfig::*>& model_int_keys() {
  static const std::map<std::string, int64_t ModelConfig::*> keys = {
      {"hidden_size", &ModelConfig::hidden_size},
      {"num_hidden_layers", &ModelConfig::num_hidden_layers},
      {"first_k_dense_replace", &ModelConfig::first_k_dense_replace},
      {"intermediate_size", &ModelConfig::intermediate_size},
      {"moe_intermediate_size", &ModelConfig::moe_intermediate_size},
      {"n_routed_experts", &ModelConfig::n_routed_experts},
      {"n_shared_experts", &ModelConfig::n_shared_experts},
      {"shared_expert_intermediate_size", &ModelConfig::shared_expert_intermediate_size},
      {"num_experts_per_tok", &ModelConfig::num_experts_per_tok},
      {"n_group", &ModelConfig::n_group},
      {"topk_group", &ModelConfig::topk_group},
      {"num_attention_heads", &ModelConfig::num_attention_heads},
      {"num_key_value_heads", &ModelConfig::num_key_value_heads},
      {"head_dim", &ModelConfig::head_dim},
      {"q_lora_rank", &ModelConfig::q_lora_rank},
      {"kv_lora_rank", &ModelConfig::kv_lora_rank},
      {"qk_nope_head_dim", &ModelConfig::qk_nope_head_dim},
      {"qk_rope_head_dim", &ModelConfig::qk_rope_head_dim},
      {"v_head_dim", &ModelConfig::v_head_dim},
      {"vocab_size", &ModelConfig::vocab_size},
  };
  return keys;
}

// Model sizes that must be > 0; the rest may be 0 (absent feature).
bool model_key_must_be_positive(const std::string& k) {
  return k == "hidden_size" || k == "num_hidden_layers" || k == "num_attention_heads" ||
         k == "vocab_size" || k == "n_group" || k == "topk_group";
}

const std::map<std::string, Field>& schema() {
  static const std::map<std::string, Field> fields = [] {
    std::map<std::string, Field> f;
    for (const auto& [key, member] : model_int_keys()) {
      f["model." + key] = {model_key_must_be_positive(key) ? Kind::PositiveInt : Kind::NonNegativeInt,
                           into(&Plan::model, member)};
    }
    f["model.name"] = {Kind::Text, into(&Plan::model, &ModelConfig::name)};
    f["model.tie_word_embeddings"] = {Kind::Bool, into(&Plan::model, &ModelConfig::tie_word_embeddings)};
    // model.config_json is consumed before the walk (see apply_hf_config).
    f["model.config_json"] = {Kind::Text, [](Plan&, const json&) {}};

    f["train.global_batch"] = {Kind::PositiveInt, into(&Plan::train, &TrainConfig::global_batch)};
    f["train.seq_len"] = {Kind::PositiveInt, into(&Plan::train, &TrainConfig::seq_len)};

    f["parallel.pp"] = {Kind::PositiveInt, into(&Plan::parallel, &ParallelConfig::pp)};
    f["parallel.ep"] = {Kind::PositiveInt, into(&Plan::parallel, &ParallelConfig::ep)};
    f["parallel.microbatches"] = {Kind::PositiveInt, into(&Plan::parallel, &ParallelConfig::microbatches)};
    f["parallel.zero"] = {Kind::Choice,
                          [](Plan& p, const json& v) { p.parallel.zero = std::stoll(v.get<std::string>()); },
                          {"1", "3"}};
    f["parallel.recompute"] = {Kind::Choice,
                               [](Plan& p, const json& v) {
                                 const auto s = v.get<std::string>();
                                 p.parallel.recompute = s == "none"   ? Recompute::None
                                                        : s == "full" ? Recompute::Full
                                                                      : Recompute::DeepSeek;
                               },
                               {"none", "deepseek", "full"}};
    f["parallel.fp8_stash"] = {Kind::Bool, into(&Plan::parallel, &ParallelConfig::fp8_stash)};
    f["parallel.split_lone_chunks"] = {Kind::Bool, into(&Plan::parallel, &ParallelConfig::split_lone_chunks)};
    f["schedule"] = {Kind::Choice,
                     [](Plan& p, const json& v) {
                       const auto s = v.get<std::string>();
                       p.parallel.schedule = s == "1f1b" ? Schedule::OneFOneB
                                             : s == "fsdp" ? Schedule::Fsdp
                                             : s == "capture" ? Schedule::Capture
                                                           : Schedule::DualPipeV;
                     },
                     {"1f1b", "dualpipev", "fsdp", "capture"}};

    f["hardware.name"] = {Kind::Text, into(&Plan::hardware, &HardwareConfig::name)};
    f["hardware.fp8_tflops"] = {Kind::PositiveNumber, into(&Plan::hardware, &HardwareConfig::fp8_tflops)};
    f["hardware.bf16_tflops"] = {Kind::PositiveNumber, into(&Plan::hardware, &HardwareConfig::bf16_tflops)};
    f["hardware.ib_GBps"] = {Kind::PositiveNumber, into(&Plan::hardware, &HardwareConfig::ib_GBps)};
    f["hardware.nvlink_GBps"] = {Kind::PositiveNumber, into(&Plan::hardware, &HardwareConfig::nvlink_GBps)};
    f["hardware.ib_latency_s"] = {Kind::NonNegativeNumber, into(&Plan::hardware, &HardwareConfig::ib_latency_s)};
    f["hardware.nvlink_latency_s"] = {Kind::NonNegativeNumber,
                                      into(&Plan::hardware, &HardwareConfig::nvlink_latency_s)};
    f["hardware.sms"] = {Kind::PositiveInt, into(&Plan::hardware, &HardwareConfig::sms)};
    f["hardware.comm_sms"] = {Kind::NonNegativeInt, into(&Plan::hardware, &HardwareConfig::comm_sms)};
    f["hardware.nonmatmul_s_per_token_layer"] = {
        Kind::NonNegativeNumber, into(&Plan::hardware, &HardwareConfig::nonmatmul_s_per_token_layer)};

    // Hardware profile (calibration): efficiencies are shares of the rates above, in (0, 1].
    for (const auto& [key, member] : std::initializer_list<std::pair<const char*, double HardwareConfig::*>>{
             {"gemm_efficiency", &HardwareConfig::gemm_efficiency},
             {"bf16_gemm_efficiency", &HardwareConfig::bf16_gemm_efficiency},
             {"attention_efficiency", &HardwareConfig::attention_efficiency},
             {"a2a_efficiency", &HardwareConfig::a2a_efficiency}})
      f[std::string("hardware.") + key] = {Kind::PositiveNumber, into(&Plan::hardware, member)};
    f["hardware.wgrad_gemm_efficiency"] = {Kind::NonNegativeNumber,
                                           into(&Plan::hardware, &HardwareConfig::wgrad_gemm_efficiency)};
    f["hardware.a2a_latency_s"] = {Kind::NonNegativeNumber, into(&Plan::hardware, &HardwareConfig::a2a_latency_s)};
    f["hardware.a2a_layout_latency_s"] = {Kind::NonNegativeNumber,
                                          into(&Plan::hardware, &HardwareConfig::a2a_layout_latency_s)};
    // hardware.profile is merged in before the walk (see apply_hardware_profile).
    f["hardware.profile"] = {Kind::Text, [](Plan&, const json&) {}};
    f["hardware.memory_GiB"] = {Kind::PositiveNumber, into(&Plan::hardware, &HardwareConfig::memory_GiB)};
    f["cluster.nodes"] = {Kind::PositiveInt, into(&Plan::cluster, &ClusterConfig::nodes)};
    f["cluster.gpus_per_node"] = {Kind::PositiveInt, into(&Plan::cluster, &ClusterConfig::gpus_per_node)};

    f["scenario.routing"] = {Kind::Choice,
                             [](Plan& p, const json& v) {
                               const auto s = v.get<std::string>();
                               p.scenario.routing = s == "deepseek"    ? Routing::DeepSeek
                                                    : s == "zipf"      ? Routing::Zipf
                                                    : s == "dirichlet" ? Routing::Dirichlet
                                                    : s == "hot"       ? Routing::Hot
                                                    : s == "file"      ? Routing::File
                                                                       : Routing::Balanced;
                             },
                             {"balanced", "deepseek", "zipf", "dirichlet", "hot", "file"}};
    f["scenario.zipf_s"] = {Kind::NonNegativeNumber, into(&Plan::scenario, &ScenarioConfig::zipf_s)};
    f["scenario.dirichlet_alpha"] = {Kind::PositiveNumber, into(&Plan::scenario, &ScenarioConfig::dirichlet_alpha)};
    f["scenario.hot_experts"] = {Kind::PositiveInt, into(&Plan::scenario, &ScenarioConfig::hot_experts)};
    f["scenario.hot_share"] = {Kind::NonNegativeNumber, into(&Plan::scenario, &ScenarioConfig::hot_share)};
    f["scenario.load_file"] = {Kind::Text, into(&Plan::scenario, &ScenarioConfig::load_file)};
    f["scenario.layer_correlation"] = {Kind::NonNegativeNumber,
                                       into(&Plan::scenario, &ScenarioConfig::layer_correlation)};
    // A list of maps, each item's keys checked on their own (simulator/config/straggler_config.cpp).
    f["scenario.stragglers"] = {Kind::StragglerList,
                                [](Plan& p, const json& v) { p.scenario.stragglers = parse_stragglers(v); }};
    f["scenario.jitter_sigma"] = {Kind::NonNegativeNumber, into(&Plan::scenario, &ScenarioConfig::jitter_sigma)};
    f["scenario.seed"] = {Kind::NonNegativeInt,
                          [](Plan& p, const json& v) { p.scenario.seed = uint64_t(v.get<int64_t>()); }};
    f["scenario.routing_samples"] = {Kind::PositiveInt,
                                     into(&Plan::scenario, &ScenarioConfig::routing_samples)};

    f["sim.mode"] = {Kind::Choice,
                     [](Plan& p, const json& v) {
                       const auto s = v.get<std::string>();
                       p.sim.mode = s == "full" ? SimMode::Full : s == "reduced" ? SimMode::Reduced : SimMode::Auto;
                     },
                     {"auto", "full", "reduced"}};

    f["workload.kind"] = {Kind::Choice,
                          [](Plan& p, const json& v) {
                            p.workload.kind = v.get<std::string>() == "synthetic" ? WorkloadKind::Synthetic
                                                                                  : WorkloadKind::Model;
                          },
                          {"model", "synthetic"}};
    f["workload.f_s"] = {Kind::PositiveNumber, into(&Plan::workload, &WorkloadConfig::f_s)};
    f["workload.b_s"] = {Kind::PositiveNumber, into(&Plan::workload, &WorkloadConfig::b_s)};
    f["workload.w_s"] = {Kind::NonNegativeNumber, into(&Plan::workload, &WorkloadConfig::w_s)};
    f["workload.fb_s"] = {Kind::NonNegativeNumber, into(&Plan::workload, &WorkloadConfig::fb_s)};
    f["workload.send_bytes"] = {Kind::NonNegativeNumber, into(&Plan::workload, &WorkloadConfig::send_bytes)};
    return f;
  }();
  return fields;
}

// Keys every config must set (the rest have documented defaults in plan.hpp).
const std::vector<std::string>& required_keys() {
  static const std::vector<std::string> keys = {
      "model.hidden_size",    "model.num_hidden_layers", "model.num_attention_heads", "model.vocab_size",
      "model.intermediate_size", "train.global_batch",   "train.seq_len",             "parallel.pp",
      "parallel.microbatches", "schedule",               "hardware.fp8_tflops",       "hardware.bf16_tflops",
      "hardware.ib_GBps",     "hardware.nvlink_GBps",    "cluster.nodes",             "cluster.gpus_per_node"};
  return keys;
}

std::string describe(const json& v) {
  if (v.is_string()) return "\"" + v.get<std::string>() + "\"";
  // json::dump() writes NaN and infinities as "null".
  if (v.is_number_float() && !std::isfinite(v.get<double>()))
    return std::isnan(v.get<double>()) ? "nan" : v.get<double>() > 0 ? "inf" : "-inf";
  return v.dump();
}

std::string join(const std::vector<std::string>& xs, const char* sep) {
  std::string out;
  for (size_t i = 0; i < xs.size(); ++i) out += (i ? sep : "") + xs[i];
  return out;
}

// Checks a leaf's type and range; returns the value normalised for Field::store.
json check_value(const std::string& where, const std::string& key, const Field& field, const json& v) {
  auto fail = [&](const std::string& what) -> json {
    throw ConfigError(where + ": " + key + ": " + what);
  };
  switch (field.kind) {
    case Kind::PositiveInt:
    case Kind::NonNegativeInt: {
      if (!v.is_number_integer()) fail("expected an integer, got " + describe(v));
      const auto x = v.get<int64_t>();
      if (field.kind == Kind::PositiveInt && x <= 0) fail("must be a positive integer, got " + describe(v));
      if (x < 0) fail("must not be negative, got " + describe(v));
      return v;
    }
    case Kind::PositiveNumber:
    case Kind::NonNegativeNumber: {
      if (!v.is_number()) fail("expected a number, got " + describe(v));
      const auto x = v.get<double>();
      if (!std::isfinite(x)) fail("must be finite, got " + describe(v));
      if (field.kind == Kind::PositiveNumber && x <= 0) fail("must be greater than zero, got " + describe(v));
      if (x < 0) fail("must not be negative, got " + describe(v));
      return json(x);
    }
    case Kind::Text:
      if (!v.is_string()) fail("expected a string, got " + describe(v));
      return v;
    case Kind::Bool:
      if (!v.is_boolean()) fail("expected true or false, got " + describe(v));
      return v;
    case Kind::StragglerList: return check_straggler_list(where, key, v);
    case Kind::Choice: {
      const std::string s = v.is_string() ? v.get<std::string>() : v.dump();
      for (const auto& c : field.choices)
        if (s == c) return json(s);
      return fail("unknown value " + describe(v) + "; use one of: " + join(field.choices, ", "));
    }
  }
  return v;
}

// Flattens a nested object into dotted keys, rejecting anything not in the schema.
void flatten(const std::string& where, const std::string& prefix, const json& node,
             std::map<std::string, json>& out) {
  for (const auto& [k, v] : node.items()) {
    const std::string key = prefix.empty() ? k : prefix + "." + k;
    const auto& fields = schema();
    if (fields.count(key)) {
      out[key] = v;
      continue;
    }
    // A section: some schema key starts with "key.".
    const auto it = fields.lower_bound(key + ".");
    const bool is_section = it != fields.end() && it->first.rfind(key + ".", 0) == 0;
    if (is_section) {
      if (!v.is_object())
        throw ConfigError(where + ": " + key + ": expected a section (a map of keys), got " + describe(v));
      flatten(where, key, v, out);
      continue;
    }
    throw ConfigError(where + ": " + key + ": unknown key; check its spelling (see README, \"Configuration\")");
  }
}

std::vector<std::string> split_dots(const std::string& key) {
  std::vector<std::string> parts;
  std::stringstream ss(key);
  std::string part;
  while (std::getline(ss, part, '.')) parts.push_back(part);
  return parts;
}

// Copies `value` into `target`; maps merge key by key, so `--set parallel={pp: 4}` changes only pp,
// exactly like `--set parallel.pp=4`, and never resets the section's other keys to defaults.
void merge_into(json& target, const json& value) {
  if (!target.is_object() || !value.is_object()) {
    target = value;
    return;
  }
  for (const auto& [k, v] : value.items()) merge_into(target[k], v);
}

void apply_override(json& root, const std::string& text) {
  const auto eq = text.find('=');
  if (eq == std::string::npos || eq == 0)
    throw ConfigError("--set " + text + ": expected key=value, for example --set parallel.pp=8");
  const std::string key = text.substr(0, eq);
  if (key.front() == '.' || key.back() == '.' || key.find("..") != std::string::npos)
    throw ConfigError("--set " + key + ": empty part in the dotted key; use a key like parallel.pp");
  const std::string value_text = text.substr(eq + 1);
  json value;
  try {
    value = yaml_text_to_json(value_text);
  } catch (const ConfigError& e) {
    throw ConfigError("--set " + key + ": value " + value_text + " is not valid YAML; quote it or fix it");
  }
  json* cur = &root;
  const auto parts = split_dots(key);
  for (size_t i = 0; i + 1 < parts.size(); ++i) {
    json& next = (*cur)[parts[i]];
    if (next.is_null()) next = json::object();
    if (!next.is_object())
      throw ConfigError("--set " + key + ": " + parts[i] + " is not a section; check the key");
    cur = &next;
  }
  // Reject unknown keys and bad values here so the message names --set, not the file.
  std::map<std::string, json> leaves;
  json probe = json::object();
  json* p = &probe;
  for (size_t i = 0; i + 1 < parts.size(); ++i) p = &((*p)[parts[i]] = json::object());
  (*p)[parts.back()] = value;
  flatten("--set", "", probe, leaves);
  for (const auto& [k, v] : leaves) check_value("--set", k, schema().at(k), v);
  // A model swapped in on the command line replaces the file's model keys, which would otherwise
  // win over the new config.json and silently keep the old model.
  if (leaves.count("model.config_json")) root["model"] = json::object();
  merge_into(*cur, json{{parts.back(), value}});
}

// `hardware.profile: PATH` names a YAML file holding a `hardware:` map (a calibrated profile); its
// keys fill in what the config and --set leave unset (explicit keys win). A relative path is looked
// up next to the config, then in the current directory.
void apply_hardware_profile(json& root, const std::string& source, const std::filesystem::path& base_dir) {
  if (!root.contains("hardware") || !root["hardware"].is_object() || !root["hardware"].contains("profile")) return;
  json& hw = root["hardware"];
  if (!hw["profile"].is_string())
    throw ConfigError(source + ": hardware.profile: expected a path to a YAML file with a hardware: map");
  std::filesystem::path p = hw["profile"].get<std::string>();
  if (p.is_relative() && std::filesystem::exists(base_dir / p)) p = base_dir / p;
  std::ifstream in(p);
  if (!in || std::filesystem::is_directory(p))
    throw ConfigError(source + ": hardware.profile: cannot read " + p.string() +
                      " (relative paths are tried next to the config, then in the current directory)");
  std::stringstream ss;
  ss << in.rdbuf();
  const json prof = yaml_text_to_json(ss.str(), p.string());
  if (!prof.is_object() || !prof.contains("hardware") || !prof["hardware"].is_object())
    throw ConfigError(p.string() + ": expected a hardware: map (a hardware profile, e.g. made by stepsim calibrate)");
  for (const auto& [k, v] : prof.items())
    if (k != "hardware") throw ConfigError(p.string() + ": " + k + ": a hardware profile holds only a hardware: map");
  for (const auto& [k, v] : prof["hardware"].items()) {
    const std::string key = "hardware." + k;
    if (k == "profile" || !schema().count(key))
      throw ConfigError(p.string() + ": " + key + ": unknown or not allowed in a profile; check its spelling (see README)");
    check_value(p.string(), key, schema().at(key), v);
    if (!hw.contains(k)) hw[k] = v;
  }
}

Plan build_plan(json root, const std::string& source, const std::filesystem::path& base_dir,
                const std::vector<std::string>& overrides) {
  if (!root.is_object())
    throw ConfigError(source + ": expected a map of sections (model, train, parallel, hardware, cluster)");
  for (const auto& o : overrides) apply_override(root, o);

  Plan plan;
  plan.source = source;
  // A HF config.json supplies the model; keys written in the YAML model section win over it.
  if (root.contains("model") && root["model"].is_object() && root["model"].contains("config_json")) {
    const json& ref = root["model"]["config_json"];
    if (!ref.is_string())
      throw ConfigError(source + ": model.config_json: expected a path to a Hugging Face config.json");
    std::filesystem::path p = ref.get<std::string>();
    if (p.is_relative()) p = base_dir / p;
    json merged = read_hf_model_keys(p.string(), model_int_keys());
    // Check the config.json's own values here, so a bad one names that file (YAML keys win).
    for (const auto& [k, v] : merged.items())
      if (!root["model"].contains(k)) check_value(p.string(), k, schema().at("model." + k), v);
    for (const auto& [k, v] : root["model"].items())
      if (k != "config_json") merged[k] = v;
    root["model"] = merged;
  }

  apply_hardware_profile(root, source, base_dir);
  std::map<std::string, json> leaves;
  flatten(source, "", root, leaves);
  for (const auto& key : required_keys())
    if (!leaves.count(key)) throw ConfigError(source + ": " + key + ": missing; add it to the config");
  for (const auto& [key, value] : leaves) {
    const Field& field = schema().at(key);
    field.store(plan, check_value(source, key, field, value));
  }
  // Like model.config_json, a relative load file is found next to the config.
  if (!plan.scenario.load_file.empty() && std::filesystem::path(plan.scenario.load_file).is_relative())
    plan.scenario.load_file = (base_dir / plan.scenario.load_file).string();
  validate_plan(plan);
  return plan;
}

}  // namespace

std::string default_config_path() { return std::string(STEPSIM_SOURCE_DIR) + "/workloads/deepseek-v3.yaml"; }

Plan load_plan(const std::string& path, const std::vector<std::string>& overrides) {
  std::ifstream in(path);
  if (!in || std::filesystem::is_directory(path))
    throw ConfigError(path + ": cannot read the file; check the path");
  std::stringstream ss;
  ss << in.rdbuf();
  const auto base = std::filesystem::path(path).parent_path();
  return build_plan(yaml_text_to_json(ss.str(), path), path, base, overrides);
}

void check_override(const std::string& key_equals_value) {
  json root = json::object();  // an empty config: only the override's own key and value are checked
  apply_override(root, key_equals_value);
}

Plan load_plan_from_string(const std::string& yaml_text, const std::string& source,
                           const std::vector<std::string>& overrides) {
  return build_plan(yaml_text_to_json(yaml_text, source), source, std::filesystem::current_path(), overrides);
}

const char* to_string(Schedule s) {
  switch (s) {
    case Schedule::OneFOneB: return "1f1b";
    case Schedule::DualPipeV: return "dualpipev";
    case Schedule::Fsdp: return "fsdp";
    case Schedule::Capture: return "capture";
  }
  return "?";
}
const char* to_string(Recompute r) {
  return r == Recompute::None ? "none" : r == Recompute::Full ? "full" : "deepseek";
}
const char* to_string(Routing r) {
  switch (r) {
    case Routing::Balanced: return "balanced";
    case Routing::DeepSeek: return "deepseek";
    case Routing::Zipf: return "zipf";
    case Routing::Dirichlet: return "dirichlet";
    case Routing::Hot: return "hot";
    case Routing::File: return "file";
  }
  return "?";
}
const char* to_string(SimMode m) {
  return m == SimMode::Full ? "full" : m == SimMode::Reduced ? "reduced" : "auto";
}

}  // namespace stepsim
