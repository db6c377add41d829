#include "simulator/config/config_loader.hpp"
#include "simulator/config/config_tree.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <sstream>
#include <tuple>

#include "schedules/registry.hpp"
#include "vocabulary/config_error.hpp"
#include "simulator/config/hf_config.hpp"
#include "simulator/config/key_aliases.hpp"
#include "simulator/config/straggler_config.hpp"
#include "simulator/config/validate_plan.hpp"
#include "simulator/config/yaml_tree.hpp"
#include "vocabulary/plan_names.hpp"
#include "simulator/io/input_file.hpp"
#include "simulator/io/json_text.hpp"

namespace stepsim {
namespace {

std::vector<std::string> schedule_names() {
  std::vector<std::string> names;
  for (const auto& e : sched::schedule_registry()) names.push_back(e.name);
  return names;
}

using nlohmann::json;

// Text: a name (UTF-8, one line); Path: a file name (any bytes but NUL and newlines).
// RecomputeSet: parallel.recompute, a shorthand or a list of Megatron-LM's recompute modules.
// LayerCounts: a list of non-negative integers (layers per pipeline stage). LayerIndices: a list of
// layer numbers, ascending (model.sliding_layers).
enum class Kind { PositiveInt, NonNegativeInt, PositiveNumber, NonNegativeNumber, Text, Path, Bool, Choice, StragglerList,
                  RecomputeSet, LayerCounts, LayerIndices, GraphScopeSet };

// What makes a key meaningful: the code that reads it runs only under another setting (e.g.
// scenario.zipf_s needs scenario.routing zipf). A key set (in the file or with --set) while its
// need is not met is unread, so it is an error -- unless it holds `inert`, the one value that means
// what leaving it unread means (false for a switch, 1 for a group size, the default choice).
// Either a choice of another key (`choice_key` at one of `values`) or a property of the plan:
// `what` it needs, whether the plan `holds` it, what the plan has instead (`now`) and the `fix`.
struct Need {
  std::string choice_key = {};
  std::vector<std::string> values = {};
  std::string what = {};
  std::function<bool(const Plan&)> holds = {};
  std::function<std::string(const Plan&)> now = {};
  std::string fix = {};
  std::optional<json> inert = {};
  // Set for a key that mirrors another tool's flag, which that tool accepts as a no-op where it
  // cannot apply (Megatron-LM's overlap flags): unread, it is a note naming why (`accepted`), not
  // an error, so a launch script imported as it is still runs, and the no-op is never silent.
  std::string accepted = {};
};

// One accepted key: its type, its range and where its value goes in the Plan.
struct Field {
  Kind kind;
  std::function<void(Plan&, const json&)> store;
  std::vector<std::string> choices = {};
  std::string help = {};
  // Range beyond the kind's sign rule. Every number has an upper bound (a default one unless set
  // below), so no key, including one added later, can carry a size that overflows or exhausts memory.
  double min = 0;  // numbers: the smallest accepted value when above 0 (rates, efficiencies)
  double max = 0;  // 0 = the kind's default bound
  std::string why = {};  // why the bound exists, for the message
  std::string form = {};  // how a value is written, where a natural spelling is refused (9.10 for cuDNN 9.10)
  std::optional<Need> need = {};  // when the key is read at all (declare_needs)
};

// Default bounds: an integer above 2^31 is no model dimension, count or id, and keeps products of
// two of them inside int64; a float above 1e12 is no rate, time or share stepsim can use.
constexpr double kDefaultIntMax = 2147483647.0;
constexpr double kDefaultNumberMax = 1e12;

// A Choice field over an enum's table; `set` stores the chosen value.
template <typename E, size_t N>
Field choice(const Named<E> (&table)[N], void (*set)(Plan&, E)) {
  Field f{Kind::Choice, [&table, set](Plan& p, const json& v) {
            for (const auto& n : table)
              if (v.get<std::string>() == n.name) set(p, n.value);
          }};
  for (const auto& n : table) f.choices.push_back(n.name);
  return f;
}

// A checked parallel.recompute value (a shorthand's name, or a list of module names).
Recompute recompute_of(const json& v) {
  if (v.is_string())
    for (const auto& n : kRecomputeShorthands)
      if (v.get<std::string>() == n.name) return n.value;
  Recompute r;
  for (const json& name : v)
    for (const auto& m : kRecomputeModules)
      if (name.get<std::string>() == m.name) r = r.with(m.value);
  return r;
}

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
      {"num_nextn_predict_layers", &ModelConfig::num_nextn_predict_layers},
      {"sliding_window", &ModelConfig::sliding_window},
  };
  return keys;
}

// Model sizes that must be > 0; the rest may be 0 (absent feature).
bool model_key_must_be_positive(const std::string& k) {
  // num_key_value_heads and head_dim: absent means "as many as the heads" and "hidden / heads";
  // a 0 written out is a mistake, not a way to say absent.
  return k == "hidden_size" || k == "num_hidden_layers" || k == "num_attention_heads" ||
         k == "vocab_size" || k == "n_group" || k == "topk_group" || k == "num_key_value_heads" || k == "head_dim";
}


// Upper (and some lower) bounds per key, each with its reason. Sizes beyond these would overflow the
// products of model dimensions or make the replay exhaust memory or run for days; rates and
// efficiencies beyond them make durations SimGrid cannot take (infinite, or zero compute).
void apply_bounds(std::map<std::string, Field>& f) {
  const std::string size = "a larger size would overflow the model's arithmetic or exhaust memory";
  const std::string time = "a larger count would make the replay exhaust memory or run for days";
  const std::string cudnn_version =
      "cuDNN's own integer (major x 10000 + minor x 100 + patch: 91002 for 9.10.2), as cudnn.backend_version() prints it";
  struct Bound {
    const char* key;
    double min, max;
    std::string why;
  };
  const Bound bounds[] = {
      {"model.hidden_size", 0, 1 << 20, size},
      {"model.num_hidden_layers", 0, double(kMaxLayers), time},
      {"model.first_k_dense_replace", 0, double(kMaxLayers), time},
      {"model.num_nextn_predict_layers", 0, 64, "multi-token prediction uses one or a few modules; more is a typo"},
      {"model.intermediate_size", 0, 1 << 22, size},
      {"model.moe_intermediate_size", 0, 1 << 22, size},
      {"model.n_routed_experts", 0, 16384, size},
      {"model.n_shared_experts", 0, 1024, size},
      {"model.num_experts_per_tok", 0, 16384, size},
      {"model.n_group", 0, 16384, size},
      {"model.topk_group", 0, 16384, size},
      {"model.num_attention_heads", 0, 16384, size},
      {"model.num_key_value_heads", 0, 16384, size},
      {"model.head_dim", 0, 16384, size},
      {"model.q_lora_rank", 0, 1 << 20, size},
      {"model.kv_lora_rank", 0, 1 << 20, size},
      {"model.qk_nope_head_dim", 0, 16384, size},
      {"model.qk_rope_head_dim", 0, 16384, size},
      {"model.v_head_dim", 0, 16384, size},
      {"model.vocab_size", 0, 1 << 24, size},
      {"model.sliding_window", 0, 1 << 24, "a window longer than any sequence stepsim takes is full attention; use 0"},
      {"model.rotary_pct", 0, 1, "a share of each head's dimensions"},
      {"model.swiglu_limit", 0, 1e6, "a clamp beyond 10^6 is a unit mistake (GPT-OSS clamps at 7); use 0 for none"},
      {"train.global_batch", 0, 1 << 24, size},
      {"train.global_batch_tokens", 0, 1LL << 40, "over 10^12 tokens in one step is a unit mistake"},
      {"parallel.micro_batch_size", 0, 1 << 24, size},
      {"train.seq_len", 0, 1 << 24, size},
      {"parallel.pp", 0, 65536, time},
      {"parallel.ep", 0, 1 << 24, size},
      {"parallel.expert_tp", 0, 4096, "an expert split over more GPUs than a node holds is no plan"},
      {"parallel.microbatches", 0, 65534, "the replay tags ops with 16-bit microbatch indices"},
      {"parallel.ddp_bucket_size", 0, 1LL << 50, "no model holds more than 2^50 parameters"},
      {"parallel.cpu_offload_layers", 0, double(kMaxLayers), time},
      // Under 1 %, an expert keeps under 1 % of its rows (and a factor near DBL_MIN leaves ops of
      // sizes SimGrid never completes): a unit mistake. 0 (dropless) stays allowed.
      {"parallel.moe_capacity_factor", 0.01, 1024,
       "0 is dropless; below 1 % of the mean load drops nearly every token, over 1024 times it is dropless anyway"},
      {"hardware.sms", 0, 65536, size},
      {"hardware.comm_sms", 0, 65536, size},
      {"software.deepep_sms", 0, 65536, size},
      {"cluster.nodes", 0, 1 << 24, size},
      {"cluster.gpus_per_node", 0, 4096, size},
      {"cluster.leaf_nics", 0, 65536, size},
      {"cluster.nvlink_domain", 0, 1 << 24, size},
      {"cluster.oversubscription", 0, 1024, "a leaf with under 1/1024 of its bandwidth up is a unit mistake"},
      {"hardware.peak_fp8_tflops", 1e-3, 1e6, "a rate outside 1 GFLOP/s .. 1 EFLOP/s per GPU is a unit mistake"},
      {"hardware.peak_bf16_tflops", 1e-3, 1e6, "a rate outside 1 GFLOP/s .. 1 EFLOP/s per GPU is a unit mistake"},
      {"scenario.hot_experts", 0, 16384, size},
      {"scenario.seed", 0, 9.3e18, "seeds are 64-bit"},
      {"scenario.routing_samples", 0, 1e7, "more samples take minutes and change the statistics by < 0.1 %"},
      {"hardware.fp8_tflops", 1e-3, 1e6, "a rate outside 1 GFLOP/s .. 1 EFLOP/s per GPU is a unit mistake"},
      {"hardware.bf16_tflops", 1e-3, 1e6, "a rate outside 1 GFLOP/s .. 1 EFLOP/s per GPU is a unit mistake"},
      {"hardware.ib_GBps", 1e-3, 1e6, "a bandwidth outside 1 MB/s .. 1 PB/s is a unit mistake"},
      {"hardware.nvlink_GBps", 1e-3, 1e6, "a bandwidth outside 1 MB/s .. 1 PB/s is a unit mistake"},
      {"hardware.host_link_GBps", 1e-3, 1e6, "a bandwidth outside 1 MB/s .. 1 PB/s is a unit mistake"},
      {"hardware.ib_latency_s", 0, 1, "a hop of over a second is no network"},
      {"hardware.nvlink_latency_s", 0, 1, "a hop of over a second is no network"},
      {"hardware.a2a_latency_s", 0, 1, "a handshake of over a second is no network"},
      {"hardware.a2a_layout_latency_s", 0, 1, "a handshake of over a second is no network"},
      {"hardware.nonmatmul_s_per_token_layer", 0, 1e-3, "1 ms per token and layer is 1000x any measured GPU"},
      {"hardware.gemm_efficiency", 0.01, 1, "a share of the stated rate; below 1 % is a unit mistake"},
      {"hardware.bf16_gemm_efficiency", 0.01, 1, "a share of the stated rate; below 1 % is a unit mistake"},
      {"hardware.attention_efficiency", 0.01, 1, "a share of the stated rate; below 1 % is a unit mistake"},
      {"hardware.a2a_efficiency", 0.01, 1, "a share of link bandwidth; below 1 % is a unit mistake"},
      {"hardware.wgrad_gemm_efficiency", 0.01, 1, "a share of the stated rate; 0 = same as gemm_efficiency"},
      {"scenario.zipf_s", 0, 100, "beyond that every row goes to one expert anyway"},
      {"scenario.dirichlet_alpha", 1e-3, 1e6, "outside this range the draw is one expert or uniform"},
      {"scenario.hot_share", 0, 1, "a share of the rows"},
      {"scenario.layer_correlation", 0, 1, "a share between independent (0) and identical (1) layers"},
      {"scenario.jitter_sigma", 0, 1,
       "with exp(sigma z - sigma^2/2), sigma above 1 makes most kernels nearly vanish and a few dominate"},
      {"workload.f_s", 1e-9, 1e6, "a chunk of over 11 days or under a nanosecond is a unit mistake"},
      {"workload.b_s", 1e-9, 1e6, "a chunk of over 11 days or under a nanosecond is a unit mistake"},
      {"workload.w_s", 0, 1e6, "a chunk of over 11 days is a unit mistake"},
      {"workload.fb_s", 0, 1e6, "a chunk of over 11 days is a unit mistake"},
      {"workload.send_bytes", 0, 1e15, "a petabyte per send is a unit mistake"},
      {"train.reported_step_s", 1e-6, 1e7, "a step outside a microsecond .. 4 months is a unit mistake"},
      {"train.reported_tflops_per_gpu", 1e-3, 1e6, "TFLOP/s per GPU outside 0.001 .. 1,000,000 is a unit mistake"},
      {"hardware.hbm_GBps", 1, 1e6, "a memory bandwidth outside 1 GB/s .. 1 PB/s is a unit mistake"},
      {"hardware.hbm_efficiency", 0.01, 1, "a share of the HBM bandwidth; below 1 % is a unit mistake"},
      {"hardware.gemm_bf16_peak_share", 0.01, 1, "a share of the dense peak; below 1 % is a unit mistake"},
      {"hardware.gemm_fp8_peak_share", 0.01, 1, "a share of the dense peak; below 1 % is a unit mistake"},
      {"hardware.gemm_wgrad_share", 0.01, 1, "a share of the forward GEMMs' rate; below 1 % is a unit mistake"},
      {"hardware.gemm_k_overhead", 0, 1e6, "a tile's fixed cost of over a million K elements is a unit mistake"},
      {"hardware.gemm_tile_m", 0, 4096, "GEMM output tiles are tens to hundreds of rows"},
      {"hardware.gemm_tile_n", 0, 4096, "GEMM output tiles are tens to hundreds of columns"},
      {"hardware.attention_fwd_tflops", 1e-3, 1e6, "a rate outside 1 GFLOP/s .. 1 EFLOP/s per GPU is a unit mistake"},
      {"hardware.attention_bwd_tflops", 1e-3, 1e6, "a rate outside 1 GFLOP/s .. 1 EFLOP/s per GPU is a unit mistake"},
      {"hardware.attention_seq_half", 0, 1 << 24, "a sequence length; longer than train.seq_len's bound is a unit mistake"},
      {"hardware.attention_head_dim_half", 0, 16384, "a head dimension; larger than model.head_dim's bound is a unit mistake"},
      {"hardware.attention_window_fwd_half", 0, 1 << 24, "a number of keys; longer than train.seq_len's bound is a unit mistake"},
      {"hardware.attention_window_bwd_half", 0, 1 << 24, "a number of keys; longer than train.seq_len's bound is a unit mistake"},
      {"hardware.attention_fp8_fwd_tflops", 1e-3, 1e6, "a rate outside 1 GFLOP/s .. 1 EFLOP/s per GPU is a unit mistake"},
      {"hardware.attention_fp8_bwd_tflops", 1e-3, 1e6, "a rate outside 1 GFLOP/s .. 1 EFLOP/s per GPU is a unit mistake"},
      {"hardware.attention_mxfp8_fwd_tflops", 1e-3, 1e6, "a rate outside 1 GFLOP/s .. 1 EFLOP/s per GPU is a unit mistake"},
      {"hardware.attention_mxfp8_bwd_tflops", 1e-3, 1e6, "a rate outside 1 GFLOP/s .. 1 EFLOP/s per GPU is a unit mistake"},
      {"hardware.attention_fp8_fwd_seq_half", 0, 1 << 24, "a sequence length; longer than train.seq_len's bound is a unit mistake"},
      {"hardware.attention_fp8_bwd_seq_half", 0, 1 << 24, "a sequence length; longer than train.seq_len's bound is a unit mistake"},
      {"hardware.attention_mxfp8_fwd_seq_half", 0, 1 << 24, "a sequence length; longer than train.seq_len's bound is a unit mistake"},
      {"hardware.attention_mxfp8_bwd_seq_half", 0, 1 << 24, "a sequence length; longer than train.seq_len's bound is a unit mistake"},
      {"hardware.attention_flash2_fwd_tflops", 1e-3, 1e6, "a rate outside 1 GFLOP/s .. 1 EFLOP/s per GPU is a unit mistake"},
      {"hardware.attention_flash2_bwd_tflops", 1e-3, 1e6, "a rate outside 1 GFLOP/s .. 1 EFLOP/s per GPU is a unit mistake"},
      {"hardware.attention_flash2_fwd_seq_half", 0, 1 << 24, "a sequence length; longer than train.seq_len's bound is a unit mistake"},
      {"hardware.attention_flash2_bwd_seq_half", 0, 1 << 24, "a sequence length; longer than train.seq_len's bound is a unit mistake"},
      {"hardware.attention_early_fwd_tflops", 1e-3, 1e6, "a rate outside 1 GFLOP/s .. 1 EFLOP/s per GPU is a unit mistake"},
      {"hardware.attention_early_bwd_tflops", 1e-3, 1e6, "a rate outside 1 GFLOP/s .. 1 EFLOP/s per GPU is a unit mistake"},
      {"hardware.attention_early_fwd_seq_half", 0, 1 << 24, "a sequence length; longer than train.seq_len's bound is a unit mistake"},
      {"hardware.attention_early_bwd_seq_half", 0, 1 << 24, "a sequence length; longer than train.seq_len's bound is a unit mistake"},
      {"hardware.attention_cudnn_version", 0, 999999, cudnn_version},
      {"hardware.attention_early_cudnn_version", 0, 999999, cudnn_version},
      {"software.cudnn_version", 0, 999999, cudnn_version},
      {"software.kernel_launch_s", 0, 1e-2, "10 ms per kernel is 1000x any launch or framework overhead measured"},
      {"software.host_launch_s", 0, 1e-2, "10 ms per kernel is 1000x any launch or framework overhead measured"},
      {"software.looped_launch_s", 0, 1e-2, "10 ms per kernel is 1000x any launch or framework overhead measured"},
      {"software.moe_layer_host_s", 0, 1e-1, "100 ms of host work per MoE layer and microbatch is 10x any measured"},
      {"software.alltoall_dispatch_launches", 0, 1000, "a dispatcher launches tens of kernels per layer; more is a typo"},
      {"software.gemm_efficiency", 0.01, 1, "a share of the GPU's benchmarked GEMM rate; below 1 % is a unit mistake"},
      {"software.fp8_efficiency", 0.01, 1, "a share of the FP8 GEMMs' rate; below 1 % is a unit mistake"},
      {"software.mxfp8_efficiency", 0.01, 1, "a share of the MXFP8 GEMMs' rate; below 1 % is a unit mistake"},
      {"software.nvfp4_efficiency", 0.01, 1, "a share of the NVFP4 GEMMs' rate; below 1 % is a unit mistake"},
      {"software.host_syncs_per_moe_layer", 0, 64, "a dispatcher synchronises a few times per layer; more is a typo"},
      {"hardware.gemm_mxfp8_peak_share", 0.01, 1, "a share of the dense peak; below 1 % is a unit mistake"},
      {"hardware.gemm_nvfp4_peak_share", 0.01, 1, "a share of the dense peak; below 1 % is a unit mistake"},
      {"hardware.peak_fp4_tflops", 1e-3, 1e6, "a rate outside 1 GFLOP/s .. 1 EFLOP/s per GPU is a unit mistake"},
  };
  for (const auto& b : bounds) {
    Field& field = f.at(b.key);
    field.min = b.min;
    field.max = b.max;
    field.why = b.why;
  }
  // A release written as its dotted name (9.10, "9.10.2") reads as a float or a string.
  for (const char* key : {"hardware.attention_cudnn_version", "hardware.attention_early_cudnn_version", "software.cudnn_version"})
    f.at(key).form = cudnn_version;
}

