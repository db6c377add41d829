// torchtitan job config (TOML) → stepsim plan. Keys, defaults and checks follow torchtitan's
// JobConfig (torchtitan/config/job_config.py and the older config_manager.py, 2024-2026), its model
// flavours (torchtitan/models/*/__init__.py) and its pipeline and FSDP setup; docs/import.md lists
// every key read and why.
#include <toml.hpp>

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string_view>

#include "vocabulary/config_error.hpp"
#include "simulator/config/config_loader.hpp"
#include "simulator/config/key_aliases.hpp"
#include "simulator/importers/imported_plan.hpp"
#include "simulator/importers/importers.hpp"
#include "workloads/layers/framework_split.hpp"
#include "simulator/io/json_text.hpp"

namespace stepsim::importers {
namespace {

using TomlValue = toml::basic_value<toml::discard_comments, std::map, std::vector>;

constexpr size_t kMaxDepth = 64;

// toml11's parser recurses once per nested array or inline table: a file of a million '[' would end
// in a stack overflow, so nesting is bounded before it parses (strings and comments skipped).
void check_nesting(const std::string& text, const std::string& source) {
  size_t depth = 0, line = 1, dots = 0;  // dots: of the dotted key being read ([a.b.c], a.b.c = 1)
  bool in_key = true;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '\n') ++line, dots = 0, in_key = true;
    if (c == '=') in_key = false;
    if (c == '.' && in_key && depth <= 1 && ++dots > kMaxDepth)
      throw ConfigError(source + ":" + std::to_string(line) + ": a dotted key of over 64 parts; this is no torchtitan "
                                                              "job config");
    if (c == '#') {
      while (i + 1 < text.size() && text[i + 1] != '\n') ++i;
    } else if (c == '"' || c == '\'') {
      const bool triple = text.compare(i, 3, std::string(3, c)) == 0;
      const std::string close = triple ? std::string(3, c) : std::string(1, c);
      size_t j = i + close.size();
      while (j < text.size() && text.compare(j, close.size(), close) != 0) {
        if (c == '"' && text[j] == '\\') ++j;
        if (j < text.size() && text[j] == '\n') ++line;
        if (!triple && j < text.size() && text[j] == '\n') break;
        ++j;
      }
      i = std::min(text.size(), j + close.size()) - 1;
    } else if (c == '[' || c == '{') {
      if (++depth > kMaxDepth)
        throw ConfigError(source + ":" + std::to_string(line) + ": arrays and tables nested over 64 deep; this is no "
                                                                "torchtitan job config");
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
}

TomlValue parse_toml(const std::string& text, const std::string& source) {
  // TOML is UTF-8 text; the line of the first byte that is not says where.
  if (text.find('\0') != std::string::npos)
    throw ConfigError(source + ": holds NUL bytes; expected a TOML text file (a torchtitan job config)");
  if (!io::is_utf8(text)) {
    size_t line = 1, start = 0;
    for (size_t i = 0; i < text.size(); ++i)
      if (text[i] == '\n') {
        if (!io::is_utf8(text.substr(start, i - start))) break;
        ++line, start = i + 1;
      }
    throw ConfigError(source + ":" + std::to_string(line) + ": not valid TOML: the text is not UTF-8; save the file as UTF-8");
  }
  check_nesting(text, source);
  std::istringstream in(text);
  try {
    return toml::parse<toml::discard_comments, std::map, std::vector>(in, source);
  } catch (const toml::exception& e) {
    // toml11 writes a multi-line report; its first line says what, the location says where.
    std::string what = e.what();
    what = what.substr(0, what.find('\n'));
    if (what.rfind("[error] ", 0) == 0) what = what.substr(8);
    const auto line = e.location().line();
    throw error_at(source, int(line), "not valid TOML: " + io::shortened(io::printable(what), 200) + "; fix the file");
  } catch (const std::exception& e) {
    throw ConfigError(source + ": not valid TOML: " + io::shortened(io::printable(e.what()), 200) + "; fix the file");
  }
}

// A flavour's shape: a shipped HF config.json, or the keys of torchtitan's model args.
struct Flavour {
  std::string_view model, flavour;
  std::string_view config_json;  // workloads/models/..., or "" for the keys below
  std::vector<std::pair<std::string_view, int64_t>> keys;
  bool tied = false;
  std::string_view mask = "";  // attention mask other than causal
};

// torchtitan/models/{llama3,deepseek_v3,qwen3}/__init__.py. llama3's FFN width is torchtitan's
// formula (4 dim, x 2/3, x ffn_dim_multiplier, rounded up to multiple_of): 14336, 28672 and 53248
// for 8B, 70B, 405B, the published config.json widths, so those flavours read the shipped files.
const std::vector<Flavour>& flavours() {
  static const std::vector<Flavour> table = {
      {"llama3", "debugmodel", "",
       {{"hidden_size", 256}, {"num_hidden_layers", 6}, {"num_attention_heads", 16}, {"vocab_size", 2048},
        {"intermediate_size", 768}}},
      {"llama3", "debugmodel_flex_attn", "",
       {{"hidden_size", 256}, {"num_hidden_layers", 6}, {"num_attention_heads", 16}, {"vocab_size", 2048},
        {"intermediate_size", 768}},
       false, "block_causal"},
      {"llama3", "8B", "workloads/models/llama-3.1-8b.config.json", {}},
      {"llama3", "8B_flex", "workloads/models/llama-3.1-8b.config.json", {}, false, "block_causal"},
      {"llama3", "8B_varlen", "workloads/models/llama-3.1-8b.config.json", {}, false, "block_causal"},
      {"llama3", "70B", "workloads/models/llama-3.1-70b.config.json", {}},
      {"llama3", "405B", "workloads/models/llama-3.1-405b.config.json", {}},
      {"deepseek_v3", "debugmodel", "",
       {{"hidden_size", 256}, {"num_hidden_layers", 6}, {"first_k_dense_replace", 1}, {"intermediate_size", 1024},
        {"moe_intermediate_size", 256}, {"n_routed_experts", 8}, {"n_shared_experts", 2}, {"num_experts_per_tok", 3},
        {"num_attention_heads", 16}, {"q_lora_rank", 0}, {"kv_lora_rank", 512}, {"qk_nope_head_dim", 128},
        {"qk_rope_head_dim", 64}, {"v_head_dim", 128}, {"vocab_size", 2048}}},
      {"deepseek_v3", "16B", "",
       {{"hidden_size", 2048}, {"num_hidden_layers", 27}, {"first_k_dense_replace", 1}, {"intermediate_size", 10944},
        {"moe_intermediate_size", 1408}, {"n_routed_experts", 64}, {"n_shared_experts", 2}, {"num_experts_per_tok", 6},
        {"num_attention_heads", 16}, {"q_lora_rank", 0}, {"kv_lora_rank", 512}, {"qk_nope_head_dim", 128},
        {"qk_rope_head_dim", 64}, {"v_head_dim", 128}, {"vocab_size", 102400}},
       false, "block_causal"},
      {"deepseek_v3", "236B", "workloads/models/deepseek-v2.config.json", {}, false, "block_causal"},
      {"deepseek_v3", "671B", "workloads/models/deepseek-v3.config.json", {}, false, "block_causal"},
      {"qwen3", "0.6B", "",
       {{"hidden_size", 1024}, {"num_hidden_layers", 28}, {"num_attention_heads", 16}, {"num_key_value_heads", 8},
        {"head_dim", 128}, {"intermediate_size", 3072}, {"vocab_size", 151936}},
       true},
      {"qwen3", "1.7B", "",
       {{"hidden_size", 2048}, {"num_hidden_layers", 28}, {"num_attention_heads", 16}, {"num_key_value_heads", 8},
        {"head_dim", 128}, {"intermediate_size", 6144}, {"vocab_size", 151936}},
       true},
      {"qwen3", "4B", "",
       {{"hidden_size", 2560}, {"num_hidden_layers", 36}, {"num_attention_heads", 32}, {"num_key_value_heads", 8},
        {"head_dim", 128}, {"intermediate_size", 9728}, {"vocab_size", 151936}},
       true},
      {"qwen3", "8B", "",
       {{"hidden_size", 4096}, {"num_hidden_layers", 36}, {"num_attention_heads", 32}, {"num_key_value_heads", 8},
        {"head_dim", 128}, {"intermediate_size", 12288}, {"vocab_size", 151936}}},
      {"qwen3", "14B", "",
       {{"hidden_size", 5120}, {"num_hidden_layers", 40}, {"num_attention_heads", 40}, {"num_key_value_heads", 8},
        {"head_dim", 128}, {"intermediate_size", 17408}, {"vocab_size", 151936}}},
      {"qwen3", "32B", "",
       {{"hidden_size", 5120}, {"num_hidden_layers", 64}, {"num_attention_heads", 64}, {"num_key_value_heads", 8},
        {"head_dim", 128}, {"intermediate_size", 25600}, {"vocab_size", 151936}}},
      {"qwen3", "30B-A3B", "",
       {{"hidden_size", 2048}, {"num_hidden_layers", 48}, {"num_attention_heads", 32}, {"num_key_value_heads", 4},
        {"head_dim", 128}, {"intermediate_size", 6144}, {"moe_intermediate_size", 768}, {"n_routed_experts", 128},
        {"num_experts_per_tok", 8}, {"vocab_size", 151936}}},
      {"qwen3", "235B-A22B", "",
       {{"hidden_size", 4096}, {"num_hidden_layers", 94}, {"num_attention_heads", 64}, {"num_key_value_heads", 4},
        {"head_dim", 128}, {"intermediate_size", 12288}, {"moe_intermediate_size", 1536}, {"n_routed_experts", 128},
        {"num_experts_per_tok", 8}, {"vocab_size", 151936}}},
  };
  return table;
}

// Layers of each shape, for the pipeline's stage count.
int64_t layers_of(const Flavour& f) {
  for (const auto& [k, v] : f.keys)
    if (k == "num_hidden_layers") return v;
  if (f.config_json.find("llama-3.1-8b") != std::string_view::npos) return 32;
  if (f.config_json.find("llama-3.1-70b") != std::string_view::npos) return 80;
  if (f.config_json.find("llama-3.1-405b") != std::string_view::npos) return 126;
  if (f.config_json.find("deepseek-v2") != std::string_view::npos) return 60;
  return 61;  // deepseek-v3
}

bool is_moe(const Flavour& f) {
  if (!f.config_json.empty()) return f.config_json.find("deepseek") != std::string_view::npos;
  for (const auto& [k, v] : f.keys)
    if (k == "n_routed_experts") return true;
  return false;
}

// The stepsim key for one of torchtitan's names: the alias table (simulator/config/key_aliases.cpp).
std::string key_for(std::string_view titan_name) {
  const KeyAlias* a = find_alias(titan_name);
  if (a == nullptr || a->key.empty())
    throw std::logic_error(std::string(titan_name) + " has no entry in simulator/config/key_aliases.cpp");
  return std::string(a->key);
}

// Keys that say which release runs the job (software()): torch.compile on or off.
constexpr std::string_view kReleaseKeys[] = {"compile.enable", "training.compile"};

// Sections whose keys have no effect in stepsim's cost model.
constexpr std::string_view kNoCostSections[] = {"job.", "profiling.", "metrics.", "checkpoint.", "validation.", "comm.",
                                                "fault_tolerance.", "memory_estimation.", "lr_scheduler.", "compile.",
                                                "debug.", "training.dataloader.", "experimental.custom_"};

constexpr std::string_view kNoCostKeys[] = {
    "optimizer.lr", "optimizer.eps", "optimizer.weight_decay", "optimizer.beta1", "optimizer.beta2",
    "optimizer.implementation", "optimizer.early_step_in_backward", "training.max_norm", "training.steps",
    "training.dataset", "training.dataset_path", "training.gc_freq", "training.gc_debug", "training.warmup_steps",
    "training.deterministic", "training.seed", "training.compile",
    "training.enable_loss_parallel", "parallelism.disable_loss_parallel", "parallelism.enable_compiled_autograd",
    "parallelism.context_parallel_load_balancer", "model.tokenizer_path", "model.hf_assets_path",
    "model.print_after_conversion", "model.norm_type", "activation_checkpoint.preserve_rng_state",
    "activation_checkpoint.determinism_check", "activation_checkpoint.debug", "activation_checkpoint.early_stop",
    "activation_checkpoint.visualize_memory_budget_pareto", "float8.precompute_float8_dynamic_scale_for_fsdp",
    "quantize.linear.float8.precompute_float8_dynamic_scale_for_fsdp", "experimental.enable_compiled_autograd",
    "training.data_parallel_replicate_degree_deprecated"};

// Keys read below (any other key outside the no-cost sections is listed as unknown).
constexpr std::string_view kUsedKeys[] = {
    "model.name", "model.flavor", "model.converters", "optimizer.name", "training.local_batch_size",
    "training.batch_size", "training.global_batch_size", "training.seq_len", "training.mixed_precision_param",
    "training.mixed_precision_reduce",
    "training.dtype", "training.enable_cpu_offload", "training.fsdp_cpu_offload", "training.data_parallel_degree",
    "training.data_parallel_replicate_degree", "training.data_parallel_shard_degree", "training.tensor_parallel_degree",
    "training.enable_float8_linear", "parallelism.data_parallel_replicate_degree",
    "parallelism.data_parallel_shard_degree", "parallelism.fsdp_reshard_after_forward",
    "parallelism.tensor_parallel_degree", "parallelism.enable_async_tensor_parallel",
    "parallelism.pipeline_parallel_degree", "parallelism.pipeline_parallel_schedule",
    "parallelism.pipeline_parallel_schedule_csv", "parallelism.pipeline_parallel_microbatch_size",
    "parallelism.pipeline_parallel_layers_per_stage", "parallelism.pipeline_parallel_first_stage_less_layers",
    "parallelism.pipeline_parallel_last_stage_less_layers", "parallelism.pipeline_parallel_split_points",
    "parallelism.module_fqns_per_model_part", "parallelism.pipeline_parallel_expert_parallel_overlap",
    "parallelism.context_parallel_degree", "parallelism.context_parallel_rotate_method",
    "parallelism.expert_parallel_degree", "parallelism.expert_tensor_parallel_degree",
    "parallelism.expert_parallel_comm_backend",
    "experimental.pipeline_parallel_degree", "experimental.pipeline_parallel_schedule",
    "experimental.pipeline_parallel_microbatches", "experimental.pipeline_parallel_split_points",
    "experimental.context_parallel_degree", "experimental.enable_async_tensor_parallel",
    "compile.enable_async_tensor_parallel", "compile.enable", "compile.components", "training.compile",
    "activation_checkpoint.mode", "activation_checkpoint.selective_ac_option", "activation_checkpoint.memory_budget",
    "activation_checkpoint.per_op_sac_force_recompute_mm_shapes_by_fqns",
    "float8.enable_fsdp_float8_all_gather", "float8.recipe_name", "float8.filter_fqns", "float8.emulate",
    "float8.force_recompute_fp8_weight_in_bwd", "float8.moe_fqns_prototype",
    "quantize.linear.float8.enable_fsdp_float8_all_gather", "quantize.linear.float8.recipe_name",
    "quantize.linear.float8.filter_fqns", "quantize.linear.float8.emulate",
    "quantize.grouped_mm.float8.fqns", "quantize.linear.mx.recipe_name", "quantize.linear.mx.filter_fqns",
    "quantize.grouped_mm.mx.fqns", "quantize.grouped_mm.mx.recipe_name"};

class TitanImport {
 public:
  TitanImport(const std::string& source, const ImportOptions& options) : source_(source), opt_(options) {}

