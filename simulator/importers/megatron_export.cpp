// A plan → the Megatron-LM launch that runs it (`stepsim export megatron`): the inverse of
// megatron_import.cpp, argument by argument. Every argument written is one the importer's table
// (kArgs) knows and reads; the one-to-one ones go through the same alias table the importer maps
// them with (simulator/config/key_aliases.cpp). What Megatron-LM cannot run is refused by name here;
// export_plan then imports the text and compares the plans, so nothing is written approximately.
#include <algorithm>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "simulator/config/key_aliases.hpp"
#include "simulator/importers/export_text.hpp"
#include "simulator/importers/exporters.hpp"
#include "simulator/importers/importers.hpp"
#include "workloads/layers/framework_split.hpp"
#include "simulator/importers/plan_fields.hpp"
#include "simulator/io/json_text.hpp"
#include "simulator/io/shell_quote.hpp"
#include "vocabulary/plan_names.hpp"
#include "workloads/layers/layer_partition.hpp"

namespace stepsim::importers {
namespace {

class MegatronExport {
 public:
  MegatronExport(const Plan& plan, const ExportOptions& options) : p_(plan), opt_(options) {
    for (auto& f : launch_fields(plan)) fields_[f.key] = std::move(f.value);
  }

  std::string run() {
    refuse_by_name();
    model();
    experts();
    parallelism();
    batch();
    precision();
    recompute();
    software();
    return text();
  }

 private:
  using Group = std::vector<std::string>;

  // One argument: its name as the importer's table holds it (a logic error otherwise: the exporter
  // writes nothing the importer would not read back).
  void arg(Group& g, const std::string& name, const std::string& value = "") {
    const char* role = megatron_argument_role(name);
    if (role == nullptr || std::string(role) == "refuse" || std::string(role) == "no-cost")
      throw std::logic_error("--" + name + " is not an argument the Megatron importer reads (kArgs)");
    g.push_back("--" + name + (value.empty() ? "" : " " + value));
  }
  // A one-to-one argument: the plan's value of the key the alias table maps it to.
  void key_arg(Group& g, const std::string& name) {
    const KeyAlias* a = find_alias(name);
    if (a == nullptr || a->key.empty() || !a->hint.empty() || a->tool != "Megatron-LM")
      throw std::logic_error("--" + name + " has no one-to-one entry in key_aliases.cpp");
    const auto& v = fields_.at(std::string(a->key));
    arg(g, name, io::json_text(v));
  }
  // A cost-free argument Megatron-LM needs to run (data, tokenizer, learning rate).
  void plain(Group& g, const std::string& name, const std::string& value = "") {
    if (megatron_argument_role(name) == nullptr) throw std::logic_error("--" + name + " is not in kArgs");
    g.push_back("--" + name + (value.empty() ? "" : " " + value));
  }
  [[noreturn]] void refuse(const std::string& key, const std::string& value, const std::string& why) const {
    refuse_export(p_, key, value, why);
  }
  std::string field(const std::string& key) const {
    const auto& v = fields_.at(key);
    return v.is_string() ? v.get<std::string>() : io::json_text(v);
  }