// Every key that some setting makes meaningful, with that setting (see Need): one rule, checked
// for every key by check_needs, instead of one if-statement per key in the validator.
void declare_needs(std::map<std::string, Field>& f) {
  const auto with_choice = [&](const char* key, const char* choice_key, std::vector<std::string> values,
                               std::optional<json> inert = std::nullopt) {
    f.at(key).need = Need{choice_key, std::move(values), "", {}, {}, "", std::move(inert)};
  };
  const auto with_plan = [&](const char* key, std::string what, std::function<bool(const Plan&)> holds,
                             std::function<std::string(const Plan&)> now, std::string fix, std::optional<json> inert) {
    f.at(key).need = Need{"", {}, std::move(what), std::move(holds), std::move(now), std::move(fix), std::move(inert)};
  };
  with_choice("scenario.zipf_s", "scenario.routing", {"zipf"});
  with_choice("scenario.dirichlet_alpha", "scenario.routing", {"dirichlet"});
  with_choice("scenario.hot_experts", "scenario.routing", {"hot"});
  with_choice("scenario.hot_share", "scenario.routing", {"hot"});
  with_choice("scenario.load_file", "scenario.routing", {"file"});
  with_choice("scenario.layer_correlation", "scenario.routing", {"zipf", "dirichlet", "hot"});
  for (const char* k : {"workload.f_s", "workload.b_s", "workload.w_s", "workload.fb_s", "workload.send_bytes"})
    with_choice(k, "workload.kind", {"synthetic"});
  // Leaf switches: a star has none.
  with_choice("cluster.oversubscription", "cluster.topology", {"fat-tree", "multi-plane"}, json(1.0));
  with_choice("cluster.leaf_nics", "cluster.topology", {"fat-tree", "multi-plane"}, json(32));
  with_choice("cluster.rail_optimized", "cluster.topology", {"fat-tree"}, json(false));  // multi-plane always is
  // Scopes narrow the per-layer graphs.
  with_choice("software.cuda_graph_scope", "software.cuda_graphs", {"layers"}, json::array());
  // HSDP shards ZeRO-3 state.
  with_choice("parallel.fsdp_shard_size", "parallel.zero", {"3"}, json(0));

  // A list of sliding-window layers means nothing without a window.
  with_plan("model.sliding_layers", "a sliding window (model.sliding_window > 0)",
            [](const Plan& p) { return p.model.sliding_window > 0; },
            [](const Plan&) { return std::string("model.sliding_window is 0: every layer attends to the whole sequence"); },
            "set model.sliding_window, or drop model.sliding_layers", std::nullopt);

  const auto moe = [](const Plan& p) { return p.model.is_moe(); };
  const auto dense = [](const Plan&) { return std::string("the model has no routed experts"); };
  with_plan("parallel.ep", "an MoE model (routed experts)", moe, dense, "", json(1));
  with_plan("scenario.routing", "an MoE model (routed experts)", moe, dense, "", json("balanced"));
  with_plan("parallel.moe_dispatcher", "an MoE model (routed experts)", moe, dense, "", std::nullopt);
  with_plan("parallel.expert_tp", "an MoE model (routed experts)", moe, dense, "", json(1));
  // Megatron's combined 1F1B: pipelines of one stage or interleaved ones (it asserts a virtual
  // pipeline when PP > 1), with an expert all-to-all to hide.
  with_plan(
      "parallel.moe_overlap_ep_comm",
      "an expert all-to-all (MoE, parallel.ep > 1, alltoall or deepep dispatcher) in schedule 1f1b with parallel.pp "
      "1, or interleaved",
      [](const Plan& p) {
        const std::string_view s = p.parallel.schedule.name();
        return p.runs_ep_all_to_all() && p.parallel.moe_dispatcher != MoeDispatcher::AllGather &&
               ((s == "1f1b" && p.parallel.pp == 1) || s == "interleaved");
      },
      [](const Plan& p) {
        if (!p.model.is_moe()) return std::string("a dense model");
        if (p.parallel.ep <= 1) return std::string("parallel.ep is 1: no all-to-all");
        if (p.parallel.moe_dispatcher == MoeDispatcher::AllGather) return std::string("parallel.moe_dispatcher is allgather");
        return "schedule " + std::string(p.parallel.schedule.name()) + " with parallel.pp " + std::to_string(p.parallel.pp);
      },
      "", json(false));
  // The deepep dispatcher's own keys: its library and its FP8 dispatch.
  const auto deepep = [](const Plan& p) { return p.model.is_moe() && p.parallel.moe_dispatcher == MoeDispatcher::DeepEP; };
  const auto not_deepep = [](const Plan& p) {
    return std::string(p.model.is_moe() ? "parallel.moe_dispatcher is " + std::string(to_string(p.parallel.moe_dispatcher))
                                        : "a dense model");
  };
  with_plan("parallel.moe_flex_backend", "parallel.moe_dispatcher deepep", deepep, not_deepep, "", json("deepep"));
  with_plan(
      "parallel.cp_comm_type", "context parallelism (parallel.cp > 1)", [](const Plan& p) { return p.parallel.cp > 1; },
      [](const Plan&) { return std::string("parallel.cp is 1: no sequence is split"); }, "", json("p2p"));
  with_plan("parallel.moe_fp8_dispatch", "parallel.moe_dispatcher deepep", deepep, not_deepep, "", json(false));
  with_plan("parallel.moe_grouped_gemm", "an MoE model (routed experts)", moe, dense, "", json(true));
  with_plan("parallel.moe_router_dtype", "an MoE model (routed experts)", moe, dense, "", json("bf16"));
  with_plan("parallel.moe_capacity_factor", "an MoE model (routed experts)", moe, dense, "", json(0));
  // Megatron-Core requires --moe-expert-rank-capacity-factor with the stash, and that factor the
  // flex dispatcher's HybridEP backend with grouped experts (TransformerConfig's checks).
  with_plan(
      "parallel.moe_paged_stash",
      "an MoE model on the deepep dispatcher's hybridep backend (parallel.moe_flex_backend) with grouped expert GEMMs",
      [](const Plan& p) {
        return p.model.is_moe() && p.parallel.moe_dispatcher == MoeDispatcher::DeepEP &&
               p.parallel.moe_flex_backend == FlexBackend::HybridEP && p.parallel.moe_grouped_gemm;
      },
      [](const Plan& p) {
        if (!p.model.is_moe()) return std::string("a dense model");
        if (p.parallel.moe_dispatcher != MoeDispatcher::DeepEP)
          return "parallel.moe_dispatcher is " + std::string(to_string(p.parallel.moe_dispatcher));
        if (p.parallel.moe_flex_backend != FlexBackend::HybridEP) return std::string("parallel.moe_flex_backend is deepep");
        return std::string("parallel.moe_grouped_gemm is false");
      },
      "", json(false));
  with_plan(
      "parallel.moe_pad_to_capacity", "a capacity (parallel.moe_capacity_factor > 0)",
      [](const Plan& p) { return p.model.is_moe() && p.parallel.moe_capacity_factor > 0; },
      [](const Plan& p) {
        return std::string(p.model.is_moe() ? "parallel.moe_capacity_factor is 0 (dropless)" : "a dense model");
      },
      "", json(false));
  with_plan(
      "parallel.overlap_shared_expert", "an MoE model with shared experts",
      [](const Plan& p) {
        return p.model.is_moe() && (p.model.n_shared_experts > 0 || p.model.shared_expert_intermediate_size > 0);
      },
      [](const Plan& p) { return std::string(p.model.is_moe() ? "the model has no shared expert" : "a dense model"); },
      "", json(false));
  // Halves hide each other's expert all-to-all (DeepEP's, which leaves the compute stream free);
  // FSDP runs no pipeline chunks to split.
  with_plan(
      "parallel.split_lone_chunks",
      "a DeepEP all-to-all in pipeline chunks (MoE, parallel.ep > 1, parallel.moe_dispatcher deepep, a pipeline "
      "schedule)",
      [](const Plan& p) {
        return p.runs_ep_all_to_all() && p.parallel.moe_dispatcher == MoeDispatcher::DeepEP &&
               !sched::make_unchecked_schedule(p)->shards_parameters();
      },
      [](const Plan& p) {
        if (!p.model.is_moe()) return std::string("a dense model");
        if (p.parallel.ep <= 1) return std::string("parallel.ep is 1: no all-to-all");
        if (p.parallel.moe_dispatcher != MoeDispatcher::DeepEP)
          return "parallel.moe_dispatcher is " + std::string(to_string(p.parallel.moe_dispatcher));
        return "schedule " + std::string(p.parallel.schedule.name()) + ", which runs no pipeline chunks";
      },
      "", json(false));
  // MXFP8 and NVFP4 scale by blocks of their own; the recipe picks per-tensor or 1x128 FP8's.
  with_plan(
      "train.fp8_recipe", "per-tensor or 1x128 FP8 GEMMs (train.precision fp8)",
      [](const Plan& p) { return p.train.fp8_recipe_applies(); },
      [](const Plan& p) { return "train.precision is " + std::string(precision_name(p.train)); }, "set train.precision=fp8",
      std::nullopt);
  with_plan(
      "train.fp8_attention", "per-tensor FP8 (train.fp8_recipe delayed or tensorwise) or MXFP8 GEMMs",
      [](const Plan& p) { return p.train.fp8_attention_applies(); },
      [](const Plan& p) {
        if (p.train.fp8_recipe_applies()) return std::string("train.fp8_recipe is blockwise");
        return "train.precision is " + std::string(precision_name(p.train));
      },
      "set train.precision=fp8 with train.fp8_recipe=tensorwise or delayed, or train.precision=mxfp8", json(false));
  with_plan(
      "parallel.fp8_stash", "FP8 GEMMs (train.precision fp8), whose inputs the stash keeps",
      [](const Plan& p) { return p.train.precision == Precision::FP8; },
      [](const Plan&) { return std::string("train.precision is bf16"); }, "set train.precision=fp8", json(false));

  with_plan(
      "parallel.fp8_param_gather",
      "FP8 GEMMs (train.precision fp8, mxfp8 or nvfp4), whose weights it gathers in their format",
      [](const Plan& p) { return p.train.precision == Precision::FP8; },
      [](const Plan&) { return std::string("train.precision is bf16"); },
      "", json(false));

  // Megatron-LM's overlap flags: where they cannot apply, Megatron takes them as no-ops, and so does
  // an imported launch script; each such key is a note.
  const auto megatron_no_op = [&](const char* key, std::string what, std::function<bool(const Plan&)> holds,
                                  std::function<std::string(const Plan&)> now, std::optional<json> inert) {
    with_plan(key, std::move(what), std::move(holds), std::move(now), "", std::move(inert));
    f.at(key).need->accepted = "a no-op, as in Megatron-LM";
  };
  megatron_no_op(
      "parallel.tp_comm_overlap", "tensor parallelism (parallel.tp > 1)", [](const Plan& p) { return p.parallel.tp > 1; },
      [](const Plan&) { return std::string("parallel.tp is 1 (no tensor-parallel collectives)"); }, json(false));
  // A gradient reduce-scatter and parameter all-gather exist when more than one GPU holds a weight
  // (dense weights over data x context parallel ranks, experts over their data-parallel ranks) and
  // ZeRO-1/2 runs them bucket by bucket (ZeRO-3 always overlaps its per-layer collectives).
  const auto dp_buckets = [](const Plan& p) {
    return p.parallel.zero != 3 && (p.dp() * p.parallel.cp > 1 || (p.model.is_moe() && p.edp() > 1));
  };
  const auto no_dp_buckets = [](const Plan& p) {
    return p.parallel.zero == 3 ? std::string("ZeRO-3 always overlaps its per-layer gathers and reduce-scatters")
                                : std::string("one GPU holds each weight (no data-parallel gradient reduction)");
  };
  const std::string zero12 = "data-parallel gradient buckets (ZeRO-1 or 2, more than one GPU holding a weight)";
  megatron_no_op("parallel.overlap_grad_reduce", zero12, dp_buckets, no_dp_buckets, json(false));
  megatron_no_op("parallel.overlap_param_gather", zero12, dp_buckets, no_dp_buckets, json(false));
  megatron_no_op(
      "parallel.ddp_bucket_size", zero12 + " cut up by parallel.overlap_grad_reduce: true",
      [dp_buckets](const Plan& p) { return p.parallel.overlap_grad_reduce && dp_buckets(p); },
      [no_dp_buckets, dp_buckets](const Plan& p) {
        return dp_buckets(p) ? std::string("parallel.overlap_grad_reduce is false (one bucket)") : no_dp_buckets(p);
      },
      std::nullopt);
}