  ImportedPlan run(const std::string& text) {
    const TomlValue root = parse_toml(text, source_);
    if (!root.is_table()) fail(0, "expected TOML tables ([model], [training], [parallelism], ...)");
    flatten("", root, 0);
    classify();
    world();
    model();
    parallelism_and_batch();
    recompute();
    precision();
    cluster();
    software();
    header();
    return std::move(plan_);
  }

 private:
  [[noreturn]] void fail(int line, const std::string& what) const { throw error_at(source_, line, what); }
  [[noreturn]] void fail_key(const std::string& key, const std::string& what) const {
    const auto it = leaves_.find(key);
    fail(it == leaves_.end() ? 0 : line_of(it->second), key + (it == leaves_.end() ? "" : " = " + shown(it->second)) + ": " + what);
  }
  static int line_of(const TomlValue& v) {
    const auto l = v.location().line();
    return l > 0 && l < 1u << 30 ? int(l) : 0;
  }
  static std::string shown(const TomlValue& v) {
    if (v.is_string()) return "\"" + io::shortened(io::printable(v.as_string().str), 60) + "\"";
    if (v.is_integer()) return std::to_string(v.as_integer());
    if (v.is_boolean()) return v.as_boolean() ? "true" : "false";
    if (v.is_floating()) {
      std::ostringstream s;
      s << v.as_floating();
      return s.str();
    }
    if (v.is_array()) {
      std::string s = "[";
      for (const auto& e : v.as_array()) s += (s.size() > 1 ? ", " : "") + shown(e);
      return io::shortened(s, 80) + "]";
    }
    return "(a table)";
  }