  // What Megatron-LM has no argument for, named before anything is written.
  void refuse_by_name() {
    if (p_.workload.kind != WorkloadKind::Model)
      refuse("workload.kind", "synthetic", "an abstract pipeline has no model for Megatron-LM to train; export a model plan");
    const std::string s = to_string(p_.parallel.schedule);
    if (s != "1f1b" && s != "interleaved" && s != "fsdp")
      refuse("schedule", s, "Megatron-LM runs 1F1B and interleaved 1F1B pipelines (and FSDP without one), not " + s +
                                "; use schedule=1f1b or schedule=interleaved, or export torchtitan");
    const HiddenAct act = p_.model.hidden_act;
    if (act != HiddenAct::Silu && act != HiddenAct::Gelu && act != HiddenAct::Relu2)
      refuse("model.hidden_act", to_string(act),
             "Megatron-LM's arguments name SwiGLU (--swiglu), GELU (its default) and squared ReLU (--squared-relu); set "
             "model.hidden_act=silu, gelu or relu2");
    if (p_.train.precision == Precision::FP8 && p_.train.low_precision == LowPrecision::Nvfp4)
      refuse("train.precision", "nvfp4", "stepsim's Megatron import does not model FP4 (--fp4-format); use fp8, mxfp8 or bf16");
    if (p_.model.is_moe() && p_.model.n_shared_experts > 0)
      refuse("model.n_shared_experts", std::to_string(p_.model.n_shared_experts),
             "Megatron-LM sizes the shared experts by their width (--moe-shared-expert-intermediate-size), which stepsim "
             "reads as model.shared_expert_intermediate_size; set that to " +
                 std::to_string(p_.model.n_shared_experts * p_.model.moe_intermediate_size) + " and model.n_shared_experts=0");
    if (p_.model.is_moe() && p_.parallel.moe_dispatcher == MoeDispatcher::DeepEP && p_.parallel.moe_fp8_dispatch)
      refuse("parallel.moe_fp8_dispatch", "true",
             "Megatron-LM's flex dispatcher (DeepEP, HybridEP) sends BF16 tokens (fused_a2a.py: no FP8 dispatch); set "
             "parallel.moe_fp8_dispatch=false");
    // Megatron-LM's validate_args turns sequence parallelism off at TP 1, then refuses
    // --tp-comm-overlap without it: the launch would stop before training (stepsim reads the key as
    // a no-op there).
    if (p_.parallel.tp_comm_overlap && p_.parallel.tp == 1)
      refuse("parallel.tp_comm_overlap", "true",
             "Megatron-LM refuses --tp-comm-overlap without sequence parallelism, which it turns off at TP 1; set "
             "parallel.tp_comm_overlap=false (a no-op at TP 1)");
    if (p_.parallel.split_backward && !p_.parallel.moe_overlap_ep_comm)
      refuse("parallel.split_backward", "true",
             "Megatron-LM computes weight gradients apart from input gradients only with --overlap-moe-expert-parallel-comm "
             "--delay-wgrad-compute (parallel.moe_overlap_ep_comm); set parallel.split_backward=false");
    // Megatron-Core's DDP takes the parameter gather's overlap alone (Megatron-Bridge recipes do);
    // Megatron-LM's arguments assert "Must use --overlap-param-gather with --overlap-grad-reduce".
    if (p_.parallel.overlap_param_gather && !p_.parallel.overlap_grad_reduce && p_.parallel.zero != 3)
      refuse("parallel.overlap_param_gather", "true",
             "Megatron-LM refuses --overlap-param-gather without --overlap-grad-reduce; set "
             "parallel.overlap_grad_reduce=true, or parallel.overlap_param_gather=false");
    const std::string profile = p_.software.profile;
    if (profile != "megatron-core-r0.8" && profile != "nemo-25" && profile != "megatron-bridge")
      refuse("software.profile", profile,
             "not a Megatron-LM release; use megatron-core-r0.8, nemo-25 or megatron-bridge (or export torchtitan)");
  }