// The shipped software profiles: workloads/software/<name>.yaml, each a software: map. The first is
// the default: the release the per-op cost model's launch cost was fitted on.
const std::vector<std::string>& software_profiles() {
  static const std::vector<std::string> names = {"megatron-core-r0.8", "nemo-24", "nemo-25", "megatron-bridge", "deepseek-v3",
                                                 "torchtitan", "torchtitan-compile"};
  return names;
}

// Config keys a software profile may default (software.defaults.KEY): the options a release's own
// recipes turn on. A config or --set that gives the key wins; a default whose key the plan does not
// read (tp_comm_overlap at TP 1) is left out silently, and so is one outside the plans the recipes set
// it for (`reaches`).
struct ProfileDefault {
  std::string key;
  std::function<bool(const Plan&)> reaches = {};  // unset: every plan that reads the key
};

// NVIDIA's precision recipes (NeMo 2's and Megatron-Bridge's mixed_precision.py) keep and gather the
// GEMMs' weights in their format for delayed and current scaling and MXFP8, not for blockwise
// (subchannel) or NVFP4 (Megatron-Bridge from v0.5.0 gathers NVFP4 through fp4_param_gather instead; a
// config of such a release says so), and NeMo turns it off under Megatron's FSDP (ZeRO-3).
bool recipes_gather_low_precision_weights(const Plan& plan) {
  const TrainConfig& t = plan.train;
  const bool format = t.low_precision == LowPrecision::Mxfp8 ||
                      (t.low_precision == LowPrecision::Fp8 && t.fp8_recipe != Fp8Recipe::Blockwise);
  return format && plan.parallel.zero != 3;
}

const std::vector<ProfileDefault>& profile_defaults() {
  static const std::vector<ProfileDefault> defaults = {
      {"parallel.tp_comm_overlap"}, {"parallel.overlap_grad_reduce"}, {"parallel.overlap_param_gather"},
      {"parallel.overlap_shared_expert"}, {"parallel.grad_reduce_dtype"}, {"train.fp8_recipe"},
      // After train.fp8_recipe, whose value decides whether it reaches the plan.
      {"parallel.fp8_param_gather", recipes_gather_low_precision_weights},
      // parallel.moe_dispatcher: the release's MoE token dispatcher (one more row here when the key exists).
  };
  return defaults;
}