  void flatten(const std::string& prefix, const TomlValue& v, size_t depth) {
    if (depth > kMaxDepth) fail(line_of(v), "tables nested over 64 deep");
    for (const auto& [k, child] : v.as_table()) {
      const std::string key = prefix.empty() ? k : prefix + "." + k;
      if (child.is_table()) flatten(key, child, depth + 1);
      else leaves_.emplace(key, child);
    }
  }

  void classify() {
    for (const auto& leaf_entry : leaves_) {
      const std::string& key = leaf_entry.first;  // a plain name: lambdas cannot capture structured bindings in C++20
      const auto in = [&](auto& list) {
        for (const auto& x : list)
          if (x == key) return true;
        return false;
      };
      bool no_cost = in(kNoCostKeys);
      for (const auto& s : kNoCostSections) no_cost = no_cost || key.rfind(s, 0) == 0;
      if (in(kReleaseKeys)) continue;  // read by software()
      if (no_cost && in(kUsedKeys)) continue;  // read (e.g. whether torch.compile runs, for async TP's check)
      if (no_cost) plan_.not_imported.push_back(key);
      else if (!in(kUsedKeys)) plan_.unknown.push_back(key);
    }
  }

  // --- values --------------------------------------------------------------------------------

  const TomlValue* leaf(const std::string& key) const {
    const auto it = leaves_.find(key);
    return it == leaves_.end() ? nullptr : &it->second;
  }
  std::string from(const std::string& key) const {
    const TomlValue* v = leaf(key);
    return v ? key + " = " + shown(*v) : key + " left out: torchtitan's default";
  }
  int line(const std::string& key) const {
    const TomlValue* v = leaf(key);
    return v ? line_of(*v) : 0;
  }

  std::optional<int64_t> integer(const std::string& key, int64_t min = 1, int64_t max = int64_t(1) << 24) const {
    const TomlValue* v = leaf(key);
    if (!v) return std::nullopt;
    if (!v->is_integer()) fail_key(key, "expected an integer");
    const int64_t x = v->as_integer();
    if (x < min || x > max)
      fail_key(key, "must be between " + std::to_string(min) + " and " + std::to_string(max));
    return x;
  }
  // A degree: -1 (data_parallel_shard_degree only) or 1 .. 2^24.
  std::optional<int64_t> degree(const std::string& key, bool may_be_minus_one = false) const {
    const TomlValue* v = leaf(key);
    if (v && v->is_integer() && v->as_integer() == -1 && may_be_minus_one) return -1;
    return integer(key);
  }
  std::optional<std::string> text(const std::string& key) const {
    const TomlValue* v = leaf(key);
    if (!v) return std::nullopt;
    if (!v->is_string()) fail_key(key, "expected a string");
    return v->as_string().str;
  }
  std::optional<bool> boolean(const std::string& key) const {
    const TomlValue* v = leaf(key);
    if (!v) return std::nullopt;
    if (!v->is_boolean()) fail_key(key, "expected true or false");
    return v->as_boolean();
  }
  // converters = ["float8"] or converters = "float8,mx" (older configs).
  std::vector<std::string> string_list(const std::string& key) const {
    const TomlValue* v = leaf(key);
    std::vector<std::string> out;
    if (!v) return out;
    if (v->is_string()) {
      std::string cur;
      for (const char c : v->as_string().str + ",") {
        if (c == ',') {
          if (!cur.empty()) out.push_back(cur);
          cur.clear();
        } else if (c != ' ') {
          cur += c;
        }
      }
      return out;
    }
    if (!v->is_array()) fail_key(key, "expected a list of strings");
    for (const auto& e : v->as_array()) {
      if (!e.is_string()) fail_key(key, "expected a list of strings");
      out.push_back(e.as_string().str);
    }
    return out;
  }
  // The first of the keys that is set (a newer name, then the older ones).
  std::string first_of(std::initializer_list<const char*> keys) const {
    for (const char* k : keys)
      if (leaf(k)) return k;
    return *keys.begin();
  }