  void model() {
    const ModelConfig& m = p_.model;
    key_arg(model_, "num-layers");
    key_arg(model_, "hidden-size");
    key_arg(model_, "ffn-hidden-size");
    key_arg(model_, "num-attention-heads");
    if (m.is_mla()) {
      arg(model_, "multi-latent-attention");
      if (m.q_lora_rank > 0) key_arg(model_, "q-lora-rank");
      for (const char* n : {"kv-lora-rank", "qk-head-dim", "qk-pos-emb-head-dim", "v-head-dim"}) key_arg(model_, n);
      if (p_.software.fused_mla_down_proj) arg(model_, "mla-down-proj-fusion");
    } else {
      if (m.kv_heads() != m.num_attention_heads) {
        arg(model_, "group-query-attention");
        key_arg(model_, "num-query-groups");
      }
      key_arg(model_, "kv-channels");
    }
    if (m.hidden_act == HiddenAct::Silu) arg(model_, "swiglu");
    if (m.hidden_act == HiddenAct::Relu2) arg(model_, "squared-relu");
    if (m.swiglu_limit > 0) arg(model_, "activation-func-clamp-value", number_text(m.swiglu_limit));
    if (!m.mlp_bias) arg(model_, "disable-bias-linear");
    if (!m.mlp_bias && m.attention_bias) arg(model_, "add-qkv-bias");
    if (m.qk_norm) arg(model_, "qk-layernorm");
    if (m.sliding_window > 0) {  // each query's W - 1 earlier keys and itself; a 0/1 list when not every layer
      plain(model_, "window-size", std::to_string(m.sliding_window - 1) + ",0");
      if (int64_t(m.sliding_layers.size()) != m.num_hidden_layers) {
        std::string list = "[";
        for (int64_t l = 0; l < m.num_hidden_layers; ++l) list += std::string(l > 0 ? "," : "") + (m.attention_window(l) > 0 ? "1" : "0");
        plain(model_, "window-attn-skip-freq", "\"" + list + "]\"");  // quoted: a shell would glob [..]
      }
    }
    if (!m.tie_word_embeddings) arg(model_, "untie-embeddings-and-output-weights");
    if (m.num_nextn_predict_layers > 0) key_arg(model_, "mtp-num-layers");
    key_arg(model_, "seq-length");
    plain(model_, "max-position-embeddings", std::to_string(p_.train.seq_len));
    plain(model_, "position-embedding-type", "rope");
    plain(model_, "normalization", m.norm == Norm::RmsNorm ? "RMSNorm" : "LayerNorm");
    vocabulary();
  }

  // Megatron-LM pads the tokenizer's vocabulary to a multiple of --make-vocab-size-divisible-by x
  // TP: the plan's vocabulary must be such a multiple for some divisor. NullTokenizer holds
  // --vocab-size ids and its end-of-document token.
  void vocabulary() {
    const int64_t v = p_.model.vocab_size, tp = p_.parallel.tp;
    int64_t d = 128;
    while (d > 0 && v % (d * tp) != 0) d /= 2;
    if (d == 0)
      refuse("model.vocab_size", std::to_string(v),
             "Megatron-LM pads the vocabulary to a multiple of the tensor-parallel size " + std::to_string(tp) +
                 " (times --make-vocab-size-divisible-by); set model.vocab_size=" +
                 std::to_string((v + tp - 1) / tp * tp));
    plain(tokenizer_, "tokenizer-type", "NullTokenizer");
    arg(tokenizer_, "vocab-size", std::to_string(v - 1));
    if (d != 128) arg(tokenizer_, "make-vocab-size-divisible-by", std::to_string(d));
  }