// The shipped GPU presets: workloads/hardware/<name>.yaml, each a hardware: map.
const std::vector<std::string>& hardware_presets() {
  static const std::vector<std::string> names = {"h800", "h100-sxm", "h200", "b200", "gb200", "b300", "gb300", "mi300x"};
  return names;
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
    f["model.hidden_act"] = choice<HiddenAct>(kHiddenActs, [](Plan& p, HiddenAct v) { p.model.hidden_act = v; });
    f["model.rotary_pct"] = {Kind::NonNegativeNumber, into(&Plan::model, &ModelConfig::rotary_pct)};
    f["model.attention_bias"] = {Kind::Bool, into(&Plan::model, &ModelConfig::attention_bias)};
    f["model.mlp_bias"] = {Kind::Bool, into(&Plan::model, &ModelConfig::mlp_bias)};
    f["model.swiglu_limit"] = {Kind::NonNegativeNumber, into(&Plan::model, &ModelConfig::swiglu_limit)};
    f["model.qk_norm"] = {Kind::Bool, into(&Plan::model, &ModelConfig::qk_norm)};
    f["model.sliding_layers"] = {Kind::LayerIndices,
                                 [](Plan& p, const json& v) { p.model.sliding_layers = v.get<std::vector<int64_t>>(); }};
    f["model.norm"] = choice<Norm>(kNorms, [](Plan& p, Norm v) { p.model.norm = v; });
    // model.config_json is consumed before the walk (see apply_hf_config).
    f["model.config_json"] = {Kind::Path, [](Plan&, const json&) {}};

    f["train.global_batch"] = {Kind::PositiveInt, into(&Plan::train, &TrainConfig::global_batch)};
    f["train.global_batch_tokens"] = {Kind::PositiveInt, into(&Plan::train, &TrainConfig::global_batch_tokens)};
    f["train.seq_len"] = {Kind::PositiveInt, into(&Plan::train, &TrainConfig::seq_len)};
    f["train.precision"] = {Kind::Choice, [](Plan& p, const json& v) {
                              for (const auto& n : kTrainPrecisions)
                                if (v.get<std::string>() == n.name)
                                  p.train.precision = n.precision, p.train.low_precision = n.low_precision;
                            }};
    for (const auto& n : kTrainPrecisions) f["train.precision"].choices.push_back(n.name);
    f["train.fp8_recipe"] = choice<Fp8Recipe>(kFp8Recipes, [](Plan& p, Fp8Recipe v) { p.train.fp8_recipe = v; });
    f["train.fp8_attention"] = {Kind::Bool, into(&Plan::train, &TrainConfig::fp8_attention)};
    f["train.adam_moments_dtype"] =
        choice<MomentDtype>(kMomentDtypes, [](Plan& p, MomentDtype v) { p.train.adam_moments_dtype = v; });
    f["train.reported_step_s"] = {Kind::PositiveNumber, into(&Plan::train, &TrainConfig::reported_step_s)};
    f["train.reported_tflops_per_gpu"] = {Kind::PositiveNumber, into(&Plan::train, &TrainConfig::reported_tflops_per_gpu)};

    f["parallel.pp"] = {Kind::PositiveInt, into(&Plan::parallel, &ParallelConfig::pp)};
    f["parallel.ep"] = {Kind::PositiveInt, into(&Plan::parallel, &ParallelConfig::ep)};
    f["parallel.expert_tp"] = {Kind::PositiveInt, into(&Plan::parallel, &ParallelConfig::expert_tp)};
    f["parallel.tp"] = {Kind::PositiveInt, into(&Plan::parallel, &ParallelConfig::tp)};
    f["parallel.cp"] = {Kind::PositiveInt, into(&Plan::parallel, &ParallelConfig::cp)};
    f["parallel.fsdp_shard_size"] = {Kind::NonNegativeInt, into(&Plan::parallel, &ParallelConfig::fsdp_shard_size)};
    f["parallel.microbatches"] = {Kind::PositiveInt, into(&Plan::parallel, &ParallelConfig::microbatches)};
    f["parallel.micro_batch_size"] = {Kind::PositiveInt, into(&Plan::parallel, &ParallelConfig::micro_batch_size)};
    f["parallel.zero"] = {Kind::Choice,
                          [](Plan& p, const json& v) { p.parallel.zero = std::stoll(v.get<std::string>()); },
                          {"1", "2", "3"}};
    f["parallel.recompute"] = {Kind::RecomputeSet, [](Plan& p, const json& v) { p.parallel.recompute = recompute_of(v); }};
    f["parallel.fp8_stash"] = {Kind::Bool, into(&Plan::parallel, &ParallelConfig::fp8_stash)};
    f["parallel.fp8_param_gather"] = {Kind::Bool, into(&Plan::parallel, &ParallelConfig::fp8_param_gather)};
    f["parallel.grad_reduce_dtype"] =
        choice<ReduceDtype>(kReduceDtypes, [](Plan& p, ReduceDtype v) { p.parallel.grad_reduce_dtype = v; });
    f["parallel.split_lone_chunks"] = {Kind::Bool, into(&Plan::parallel, &ParallelConfig::split_lone_chunks)};
    f["parallel.split_backward"] = {Kind::Bool, into(&Plan::parallel, &ParallelConfig::split_backward)};
    f["parallel.overlap_shared_expert"] = {Kind::Bool, into(&Plan::parallel, &ParallelConfig::overlap_shared_expert)};
    f["parallel.moe_dispatcher"] =
        choice<MoeDispatcher>(kMoeDispatchers, [](Plan& p, MoeDispatcher v) { p.parallel.moe_dispatcher = v; });
    f["parallel.moe_grouped_gemm"] = {Kind::Bool, into(&Plan::parallel, &ParallelConfig::moe_grouped_gemm)};
    f["parallel.moe_router_dtype"] =
        choice<RouterDtype>(kRouterDtypes, [](Plan& p, RouterDtype v) { p.parallel.moe_router_dtype = v; });
    f["parallel.moe_capacity_factor"] = {Kind::NonNegativeNumber,
                                         into(&Plan::parallel, &ParallelConfig::moe_capacity_factor)};
    f["parallel.moe_fp8_dispatch"] = {Kind::Bool, into(&Plan::parallel, &ParallelConfig::moe_fp8_dispatch)};
    f["parallel.moe_flex_backend"] =
        choice<FlexBackend>(kFlexBackends, [](Plan& p, FlexBackend v) { p.parallel.moe_flex_backend = v; });
    f["parallel.cp_comm_type"] =
        choice<CpCommType>(kCpCommTypes, [](Plan& p, CpCommType v) { p.parallel.cp_comm_type = v; });
    f["parallel.moe_pad_to_capacity"] = {Kind::Bool, into(&Plan::parallel, &ParallelConfig::moe_pad_to_capacity)};
    f["parallel.moe_overlap_ep_comm"] = {Kind::Bool, into(&Plan::parallel, &ParallelConfig::moe_overlap_ep_comm)};
    f["parallel.moe_paged_stash"] = {Kind::Bool, into(&Plan::parallel, &ParallelConfig::moe_paged_stash)};
    f["parallel.tp_comm_overlap"] = {Kind::Bool, into(&Plan::parallel, &ParallelConfig::tp_comm_overlap)};
    f["parallel.overlap_grad_reduce"] = {Kind::Bool, into(&Plan::parallel, &ParallelConfig::overlap_grad_reduce)};
    f["parallel.overlap_param_gather"] = {Kind::Bool, into(&Plan::parallel, &ParallelConfig::overlap_param_gather)};
    f["parallel.ddp_bucket_size"] = {Kind::PositiveInt, into(&Plan::parallel, &ParallelConfig::ddp_bucket_size)};
    f["parallel.cpu_offload_layers"] = {Kind::NonNegativeInt, into(&Plan::parallel, &ParallelConfig::cpu_offload_layers)};
    f["schedule"] = {Kind::Choice,
                     [](Plan& p, const json& v) { p.parallel.schedule = *sched::schedule_named(v.get<std::string>()); },
                     schedule_names()};
    f["parallel.virtual_stages"] = {Kind::PositiveInt, into(&Plan::parallel, &ParallelConfig::virtual_stages)};
    f["parallel.stage_layers"] = {Kind::LayerCounts,
                                  [](Plan& p, const json& v) { p.parallel.stage_layers = v.get<std::vector<int64_t>>(); }};

    f["hardware.name"] = {Kind::Text, into(&Plan::hardware, &HardwareConfig::name)};
    // hardware.preset is merged in before the walk (see apply_hardware_layers).
    f["hardware.preset"] = {Kind::Choice, [](Plan&, const json&) {}, hardware_presets()};
    f["hardware.peak_fp8_tflops"] = {Kind::PositiveNumber, into(&Plan::hardware, &HardwareConfig::peak_fp8_tflops)};
    f["hardware.peak_bf16_tflops"] = {Kind::PositiveNumber,
                                      into(&Plan::hardware, &HardwareConfig::peak_bf16_tflops)};
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
    // The per-op cost model (sim.compute: predicted).
    for (const auto& [key, member] : std::initializer_list<std::pair<const char*, double HardwareConfig::*>>{
             {"hbm_GBps", &HardwareConfig::hbm_GBps},
             {"host_link_GBps", &HardwareConfig::host_link_GBps},
             {"hbm_efficiency", &HardwareConfig::hbm_efficiency},
             {"gemm_bf16_peak_share", &HardwareConfig::gemm_bf16_peak_share},
             {"gemm_fp8_peak_share", &HardwareConfig::gemm_fp8_peak_share},
             {"gemm_wgrad_share", &HardwareConfig::gemm_wgrad_share},
             {"attention_fwd_tflops", &HardwareConfig::attention_fwd_tflops},
             {"attention_bwd_tflops", &HardwareConfig::attention_bwd_tflops}})
      f[std::string("hardware.") + key] = {Kind::PositiveNumber, into(&Plan::hardware, member)};
    for (const auto& [key, member] : std::initializer_list<std::pair<const char*, double HardwareConfig::*>>{
             {"gemm_k_overhead", &HardwareConfig::gemm_k_overhead},
             {"attention_seq_half", &HardwareConfig::attention_seq_half},
             {"attention_head_dim_half", &HardwareConfig::attention_head_dim_half},
             {"attention_window_fwd_half", &HardwareConfig::attention_window_fwd_half},
             {"attention_window_bwd_half", &HardwareConfig::attention_window_bwd_half}})
      f[std::string("hardware.") + key] = {Kind::NonNegativeNumber, into(&Plan::hardware, member)};
    for (const auto& [key, member] : std::initializer_list<std::pair<const char*, double HardwareConfig::*>>{
             {"gemm_mxfp8_peak_share", &HardwareConfig::gemm_mxfp8_peak_share},
             {"peak_fp4_tflops", &HardwareConfig::peak_fp4_tflops},
             {"gemm_nvfp4_peak_share", &HardwareConfig::gemm_nvfp4_peak_share}})
      f[std::string("hardware.") + key] = {Kind::PositiveNumber, into(&Plan::hardware, member)};
    // The FP8 attention curves (train.fp8_attention), FlashAttention-2's (software.attention_kernel
    // flash2) and an earlier cuDNN release's (software.cudnn_version):
    // hardware.attention_{fp8,mxfp8,flash2,early}_{fwd,bwd}_{tflops,seq_half}.
    using Curve = HardwareConfig::AttentionCurve;
    for (const auto& [format, curve] : std::initializer_list<std::pair<const char*, Curve HardwareConfig::*>>{
             {"fp8", &HardwareConfig::attention_fp8},
             {"mxfp8", &HardwareConfig::attention_mxfp8},
             {"flash2", &HardwareConfig::attention_flash2},
             {"early", &HardwareConfig::attention_early}})
      for (const auto& [what, kind, member] : std::initializer_list<std::tuple<const char*, Kind, double Curve::*>>{
               {"fwd_tflops", Kind::PositiveNumber, &Curve::fwd_tflops},
               {"bwd_tflops", Kind::PositiveNumber, &Curve::bwd_tflops},
               {"fwd_seq_half", Kind::NonNegativeNumber, &Curve::fwd_seq_half},
               {"bwd_seq_half", Kind::NonNegativeNumber, &Curve::bwd_seq_half}})
        f[std::string("hardware.attention_") + format + "_" + what] = {
            kind, [c = curve, m = member](Plan& p, const json& v) { (p.hardware.*c).*m = v.get<double>(); }};
    f["hardware.attention_cudnn_version"] = {Kind::NonNegativeInt,
                                              into(&Plan::hardware, &HardwareConfig::attention_cudnn_version)};
    f["hardware.attention_early_cudnn_version"] = {Kind::NonNegativeInt,
                                                    into(&Plan::hardware, &HardwareConfig::attention_early_cudnn_version)};
    f["hardware.attention_fp8_bwd_skips_window"] = {Kind::Bool,
                                                     into(&Plan::hardware, &HardwareConfig::attention_fp8_bwd_skips_window)};

    // The software profile: one row per field (software.profile is merged in before the walk, see
    // apply_software_layers).
    f["software.profile"] = {Kind::Path, into(&Plan::software, &SoftwareConfig::profile)};
    f["software.name"] = {Kind::Text, into(&Plan::software, &SoftwareConfig::name)};
    f["software.kernel_launch_s"] = {Kind::NonNegativeNumber, into(&Plan::software, &SoftwareConfig::kernel_launch_s)};
    f["software.host_launch_s"] = {Kind::NonNegativeNumber, into(&Plan::software, &SoftwareConfig::host_launch_s)};
    f["software.looped_launch_s"] = {Kind::NonNegativeNumber, into(&Plan::software, &SoftwareConfig::looped_launch_s)};
    f["software.moe_layer_host_s"] = {Kind::NonNegativeNumber, into(&Plan::software, &SoftwareConfig::moe_layer_host_s)};
    f["software.alltoall_dispatch_launches"] = {Kind::NonNegativeInt,
                                                 into(&Plan::software, &SoftwareConfig::alltoall_dispatch_launches)};
    f["software.gemm_efficiency"] = {Kind::PositiveNumber, into(&Plan::software, &SoftwareConfig::gemm_efficiency)};
    f["software.fp8_efficiency"] = {Kind::PositiveNumber, into(&Plan::software, &SoftwareConfig::fp8_efficiency)};
    f["software.mxfp8_efficiency"] = {Kind::PositiveNumber, into(&Plan::software, &SoftwareConfig::mxfp8_efficiency)};
    f["software.nvfp4_efficiency"] = {Kind::PositiveNumber, into(&Plan::software, &SoftwareConfig::nvfp4_efficiency)};
    f["software.cuda_graphs"] = choice<CudaGraphs>(kCudaGraphs, [](Plan& p, CudaGraphs v) { p.software.cuda_graphs = v; });
    f["software.cuda_graph_scope"] = {Kind::GraphScopeSet, [](Plan& p, const json& v) {
      uint8_t bits = 0;
      for (const json& name : v.is_string() ? json::array({v}) : v) bits |= *value_of(kGraphScopes, name.get<std::string>());
      p.software.cuda_graph_scope = bits;
    }};
    f["software.attention_kernel"] =
        choice<AttentionKernel>(kAttentionKernels, [](Plan& p, AttentionKernel v) { p.software.attention_kernel = v; });
    f["software.pipeline_split"] =
        choice<PipelineSplit>(kPipelineSplits, [](Plan& p, PipelineSplit v) { p.software.pipeline_split = v; });
    f["software.deepep_sms"] = {Kind::NonNegativeInt, into(&Plan::software, &SoftwareConfig::deepep_sms)};
    f["software.megatron_flops"] =
        choice<MegatronFlops>(kMegatronFlops, [](Plan& p, MegatronFlops v) { p.software.megatron_flops = v; });
    f["software.cudnn_version"] = {Kind::NonNegativeInt, into(&Plan::software, &SoftwareConfig::cudnn_version)};
    f["software.host_syncs_per_moe_layer"] = {Kind::NonNegativeInt,
                                              into(&Plan::software, &SoftwareConfig::host_syncs_per_moe_layer)};
    f["software.moe_wgrad_before_dispatch"] = {Kind::Bool, into(&Plan::software, &SoftwareConfig::moe_wgrad_before_dispatch)};
    f["software.grouped_gemm_per_expert"] = {Kind::Bool, into(&Plan::software, &SoftwareConfig::grouped_gemm_per_expert)};
    f["software.fp8_weight_cache"] = {Kind::Bool, into(&Plan::software, &SoftwareConfig::fp8_weight_cache)};
    f["software.fused.cross_entropy"] = {Kind::Bool, into(&Plan::software, &SoftwareConfig::fused_cross_entropy)};
    f["software.fused.norm_cast"] = {Kind::Bool, into(&Plan::software, &SoftwareConfig::fused_norm_cast)};
    f["software.fused.norm_block_cast"] = {Kind::Bool,
                                           [](Plan& p, const json& v) { p.software.fused_norm_block_cast = v.get<bool>(); }};
    f["software.fused.activation_cast"] = {Kind::Bool, into(&Plan::software, &SoftwareConfig::fused_activation_cast)};
    f["software.fused.elementwise"] = {Kind::Bool, into(&Plan::software, &SoftwareConfig::fused_elementwise)};
    f["software.fused.clamped_glu"] = {Kind::Bool, into(&Plan::software, &SoftwareConfig::fused_clamped_glu)};
    f["software.fused.expert_bias"] = {Kind::Bool, into(&Plan::software, &SoftwareConfig::fused_expert_bias)};
    f["software.fused.mla_down_proj"] = {Kind::Bool, into(&Plan::software, &SoftwareConfig::fused_mla_down_proj)};
    f["software.fused.mla_qkv"] = {Kind::Bool, into(&Plan::software, &SoftwareConfig::fused_mla_qkv)};
    f["software.fused.grouped_mlp"] = {Kind::Bool, into(&Plan::software, &SoftwareConfig::fused_grouped_mlp)};
    f["hardware.gemm_tile_m"] = {Kind::PositiveInt, into(&Plan::hardware, &HardwareConfig::gemm_tile_m)};
    f["hardware.gemm_tile_n"] = {Kind::PositiveInt, into(&Plan::hardware, &HardwareConfig::gemm_tile_n)};
    // hardware.profile is merged in before the walk (see apply_hardware_layers).
    f["hardware.profile"] = {Kind::Path, [](Plan&, const json&) {}};
    f["hardware.memory_GiB"] = {Kind::PositiveNumber, into(&Plan::hardware, &HardwareConfig::memory_GiB)};
    f["cluster.nodes"] = {Kind::PositiveInt, into(&Plan::cluster, &ClusterConfig::nodes)};
    f["cluster.gpus_per_node"] = {Kind::PositiveInt, into(&Plan::cluster, &ClusterConfig::gpus_per_node)};
    f["cluster.topology"] = choice<Topology>(kTopologies, [](Plan& p, Topology v) { p.cluster.topology = v; });
    f["cluster.oversubscription"] = {Kind::PositiveNumber, into(&Plan::cluster, &ClusterConfig::oversubscription)};
    f["cluster.rail_optimized"] = {Kind::Bool, into(&Plan::cluster, &ClusterConfig::rail_optimized)};
    f["cluster.leaf_nics"] = {Kind::PositiveInt, into(&Plan::cluster, &ClusterConfig::leaf_nics)};
    f["cluster.nvlink_domain"] = {Kind::PositiveInt, into(&Plan::cluster, &ClusterConfig::nvlink_domain)};

    f["scenario.routing"] = choice<Routing>(kRoutings, [](Plan& p, Routing v) { p.scenario.routing = v; });
    f["scenario.zipf_s"] = {Kind::NonNegativeNumber, into(&Plan::scenario, &ScenarioConfig::zipf_s)};
    f["scenario.dirichlet_alpha"] = {Kind::PositiveNumber, into(&Plan::scenario, &ScenarioConfig::dirichlet_alpha)};
    f["scenario.hot_experts"] = {Kind::PositiveInt, into(&Plan::scenario, &ScenarioConfig::hot_experts)};
    f["scenario.hot_share"] = {Kind::NonNegativeNumber, into(&Plan::scenario, &ScenarioConfig::hot_share)};
    f["scenario.load_file"] = {Kind::Path, into(&Plan::scenario, &ScenarioConfig::load_file)};
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

    f["sim.mode"] = choice<SimMode>(kSimModes, [](Plan& p, SimMode v) { p.sim.mode = v; });
    f["sim.fidelity"] = choice<SimFidelity>(kSimFidelities, [](Plan& p, SimFidelity v) { p.sim.fidelity = v; });
    f["sim.compute"] = choice<ComputeModel>(kComputeModels, [](Plan& p, ComputeModel v) { p.sim.compute = v; });

    f["workload.kind"] = choice<WorkloadKind>(kWorkloadKinds, [](Plan& p, WorkloadKind v) { p.workload.kind = v; });
    f["workload.f_s"] = {Kind::PositiveNumber, into(&Plan::workload, &WorkloadConfig::f_s)};
    f["workload.b_s"] = {Kind::PositiveNumber, into(&Plan::workload, &WorkloadConfig::b_s)};
    f["workload.w_s"] = {Kind::NonNegativeNumber, into(&Plan::workload, &WorkloadConfig::w_s)};
    f["workload.fb_s"] = {Kind::NonNegativeNumber, into(&Plan::workload, &WorkloadConfig::fb_s)};
    f["workload.send_bytes"] = {Kind::NonNegativeNumber, into(&Plan::workload, &WorkloadConfig::send_bytes)};
    apply_bounds(f);
    declare_needs(f);
    // A profile's defaults: each key's type and range, stored only where the config leaves the key
    // unset (apply_profile_defaults).
    for (const ProfileDefault& pd : profile_defaults()) {
      const std::string& key = pd.key;
      Field d = f.at(key);
      d.store = [](Plan&, const json&) {};
      d.need.reset();
      f["software.defaults." + key] = d;
    }
    return f;
  }();
  return fields;
}

// Keys every config must set (the rest have documented defaults in plan.hpp). The batch and its
// split are given one of two ways each (see resolve_batch).
const std::vector<std::string>& required_keys() {
  static const std::vector<std::string> keys = {
      "model.hidden_size",    "model.num_hidden_layers", "model.num_attention_heads", "model.vocab_size",
      "model.intermediate_size", "train.seq_len",        "parallel.pp",               "schedule",
      "hardware.fp8_tflops",  "hardware.bf16_tflops",    "hardware.ib_GBps",          "hardware.nvlink_GBps",
      "cluster.nodes",        "cluster.gpus_per_node"};
  return keys;
}

// Keys given one way or another: each pair's first is the alternative to its second. A --set of one
// replaces the file's other (apply_override), so `--set train.global_batch_tokens=...` works on any config.
constexpr std::pair<const char*, const char*> kAlternatives[] = {
    {"train.global_batch_tokens", "train.global_batch"}, {"parallel.micro_batch_size", "parallel.microbatches"}};

// Every accepted dotted key, for "did you mean".
const std::vector<std::string>& schema_keys() {
  static const std::vector<std::string> keys = [] {
    std::vector<std::string> k;
    for (const auto& [key, field] : schema()) k.push_back(key);
    return k;
  }();
  return keys;
}

std::string describe(const json& v) {
  if (v.is_string()) return "\"" + io::shortened(v.get_ref<const std::string&>(), 80) + "\"";
  // json::dump() writes NaN and infinities as "null".
  if (v.is_number_float() && !std::isfinite(v.get<double>()))
    return std::isnan(v.get<double>()) ? "nan" : v.get<double>() > 0 ? "inf" : "-inf";
  return io::shortened(io::json_text(v), 80);
}

std::string number_text(double x) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.15g", x);
  return buf;
}

