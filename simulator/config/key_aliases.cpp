#include "simulator/config/key_aliases.hpp"

#include <algorithm>
#include <cctype>
#include <cstddef>

namespace stepsim {
namespace {

constexpr std::string_view kMegatron = "Megatron-LM";
constexpr std::string_view kTitan = "torchtitan";

// Sorted by nothing in particular; names are unique (tests/config/key_aliases_test.cpp checks it,
// and that every key exists).
constexpr KeyAlias kAliases[] = {
    // Megatron-LM (megatron/training/arguments.py and the TransformerConfig fields it exposes).
    {"hidden_size", "model.hidden_size", kMegatron, ""},
    {"num_attention_heads", "model.num_attention_heads", kMegatron, ""},
    {"vocab_size", "model.vocab_size", kMegatron, ""},
    {"q_lora_rank", "model.q_lora_rank", kMegatron, ""},
    {"kv_lora_rank", "model.kv_lora_rank", kMegatron, ""},
    {"v_head_dim", "model.v_head_dim", kMegatron, ""},
    {"tensor_model_parallel_size", "parallel.tp", kMegatron, ""},
    {"pipeline_model_parallel_size", "parallel.pp", kMegatron, ""},
    {"context_parallel_size", "parallel.cp", kMegatron, ""},
    {"expert_model_parallel_size", "parallel.ep", kMegatron, ""},
    {"expert_tensor_parallel_size", "parallel.expert_tp", kMegatron, ""},
    {"virtual_pipeline_model_parallel_size", "parallel.virtual_stages", kMegatron, ""},
    {"num_virtual_stages_per_pipeline_rank", "parallel.virtual_stages", kMegatron, ""},
    {"num_layers_per_virtual_pipeline_stage", "parallel.virtual_stages", kMegatron,
     "stages per rank = num_hidden_layers / parallel.pp / this"},
    {"micro_batch_size", "parallel.micro_batch_size", kMegatron, ""},
    {"global_batch_size", "train.global_batch", kMegatron, ""},
    {"seq_length", "train.seq_len", kMegatron, ""},
    {"num_layers", "model.num_hidden_layers", kMegatron, ""},
    {"ffn_hidden_size", "model.intermediate_size", kMegatron, ""},
    {"num_query_groups", "model.num_key_value_heads", kMegatron, ""},
    {"kv_channels", "model.head_dim", kMegatron, ""},
    {"num_experts", "model.n_routed_experts", kMegatron, ""},
    {"moe_router_topk", "model.num_experts_per_tok", kMegatron, ""},
    {"moe_ffn_hidden_size", "model.moe_intermediate_size", kMegatron, ""},
    {"moe_shared_expert_intermediate_size", "model.shared_expert_intermediate_size", kMegatron, ""},
    {"moe_router_num_groups", "model.n_group", kMegatron, ""},
    {"moe_router_group_topk", "model.topk_group", kMegatron, ""},
    {"qk_head_dim", "model.qk_nope_head_dim", kMegatron, ""},
    {"qk_pos_emb_head_dim", "model.qk_rope_head_dim", kMegatron, ""},
    {"mtp_num_layers", "model.num_nextn_predict_layers", kMegatron, ""},
    {"untie_embeddings_and_output_weights", "model.tie_word_embeddings", kMegatron, "untied = false"},
    {"recompute_granularity", "parallel.recompute", kMegatron, "selective or full"},
    {"recompute_activations", "parallel.recompute", kMegatron, "selective"},
    {"recompute_modules", "parallel.recompute", kMegatron, "the list of modules, e.g. [layernorm, moe_act]"},
    {"use_distributed_optimizer", "parallel.zero", kMegatron, "the distributed optimizer is ZeRO-1: 1"},
    {"moe_shared_expert_overlap", "parallel.overlap_shared_expert", kMegatron, ""},
    {"moe_token_dispatcher_type", "parallel.moe_dispatcher", kMegatron, "alltoall, allgather, or flex = deepep"},
    {"moe_grouped_gemm", "parallel.moe_grouped_gemm", kMegatron, ""},
    {"moe_expert_capacity_factor", "parallel.moe_capacity_factor", kMegatron, ""},
    {"moe_pad_expert_input_to_capacity", "parallel.moe_pad_to_capacity", kMegatron, ""},
    {"overlap_moe_expert_parallel_comm", "parallel.moe_overlap_ep_comm", kMegatron, ""},
    {"moe_paged_stash", "parallel.moe_paged_stash", kMegatron, ""},
    {"delay_wgrad_compute", "parallel.split_backward", kMegatron, ""},
    {"cpu_offloading_num_layers", "parallel.cpu_offload_layers", kMegatron, "with cpu_offloading: true"},
    {"cp_comm_type", "parallel.cp_comm_type", kMegatron, "p2p, allgather or a2a"},
    {"fp8_format", "train.precision", kMegatron, "fp8"},
    {"bf16", "train.precision", kMegatron, "bf16"},
    {"exp_avg_dtype", "train.adam_moments_dtype", kMegatron, "fp32 or bf16, both moments"},
    {"exp_avg_sq_dtype", "train.adam_moments_dtype", kMegatron, "fp32 or bf16, both moments"},
    {"sequence_parallel", "parallel.tp", kMegatron,
     "stepsim's tensor parallelism always includes sequence parallelism; set parallel.tp"},
    {"nnodes", "cluster.nodes", kMegatron, ""},
    {"nproc_per_node", "cluster.gpus_per_node", kMegatron, ""},
    // torchtitan (torchtitan/config/job_config.py, [parallelism], [training], [model] flavours).
    {"tensor_parallel_degree", "parallel.tp", kTitan, ""},
    {"pipeline_parallel_degree", "parallel.pp", kTitan, ""},
    {"context_parallel_degree", "parallel.cp", kTitan, ""},
    {"expert_parallel_degree", "parallel.ep", kTitan, ""},
    {"pipeline_parallel_schedule", "schedule", kTitan, ""},
    {"pipeline_parallel_microbatch_size", "parallel.micro_batch_size", kTitan, ""},
    {"data_parallel_shard_degree", "parallel.fsdp_shard_size", kTitan,
     "the FSDP shard group; the data-parallel size itself is derived from the cluster and parallel.pp/tp/cp"},
    {"data_parallel_replicate_degree", "", kTitan,
     "the data-parallel size is derived: cluster.nodes x cluster.gpus_per_node / (parallel.pp x parallel.tp x "
     "parallel.cp); HSDP shard groups are parallel.fsdp_shard_size"},
    {"local_batch_size", "train.global_batch", kTitan, "global_batch = local_batch_size x the data-parallel size"},
    {"n_layers", "model.num_hidden_layers", kTitan, ""},
    {"dim", "model.hidden_size", kTitan, ""},
    {"n_heads", "model.num_attention_heads", kTitan, ""},
    {"n_kv_heads", "model.num_key_value_heads", kTitan, ""},
    {"activation_checkpoint", "parallel.recompute", kTitan, ""},
    // Shorthands.
    {"vpp", "parallel.virtual_stages", "", ""},
    {"virtual_pipeline_stages", "parallel.virtual_stages", "", ""},
    {"interleave", "parallel.virtual_stages", "", ""},
    {"dp", "", "",
     "the data-parallel size is derived: cluster.nodes x cluster.gpus_per_node / (parallel.pp x parallel.tp x "
     "parallel.cp)"},
    {"data_parallel_size", "", "",
     "the data-parallel size is derived: cluster.nodes x cluster.gpus_per_node / (parallel.pp x parallel.tp x "
     "parallel.cp)"},
    {"dp_size", "", "",
     "the data-parallel size is derived: cluster.nodes x cluster.gpus_per_node / (parallel.pp x parallel.tp x "
     "parallel.cp)"},
    {"world_size", "", "", "the GPUs are cluster.nodes x cluster.gpus_per_node"},
    {"gpus", "", "", "the GPUs are cluster.nodes x cluster.gpus_per_node"},
    {"num_gpus", "", "", "the GPUs are cluster.nodes x cluster.gpus_per_node"},
    {"tp_size", "parallel.tp", "", ""},
    {"pp_size", "parallel.pp", "", ""},
    {"cp_size", "parallel.cp", "", ""},
    {"ep_size", "parallel.ep", "", ""},
    {"mbs", "parallel.micro_batch_size", "", ""},
    {"micro_batch", "parallel.micro_batch_size", "", ""},
    {"gbs", "train.global_batch", "", ""},
    {"batch_size", "train.global_batch", "", ""},
    {"global_batch_size_tokens", "train.global_batch_tokens", "", ""},
    {"tokens_per_step", "train.global_batch_tokens", "", ""},
    {"num_microbatches", "parallel.microbatches", "", ""},
    {"gradient_accumulation_steps", "parallel.microbatches", "", ""},
    {"grad_accum", "parallel.microbatches", "", ""},
    {"distributed_optimizer", "parallel.zero", "", "the distributed optimizer is ZeRO-1: 1"},
    {"zero_stage", "parallel.zero", "", ""},
    {"fsdp", "parallel.zero", "", "FSDP is schedule: fsdp with parallel.zero: 3"},
    {"activation_checkpointing", "parallel.recompute", "", ""},
    {"gradient_checkpointing", "parallel.recompute", "", ""},
    {"sequence_length", "train.seq_len", "", ""},
    {"max_seq_len", "train.seq_len", "", ""},
    {"dtype", "train.precision", "", ""},
    {"pipeline_schedule", "schedule", "", ""},
    {"num_nodes", "cluster.nodes", "", ""},
};

// Levenshtein distance, bounded inputs (config keys are short).
size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diag = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diag = up;
    }
  }
  return row[b.size()];
}