  void experts() {
    const ModelConfig& m = p_.model;
    if (!m.is_moe()) return;
    const ParallelConfig& x = p_.parallel;
    key_arg(moe_, "num-experts");
    key_arg(moe_, "moe-router-topk");
    key_arg(moe_, "moe-ffn-hidden-size");
    if (m.shared_expert_intermediate_size > 0) key_arg(moe_, "moe-shared-expert-intermediate-size");
    if (m.n_group != 1 || m.topk_group != 1) {
      key_arg(moe_, "moe-router-num-groups");
      key_arg(moe_, "moe-router-group-topk");
    }
    if (m.first_k_dense_replace > 0)
      arg(moe_, "moe-layer-freq",
          io::shell_quote("([0]*" + std::to_string(m.first_k_dense_replace) + "+[1]*" +
                          std::to_string(m.num_hidden_layers - m.first_k_dense_replace) + ")"));
    key_arg(moe_, "expert-tensor-parallel-size");
    const char* dispatcher = x.moe_dispatcher == MoeDispatcher::AllToAll    ? "alltoall"
                             : x.moe_dispatcher == MoeDispatcher::AllGather ? "allgather"
                                                                            : "flex";
    arg(moe_, "moe-token-dispatcher-type", dispatcher);
    if (x.moe_dispatcher == MoeDispatcher::DeepEP) arg(moe_, "moe-flex-dispatcher-backend", to_string(x.moe_flex_backend));
    if (x.moe_grouped_gemm) arg(moe_, "moe-grouped-gemm");
    // With NVTE_CUTEDSL_FUSED_GROUPED_MLP=1, which text() exports (Megatron-Core asserts it for a gated MLP).
    if (p_.software.fused_grouped_mlp) arg(moe_, "use-transformer-engine-op-fuser");
    if (x.moe_router_dtype == RouterDtype::FP32) arg(moe_, "moe-router-dtype", "fp32");
    if (x.moe_capacity_factor > 0) arg(moe_, "moe-expert-capacity-factor", number_text(x.moe_capacity_factor));
    if (x.moe_pad_to_capacity) arg(moe_, "moe-pad-expert-input-to-capacity");
    if (x.overlap_shared_expert) arg(moe_, "moe-shared-expert-overlap");
    // Megatron-Core requires a receive budget with the stash; 1.5 is NVIDIA's recipes' (a budget stepsim
    // does not model: no row is dropped).
    if (x.moe_paged_stash) {
      arg(moe_, "moe-paged-stash");
      arg(moe_, "moe-expert-rank-capacity-factor", "1.5");
    }
    if (x.moe_overlap_ep_comm) {
      arg(moe_, "overlap-moe-expert-parallel-comm");
      if (x.split_backward) arg(moe_, "delay-wgrad-compute");
    }
  }

  void parallelism() {
    const ParallelConfig& x = p_.parallel;
    key_arg(parallel_, "tensor-model-parallel-size");
    key_arg(parallel_, "pipeline-model-parallel-size");
    key_arg(parallel_, "context-parallel-size");
    if (x.cp > 1) arg(parallel_, "cp-comm-type", to_string(x.cp_comm_type));
    if (p_.model.is_moe() || x.ep != 1) key_arg(parallel_, "expert-model-parallel-size");
    if (x.tp > 1) arg(parallel_, "sequence-parallel");
    pipeline_split();
    // The optimizer's sharding: the distributed optimizer (ZeRO-1) or Megatron FSDP (ZeRO-2, 3).
    if (x.zero == 1) arg(parallel_, "use-distributed-optimizer");
    if (x.zero >= 2) {
      arg(parallel_, "use-megatron-fsdp");
      arg(parallel_, "data-parallel-sharding-strategy", x.zero == 2 ? "optim_grads" : "optim_grads_params");
    }
    if (x.zero != 3) {
      if (x.overlap_grad_reduce) arg(parallel_, "overlap-grad-reduce");
      if (x.overlap_param_gather) arg(parallel_, "overlap-param-gather");
      if (x.overlap_grad_reduce && x.ddp_bucket_size > 0) arg(parallel_, "ddp-bucket-size", std::to_string(x.ddp_bucket_size));
    }
    if (x.tp_comm_overlap) arg(parallel_, "tp-comm-overlap");
  }