  // --- the plan ------------------------------------------------------------------------------

  void world() {
    if (opt_.gpus <= 0)
      fail(0, "the number of GPUs is not in a torchtitan job config (torchrun gives it); give it with --gpus N");
    world_ = opt_.gpus;
    gpus_per_node_ = opt_.gpus_per_node > 0 ? opt_.gpus_per_node : 8;
    if (gpus_per_node_ > world_) gpus_per_node_ = world_;
    if (world_ % gpus_per_node_ != 0)
      fail(0, "--gpus " + std::to_string(world_) + " is not a whole number of " + std::to_string(gpus_per_node_) +
                  "-GPU nodes; give --gpus-per-node");
  }

  void model() {
    const std::string name = text("model.name").value_or("llama3");
    const std::string flavour = text("model.flavor").value_or("debugmodel");
    if (name == "llama4" || name == "gpt_oss" || name == "flux" || name == "qwen3_5" || name == "kimi_k2_7")
      fail_key("model.name", "the " + name + " model is not modelled (chunked or sliding-window attention, interleaved "
                             "MoE layers or a non-language model); stepsim imports llama3, deepseek_v3 and qwen3");
    const Flavour* f = nullptr;
    std::string known;
    for (const auto& x : flavours()) {
      if (x.model != name) continue;
      known += (known.empty() ? "" : ", ") + std::string(x.flavour);
      if (x.flavour == flavour) f = &x;
    }
    if (known.empty())
      fail_key("model.name", "not a torchtitan model stepsim knows; it imports llama3, deepseek_v3 and qwen3");
    if (!f) fail_key("model.flavor", "not a flavour of " + name + " stepsim knows; use one of " + known);
    flavour_ = f;
    const std::string why = "model.name = \"" + name + "\", model.flavor = \"" + flavour + "\"";
    const int at = line("model.flavor");
    if (!f->config_json.empty()) {
      plan_.set("model.config_json", shipped_path(std::string(f->config_json)),
                why + ": the published config.json, the same shape as torchtitan's model args", at);
    } else {
      for (const auto& [k, v] : f->keys) plan_.set("model." + std::string(k), v, why + " (torchtitan's model args)", at);
      plan_.set("model.tie_word_embeddings", f->tied, why + (f->tied ? ": enable_weight_tying" : ": untied"), at);
      // torchtitan's Qwen3 attention normalises each query and key head (qk_norm in its model args).
      if (name == "qwen3") plan_.set("model.qk_norm", true, why + ": qk_norm", at);
    }
    plan_.set("model.name", name + " " + flavour, why, at);
    if (!f->mask.empty())
      plan_.header.push_back("The " + flavour + " flavour masks attention " + std::string(f->mask) +
                             " (documents packed in a sequence): at most the causal cost stepsim counts.");
  }