// 268435456 as 268,435,456, for messages.
std::string grouped(int64_t n) {
  std::string digits = std::to_string(n), out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
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
  const bool is_int = field.kind == Kind::PositiveInt || field.kind == Kind::NonNegativeInt;
  const double max = field.max > 0 ? field.max : is_int ? kDefaultIntMax : kDefaultNumberMax;
  const std::string because = field.why.empty() ? "" : " (" + field.why + ")";
  switch (field.kind) {
    case Kind::PositiveInt:
    case Kind::NonNegativeInt: {
      // A whole number too large for int64 arrives as a float: it is out of range, not of the wrong type.
      if (v.is_number_float() && std::isfinite(v.get<double>()) && v.get<double>() == std::floor(v.get<double>()) &&
          std::abs(v.get<double>()) > max)
        fail("must be at most " + number_text(max) + because + ", got " + describe(v));
      if (!v.is_number_integer())
        fail("expected " + (field.form.empty() ? std::string("an integer") : field.form) + ", got " + describe(v));
      if (v.is_number_unsigned() && v.get<uint64_t>() > uint64_t(std::numeric_limits<int64_t>::max()))
        fail("must be at most " + number_text(max) + because + ", got " + describe(v));
      const auto x = v.get<int64_t>();
      if (field.kind == Kind::PositiveInt && x <= 0) fail("must be a positive integer, got " + describe(v));
      if (x < 0) fail("must not be negative, got " + describe(v));
      if (double(x) > max) fail("must be at most " + number_text(max) + because + ", got " + describe(v));
      return json(x);
    }
    case Kind::PositiveNumber:
    case Kind::NonNegativeNumber: {
      if (!v.is_number()) fail("expected a number, got " + describe(v));
      const auto x = v.get<double>();
      if (!std::isfinite(x)) fail("must be finite, got " + describe(v));
      if (field.kind == Kind::PositiveNumber && x <= 0) fail("must be greater than zero, got " + describe(v));
      if (x < 0) fail("must not be negative, got " + describe(v));
      if (x > max) fail("must be at most " + number_text(max) + because + ", got " + describe(v));
      if (x > 0 && x < field.min) fail("must be at least " + number_text(field.min) + because + ", got " + describe(v));
      return json(x);
    }
    case Kind::Text: {
      if (!v.is_string()) fail("expected a string, got " + describe(v));
      const auto& s = v.get_ref<const std::string&>();
      if (!io::is_utf8(s)) fail("is not UTF-8 text; write the name in UTF-8");
      // Control characters (an escape sequence, a bell) would reach the terminal through the report.
      const bool control = std::any_of(s.begin(), s.end(), [](char c) {
        return (static_cast<unsigned char>(c) < 0x20 && c != '\t') || c == 0x7f;
      });
      if (s.size() > 256 || control) fail("expected a one-line name of at most 256 bytes without control characters");
      return v;
    }
    case Kind::Path: {
      if (!v.is_string()) fail("expected a path (a string), got " + describe(v));
      const auto& s = v.get_ref<const std::string&>();
      if (s.empty() || s.size() > 4096 || s.find_first_of(std::string("\n\r\0", 3)) != std::string::npos)
        fail("expected a file path (one line, at most 4096 bytes), got " + describe(v));
      return v;
    }
    case Kind::Bool:
      if (!v.is_boolean()) fail("expected true or false, got " + describe(v));
      return v;
    case Kind::StragglerList: return check_straggler_list(where, key, v);
    case Kind::RecomputeSet: {
      const auto named = [](const std::string& name) {
        for (const auto& m : kRecomputeModules)
          if (name == m.name) return true;
        return false;
      };
      std::string shorthands, modules;
      for (const auto& n : kRecomputeShorthands) shorthands += (shorthands.empty() ? "" : ", ") + std::string(n.name);
      for (const auto& m : kRecomputeModules) modules += (modules.empty() ? "" : " ") + std::string(m.name);
      const std::string use = "; use " + shorthands + ", or a list of Megatron-LM's recompute modules (any of " + modules +
                              "), e.g. [layernorm, moe_act]";
      if (v.is_string()) {
        const std::string& s = v.get_ref<const std::string&>();
        for (const auto& n : kRecomputeShorthands)
          if (s == n.name) return v;
        if (named(s)) return json::array({v});  // one module, as a list of one
        return fail("unknown value " + describe(v) + use);
      }
      if (!v.is_array()) return fail("expected a name or a list of module names, got " + describe(v) + use);
      for (const json& m : v)
        if (!m.is_string() || !named(m.get<std::string>()))
          return fail("unknown module " + describe(m) + use);
      return v;
    }
    case Kind::GraphScopeSet: {
      std::string names;
      for (const auto& n : kGraphScopes) names += (names.empty() ? "" : ", ") + std::string(n.name);
      const std::string use = "; use a list of Megatron-LM's CUDA graph scopes (any of " + names +
                              "), e.g. [attn, moe_router], or [] for whole layers";
      const auto known = [](const json& m) { return m.is_string() && value_of(kGraphScopes, m.get<std::string>()); };
      if (v.is_string()) return known(v) ? v : fail("unknown scope " + describe(v) + use);
      if (!v.is_array()) return fail("expected a list of scope names, got " + describe(v) + use);
      for (const json& m : v)
        if (!known(m)) return fail("unknown scope " + describe(m) + use);
      return v;
    }
    case Kind::LayerCounts: {
      // One count per pipeline stage: at most 2^16 stages of at most 2^24 layers each. The empty
      // list gives none (the software profile's rule splits the layers), so `--set` can clear a
      // config's list.
      if (!v.is_array())
        fail("expected a list of layer counts, one per pipeline stage in layer order (e.g. [5, 6, 6, 5]), or [] for "
             "the software profile's split, got " + describe(v));
      if (v.size() > 65536) fail("lists " + std::to_string(v.size()) + " stages; at most 65536");
      for (const auto& x : v) {
        if (!x.is_number_integer() || (x.is_number_unsigned() && x.get<uint64_t>() > (uint64_t(1) << 24)) ||
            x.get<int64_t>() < 0 || x.get<int64_t>() > (int64_t(1) << 24))
          fail("expected whole numbers of layers between 0 and 16777216, got " + describe(x) + " in " + describe(v));
      }
      return v;
    }
    case Kind::LayerIndices: {
      // Layer numbers from 0, ascending, each once; that they name layers the model has is checked
      // with the plan (validate_plan).
      if (!v.is_array() || v.empty())
        fail("expected a list of layer numbers from 0, ascending (e.g. [0, 2, 4]), got " + describe(v));
      const std::string most = std::to_string(kMaxLayers);
      if (v.size() > size_t(kMaxLayers)) fail("lists " + std::to_string(v.size()) + " layers; a model has at most " + most);
      int64_t previous = -1;
      for (const auto& x : v) {
        if (!x.is_number_integer() || (x.is_number_unsigned() && x.get<uint64_t>() >= uint64_t(kMaxLayers)) ||
            x.get<int64_t>() < 0 || x.get<int64_t>() >= kMaxLayers)
          fail("expected layer numbers between 0 and " + std::to_string(kMaxLayers - 1) + ", got " + describe(x) + " in " +
               describe(v));
        if (x.get<int64_t>() <= previous)
          fail("layer " + describe(x) + " follows " + std::to_string(previous) + "; list each layer once, ascending");
        previous = x.get<int64_t>();
      }
      return v;
    }
    case Kind::Choice: {
      const std::string s = v.is_string() ? v.get<std::string>() : io::json_text(v);
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
      // One key spelled two ways in one map tree (`fused.cross_entropy:` inside `software:` and a
      // nested `fused: {cross_entropy:}`): neither may silently win.
      if (out.count(key))
        throw ConfigError(where + ": " + key + ": given twice (once with dots inside a section, once nested); keep one");
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
    const std::string hint = did_you_mean(key, schema_keys());
    throw ConfigError(where + ": " + key + ": unknown key;" +
                      (hint.empty() ? " check its spelling (see README, \"Configuration\")" : hint));
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

// A config tree with every key written with dots inside a section (`software: {fused.cross_entropy:
// true}`, or `parallel.pp: 8` at the top) spelled nested instead, so the layers that fill and
// override keys (--set, presets, profiles) see one spelling of each. Leaves (schema keys) keep their
// values as they are; a key given both ways is refused, naming `where`.
json nest_dotted(const json& node, const std::string& where, const std::string& prefix = "") {
  if (!node.is_object()) return node;
  json out = json::object();
  // Puts `v` at the dotted `path` under `into`; `at` is the dotted key of `into` (for messages).
  const std::function<void(json&, const std::string&, const std::string&, const json&)> put =
      [&](json& into, const std::string& at, const std::string& path, const json& v) {
        const size_t dot = path.find('.');
        const std::string head = dot == std::string::npos ? path : path.substr(0, dot);
        const std::string key = at.empty() ? head : at + "." + head;
        const auto twice = [&] {
          return ConfigError(where + ": " + key + ": given twice (once with dots inside a section, once nested); keep one");
        };
        if (dot == std::string::npos) {
          if (!into.contains(head)) {
            into[head] = v;
            return;
          }
          if (!into[head].is_object() || !v.is_object()) throw twice();
          for (const auto& [k, sub] : v.items()) put(into[head], key, k, sub);
          return;
        }
        json& next = into[head];
        if (next.is_null()) next = json::object();
        if (!next.is_object()) throw twice();
        put(next, key, path.substr(dot + 1), v);
      };
  for (const auto& [k, v] : node.items()) {
    const std::string full = prefix.empty() ? k : prefix + "." + k;
    const auto section = schema().lower_bound(full + ".");
    const bool is_section = section != schema().end() && section->first.rfind(full + ".", 0) == 0;
    // An unknown key stays as written, for flatten to name it (with its "did you mean").
    if (!schema().count(full) && !is_section) {
      if (out.contains(k)) throw ConfigError(where + ": " + full + ": given twice; keep one");
      out[k] = v;
      continue;
    }
    // A leaf's value (a schema key's: a list, a map of its own) is data, not keys to nest.
    put(out, prefix, k, schema().count(full) ? v : nest_dotted(v, where, full));
  }
  return out;
}

// Removes a dotted key from a (nested: nest_dotted) config tree, if it is there.
void erase_dotted(json& root, const std::string& key) {
  json* cur = &root;
  const auto parts = split_dots(key);
  for (size_t i = 0; i + 1 < parts.size(); ++i) {
    if (!cur->is_object() || !cur->contains(parts[i])) return;
    cur = &(*cur)[parts[i]];
  }
  if (cur->is_object()) cur->erase(parts.back());
}

// Applies one --set; adds the dotted keys it sets to `set_keys`. Returns whether it gives
// model.config_json (see apply_overrides).
bool apply_override(json& root, const std::string& text, std::map<std::string, std::string>* set_keys = nullptr) {
  const auto eq = text.find('=');
  if (eq == std::string::npos || eq == 0)
    throw ConfigError("--set " + text + ": expected key=value, for example --set parallel.pp=8");
  const std::string key = text.substr(0, eq);
  if (key.front() == '.' || key.back() == '.' || key.find("..") != std::string::npos)
    throw ConfigError("--set " + key + ": empty part in the dotted key; use a key like parallel.pp");
  const std::string value_text = text.substr(eq + 1);
  if (!io::is_utf8(key)) throw ConfigError("--set " + key + ": the key is not UTF-8 text; use a key like parallel.pp");
  json value;
  const auto field = schema().find(key);
  if (!io::is_utf8(value_text)) {
    // Not for the YAML parser, which misreads such bytes (a leading FF FE as a byte-order mark,
    // leaving an empty value). A file name is any bytes; any other key needs text.
    if (field != schema().end() && field->second.kind != Kind::Path)
      throw ConfigError("--set " + key + ": the value is not UTF-8 text; write it in UTF-8");
    value = value_text;
  } else {
    try {
      value = yaml_text_to_json(value_text);
    } catch (const ConfigError& e) {
      std::string why = e.what();
      if (why.rfind("--set: ", 0) == 0) why = why.substr(7);
      throw ConfigError("--set " + key + ": value " + io::shortened(value_text, 60) + " is not valid YAML (" + why + "); quote it or fix it");
    }
  }
  // A map given whole (--set software={fused.cross_entropy: true}) nests its dotted keys as a file's.
  if (value.is_object() && field == schema().end()) value = nest_dotted(value, "--set " + key, key);
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
  // A relative path typed on the command line means the working directory, as in a shell (a path
  // written in the config means the config's folder); made absolute here so nothing later moves it.
  // A software.profile without a folder or a .yaml ending names a shipped release, not a file.
  const auto release_name = [&] {
    const std::string v = value.is_string() ? value.get<std::string>() : "";
    return leaves.begin()->first == "software.profile" && v.find('/') == std::string::npos && !v.ends_with(".yaml") &&
           !v.ends_with(".yml");
  };
  if (leaves.size() == 1 && schema().at(leaves.begin()->first).kind == Kind::Path && value.is_string() && !release_name()) {
    const std::filesystem::path given = value.get<std::string>();
    std::error_code ec;
    if (given.is_relative()) {
      const std::filesystem::path full = std::filesystem::absolute(given, ec);
      if (ec) throw ConfigError("--set " + key + ": cannot make " + given.string() + " absolute (" + ec.message() +
                                "); give an absolute path");
      value = full.lexically_normal().string();
    }
  }
  // The batch and its split come one of two ways: a --set of one form replaces the file's other
  // (so `--set train.global_batch_tokens=...` works on a config that counts sequences); two --sets
  // giving both forms are refused.
  for (const auto& [a, b] : kAlternatives)
    for (const auto& [given, other] : {std::pair{a, b}, std::pair{b, a}}) {
      if (!leaves.count(given)) continue;
      if (set_keys && set_keys->count(other))
        throw ConfigError("--set " + io::shortened(text, 80) + ": " + std::string(given) + " and " + other +
                          " (--set " + io::shortened(set_keys->at(other), 80) +
                          ") give the same thing two ways; keep one of the two --set");
      erase_dotted(root, other);
    }
  if (set_keys)
    for (const auto& [k, v] : leaves) (*set_keys)[k] = text;
  merge_into(*cur, json{{parts.back(), value}});
  return leaves.count("model.config_json") > 0;
}

// Applies the --set overrides, in any order with the same result. A model swapped in on the
// command line (model.config_json) replaces the file's model keys, which would otherwise win over
// the new config.json and silently keep the old model; the model keys given with --set stay,
// before or after it. Each file key dropped that way is a note.
void apply_overrides(json& root, const std::vector<std::string>& overrides, const std::string& source,
                     std::map<std::string, std::string>& set_keys, std::vector<std::string>* notes = nullptr) {
  bool swapped = false;
  for (const auto& o : overrides) swapped = apply_override(root, o, &set_keys) || swapped;
  if (!swapped) return;
  json kept = json::object();
  std::vector<std::string> dropped;
  for (const auto& [k, v] : root["model"].items()) {
    if (set_keys.count("model." + k)) kept[k] = v;
    else dropped.push_back(k);
  }
  root["model"] = kept;
  if (notes != nullptr && !dropped.empty())
    notes->push_back("--set model.config_json replaces the model of " + source + ": its model." +
                     io::shortened(join(dropped, ", model."), 400) + " not used (give them with --set to keep them)");
}

// Checks a `section:` map of a preset or profile file key by key (nested maps flattened, e.g.
// software.fused.norm_cast); `refused` keys may not appear in such a file.
void check_section_keys(const std::filesystem::path& p, const std::string& section, const json& map,
                        const std::string& what, std::initializer_list<const char*> refused) {
  std::map<std::string, json> leaves;
  for (const auto& [k, v] : map.items()) {
    const std::string key = section + "." + k;
    for (const char* r : refused)
      if (key == r || key.rfind(std::string(r) + ".", 0) == 0)
        throw ConfigError(p.string() + ": " + key + ": not allowed in " + what);
    if (!schema().count(key) && !(v.is_object() && schema().lower_bound(key + ".") != schema().end() &&
                                  schema().lower_bound(key + ".")->first.rfind(key + ".", 0) == 0)) {
      const std::string hint = did_you_mean(key, schema_keys());
      throw ConfigError(p.string() + ": " + key + ": unknown in " + what + ";" +
                        (hint.empty() ? " check its spelling (see README)" : hint));
    }
  }
  flatten(p.string(), section, map, leaves);
  for (const auto& [k, v] : leaves) check_value(p.string(), k, schema().at(k), v);
}

// Reads a hardware file (a preset or a profile): a YAML map holding `hardware:` and, for a profile
// that `stepsim calibrate` wrote, a `software:` map of the launch costs it fitted (put in
// `software` when given), every key known and valid. `what` names it in messages.
json read_hardware_file(const std::filesystem::path& p, const std::string& what, const std::string& key_name,
                        json* software = nullptr) {
  const json file = nest_dotted(yaml_text_to_json(io::read_input_file(p.string(), key_name, io::kMiB), p.string()), p.string());
  if (!file.is_object() || !file.contains("hardware") || !file["hardware"].is_object())
    throw ConfigError(p.string() + ": expected a hardware: map (" + what + ")");
  for (const auto& [k, v] : file.items()) {
    if (k == "software" && software != nullptr) {
      if (!v.is_object()) throw ConfigError(p.string() + ": software: expected a map of software keys");
      check_section_keys(p, "software", v, what, {"software.profile", "software.defaults"});
      *software = v;
      continue;
    }
    if (k != "hardware")
      throw ConfigError(p.string() + ": " + k + ": " + what + " holds only a hardware: map" +
                        (software != nullptr ? " (and a software: map)" : ""));
  }
  check_section_keys(p, "hardware", file["hardware"], what, {"hardware.profile", "hardware.preset"});
  return file["hardware"];
}

// Fills the keys of `layer` that `map` (the config's `section`) leaves unset; a key `map` already
// sets (from --set, the config or a higher layer) keeps its value, and a differing one is noted so
// the override is never silent. Nested maps (software.fused) fill key by key.
void fill_unset(json& map, const json& layer, const std::string& layer_name, std::vector<std::string>& notes,
                const std::string& section = "hardware") {
  for (const auto& [k, v] : layer.items()) {
    if (!map.contains(k)) {
      map[k] = v;
    } else if (map[k].is_object() && v.is_object()) {
      fill_unset(map[k], v, layer_name, notes, section + "." + k);
    } else if (map[k] != v) {
      notes.push_back(section + "." + k + " = " + describe(map[k]) + " overrides " + layer_name + "'s " + describe(v));
    }
  }
}

// A preset given with --set switches the GPU (a profile the release): its keys replace what the
// config file (or its profile) says of them, each replacement a note; only the other --set keys win
// over it. Without this a config with rates of its own (llama-3.1-405b.yaml) took the new GPU's
// peaks and kept the old GPU's rates: MFU moved, the step did not.
void switch_to_preset(json& map, const json& preset, const std::string& name, const std::string& source,
                      const std::map<std::string, std::string>& set_keys, std::vector<std::string>& notes,
                      const std::string& section = "hardware", const std::string& chooser = "hardware.preset") {
  for (const auto& [k, v] : preset.items()) {
    const std::string key = section + "." + k;
    if (v.is_object()) {
      if (!map.contains(k) || !map[k].is_object()) map[k] = json::object();
      switch_to_preset(map[k], v, name, source, set_keys, notes, key, chooser);
      continue;
    }
    if (set_keys.count(key)) {
      if (map[k] != v)
        notes.push_back(key + " = " + describe(map[k]) + " (--set) overrides " + chooser + " " + name + "'s " +
                        describe(v));
      continue;
    }
    if (map.contains(k) && map[k] != v)
      notes.push_back(key + " = " + describe(v) + " from " + chooser + " " + name + " (--set) replaces " + source +
                      "'s " + describe(map[k]));
    map[k] = v;
  }
}

// A relative path in the config is found next to it, then in the current directory.
std::filesystem::path config_relative(const std::string& given, const std::filesystem::path& base_dir) {
  std::filesystem::path p = given;
  if (p.is_relative() && std::filesystem::exists(base_dir / p)) p = base_dir / p;
  return p;
}

// Hardware keys come in layers, the first that sets a key wins: --set, the config's own keys,
// `hardware.profile: PATH` (a calibrated profile; relative paths next to the config, then the
// current directory), `hardware.preset: NAME` (workloads/hardware/NAME.yaml: a GPU's datasheet
// and achievable rates). --set was merged into `root` already, so it beats the file's keys. A
// preset given with --set ranks above the file and the profile (switch_to_preset). A calibrated
// profile's `software:` map fills the software keys the config leaves unset.
void apply_hardware_layers(json& root, const std::string& source, const std::filesystem::path& base_dir,
                           const std::map<std::string, std::string>& set_keys, std::vector<std::string>& notes) {
  if (!root.contains("hardware") || !root["hardware"].is_object()) return;
  json& hw = root["hardware"];
  if (hw.contains("profile")) {
    if (!hw["profile"].is_string())
      throw ConfigError(source + ": hardware.profile: expected a path to a YAML file with a hardware: map");
    const std::filesystem::path p = config_relative(hw["profile"].get<std::string>(), base_dir);
    std::error_code ec;
    if (!std::filesystem::exists(p, ec))
      throw ConfigError(source + ": hardware.profile: cannot read " + p.string() +
                        " (relative paths are tried next to the config, then in the current directory)");
    json software;
    fill_unset(hw, read_hardware_file(p, "a hardware profile", "hardware.profile", &software), "hardware.profile " + p.string(), notes);
    if (software.is_object()) {
      if (!root.contains("software") || !root["software"].is_object()) root["software"] = json::object();
      fill_unset(root["software"], software, "hardware.profile " + p.string(), notes, "software");
    }
  }
  if (hw.contains("preset")) {
    const json name = check_value(source, "hardware.preset", schema().at("hardware.preset"), hw["preset"]);
    const std::filesystem::path p =
        std::filesystem::path(STEPSIM_SOURCE_DIR) / "workloads" / "hardware" / (name.get<std::string>() + ".yaml");
    std::error_code ec;
    if (!std::filesystem::exists(p, ec))
      throw ConfigError(source + ": hardware.preset: the preset file " + p.string() +
                        " is missing; reinstall the workloads/hardware folder");
    json preset = read_hardware_file(p, "a hardware preset", "hardware.preset");
    // A config, --set or calibrated profile that gives the BF16 attention curve itself states the
    // rate its software runs at: the preset's release label and its earlier release's curve
    // (attention_cudnn_version, attention_early_*) would override or mislabel it, so neither is taken.
    const bool switching = set_keys.count("hardware.preset") > 0;
    bool own_curve = false;
    for (const char* k : {"attention_fwd_tflops", "attention_bwd_tflops", "attention_seq_half"})
      own_curve = own_curve || (switching ? set_keys.count(std::string("hardware.") + k) > 0 : hw.contains(k));
    if (own_curve && preset.is_object())
      for (auto it = preset.begin(); it != preset.end();)
        it = it.key() == "attention_cudnn_version" || it.key().starts_with("attention_early_") ? preset.erase(it) : std::next(it);
    if (switching) switch_to_preset(hw, preset, name.get<std::string>(), source, set_keys, notes);
    else fill_unset(hw, preset, "hardware.preset " + name.get<std::string>(), notes);
  }
}

// Reads a software profile: a YAML map holding only `software:` (no software.profile in it).
json read_software_file(const std::filesystem::path& p) {
  const json file =
      nest_dotted(yaml_text_to_json(io::read_input_file(p.string(), "software.profile", io::kMiB), p.string()), p.string());
  if (!file.is_object() || !file.contains("software") || !file["software"].is_object())
    throw ConfigError(p.string() + ": expected a software: map (a software profile)");
  for (const auto& [k, v] : file.items())
    if (k != "software") throw ConfigError(p.string() + ": " + k + ": a software profile holds only a software: map");
  check_section_keys(p, "software", file["software"], "a software profile", {"software.profile"});
  return file["software"];
}

// Software keys come in layers as hardware keys do: --set, the config's own `software:` keys, a
// calibrated hardware.profile's `software:` map (apply_hardware_layers), then `software.profile`:
// a shipped release (workloads/software/NAME.yaml) or a file. Without one the plan runs the first
// shipped profile, the release the per-op model's launch cost was fitted on. A profile given with
// --set switches the release (its keys replace the file's). `software.defaults` belongs to profiles.
void apply_software_layers(json& root, const std::string& source, const std::filesystem::path& base_dir,
                           const std::map<std::string, std::string>& set_keys, std::vector<std::string>& notes) {
  if (root.contains("software") && !root["software"].is_object())
    throw ConfigError(source + ": software: expected a section (a map of keys), got " + describe(root["software"]));
  for (const auto& [key, text] : set_keys)
    if (key.rfind("software.defaults.", 0) == 0)
      throw ConfigError("--set " + io::shortened(text, 80) + ": " + key + ": a software profile's default; set " +
                        key.substr(18) + " itself");
  json& sw = root["software"];
  if (sw.is_null()) sw = json::object();
  if (sw.contains("defaults"))
    throw ConfigError(source + ": software.defaults: a software profile's own section; set its keys themselves (e.g. "
                      "parallel.tp_comm_overlap) in the config");
  if (!sw.contains("profile")) sw["profile"] = software_profiles().front();
  const json given = check_value(source, "software.profile", schema().at("software.profile"), sw["profile"]);
  const std::string name = given.get<std::string>();
  const auto& shipped = software_profiles();
  std::filesystem::path p;
  if (std::find(shipped.begin(), shipped.end(), name) != shipped.end()) {
    p = std::filesystem::path(STEPSIM_SOURCE_DIR) / "workloads" / "software" / (name + ".yaml");
    std::error_code ec;
    if (!std::filesystem::exists(p, ec))
      throw ConfigError(source + ": software.profile: the profile file " + p.string() +
                        " is missing; reinstall the workloads/software folder");
  } else if (name.find('/') != std::string::npos || name.ends_with(".yaml") || name.ends_with(".yml")) {
    p = config_relative(name, base_dir);
    std::error_code ec;
    if (!std::filesystem::exists(p, ec))
      throw ConfigError(source + ": software.profile: cannot read " + p.string() +
                        " (relative paths are tried next to the config, then in the current directory)");
  } else {
    size_t best = std::string::npos;
    std::string nearest;
    for (const auto& n : shipped) {
      const std::string hint = did_you_mean("software." + name, {"software." + n});
      if (!hint.empty()) nearest = n, best = 0;
    }
    throw ConfigError(source + ": software.profile: unknown release \"" + io::shortened(name, 80) + "\"; " +
                      (best == 0 ? "did you mean " + nearest + "? " : "") + "use one of: " + join(shipped, ", ") +
                      ", or a path to a YAML file with a software: map");
  }
  const json profile = read_software_file(p);
  if (set_keys.count("software.profile")) switch_to_preset(sw, profile, name, source, set_keys, notes, "software", "software.profile");
  else fill_unset(sw, profile, "software.profile " + name, notes, "software");
}

// A release's defaults (software.defaults.KEY) for the keys the config and --set leave unset, where
// the plan reads the key at all (its Need holds). overlap_param_gather stays on when a config turns
// overlap_grad_reduce off: Megatron-Core's DDP takes either alone, as the releases' recipes do.
void apply_profile_defaults(Plan& plan, const std::map<std::string, json>& leaves) {
  for (const auto& [key, reaches] : profile_defaults()) {
    const auto d = leaves.find("software.defaults." + key);
    if (d == leaves.end() || leaves.count(key)) continue;
    const Field& field = schema().at(key);
    if (field.need && field.need->holds && !field.need->holds(plan)) continue;
    if (reaches && !reaches(plan)) continue;
    field.store(plan, d->second);
  }
}

// Whether the config file alone (no --set) builds a valid plan; asked only when a --set left one of
// the file's keys unread (check_needs), so the file is built at most once, and only then.
using FileAloneBuilds = std::function<bool()>;

// `brought`, when given, receives the settings a --set of the schedule brought (bring_schedule_settings).
Plan build_checked_plan(json root, const std::string& source, const std::filesystem::path& base_dir,
                        const std::map<std::string, std::string>& set_keys, const FileAloneBuilds& file_alone_builds,
                        std::map<std::string, json>* brought_values = nullptr);

FileAloneBuilds file_alone_check(const json& file_root, const std::string& source, const std::filesystem::path& base_dir) {
  auto builds = std::make_shared<std::optional<bool>>();
  return [=]() {
    if (!*builds) {
      try {
        build_checked_plan(file_root, source, base_dir, {}, {});
        *builds = true;
      } catch (const std::exception&) {
        *builds = false;
      }
    }
    return **builds;
  };
}

// The --set that broke a plan whose error names another key (`--set schedule=interleaved` and the
// file's `parallel.virtual_stages: 1`): the last override after which the plan, built from the file
// and the overrides before it, was still valid. Null when no such prefix builds (the file's fault).
const std::string* breaking_override(const json& file_root, const std::string& source,
                                     const std::filesystem::path& base_dir, const std::vector<std::string>& overrides) {
  for (size_t k = overrides.size(); k-- > 0;) {
    json root = file_root;
    try {
      std::map<std::string, std::string> set_keys;
      apply_overrides(root, std::vector<std::string>(overrides.begin(), overrides.begin() + std::ptrdiff_t(k)), source,
                      set_keys);
      build_checked_plan(std::move(root), source, base_dir, set_keys, file_alone_check(file_root, source, base_dir));
      return &overrides[k];
    } catch (const std::exception&) {  // this prefix is broken too: try a shorter one
    }
  }
  return nullptr;
}

// A --set of train.seq_len with the batch counted in sequences keeps the sequences, as Megatron-LM's
// --global-batch-size and torchtitan's local_batch_size do, so the tokens per step change with it
// (seq_len 131072 on 2048 sequences is a 268M-token step): say so, with the way to keep the tokens.
void note_tokens_per_step(Plan& plan, const json& file_root, const std::map<std::string, std::string>& set_keys) {
  const auto it = set_keys.find("train.seq_len");
  if (it == set_keys.end() || plan.train.global_batch_tokens > 0) return;
  const json* file_seq = nullptr;
  if (file_root.is_object() && file_root.contains("train") && file_root["train"].is_object() &&
      file_root["train"].contains("seq_len") && file_root["train"]["seq_len"].is_number_integer())
    file_seq = &file_root["train"]["seq_len"];
  if (file_seq && file_seq->get<int64_t>() == plan.train.seq_len) return;
  const int64_t tokens = plan.train.tokens_per_step();
  std::string was;
  if (file_seq && file_seq->get<int64_t>() > 0 && file_seq->get<int64_t>() <= (int64_t(1) << 24))
    was = " (" + grouped(plan.train.global_batch * file_seq->get<int64_t>()) + " at the file's seq_len " +
          grouped(file_seq->get<int64_t>()) + ")";
  plan.notes.push_back("--set " + io::shortened(it->second, 80) + " keeps train.global_batch at " +
                       grouped(plan.train.global_batch) + " sequences: " + grouped(tokens) + " tokens per step" + was +
                       "; to hold the tokens per step instead, give train.global_batch_tokens");
}

Plan build_plan(json root, const std::string& source, const std::filesystem::path& base_dir,
                const std::vector<std::string>& overrides) {
  if (!root.is_object())
    throw ConfigError(source + ": expected a map of sections (model, train, parallel, hardware, cluster)");
  root = nest_dotted(root, source);
  const json file_root = overrides.empty() ? json() : root;
  std::map<std::string, std::string> set_keys;  // key -> the --set that gave it
  std::vector<std::string> notes;
  apply_overrides(root, overrides, source, set_keys, &notes);
  try {
    Plan plan = build_checked_plan(std::move(root), source, base_dir, set_keys,
                                   file_alone_check(file_root, source, base_dir));
    plan.notes.insert(plan.notes.begin(), notes.begin(), notes.end());
    plan.overrides = overrides;
    for (const auto& o : overrides)  // in the order given
      for (const auto& [k, text] : set_keys)
        if (text == o) plan.set_by.emplace_back(k, text);
    note_tokens_per_step(plan, file_root, set_keys);
    return plan;
  } catch (const ConfigError& e) {
    // A plan-level error about a key given with --set, or one that a --set caused, names that
    // --set, not the file.
    const std::string msg = e.what(), prefix = source + ": ";
    if (msg.rfind(prefix, 0) != 0 || overrides.empty()) throw;
    const std::string rest = msg.substr(prefix.size());
    const auto colon = rest.find(": ");
    std::string key = colon == std::string::npos ? std::string() : rest.substr(0, colon);
    if (const auto bracket = key.find('['); bracket != std::string::npos) key = key.substr(0, bracket);
    const auto it = set_keys.find(key);
    const std::string* culprit =
        it != set_keys.end() ? &it->second : breaking_override(file_root, source, base_dir, overrides);
    if (culprit == nullptr) throw;
    throw ConfigError("--set " + io::shortened(*culprit, 80) + " (with " + source + "): " + rest);
  }
}

// The keys that are set (in the file, a profile or --set) must be read: a key whose Need the plan
// does not meet is an error (unless it holds its inert value), never silently ignored.
void check_needs(const std::string& source, const std::map<std::string, json>& leaves, Plan& plan,
                 const std::map<std::string, std::string>& set_keys, const FileAloneBuilds& file_alone_builds) {
  for (const auto& [key, value] : leaves) {
    const Field& field = schema().at(key);
    if (!field.need) continue;
    const Need& n = *field.need;
    if (n.inert && value == *n.inert) continue;
    std::string what, now, fix;
    if (!n.choice_key.empty()) {
      const auto it = leaves.find(n.choice_key);
      const std::string current = it != leaves.end() && it->second.is_string() ? it->second.get<std::string>()
                                  : it != leaves.end()                         ? io::json_text(it->second)
                                                                               : schema().at(n.choice_key).choices.front();
      if (std::find(n.values.begin(), n.values.end(), current) != n.values.end()) continue;
      what = n.choice_key + " " + join(n.values, " or ");
      now = n.choice_key + " is " + current;
      fix = "set " + n.choice_key + "=" + n.values.front();
    } else {
      if (n.holds(plan)) continue;
      what = n.what;
      now = n.now(plan);
      fix = n.fix;
    }
    if (!n.accepted.empty()) {
      const auto by = set_keys.find(key);
      plan.notes.push_back(key + " = " + describe(value) + " (" +
                           (by != set_keys.end() ? "--set " + io::shortened(by->second, 80) : source) + ") is " +
                           n.accepted + ": it is read only with " + what + ", and here " + now);
      continue;
    }
    // A key of the file that a --set left unread (the file's split_lone_chunks after --set
    // schedule=fsdp): the file is right on its own, the --set asks for another plan, so a note.
    if (!set_keys.count(key) && !set_keys.empty() && file_alone_builds && file_alone_builds()) {
      std::vector<std::string> given;
      for (const auto& [k, text] : set_keys)
        if (std::find(given.begin(), given.end(), "--set " + text) == given.end()) given.push_back("--set " + text);
      plan.notes.push_back(key + " = " + describe(value) + " (" + source + ") is not used with " +
                           io::shortened(join(given, " "), 160) + ": it is read only with " + what + ", and here " + now);
      continue;
    }
    const std::string unset = n.inert ? "set " + key + "=" + (n.inert->is_string() ? n.inert->get<std::string>()
                                                                                    : io::json_text(*n.inert))
                                      : "remove " + key;
    throw ConfigError(source + ": " + key + ": only read with " + what + " (here " + now + "); " +
                      (fix.empty() ? unset : fix + ", or " + unset));
  }
}

// The batch in sequences and its split into microbatches, from whichever form the config gives:
// train.global_batch or train.global_batch_tokens (one of them), parallel.microbatches or
// parallel.micro_batch_size (one, or both when they agree). Errors name the key a user gave.
void resolve_batch(Plan& plan, const std::map<std::string, json>& leaves, const std::string& source) {
  const auto fail = [&](const std::string& key, const std::string& what) {
    throw ConfigError(source + ": " + key + ": " + what);
  };
  const bool sequences = leaves.count("train.global_batch"), tokens = leaves.count("train.global_batch_tokens");
  if (sequences && tokens)
    fail("train.global_batch_tokens", "the batch is given twice; keep train.global_batch (sequences per step) or "
                                      "train.global_batch_tokens (tokens per step), not both");
  if (!sequences && !tokens)
    fail("train.global_batch", "missing; add it (sequences per step) or train.global_batch_tokens (tokens per step)");
  if (tokens) {
    const int64_t t = plan.train.global_batch_tokens, s = plan.train.seq_len, below = t / s * s;
    if (t % s != 0)
      fail("train.global_batch_tokens",
           grouped(t) + " tokens is not a whole number of " + grouped(s) + "-token sequences (train.seq_len); use " +
               (below > 0 ? grouped(below) + " (" + grouped(below / s) + " sequences) or " : "") + grouped(below + s) +
               " (" + grouped(below / s + 1) + ")");
    if (t / s > (int64_t(1) << 24))
      fail("train.global_batch_tokens", grouped(t / s) + " sequences of " + grouped(s) +
                                            " tokens exceed the 16,777,216 sequences a step may hold; lower it");
    plan.train.global_batch = t / s;
  }
  const bool count = leaves.count("parallel.microbatches"), size = leaves.count("parallel.micro_batch_size");
  if (!count && !size)
    fail("parallel.microbatches", "missing; add it (microbatches per pipeline replica) or parallel.micro_batch_size "
                                  "(sequences per microbatch)");
  if (!size) return;
  // Sequences per data-parallel replica; a plan whose replicas do not tile the GPUs is left to
  // validate_plan, which names the key at fault.
  const ParallelConfig& par = plan.parallel;
  const int64_t gpus = plan.gpus();
  if (gpus <= 0 || gpus % par.pp != 0 || plan.stage_gpus() % (par.tp * par.cp) != 0) return;
  const int64_t dp = plan.dp(), batch = plan.train.global_batch, mbs = par.micro_batch_size;
  if (batch % dp != 0) {
    if (batch < dp) return;  // validate_plan: some replicas idle
    fail("parallel.micro_batch_size", grouped(batch) + " sequences do not split evenly over the " + grouped(dp) +
                                          " data-parallel replicas, so no microbatch size fits them all; use a "
                                          "multiple of " + grouped(dp) + " sequences or give parallel.microbatches");
  }
  const int64_t per_replica = batch / dp;
  if (per_replica % mbs != 0) {
    int64_t divisor = std::min(mbs, per_replica);
    while (per_replica % divisor != 0) --divisor;
    fail("parallel.micro_batch_size", grouped(mbs) + " sequences per microbatch do not divide the " +
                                          grouped(per_replica) + " sequences of each of the " + grouped(dp) +
                                          " data-parallel replicas; use a divisor such as " + grouped(divisor));
  }
  const int64_t derived = per_replica / mbs;
  if (count && derived != par.microbatches)
    fail("parallel.microbatches", grouped(par.microbatches) + " disagrees with parallel.micro_batch_size " +
                                      grouped(mbs) + " (" + grouped(per_replica) + " sequences per replica / " +
                                      grouped(mbs) + " = " + grouped(derived) + " microbatches); give one of the two");
  if (derived > 65534)
    fail("parallel.micro_batch_size", grouped(mbs) + " gives " + grouped(derived) +
                                          " microbatches per replica, over the 65,534 the replay's 16-bit microbatch "
                                          "tags hold; raise it");
  plan.parallel.microbatches = derived;
}

// A --set that switches the schedule brings the settings the new schedule fixes (FSDP: no
// pipeline and ZeRO-3; another schedule after FSDP: ZeRO-1), each a note, in place of what the
// config file says: the file's values were chosen for its own schedule. A setting also given with
// --set is kept, and validate_plan refuses it with the schedule's message. Returns the file's
// pipeline ranks when the switch changed them (see keep_microbatch_size); `brought` gets the keys.
std::optional<int64_t> bring_schedule_settings(Plan& plan, std::map<std::string, json>& leaves,
                                               std::set<std::string>& brought, const std::string& source,
                                               const std::map<std::string, std::string>& set_keys) {
  const auto switch_set = set_keys.find("schedule");
  if (switch_set == set_keys.end()) return std::nullopt;
  std::optional<int64_t> file_pp;
  // A brought setting could call for another; each round fixes at least one key, so this ends.
  for (size_t round = 0; round <= schema().size(); ++round) {
    bool changed = false;
    for (const sched::NeededSetting& n : sched::make_unchecked_schedule(plan)->settings_needed(plan)) {
      if (set_keys.count(n.key)) continue;
      const Field& field = schema().at(n.key);
      const json value = check_value(source, n.key, field, yaml_text_to_json(n.value));
      const auto was = leaves.find(n.key);
      const std::string instead = was != leaves.end() ? source + "'s " + describe(was->second) : "the default";
      if (n.key == "parallel.pp" && !file_pp) file_pp = plan.parallel.pp;
      field.store(plan, value);
      leaves[n.key] = value;
      brought.insert(n.key);
      plan.notes.push_back(n.key + " = " + n.value + ", as schedule " + std::string(plan.parallel.schedule.name()) +
                           " (--set " + io::shortened(switch_set->second, 80) + ") needs, in place of " + instead);
      changed = true;
    }
    if (!changed) break;
  }
  return file_pp;
}

// After a schedule switch changed the pipeline ranks (FSDP: 8 -> 1), the data-parallel replicas
// change with them and the file's microbatch count no longer fits their sequences (60 microbatches
// of one sequence on 256 replicas; 7.5 sequences on each of 2,048). What the file chose is its
// microbatch size, which sets the activations a GPU holds: that is kept, as Megatron-LM keeps
// --micro-batch-size and derives the count. A count or size given with --set wins.
void keep_microbatch_size(Plan& plan, int64_t file_pp, const std::map<std::string, json>& leaves,
                          const std::set<std::string>& brought, const std::string& source,
                          const std::map<std::string, std::string>& set_keys) {
  if (set_keys.count("parallel.microbatches") || set_keys.count("parallel.micro_batch_size") ||
      leaves.count("parallel.micro_batch_size") || !leaves.count("parallel.microbatches") || file_pp == plan.parallel.pp ||
      brought.count("parallel.microbatches"))  // the schedule's own count (capture: 2)
    return;
  const ParallelConfig& par = plan.parallel;
  const int64_t file_stage_gpus = plan.gpus() / file_pp, replica_gpus = par.tp * par.cp;
  if (plan.gpus() % file_pp != 0 || replica_gpus <= 0 || file_stage_gpus % replica_gpus != 0 || par.microbatches <= 0)
    return;  // the file's own plan is broken; validate_plan names it
  const double file_sequences = double(plan.train.global_batch) / double(file_stage_gpus / replica_gpus);
  const double sequences_per_microbatch = file_sequences / double(par.microbatches);
  if (plan.dp() <= 0 || plan.stage_gpus() % replica_gpus != 0) return;
  const double sequences = plan.sequences_per_replica();
  if (sequences_per_microbatch < 1 || !(sequences > 0)) return;
  const int64_t count = std::max<int64_t>(1, int64_t(std::ceil(sequences / sequences_per_microbatch - 1e-9)));
  if (count == par.microbatches) return;
  const auto amount = [](double x) { return number_text(std::round(x * 1000) / 1000); };
  plan.notes.push_back("parallel.microbatches = " + std::to_string(count) + " in place of " + source + "'s " +
                       std::to_string(par.microbatches) + ": with parallel.pp " + std::to_string(par.pp) + " each of the " +
                       grouped(plan.dp()) + " data-parallel replicas runs " + amount(sequences) +
                       " sequences, in microbatches of the file's " + amount(sequences_per_microbatch) +
                       (sequences_per_microbatch == 1 ? " sequence" : " sequences") +
                       " (give parallel.microbatches with --set to choose)");
  plan.parallel.microbatches = count;
}

// Megatron-LM's recompute modules against the model. One Megatron-LM refuses where the model lacks
// its part (mla_up_proj without MLA, moe_act without routed experts; shared_experts with the
// shared experts' overlap) is an error; one it takes as a no-op (mlp without dense layers, moe or
// shared_experts without them) is a note. The deepseek shorthand is DeepSeek's policy, applied as
// far as the model has its parts.
void check_recompute_modules(const std::string& source, Plan& plan) {
  const Recompute r = plan.parallel.recompute;
  if (r.full() || r == Recompute::DeepSeek || plan.workload.kind != WorkloadKind::Model) return;
  const ModelConfig& m = plan.model;
  const auto fail = [&](const std::string& what) { throw ConfigError(source + ": parallel.recompute: " + what); };
  if (r.has(Recompute::MlaUpProj) && !m.is_mla())
    fail("mla_up_proj recomputes MLA's up-projections and the model has no MLA (kv_lora_rank 0), which Megatron-LM "
         "refuses too; remove mla_up_proj");
  if (r.has(Recompute::MoeAct) && !m.is_moe())
    fail("moe_act recomputes the routed experts' activation and the model has no routed experts; remove moe_act "
         "(mlp recomputes a dense MLP)");
  const bool shared = m.is_moe() && (m.n_shared_experts > 0 || m.shared_expert_intermediate_size > 0);
  if (r.has(Recompute::SharedExperts) && shared && plan.parallel.overlap_shared_expert)
    fail("shared_experts cannot be recomputed while parallel.overlap_shared_expert runs them beside the dispatch "
         "(Megatron-LM refuses it with --moe-shared-expert-overlap); remove one of the two");
  const auto no_op = [&](const char* module, const std::string& why) {
    plan.notes.push_back("parallel.recompute: " + std::string(module) + " recomputes nothing here (" + why +
                         "), a no-op as in Megatron-LM");
  };
  if (r.has(Recompute::Mlp) && m.dense_layers() == 0) no_op("mlp", "the model has no dense MLP layers");
  if (r.has(Recompute::Moe) && !m.is_moe()) no_op("moe", "the model has no MoE layers");
  if (r.has(Recompute::SharedExperts) && !shared)
    no_op("shared_experts", m.is_moe() ? "the model has no shared experts" : "the model has no MoE layers");
}

// Megatron-LM's overlap options where they cannot apply (Megatron's own argument checks, or a
// plan stepsim models another way): one line each instead of a silently ignored key.
void check_overlap_keys(const std::string& source, const std::map<std::string, json>& leaves, const Plan& plan) {
  const auto fail = [&](const std::string& key, const std::string& what) {
    throw ConfigError(source + ": " + key + ": " + what);
  };
  const ParallelConfig& par = plan.parallel;
  // ZeRO-3 (schedule fsdp) always overlaps: each layer's parameters gathered a layer ahead, its
  // gradients reduce-scattered right after its backward. `true` asks for that (a no-op, as
  // docs/configuration.md says); an explicit `false` asks for an FSDP stepsim does not model.
  if (par.zero == 3)
    for (const auto& [key, on] : {std::pair{"parallel.overlap_grad_reduce", par.overlap_grad_reduce},
                                  std::pair{"parallel.overlap_param_gather", par.overlap_param_gather}})
      if (leaves.count(key) && !on)
        fail(key, "ZeRO-3 (schedule fsdp) always overlaps its per-layer gathers and reduce-scatters with the "
                  "neighbouring layers' compute; an FSDP without that is not modelled: remove the key or set it true");
  // parallel.ddp_bucket_size without overlap_grad_reduce: one bucket, as Megatron-LM ignores
  // --ddp-bucket-size then (docs/configuration.md says so): one --set switches the overlap off.
}

Plan build_checked_plan(json root, const std::string& source, const std::filesystem::path& base_dir,
                        const std::map<std::string, std::string>& set_keys, const FileAloneBuilds& file_alone_builds,
                        std::map<std::string, json>* brought_values) {
  Plan plan;
  plan.source = source;
  // A HF config.json supplies the model; keys written in the YAML model section win over it.
  if (root.contains("model") && root["model"].is_object() && root["model"].contains("config_json")) {
    const json& ref = root["model"]["config_json"];
    if (!ref.is_string())
      throw ConfigError(source + ": model.config_json: expected a path to a Hugging Face config.json");
    std::filesystem::path p = ref.get<std::string>();
    if (p.is_relative()) p = base_dir / p;
    std::map<std::string, std::string> spelled;
    json merged = read_hf_model_keys(p.string(), model_int_keys(), &spelled);
    // Check the config.json's own values here, so a bad one names that file and the key as the file
    // spells it (YAML keys win).
    for (const auto& [k, v] : merged.items())
      if (!root["model"].contains(k))
        check_value(p.string(), spelled.count(k) ? spelled[k] : k, schema().at("model." + k), v);
    for (const auto& [k, v] : root["model"].items())
      if (k != "config_json") merged[k] = v;
    root["model"] = merged;
  }

  apply_hardware_layers(root, source, base_dir, set_keys, plan.notes);
  apply_software_layers(root, source, base_dir, set_keys, plan.notes);
  std::map<std::string, json> leaves;
  flatten(source, "", root, leaves);
  for (const auto& key : required_keys())
    if (!leaves.count(key)) throw ConfigError(source + ": " + key + ": missing; add it to the config");
  for (const auto& [key, value] : leaves) {
    const Field& field = schema().at(key);
    field.store(plan, check_value(source, key, field, value));
  }
  std::set<std::string> brought;
  const std::optional<int64_t> file_pp = bring_schedule_settings(plan, leaves, brought, source, set_keys);
  if (brought_values != nullptr)
    for (const auto& key : brought) (*brought_values)[key] = leaves.at(key);
  resolve_batch(plan, leaves, source);
  if (file_pp) keep_microbatch_size(plan, *file_pp, leaves, brought, source, set_keys);
  check_overlap_keys(source, leaves, plan);
  apply_profile_defaults(plan, leaves);
  // DeepSeek (MLA) models train in FP8 as DeepSeek-V3 did; others in BF16. FP8 stashes follow.
  if (!leaves.count("train.precision")) plan.train.precision = plan.model.is_mla() ? Precision::FP8 : Precision::BF16;
  if (!leaves.count("parallel.fp8_stash")) plan.parallel.fp8_stash = plan.train.precision == Precision::FP8;
  // A window given without its layers applies to every layer (Mistral's config.json has no list).
  if (plan.model.sliding_window > 0 && plan.model.sliding_layers.empty())
    for (int64_t l = 0; l < plan.model.num_hidden_layers; ++l) plan.model.sliding_layers.push_back(l);
  // DeepSeek's models run DeepEP; Megatron's MoE recipes and torchtitan an all-to-all per expert copy.
  if (!leaves.count("parallel.moe_dispatcher"))
    plan.parallel.moe_dispatcher = plan.model.is_mla() ? MoeDispatcher::DeepEP : MoeDispatcher::AllToAll;
  if (!leaves.count("parallel.moe_fp8_dispatch"))
    plan.parallel.moe_fp8_dispatch = plan.parallel.moe_dispatcher == MoeDispatcher::DeepEP &&
                                     plan.parallel.moe_flex_backend == FlexBackend::DeepEP &&
                                     plan.train.precision == Precision::FP8;  // HybridEP sends BF16
  // Blackwell's block-scaled formats run on tensor cores a GPU preset names by their shares.
  if (plan.train.precision == Precision::FP8 && plan.sim.compute == ComputeModel::Predicted) {
    const HardwareConfig& hw = plan.hardware;
    if (plan.train.low_precision == LowPrecision::Mxfp8 && !(hw.gemm_mxfp8_peak_share > 0))
      throw ConfigError(source + ": train.precision: mxfp8 needs block-scaled FP8 tensor cores, and " + hw.name +
                        " has no hardware.gemm_mxfp8_peak_share; use fp8, or set that share (the Blackwell presets have one)");
    if (plan.train.low_precision == LowPrecision::Nvfp4 && !(hw.peak_fp4_tflops > 0 && hw.gemm_nvfp4_peak_share > 0))
      throw ConfigError(source + ": train.precision: nvfp4 needs FP4 tensor cores, and " + hw.name +
                        " has no hardware.peak_fp4_tflops and gemm_nvfp4_peak_share; use fp8, or set them "
                        "(the Blackwell presets have them)");
  }
  // DeepSeek-V3 kept Adam's moments in BF16 (report 3.3.4); PyTorch, Megatron and torchtitan in FP32.
  if (!leaves.count("train.adam_moments_dtype"))
    plan.train.adam_moments_dtype = plan.model.is_mla() ? MomentDtype::BF16 : MomentDtype::FP32;
  // Like model.config_json, a relative load file is found next to the config.
  if (!plan.scenario.load_file.empty() && std::filesystem::path(plan.scenario.load_file).is_relative())
    plan.scenario.load_file = (base_dir / plan.scenario.load_file).string();
  // A preset is a GPU; the rack it sits in is the cluster's. The gb200 and gb300 presets' names say
  // NVL72, so a plan that leaves the domain at one node is told.
  const json preset = root.contains("hardware") && root["hardware"].is_object() ? root["hardware"].value("preset", json()) : json();
  if ((preset == json("gb200") || preset == json("gb300")) && !leaves.count("cluster.nvlink_domain"))
    plan.notes.push_back("hardware.preset " + preset.get<std::string>() + " leaves cluster.nvlink_domain at one node (" +
                         std::to_string(plan.cluster.gpus_per_node) + " GPUs); a " + plan.hardware.name +
                         " NVL72 rack is cluster.nvlink_domain=72");
  validate_plan(plan);
  check_recompute_modules(source, plan);
  // After the plan's structure holds (schedule fsdp without pp=1 is that error first), every key
  // set must be read.
  check_needs(source, leaves, plan, set_keys, file_alone_builds);
  return plan;
}

}  // namespace

std::string default_config_path() { return shipped_path("workloads/deepseek-v3.yaml"); }
std::string shipped_path(const std::string& relative) { return std::string(STEPSIM_SOURCE_DIR) + "/" + relative; }

Plan load_plan(const std::string& path, const std::vector<std::string>& overrides) {
  return load_plan_text(io::read_input_file(path, "config", io::kMiB), path, overrides);
}

Plan load_plan_text(const std::string& text, const std::string& path, const std::vector<std::string>& overrides) {
  const auto base = std::filesystem::path(path).parent_path();
  return build_plan(yaml_text_to_json(text, path), path, base, overrides);
}

void check_hardware_profile(const std::string& yaml_text, const std::string& source) {
  const json prof = yaml_text_to_json(yaml_text, source);
  if (!prof.is_object() || !prof.contains("hardware") || !prof["hardware"].is_object())
    throw ConfigError(source + ": expected a hardware: map");
  for (const auto& [section, map] : prof.items()) {
    if (section != "hardware" && section != "software") throw ConfigError(source + ": " + section + ": unknown section");
    if (!map.is_object()) throw ConfigError(source + ": " + section + ": expected a map");
    std::map<std::string, json> leaves;
    flatten(source, section, map, leaves);
    for (const auto& [key, v] : leaves) check_value(source, key, schema().at(key), v);
  }
}

std::string origin_of(const Plan& plan, const std::string& key, const std::vector<std::string>& related) {
  const auto shown = [&](const std::string& text) {
    return "--set " + io::shortened(text, 80) + " (with " + plan.source + ")";
  };
  for (const auto& [k, text] : plan.set_by)
    if (k == key) return shown(text);
  for (const auto& [k, text] : plan.set_by)
    if (std::find(related.begin(), related.end(), k) != related.end()) return shown(text);
  return plan.source;
}

nlohmann::json config_tree(const std::string& path, const std::string& text, const std::vector<std::string>& overrides) {
  json root = yaml_text_to_json(text, path);
  if (!root.is_object())
    throw ConfigError(path + ": expected a map of sections (model, train, parallel, hardware, cluster)");
  root = nest_dotted(root, path);
  const json file_root = root;
  std::map<std::string, std::string> set_keys;
  apply_overrides(root, overrides, path, set_keys);
  const std::filesystem::path base = std::filesystem::path(path).parent_path();
  // A --set of the schedule brings the settings the new schedule fixes in place of the file's
  // (bring_schedule_settings: FSDP's one pipeline rank, ZeRO-3, no virtual stages): written into
  // the tree too, so that it loads into the same plan without the --set. A plan that does not
  // build is left as it is; loading it says why.
  if (set_keys.count("schedule")) {
    std::map<std::string, json> brought;
    try {
      build_checked_plan(root, path, base, set_keys, file_alone_check(file_root, path, base), &brought);
    } catch (const std::exception&) {
    }
    for (const auto& [key, value] : brought) apply_override(root, key + "=" + value.dump());
  }
  // The file's relative paths are found next to it (then in the current directory); --set made
  // its own absolute already.
  for (const char* key : {"model.config_json", "hardware.profile", "software.profile", "scenario.load_file"}) {
    const auto parts = split_dots(key);
    json* cur = &root;
    for (size_t i = 0; i + 1 < parts.size() && cur != nullptr; ++i)
      cur = cur->is_object() && cur->contains(parts[i]) ? &(*cur)[parts[i]] : nullptr;
    if (cur == nullptr || !cur->is_object() || !cur->contains(parts.back()) || !(*cur)[parts.back()].is_string()) continue;
    const std::string given = (*cur)[parts.back()].get<std::string>();
    const bool release = std::string(key) == "software.profile" && given.find('/') == std::string::npos &&
                         !given.ends_with(".yaml") && !given.ends_with(".yml");
    if (release || std::filesystem::path(given).is_absolute()) continue;
    std::error_code ec;
    const std::filesystem::path found =
        std::string(key) == "model.config_json" ? base / given : config_relative(given, base);
    (*cur)[parts.back()] = std::filesystem::absolute(found, ec).lexically_normal().string();
  }
  return root;
}

bool is_config_key(const std::string& dotted_key) { return schema().count(dotted_key) > 0; }

std::string hardware_preset_names() { return join(hardware_presets(), ", "); }

void check_override(const std::string& key_equals_value) {
  json root = json::object();  // an empty config: only the override's own key and value are checked
  apply_override(root, key_equals_value);
}

Plan load_plan_from_string(const std::string& yaml_text, const std::string& source,
                           const std::vector<std::string>& overrides, const std::string& base_dir) {
  return build_plan(yaml_text_to_json(yaml_text, source), source,
                    base_dir.empty() ? std::filesystem::current_path() : std::filesystem::path(base_dir), overrides);
}

}  // namespace stepsim