  // The layers of each stage as the plan runs them (parallel.stage_layers, else stepsim's own
  // balance), in the fewest arguments that make Megatron-LM place them so: its even split (NeMo's
  // embedding and loss counted as layers or not), an uneven first and last stage, else a layout.
  void pipeline_split() {
    const ParallelConfig& x = p_.parallel;
    const int64_t pp = x.pp, layers = p_.model.num_hidden_layers;
    const int64_t vp = fields_.at("parallel.virtual_stages").get<int64_t>();
    if (pp == 1) return;
    std::vector<int64_t> want;
    for (const auto& s : partition_layers(p_)) want.push_back(s.count);
    const auto same = [&](auto&& split) {
      try {
        return split() == want;
      } catch (const SplitError&) {
        return false;
      }
    };
    const auto virtual_count = [&] {
      if (vp > 1) arg(parallel_, "num-virtual-stages-per-pipeline-rank", std::to_string(vp));
    };
    if (same([&] { return megatron_even_split(layers, pp, vp, false, false); })) {
      if (vp > 1) arg(parallel_, "num-layers-per-virtual-pipeline-stage", std::to_string(layers / pp / vp));
      return;
    }
    // Plain variables, not structured bindings, in the lambdas: clang before 16 (the Debian clang
    // scripts/fuzz.sh builds with) cannot capture a binding.
    for (const auto& accounting : {std::pair{true, false}, std::pair{false, true}, std::pair{true, true}}) {
      const bool embedding = accounting.first, loss = accounting.second;
      if (same([&] { return megatron_even_split(layers, pp, vp, embedding, loss); })) {
        virtual_count();
        if (embedding) arg(parallel_, "account-for-embedding-in-pipeline-split");
        if (loss) arg(parallel_, "account-for-loss-in-pipeline-split");
        return;
      }
    }
    int64_t first = 0, last = 0;
    for (int64_t c = 0; c < vp; ++c) first += want[size_t(c * pp)], last += want[size_t(c * pp + pp - 1)];
    for (const auto& ends : {std::pair{first, int64_t(0)}, std::pair{int64_t(0), last}, std::pair{first, last}}) {
      const int64_t f = ends.first, l = ends.second;
      if (same([&] { return megatron_uneven_split(layers, pp, vp, f, l); })) {
        virtual_count();
        if (f > 0) arg(parallel_, "decoder-first-pipeline-num-layers", std::to_string(f));
        if (l > 0) arg(parallel_, "decoder-last-pipeline-num-layers", std::to_string(l));
        return;
      }
    }
    // --pipeline-model-parallel-layout: E, each stage's t's, the MTP layers and L; the stage count
    // over PP gives the virtual stages.
    std::string layout;
    for (size_t k = 0; k < want.size(); ++k) {
      if (k > 0) layout += "|";
      if (k == 0) layout += "E";
      if (want[k] == 1) layout += "t";
      if (want[k] > 1) layout += "t*" + std::to_string(want[k]);
      if (k + 1 == want.size()) {
        if (p_.model.num_nextn_predict_layers > 0) layout += "m*" + std::to_string(p_.model.num_nextn_predict_layers);
        layout += "L";
      }
    }
    arg(parallel_, "pipeline-model-parallel-layout", io::shell_quote(layout));
  }

  void batch() {
    const ParallelConfig& x = p_.parallel;
    const int64_t dp = p_.dp(), global = p_.train.global_batch;
    if (global % (dp * x.microbatches) != 0)
      refuse("parallel.microbatches", std::to_string(x.microbatches),
             "Megatron-LM runs --global-batch-size / (--micro-batch-size x data-parallel size " + std::to_string(dp) +
                 ") microbatches of whole sequences, and " + std::to_string(global) + " sequences do not split so; set "
                 "parallel.micro_batch_size");
    arg(batch_, "micro-batch-size", std::to_string(global / (dp * x.microbatches)));
    key_arg(batch_, "global-batch-size");
  }