  void parallelism_and_batch() {
    // Newer [parallelism] keys, then the 2024 places ([training], [experimental]).
    const std::string k_rep = first_of({"parallelism.data_parallel_replicate_degree", "training.data_parallel_replicate_degree"});
    const std::string k_shard = first_of({"parallelism.data_parallel_shard_degree", "training.data_parallel_shard_degree",
                                          "training.data_parallel_degree"});
    const std::string k_tp = first_of({"parallelism.tensor_parallel_degree", "training.tensor_parallel_degree"});
    const std::string k_pp = first_of({"parallelism.pipeline_parallel_degree", "experimental.pipeline_parallel_degree"});
    const std::string k_cp = first_of({"parallelism.context_parallel_degree", "experimental.context_parallel_degree"});
    const std::string k_ep = "parallelism.expert_parallel_degree";
    const int64_t rep = degree(k_rep).value_or(1), tp = degree(k_tp).value_or(1), pp = degree(k_pp).value_or(1),
                  cp = degree(k_cp).value_or(1), ep = degree(k_ep).value_or(1);
    int64_t shard = degree(k_shard, true).value_or(-1);
    const int64_t others = rep * tp * pp * cp;
    if (shard == -1) {
      if (world_ % others != 0)
        fail_key(k_rep, "replicate x TP x PP x CP = " + std::to_string(others) + " does not divide the " +
                            std::to_string(world_) + " GPUs (--gpus)");
      shard = world_ / others;
    }
    if (others * shard != world_)
      fail(line(k_shard), "replicate " + std::to_string(rep) + " x shard " + std::to_string(shard) + " x CP " +
                              std::to_string(cp) + " x TP " + std::to_string(tp) + " x PP " + std::to_string(pp) +
                              " is not the " + std::to_string(world_) + " GPUs of --gpus; torchtitan refuses it");
    const int64_t dp = rep * shard;
    plan_.set(key_for("tensor_parallel_degree"), tp, from(k_tp), line(k_tp));
    plan_.set(key_for("pipeline_parallel_degree"), pp, from(k_pp), line(k_pp));
    plan_.set(key_for("context_parallel_degree"), cp, from(k_cp), line(k_cp));
    // PyTorch's ring attention: allgather (torchtitan's default) gathers K/V before the attention,
    // alltoall passes them around the ring beside it, as Megatron's p2p does.
    if (cp > 1) {
      const std::string k_rotate = "parallelism.context_parallel_rotate_method";
      const auto rotate = text(k_rotate);
      if (rotate && *rotate != "allgather" && *rotate != "alltoall")
        fail_key(k_rotate, "\"" + *rotate + "\" is not a rotate method torchtitan knows; use allgather or alltoall");
      plan_.set("parallel.cp_comm_type", rotate && *rotate == "alltoall" ? "p2p" : "allgather",
                rotate ? from(k_rotate) + (*rotate == "alltoall" ? " (a ring of K/V beside the attention: p2p)" : "")
                       : k_rotate + " left out: torchtitan's default, allgather",
                rotate ? line(k_rotate) : line(k_cp));
    }
    if (is_moe(*flavour_) || ep != 1) plan_.set(key_for("expert_parallel_degree"), ep, from(k_ep), line(k_ep));
    // Expert TP (torchtitan before its removal in 2026): 1, the experts borrowing data_parallel_shard
    // x CP x TP GPUs, or the TP degree, the experts split like the dense layers and borrowing
    // data_parallel_shard x CP; TP stays innermost, so EP groups sit TP GPUs apart as in Megatron's
    // expert grid (parallel.expert_tp).
    const std::string k_etp = "parallelism.expert_tensor_parallel_degree";
    const int64_t etp = degree(k_etp).value_or(1);
    if (etp != 1 && etp != tp)
      fail_key(k_etp, "torchtitan supports 1 or the tensor-parallel degree (" + std::to_string(tp) + "); use one of them");
    const int64_t borrowed = etp == 1 ? shard * cp * tp : shard * cp;
    if (borrowed % ep != 0)
      fail_key(k_ep, "does not divide data_parallel_shard_degree x CP" + std::string(etp == 1 ? " x TP" : "") + " = " +
                         std::to_string(borrowed) + " (the GPUs the experts borrow), which torchtitan refuses; use a "
                         "divisor of it");
    if (is_moe(*flavour_)) {
      plan_.set("parallel.expert_tp", etp, leaf(k_etp) ? from(k_etp) : k_etp + " left out: 1", line(k_etp));
      // expert_parallel_comm_backend: PyTorch's all-to-all (one copy per routed expert elsewhere),
      // or DeepEP / HybridEP kernels (one copy per remote NVLink domain, forwarded over NVLink).
      const std::string k_backend = "parallelism.expert_parallel_comm_backend";
      const std::string backend = text(k_backend).value_or("standard");
      if (backend != "standard" && backend != "deepep" && backend != "hybridep")
        fail_key(k_backend, "expected \"standard\", \"deepep\" or \"hybridep\"");
      plan_.set("parallel.moe_dispatcher", backend == "standard" ? "alltoall" : "deepep",
                leaf(k_backend) ? from(k_backend) + (backend == "hybridep" ? ": HybridEP's traffic modelled as DeepEP's" : "")
                                : k_backend + " left out: torchtitan's all-to-all",
                line(k_backend));
      if (backend != "standard") plan_.set("parallel.moe_flex_backend", backend, from(k_backend), line(k_backend));
    }

    // Sequences: local_batch_size per data-parallel rank (older configs: batch_size), the global
    // batch (-1: local x DP, no accumulation), gradient accumulation over the rest.
    const std::string k_local = first_of({"training.local_batch_size", "training.batch_size"});
    const int64_t local = integer(k_local).value_or(8);
    int64_t global = local * dp;
    std::string global_from = "training.global_batch_size left out: local_batch_size " + std::to_string(local) +
                              " x data-parallel size " + std::to_string(dp);
    if (const TomlValue* g = leaf("training.global_batch_size"); g && !(g->is_integer() && g->as_integer() == -1)) {
      global = *integer("training.global_batch_size");
      global_from = from("training.global_batch_size");
      if (global % (local * dp) != 0)
        fail_key("training.global_batch_size", "is not a multiple of local_batch_size " + std::to_string(local) +
                                                   " x data-parallel size " + std::to_string(dp) + "; torchtitan refuses it");
    }
    const int64_t accumulation = global / (local * dp);
    plan_.set("train.global_batch", global, global_from, line("training.global_batch_size"));
    const auto seq = integer("training.seq_len");
    plan_.set("train.seq_len", seq.value_or(2048), from("training.seq_len"), line("training.seq_len"));
    if (pp > 1) pipeline(pp, local, accumulation, k_local);
    else plan_.set("parallel.micro_batch_size", local, from(k_local) + ": one forward per microbatch", line(k_local));
    sharding(rep, shard, cp, pp);
    async_tp(tp);
  }