std::string_view last_part(std::string_view key) {
  const auto dot = key.rfind('.');
  return dot == std::string_view::npos ? key : key.substr(dot + 1);
}

std::string_view section_of(std::string_view key) {
  const auto dot = key.rfind('.');
  return dot == std::string_view::npos ? std::string_view() : key.substr(0, dot);
}

std::string quoted_key(std::string_view key) {
  std::string q(1, '`');
  q.append(key);
  q += '`';
  return q;
}

}  // namespace

std::span<const KeyAlias> key_aliases() { return kAliases; }

std::string alias_spelling(std::string_view name) {
  while (!name.empty() && name.front() == '-') name.remove_prefix(1);
  std::string out;
  out.reserve(name.size());
  for (const char c : name) {
    const auto u = static_cast<unsigned char>(c);
    out += (c == '-' || c == '.') ? '_' : char(std::tolower(u));
  }
  return out;
}

const KeyAlias* find_alias(std::string_view name) {
  const std::string spelled = alias_spelling(name);
  for (const auto& a : kAliases)
    if (a.name == spelled) return &a;
  return nullptr;
}

std::string did_you_mean(const std::string& unknown_key, const std::vector<std::string>& known) {
  // Longer names are no config key; an edit distance over them would only cost time.
  if (unknown_key.size() > 200) return "";
  const std::string_view leaf = last_part(unknown_key);
  // The same name in another section (train.micro_batch_size for parallel.micro_batch_size).
  const std::string spelled = alias_spelling(leaf);
  for (const auto& k : known)
    if (last_part(k) == spelled && k != unknown_key) return " did you mean " + quoted_key(k) + "?";
  // Another tool's name (or a shorthand) for a stepsim key.
  if (const KeyAlias* a = find_alias(leaf)) {
    const std::string whose = a->tool.empty() ? "" : " (" + std::string(a->tool) + "'s name)";
    if (a->key.empty()) return " stepsim has no such key" + whose + ": " + std::string(a->hint);
    const std::string how = a->hint.empty() ? "" : "; " + std::string(a->hint);
    return " did you mean " + quoted_key(a->key) + "?" + whose + how;
  }
  // A misspelling: the nearest key, or section, by edit distance (the first of equals, in `known`'s order).
  std::vector<std::string> candidates = known;
  for (const auto& k : known)
    for (std::string_view s = section_of(k); !s.empty(); s = section_of(s)) candidates.emplace_back(s);
  const bool is_section = unknown_key.find('.') == std::string::npos;
  size_t best = std::string::npos;
  std::string nearest;
  for (const auto& c : candidates) {
    // A top-level name is compared with sections and top-level keys; a dotted one with dotted keys.
    if ((c.find('.') == std::string::npos) != is_section) continue;
    const size_t d = edit_distance(unknown_key, c);
    if (d < best) best = d, nearest = c;
  }
  // Close enough to be a typo: at most 2 edits, or a third of the last part for long names.
  const size_t allowed = std::max<size_t>(2, leaf.size() / 3);
  if (best == 0 || best > allowed) return "";
  return " did you mean " + quoted_key(nearest) + "?";
}

}  // namespace stepsim