  void precision() {
    const ParallelConfig& x = p_.parallel;
    arg(precision_, "bf16");
    if (p_.train.precision == Precision::FP8) {
      if (p_.train.low_precision == LowPrecision::Mxfp8) {
        arg(precision_, "fp8-format", "e4m3");
        arg(precision_, "fp8-recipe", "mxfp8");
      } else {
        // Transformer Engine's block scaling takes E4M3 only (Float8BlockScaling); the per-tensor
        // recipes run E4M3 forward and E5M2 backward.
        const Fp8Recipe r = p_.train.fp8_recipe;
        arg(precision_, "fp8-format", r == Fp8Recipe::Blockwise ? "e4m3" : "hybrid");
        arg(precision_, "fp8-recipe", to_string(r));
      }
    }
    if (x.grad_reduce_dtype == ReduceDtype::BF16) arg(precision_, "grad-reduce-in-bf16");
    if (x.fp8_param_gather) arg(precision_, "fp8-param-gather");
    if (p_.train.runs_fp8_attention()) arg(precision_, "fp8-dot-product-attention");
    if (p_.train.adam_moments_dtype == MomentDtype::BF16) {
      arg(precision_, "use-precision-aware-optimizer");
      arg(precision_, "exp-avg-dtype", "bf16");
      arg(precision_, "exp-avg-sq-dtype", "bf16");
    }
  }

  void recompute() {
    const Recompute r = p_.parallel.recompute;
    // Activation offloading runs only without recompute (validate_plan): the same group of arguments.
    if (p_.parallel.cpu_offload_layers > 0) {
      arg(recompute_, "cpu-offloading");
      arg(recompute_, "cpu-offloading-num-layers", std::to_string(p_.parallel.cpu_offload_layers));
    }
    if (r == Recompute::None) return;
    if (r == Recompute::Full) {
      arg(recompute_, "recompute-granularity", "full");
      arg(recompute_, "recompute-method", "uniform");
      arg(recompute_, "recompute-num-layers", "1");
      return;
    }
    std::string modules;
    uint16_t covered = 0;
    for (const auto& m : kRecomputeModules)
      if (r.has(m.value)) {
        if (!modules.empty()) modules.push_back(' ');
        modules.append(m.name);
        covered |= m.value;
      }
    if (covered != r.modules)
      refuse("parallel.recompute", to_string(r),
             "not a set of Megatron-LM's --recompute-modules (core_attn moe_act layernorm mla_up_proj mlp moe "
             "shared_experts); use none, selective, full or a list of those modules");
    arg(recompute_, "recompute-granularity", "selective");
    if (r != Recompute::Selective) arg(recompute_, "recompute-modules", modules);
  }

  // The release is not an argument, but arguments newer than Megatron-Core r0.8 date a launch (the
  // importer's software()): the one that costs nothing where the release needs one.
  void software() {
    const SoftwareConfig& s = p_.software;
    const bool bridge = s.profile == "megatron-bridge";
    if (s.cuda_graphs == CudaGraphs::None && bridge) arg(software_, "cuda-graph-impl", "none");
    if (s.cuda_graphs != CudaGraphs::None) {
      if (bridge) arg(software_, "cuda-graph-impl", s.cuda_graphs == CudaGraphs::Layers ? "transformer_engine" : "local");
      else arg(software_, "enable-cuda-graph");
      if (s.cuda_graphs == CudaGraphs::FullIteration) arg(software_, "cuda-graph-scope", "full_iteration");
      if (s.cuda_graphs == CudaGraphs::Layers && s.cuda_graph_scope != 0) {
        std::string names = graph_scope_text(s.cuda_graph_scope);
        std::replace(names.begin(), names.end(), ',', ' ');
        arg(software_, "cuda-graph-scope", names);
      }
    }
    if (s.profile == "nemo-25") arg(software_, "cross-entropy-fusion-impl", "native");
    if (s.fused_cross_entropy) arg(software_, "cross-entropy-loss-fusion");
  }