  void pipeline(int64_t pp, int64_t local, int64_t accumulation, const std::string& k_local) {
    const std::string k_sched = first_of({"parallelism.pipeline_parallel_schedule", "experimental.pipeline_parallel_schedule"});
    const std::string schedule = text(k_sched).value_or("1F1B");
    if (const auto csv = text("parallelism.pipeline_parallel_schedule_csv"); csv && !csv->empty())
      fail_key("parallelism.pipeline_parallel_schedule_csv", "a schedule read from a CSV file is not modelled; use a named schedule");
    for (const char* k : {"parallelism.pipeline_parallel_split_points", "experimental.pipeline_parallel_split_points",
                          "parallelism.module_fqns_per_model_part"})
      if (const TomlValue* v = leaf(k); v && !(v->is_array() && v->as_array().empty()))
        fail_key(k, "stepsim splits the layers over the stages itself (the busiest rank as light as possible); remove it");
    // torch.distributed.pipelining's names, matched without case as get_schedule_class does.
    std::string lower = schedule;
    for (auto& c : lower) c = char(std::tolower(static_cast<unsigned char>(c)));
    struct Named {
      const char* titan;
      const char* stepsim;
      bool multi;          // several stages per rank
      bool split_backward;  // input and weight gradients apart
    };
    static const Named names[] = {{"1f1b", "1f1b", false, false},
                                  {"gpipe", "gpipe", false, false},
                                  {"interleaved1f1b", "interleaved", true, false},
                                  {"zbvzerobubble", "zb-v", true, true},
                                  {"dualpipev", "dualpipev", true, true}};
    const Named* n = nullptr;
    for (const auto& x : names)
      if (lower == x.titan) n = &x;
    if (!n)
      fail_key(k_sched, "not modelled; stepsim runs 1F1B, GPipe, Interleaved1F1B, ZBVZeroBubble and DualPipeV "
                        "(InterleavedZeroBubble, LoopedBFS and CSV schedules are not)");
    // Stages per rank: from pipeline_parallel_layers_per_stage, else 1 (single-stage) or 2.
    int64_t per_rank = n->multi ? 2 : 1;
    const int64_t first = integer("parallelism.pipeline_parallel_first_stage_less_layers", 0).value_or(1);
    const int64_t last = integer("parallelism.pipeline_parallel_last_stage_less_layers", 0).value_or(1);
    const int64_t layers = layers_of(*flavour_);
    if (const auto lps = integer("parallelism.pipeline_parallel_layers_per_stage")) {
      const int64_t stages = (layers + first + last + *lps - 1) / *lps;
      if (stages % pp != 0)
        fail_key("parallelism.pipeline_parallel_layers_per_stage",
                 "gives " + std::to_string(stages) + " stages ((" + std::to_string(layers) + " layers + " +
                     std::to_string(first) + " + " + std::to_string(last) + ") / " + std::to_string(*lps) +
                     ", rounded up), not a multiple of the " + std::to_string(pp) + " pipeline ranks; torchtitan refuses it");
      per_rank = stages / pp;
      if (!n->multi && per_rank != 1) fail_key(k_sched, "runs one stage per rank, but pipeline_parallel_layers_per_stage gives " + std::to_string(per_rank));
      if (n->multi && per_rank < 2) fail_key(k_sched, "runs at least two stages per rank, but pipeline_parallel_layers_per_stage gives 1");
      if (std::string(n->stepsim) != "interleaved" && per_rank != 2)
        fail_key(k_sched, "places exactly two stages per rank (a V), but pipeline_parallel_layers_per_stage gives " +
                              std::to_string(per_rank));
    }
    plan_.set("schedule", n->stepsim, from(k_sched), line(k_sched));
    if (std::string(n->stepsim) == "interleaved")
      plan_.set("parallel.virtual_stages", per_rank,
                leaf("parallelism.pipeline_parallel_layers_per_stage")
                    ? from("parallelism.pipeline_parallel_layers_per_stage") + ": stages per rank"
                    : "Interleaved1F1B without pipeline_parallel_layers_per_stage: torchtitan's 2 stages per rank",
                line("parallelism.pipeline_parallel_layers_per_stage"));
    // The layers of each stage as torchtitan splits them (the embedding and the head counted as
    // first / last_stage_less_layers layers), kept rather than rebalanced.
    const std::string k_first = "parallelism.pipeline_parallel_first_stage_less_layers",
                      k_last = "parallelism.pipeline_parallel_last_stage_less_layers";
    try {
      const auto split = torchtitan_split(pp * per_rank, layers, first, last);
      plan_.set("parallel.stage_layers", split,
                "torchtitan's split of the " + std::to_string(layers) + " layers over " + std::to_string(split.size()) +
                    " stages, the embedding counted as " + std::to_string(first) + " layer(s) and the head as " +
                    std::to_string(last) + " (pipeline_parallel_first / last_stage_less_layers)",
                line(leaf(k_first) ? k_first : "parallelism.pipeline_parallel_layers_per_stage"));
    } catch (const SplitError& e) {
      fail_key(leaf(k_first) ? k_first : leaf(k_last) ? k_last : "parallelism.pipeline_parallel_degree", e.what());
    }
    plan_.set("parallel.split_backward", n->split_backward,
              n->split_backward ? "zero-bubble schedules compute weight gradients apart"
                                : "torch.distributed.pipelining runs each stage's backward as one op");
    if (const auto overlap = boolean("parallelism.pipeline_parallel_expert_parallel_overlap");
        overlap && !*overlap && std::string(n->stepsim) == "dualpipev")
      fail_key("parallelism.pipeline_parallel_expert_parallel_overlap",
               "stepsim's DualPipeV always overlaps the all-to-all with the paired chunk's compute; set true");
    if (accumulation != 1)
      fail_key("training.global_batch_size",
               "gives " + std::to_string(accumulation) + " gradient-accumulation steps; with pipeline parallelism "
               "torchtitan runs the whole pipeline schedule once per step (its fill and drain each time), which stepsim "
               "does not model (it runs one schedule over all microbatches); set global_batch_size to local_batch_size x "
               "the data-parallel size");
    // Microbatches: local_batch_size / pipeline_parallel_microbatch_size (older: a count).
    if (const auto count = integer("experimental.pipeline_parallel_microbatches")) {
      if (local % *count != 0)
        fail_key("experimental.pipeline_parallel_microbatches", "does not divide " + k_local + " " + std::to_string(local));
      plan_.set("parallel.microbatches", *count, from("experimental.pipeline_parallel_microbatches"),
                line("experimental.pipeline_parallel_microbatches"));
      return;
    }
    const int64_t mbs = integer("parallelism.pipeline_parallel_microbatch_size").value_or(1);
    if (local % mbs != 0)
      fail_key("parallelism.pipeline_parallel_microbatch_size",
               "does not divide " + k_local + " " + std::to_string(local) + "; torchtitan refuses it");
    plan_.set(key_for("pipeline_parallel_microbatch_size"), mbs,
              from("parallelism.pipeline_parallel_microbatch_size") + " (" + std::to_string(local / mbs) +
                  " microbatches of " + k_local + " " + std::to_string(local) + ")",
              line("parallelism.pipeline_parallel_microbatch_size"));
  }

  // FSDP2 over the shard degree (x CP): ZeRO-3 without a pipeline; under one, torchtitan keeps the
  // parameters gathered across microbatches and reduces the gradients once (ZeRO-1's traffic and memory).
  void sharding(int64_t rep, int64_t shard, int64_t cp, int64_t pp) {
    const std::string reshard = text("parallelism.fsdp_reshard_after_forward").value_or("default");
    if (reshard != "default" && reshard != "always" && reshard != "never")
      fail_key("parallelism.fsdp_reshard_after_forward", "expected default, always or never");
    for (const char* k : {"training.enable_cpu_offload", "training.fsdp_cpu_offload"})
      if (boolean(k).value_or(false)) fail_key(k, "offloading to CPU memory is not modelled; set false");
    const bool fsdp = shard * cp > 1;
    fsdp_ = fsdp;
    const std::string why = "data_parallel_shard_degree " + std::to_string(shard) + ", replicate " + std::to_string(rep) +
                            (cp > 1 ? ", CP " + std::to_string(cp) : "");
    if (!fsdp) {
      if (rep > 1)
        fail(line("parallelism.data_parallel_replicate_degree"),
             "data_parallel_replicate_degree " + std::to_string(rep) + " without sharding is DDP: every GPU keeps whole "
             "optimizer states, which stepsim does not model (ZeRO-1 and up); shard with data_parallel_shard_degree");
      plan_.set("parallel.zero", 1, why + ": one replica, nothing to shard");
      if (pp == 1) plan_.set("schedule", "1f1b", "no pipeline: gradient accumulation over the microbatches");
      if (pp == 1) plan_.set("parallel.split_backward", false, "a plain autograd backward");
      return;
    }
    if (pp == 1) {
      if (reshard == "never")
        fail_key("parallelism.fsdp_reshard_after_forward", "keeping parameters gathered from forward to backward "
                                                           "(ZeRO-2 with FSDP) is not modelled; use default or always");
      plan_.set("schedule", "fsdp", why + ": FSDP2, parameters gathered per layer in forward and backward");
      plan_.set("parallel.zero", 3, why + ": FSDP2 shards parameters, gradients and optimizer states");
      if (rep > 1) plan_.set("parallel.fsdp_shard_size", shard * cp, why + ": HSDP shard groups of shard x CP GPUs");
      plan_.set("parallel.split_backward", false, "a plain autograd backward");
      return;
    }
    if (reshard == "always")
      fail_key("parallelism.fsdp_reshard_after_forward", "resharding after every forward under pipeline parallelism "
                                                         "is not modelled; use default");
    if (rep > 1)
      fail(line("parallelism.data_parallel_replicate_degree"),
           "HSDP under pipeline parallelism shards the optimizer over data_parallel_shard_degree only and replicates it "
           "data_parallel_replicate_degree times, which stepsim does not model; use replicate 1");
    plan_.set("parallel.zero", 1,
              why + ": FSDP2 under a pipeline gathers parameters and reduces gradients once per step, ZeRO-1's "
                    "traffic and memory");
  }

  void async_tp(int64_t tp) {
    const std::string k = first_of({"parallelism.enable_async_tensor_parallel", "experimental.enable_async_tensor_parallel",
                                    "compile.enable_async_tensor_parallel"});
    const bool async = boolean(k).value_or(false);
    // torchtitan refuses async TP unless torch.compile compiles the model ([compile] enable with
    // "model" in its components; the 2024 configs: training.compile).
    if (async && tp > 1) {
      const auto components = string_list("compile.components");
      const bool model = !leaf("compile.components") || std::find(components.begin(), components.end(), "model") != components.end();
      const bool compiled = (boolean("compile.enable").value_or(false) && model) || boolean("training.compile").value_or(false);
      if (!compiled)
        fail_key(k, "torchtitan refuses async tensor parallelism without torch.compile of the model; set [compile] "
                    "enable = true (with \"model\" in components), or set it false");
    }
    plan_.set("parallel.tp_comm_overlap", async && tp > 1, async ? from(k) : k + " left out: off", line(k));
    // Under a pipeline (ZeRO-1 here) FSDP2 still prefetches each layer's gather and reduce-scatters
    // each layer's gradients as the last backward reaches it; ZeRO-3 overlaps them anyway.
    const PlanEntry* zero = plan_.find("parallel.zero");
    if (zero != nullptr && zero->value != 3)
      for (const char* key : {"parallel.overlap_grad_reduce", "parallel.overlap_param_gather"})
        plan_.set(key, true, "FSDP2 overlaps its collectives with compute, layer by layer");
  }

  void recompute() {
    const std::string mode = text("activation_checkpoint.mode").value_or("selective");
    const std::string option = text("activation_checkpoint.selective_ac_option").value_or("2");
    const std::string k = "activation_checkpoint.mode";
    if (mode == "none" || mode == "full") {
      plan_.set("parallel.recompute", mode, from(k), line(k));
      if (leaf("activation_checkpoint.selective_ac_option"))
        plan_.not_imported.push_back("activation_checkpoint.selective_ac_option (read only with mode = \"selective\")");
      return;
    }
    if (mode == "selective") {
      if (option == "1") {
        plan_.set("parallel.recompute", "full", from(k) + ", selective_ac_option = \"1\": every layer", line(k));
        return;
      }
      if (option == "op") {
        // Per-op SAC: mm outputs saved but every second, the attention's saved, the rest recomputed
        // (workloads/layers/op_sac.hpp). A list of GEMM shapes forced to recompute changes it.
        // torchtitan's default names the MoE router's gate, which a dense block does not hold.
        const auto forced = string_list("activation_checkpoint.per_op_sac_force_recompute_mm_shapes_by_fqns");
        if (std::any_of(forced.begin(), forced.end(), [](const std::string& f) { return f != "moe.router.gate"; }))
          fail_key("activation_checkpoint.per_op_sac_force_recompute_mm_shapes_by_fqns",
                   "recomputing other GEMMs than torchtitan's every second one is not modelled; remove it");
        plan_.set("parallel.recompute", "torchtitan-op",
                  from(k) + ", selective_ac_option = \"op\": torchtitan's per-op checkpointing (GEMM outputs but every "
                            "second one and the attention's kept; norms, RoPE, SwiGLU and wk, wo, w3 recomputed)",
                  line("activation_checkpoint.selective_ac_option"));
        return;
      }
      const std::string dflt = leaf(k) ? "" : " (torchtitan's default)";
      fail(line("activation_checkpoint.selective_ac_option"),
           "activation_checkpoint.mode = \"selective\" with selective_ac_option = \"" + io::shortened(option, 20) + "\"" + dflt +
               ": " + (option == "op" ? "per-op selective checkpointing (every other matmul kept)" : "checkpointing every " + io::shortened(option, 20) + "th layer") +
               " is not modelled; use mode = \"full\", \"none\", or selective_ac_option = \"1\"");
    }
    if (mode == "memory_budget")
      fail_key(k, "a memory-budget checkpointing policy is chosen by the compiler and is not modelled; use full or none");
    fail_key(k, "expected none, selective or full");
  }

  void precision() {
    const std::string param = text("training.mixed_precision_param").value_or("bfloat16");
    if (param != "bfloat16")
      fail_key("training.mixed_precision_param", "stepsim models BF16 parameters in the forward and backward; set \"bfloat16\"");
    if (const auto dtype = text("training.dtype"); dtype && *dtype != "float32")
      fail_key("training.dtype", "stepsim models FP32 master weights and optimizer states; set \"float32\"");
    const std::string optimizer = text("optimizer.name").value_or("AdamW");
    if (optimizer != "AdamW" && optimizer != "Adam")
      fail_key("optimizer.name", "stepsim models Adam's states (two moments and an FP32 master copy); use AdamW or Adam");
    gradient_reduction();
    plan_.set("train.adam_moments_dtype", "fp32",
              "torch.optim.AdamW keeps both moments in the FP32 of the parameters' training.dtype",
              line("optimizer.name"));
    const auto converters = string_list("model.converters");
    bool fp8 = boolean("training.enable_float8_linear").value_or(false), grouped = false;
    std::string which = fp8 ? "training.enable_float8_linear = true" : "";
    for (const auto& c : converters) {
      if (c == "float8" || c == "quantize.linear.float8" || c == "mx" || c == "quantize.linear.mx") {
        fp8 = true;
        which = "model.converters " + c;
      } else if (c == "quantize.grouped_mm.float8" || c == "quantize.grouped_mm.mx") {
        grouped = true;
      } else {
        fail_key("model.converters", "the " + io::shortened(c, 40) + " converter is not modelled (float8 and mx are)");
      }
    }
    if (fp8) {
      // [float8] (2025) and [quantize.linear.float8] (later) hold the same keys.
      for (const std::string p1 : {"float8.", "quantize.linear.float8."}) {
        // torchao's FSDP2 float8 all-gather: the weights gathered as per-tensor FP8 (Float8Linear
        // allows it with tensorwise scaling only); without FSDP there is no gather to make FP8.
        if (boolean(p1 + "enable_fsdp_float8_all_gather").value_or(false)) {
          const std::string k = p1 + "enable_fsdp_float8_all_gather";
          const std::string recipe = text(p1 + "recipe_name").value_or("tensorwise");
          if (recipe != "tensorwise")
            fail_key(k, "torchao gathers FP8 weights only with tensorwise scaling, not " + io::shortened(recipe, 40) +
                            "; set false");
          if (!fsdp_)
            plan_.not_imported.push_back(k + " (no FSDP: no parameter all-gather)");
          else
            plan_.set("parallel.fp8_param_gather", true, from(k) + ": the weights gathered in per-tensor FP8", line(k));
        }
        if (boolean(p1 + "emulate").value_or(false))
          fail_key(p1 + "emulate", "emulated FP8 runs at the BF16 rate and more; set false");
        for (const auto& f : string_list(p1 + "filter_fqns"))
          if (f != "output")
            fail_key(p1 + "filter_fqns", "keeps \"" + io::shortened(f, 40) + "\" in BF16; stepsim runs every GEMM but "
                                         "the LM head (output) in FP8; filter only \"output\"");
      }
      if (boolean("float8.force_recompute_fp8_weight_in_bwd").value_or(false))
        fail_key("float8.force_recompute_fp8_weight_in_bwd", "is not modelled; set false");
      if (is_moe(*flavour_) && !grouped)
        fail_key("model.converters", "converts the dense GEMMs to FP8 but leaves the experts' grouped GEMMs in BF16, which "
                                     "stepsim does not model; add \"quantize.grouped_mm.float8\"");
      const bool mx = which.ends_with("mx");
      plan_.set("train.precision", mx ? "mxfp8" : "fp8",
                which + (mx ? ": MXFP8 GEMMs (torchao), the LM head in BF16" : ": FP8 GEMMs (torchao), the LM head in BF16"),
                line("model.converters"));
      if (!mx) fp8_recipe();
      plan_.set("parallel.fp8_stash", false, "torchao's Float8Linear keeps the BF16 inputs for the backward");
      return;
    }
    if (grouped) fail_key("model.converters", "FP8 experts with BF16 dense GEMMs are not modelled; add \"quantize.linear.float8\"");
    plan_.set("train.precision", "bf16", from("training.mixed_precision_param"), line("training.mixed_precision_param"));
    plan_.set("parallel.fp8_stash", false, "BF16 activations are kept for the backward");
  }