  std::string text() const {
    const Plan& p = p_;
    std::string out = "#!/bin/bash\n";
    const auto comment = [&](const std::string& line) { out += "# " + io::printable(line) + "\n"; };
    std::string from = io::printable(p.source);
    for (const auto& o : p.overrides) from += " --set " + io::printable(o);
    comment("Megatron-LM launch of the stepsim plan " + from + ", written by `stepsim export megatron`.");
    comment(std::to_string(p.cluster.nodes) + " nodes x " + std::to_string(p.cluster.gpus_per_node) + " " +
            p.hardware.name + " GPUs: run it on every node with NODE_RANK and MASTER_ADDR set.");
    comment("Every argument that changes the step's cost is the plan's; the data, tokenizer and learning-rate");
    comment("arguments are placeholders (mock data, NullTokenizer) to replace.");
    std::string back = "stepsim import megatron THIS_FILE";
    if (!opt_.preset.empty()) back += " --hardware " + opt_.preset;
    for (const auto& m : opt_.machine_sets) back += " --set " + m;
    comment("Read back with: " + back + (opt_.preset.empty() ? " (no GPU preset holds this plan's hardware keys)" : ""));
    out += "\nGPUS_PER_NODE=" + std::to_string(p.cluster.gpus_per_node) + "\nNNODES=" + std::to_string(p.cluster.nodes) + "\n";
    const auto array = [&](const char* name, const Group& g) {
      if (g.empty()) return;
      out.append("\n").append(name).append("=(\n");
      for (const auto& a : g) out.append("    ").append(a).append("\n");
      out.append(")\n");
    };
    array("DISTRIBUTED_ARGS", {"--nproc-per-node $GPUS_PER_NODE", "--nnodes $NNODES", "--node-rank ${NODE_RANK:-0}",
                               "--master-addr ${MASTER_ADDR:-localhost}", "--master-port ${MASTER_PORT:-6000}"});
    array("MODEL_ARGS", model_);
    array("TOKENIZER_ARGS", tokenizer_);
    array("MOE_ARGS", moe_);
    array("PARALLEL_ARGS", parallel_);
    array("BATCH_ARGS", batch_);
    array("PRECISION_ARGS", precision_);
    array("RECOMPUTE_ARGS", recompute_);
    array("SOFTWARE_ARGS", software_);
    array("TRAINING_ARGS", {"--train-iters ${TRAIN_ITERS:-100}", "--lr 1.0e-4", "--min-lr 1.0e-5",
                            "--lr-decay-style cosine", "--weight-decay 0.1", "--clip-grad 1.0", "--log-interval 1"});
    array("DATA_ARGS", {"--mock-data", "--split 99,1,0"});
    if (p.software.fused_grouped_mlp)
      out += "\n# Transformer Engine's fused grouped MLP (software.fused.grouped_mlp)\nexport NVTE_CUTEDSL_FUSED_GROUPED_MLP=1\n";
    out += "\ntorchrun \"${DISTRIBUTED_ARGS[@]}\" pretrain_gpt.py";
    for (const auto& [name, g] : std::initializer_list<std::pair<const char*, const Group*>>{
             {"MODEL_ARGS", &model_}, {"TOKENIZER_ARGS", &tokenizer_}, {"MOE_ARGS", &moe_}, {"PARALLEL_ARGS", &parallel_},
             {"BATCH_ARGS", &batch_}, {"PRECISION_ARGS", &precision_}, {"RECOMPUTE_ARGS", &recompute_},
             {"SOFTWARE_ARGS", &software_}})
      if (!g->empty()) out.append(" \\\n    \"${").append(name).append("[@]}\"");
    out += " \\\n    \"${TRAINING_ARGS[@]}\" \\\n    \"${DATA_ARGS[@]}\"\n";
    return out;
  }

  const Plan& p_;
  const ExportOptions& opt_;
  std::map<std::string, nlohmann::json> fields_;
  Group model_, tokenizer_, moe_, parallel_, batch_, precision_, recompute_, software_;
};

}  // namespace

std::string export_megatron(const Plan& plan, const ExportOptions& options) { return MegatronExport(plan, options).run(); }

}  // namespace stepsim::importers