  // torchao's float8 recipe ([float8] or [quantize.linear.float8] recipe_name): "tensorwise" (the
  // default) measures each tensor's amax before casting it; "rowwise" scales each row as it casts.
  void fp8_recipe() {
    for (const std::string k : {"float8.recipe_name", "quantize.linear.float8.recipe_name"}) {
      if (!leaf(k)) continue;
      const std::string name = text(k).value_or("");
      if (name == "tensorwise")
        plan_.set("train.fp8_recipe", "tensorwise", from(k), line(k));
      else if (name == "rowwise")
        plan_.set("train.fp8_recipe", "blockwise", from(k) + ": one scale per row, found as each row is cast", line(k));
      else
        fail_key(k, "the " + io::shortened(name, 40) + " recipe is not modelled; use \"tensorwise\" or \"rowwise\"");
      return;
    }
    plan_.set("train.fp8_recipe", "tensorwise", "no recipe_name: torchao's default, tensorwise (current) scaling");
  }

  // FSDP2 reduce-scatters gradients in mixed_precision_reduce (and accumulates them unsharded in it
  // under a pipeline); it applies only where FSDP shards (data_parallel_shard_degree x CP > 1).
  void gradient_reduction() {
    const std::string k = "training.mixed_precision_reduce";
    const std::string reduce = text(k).value_or("float32");
    if (reduce != "float32" && reduce != "bfloat16") fail_key(k, "expected \"float32\" or \"bfloat16\"");
    if (!fsdp_) {
      if (leaf(k)) plan_.not_imported.push_back(k + " (no FSDP: torchtitan reads it only when it shards)");
      plan_.set("parallel.grad_reduce_dtype", "fp32", "no FSDP: gradients in the FP32 of the parameters");
      return;
    }
    plan_.set("parallel.grad_reduce_dtype", reduce == "bfloat16" ? "bf16" : "fp32",
              from(k) + (reduce == "bfloat16" ? ": FSDP2 reduces gradients in BF16 (2 bytes a value)"
                                              : ": FSDP2 reduces gradients in FP32"),
              line(k));
  }

  void cluster() {
    plan_.set("hardware.preset", opt_.preset,
              "the GPU is not in a torchtitan job config: " +
                  std::string(opt_.preset == "h100-sxm" ? "H100 SXM assumed" : "--hardware") +
                  "; change it (" + hardware_preset_names() + ")");
    plan_.set("cluster.nodes", world_ / gpus_per_node_, "--gpus " + std::to_string(world_));
    plan_.set("cluster.gpus_per_node", gpus_per_node_,
              opt_.gpus_per_node > 0 ? "--gpus-per-node " + std::to_string(opt_.gpus_per_node)
                                     : "8 GPUs per node assumed (give --gpus-per-node)");
  }

  // The release: torchtitan compiled ([compile] enable, training.compile in older configs) or eager;
  // the pick is a note, since it sets the launch and fusion costs (workloads/software/).
  void software() {
    std::string key;
    for (const std::string_view k : kReleaseKeys)
      if (leaf(std::string(k)) != nullptr) key = std::string(k);
    const bool compiled = !key.empty() && boolean(key).value_or(false);
    const std::string name = compiled ? "torchtitan-compile" : "torchtitan";
    const std::string why = compiled ? key + " = true: torch.compile fuses the elementwise kernels around each GEMM"
                                     : (key.empty() ? "no [compile] enable" : key + " = false") + std::string(": eager PyTorch");
    plan_.set("software.profile", name, why, key.empty() ? 0 : line(key));
    plan_.notes.push_back("software.profile " + name + " (" + why + "), workloads/software/" + name + ".yaml");
  }

  void header() {
    std::vector<std::string> h = {"Imported by `stepsim import torchtitan` from " + io::printable(source_) +
                                  "; each key names the TOML key it came from. Simulate it with: stepsim simulate THIS_FILE"};
    if (const std::string note = not_imported_note(plan_); !note.empty()) h.push_back("Note: " + note + ".");
    for (auto& x : plan_.header) h.push_back(std::move(x));
    plan_.header = std::move(h);
  }

  const std::string& source_;
  const ImportOptions& opt_;
  ImportedPlan plan_;
  std::map<std::string, TomlValue> leaves_;
  const Flavour* flavour_ = nullptr;
  bool fsdp_ = false;  // FSDP2 shards (data_parallel_shard_degree x CP > 1)
  int64_t world_ = 0, gpus_per_node_ = 8;
};

}  // namespace

bool torchtitan_reads_key(std::string_view dotted_key) {
  for (const auto& k : kUsedKeys)
    if (k == dotted_key) return true;
  for (const auto& k : kReleaseKeys)
    if (k == dotted_key) return true;
  return false;
}

std::vector<std::pair<std::string, std::string>> torchtitan_flavours() {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& f : flavours()) out.emplace_back(std::string(f.model), std::string(f.flavour));
  return out;
}

ImportedPlan import_torchtitan(const std::string& text, const std::string& source, const ImportOptions& options) {
  TitanImport imp(source, options);
  ImportedPlan plan = imp.run(text);
  plan.tool = "torchtitan";
  plan.source = source;
  return plan;
}

}  // namespace stepsim::importers
