// Megatron-LM launch → stepsim plan. Names, defaults and checks follow megatron/training/arguments.py
// and the TransformerConfig fields it exposes (NVIDIA/Megatron-LM, 2025-2026); docs/import.md lists
// every argument read and why.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <functional>
#include <stdexcept>
#include <string_view>

#include "vocabulary/config_error.hpp"
#include "simulator/config/config_loader.hpp"
#include "simulator/config/key_aliases.hpp"
#include "simulator/importers/imported_plan.hpp"
#include "simulator/importers/importers.hpp"
#include "workloads/layers/framework_split.hpp"
#include "simulator/importers/shell_script.hpp"
#include "simulator/io/json_text.hpp"
#include "vocabulary/plan_names.hpp"

namespace stepsim::importers {
namespace {

constexpr std::string_view kTool = "Megatron-LM";

enum class Arity { Flag, One, Many };
// Key: one integer, mapped one to one through the alias table (simulator/config/key_aliases.cpp).
// Use: read by the importer below. NoCost: no effect in stepsim's cost model, listed in the note.
// Same: what stepsim models anyway (named in the plan's header). Refuse: changes the cost in a way
// stepsim does not model.
enum class Role { Key, Use, NoCost, Same, Refuse };

struct ArgSpec {
  std::string_view name;
  Arity arity;
  Role role;
  std::string_view why = "";  // Refuse: what stepsim does instead, and the fix
};

constexpr ArgSpec kArgs[] = {
    // Model shape.
    {"num-layers", Arity::One, Role::Key},
    {"hidden-size", Arity::One, Role::Key},
    {"ffn-hidden-size", Arity::One, Role::Use},
    {"num-attention-heads", Arity::One, Role::Key},
    {"group-query-attention", Arity::Flag, Role::Use},
    {"num-query-groups", Arity::One, Role::Use},
    {"kv-channels", Arity::One, Role::Use},
    {"seq-length", Arity::One, Role::Key},
    {"encoder-seq-length", Arity::One, Role::Use},
    {"vocab-size", Arity::One, Role::Use},
    {"make-vocab-size-divisible-by", Arity::One, Role::Use},
    {"tokenizer-type", Arity::One, Role::Use},
    {"swiglu", Arity::Flag, Role::Use},
    {"untie-embeddings-and-output-weights", Arity::Flag, Role::Use},
    {"disable-bias-linear", Arity::Flag, Role::Use},
    {"add-bias-linear", Arity::Flag, Role::Use},
    {"add-qkv-bias", Arity::Flag, Role::Use},
    {"squared-relu", Arity::Flag, Role::Use},
    {"quick-geglu", Arity::Flag, Role::Use},
    {"activation-func-clamp-value", Arity::One, Role::Use},
    {"glu-linear-offset", Arity::One, Role::NoCost},
    {"openai-gelu", Arity::Flag, Role::NoCost},
    {"position-embedding-type", Arity::One, Role::Use},
    {"max-position-embeddings", Arity::One, Role::NoCost},
    {"use-rotary-position-embeddings", Arity::Flag, Role::NoCost},
    {"no-position-embedding", Arity::Flag, Role::NoCost},
    {"multi-latent-attention", Arity::Flag, Role::Use},
    {"mla-down-proj-fusion", Arity::Flag, Role::Use},
    {"q-lora-rank", Arity::One, Role::Key},
    {"kv-lora-rank", Arity::One, Role::Key},
    {"qk-head-dim", Arity::One, Role::Key},
    {"qk-pos-emb-head-dim", Arity::One, Role::Key},
    {"v-head-dim", Arity::One, Role::Key},
    {"mtp-num-layers", Arity::One, Role::Key},
    {"window-size", Arity::One, Role::Use},
    {"window-attn-skip-freq", Arity::One, Role::Use},
    {"experimental-attention-variant", Arity::One, Role::Refuse,
     "only softmax attention (MHA, GQA, MLA) is modelled; remove it"},
    {"linear-attention-freq", Arity::One, Role::Refuse, "only softmax attention (MHA, GQA, MLA) is modelled; remove it"},
    {"hybrid-override-pattern", Arity::One, Role::Refuse, "hybrid Mamba models are not modelled"},
    {"softmax-type", Arity::One, Role::NoCost},
    {"attention-output-gate", Arity::Flag, Role::Refuse,
     "a gated attention output (one more projection per layer) is not modelled; remove it"},
    // Mixture of experts.
    {"num-experts", Arity::One, Role::Key},
    {"moe-router-topk", Arity::One, Role::Key},
    {"moe-ffn-hidden-size", Arity::One, Role::Key},
    {"moe-shared-expert-intermediate-size", Arity::One, Role::Key},
    {"moe-router-num-groups", Arity::One, Role::Key},
    {"moe-router-group-topk", Arity::One, Role::Key},
    {"moe-layer-freq", Arity::One, Role::Use},
    {"moe-token-dispatcher-type", Arity::One, Role::Use},
    {"moe-shared-expert-overlap", Arity::Flag, Role::Use},
    {"expert-tensor-parallel-size", Arity::One, Role::Use},
    {"moe-grouped-gemm", Arity::Flag, Role::Use},
    {"moe-enable-deepep", Arity::Flag, Role::Use},
    {"moe-flex-dispatcher-backend", Arity::One, Role::Use},
    {"moe-permute-fusion", Arity::Flag, Role::NoCost},
    {"moe-router-fusion", Arity::Flag, Role::NoCost},
    {"moe-router-load-balancing-type", Arity::Many, Role::NoCost},
    {"moe-aux-loss-coeff", Arity::Many, Role::NoCost},
    {"moe-z-loss-coeff", Arity::One, Role::NoCost},
    {"moe-router-score-function", Arity::One, Role::NoCost},
    {"moe-router-topk-scaling-factor", Arity::One, Role::NoCost},
    {"moe-router-enable-expert-bias", Arity::Flag, Role::NoCost},
    {"moe-router-bias-update-rate", Arity::One, Role::NoCost},
    {"moe-router-pre-softmax", Arity::Flag, Role::NoCost},
    {"moe-router-dtype", Arity::One, Role::Use},
    {"moe-router-force-load-balancing", Arity::Flag, Role::Use},
    {"moe-deepep-num-sms", Arity::One, Role::Use},
    {"moe-hybridep-num-sms", Arity::One, Role::NoCost},
    {"moe-input-jitter-eps", Arity::One, Role::NoCost},
    {"moe-per-layer-logging", Arity::Flag, Role::NoCost},
    {"moe-token-drop-policy", Arity::One, Role::NoCost},
    {"moe-expert-capacity-factor", Arity::One, Role::Use},
    {"moe-pad-expert-input-to-capacity", Arity::Flag, Role::Use},
    {"moe-layer-recompute", Arity::Flag, Role::Use},
    {"overlap-moe-expert-parallel-comm", Arity::Flag, Role::Use},
    {"moe-paged-stash", Arity::Flag, Role::Use},
    {"use-transformer-engine-op-fuser", Arity::Flag, Role::Use},
    {"moe-paged-stash-page-size", Arity::One, Role::NoCost},
    {"moe-paged-stash-buffer-size-factor-cuda", Arity::One, Role::NoCost},
    {"moe-paged-stash-buffer-size-factor-cpu", Arity::One, Role::NoCost},
    {"moe-expert-rank-capacity-factor", Arity::One, Role::Use},
    // Parallelism.
    {"tensor-model-parallel-size", Arity::One, Role::Key},
    {"pipeline-model-parallel-size", Arity::One, Role::Key},
    {"context-parallel-size", Arity::One, Role::Key},
    {"expert-model-parallel-size", Arity::One, Role::Key},
    {"sequence-parallel", Arity::Flag, Role::Use},
    {"num-layers-per-virtual-pipeline-stage", Arity::One, Role::Use},
    {"num-virtual-stages-per-pipeline-rank", Arity::One, Role::Use},
    {"virtual-pipeline-model-parallel-size", Arity::One, Role::Use},
    {"cp-comm-type", Arity::Many, Role::Use},
    {"use-distributed-optimizer", Arity::Flag, Role::Use},
    {"use-megatron-fsdp", Arity::Flag, Role::Use},
    {"use-torch-fsdp2", Arity::Flag, Role::Use},
    {"data-parallel-sharding-strategy", Arity::One, Role::Use},
    {"delay-wgrad-compute", Arity::Flag, Role::Use},
    {"overlap-grad-reduce", Arity::Flag, Role::Use},
    {"overlap-param-gather", Arity::Flag, Role::Use},
    {"tp-comm-overlap", Arity::Flag, Role::Use},
    {"decoder-first-pipeline-num-layers", Arity::One, Role::Use},
    {"decoder-last-pipeline-num-layers", Arity::One, Role::Use},
    {"pipeline-model-parallel-layout", Arity::One, Role::Use},
    {"account-for-embedding-in-pipeline-split", Arity::Flag, Role::Use},
    {"account-for-loss-in-pipeline-split", Arity::Flag, Role::Use},
    {"microbatch-group-size-per-virtual-pipeline-stage", Arity::One, Role::Refuse,
     "stepsim's interleaved schedule groups pipeline-size microbatches, Megatron's default; remove it"},
    {"hierarchical-context-parallel-sizes", Arity::Many, Role::Refuse,
     "hierarchical context parallelism is not modelled; remove it"},
    {"num-distributed-optimizer-instances", Arity::One, Role::Use},
    {"overlap-p2p-communication", Arity::Flag, Role::Same},
    {"overlap-p2p-communication-warmup-flush", Arity::Flag, Role::Same},
    {"no-overlap-p2p-communication", Arity::Flag, Role::Refuse,
     "stepsim sends pipeline activations on their own stream, overlapped as Megatron does by default; remove it"},
    {"overlap-param-gather-with-optimizer-step", Arity::Flag, Role::NoCost},
    {"no-align-param-gather", Arity::Flag, Role::NoCost},
    {"ddp-bucket-size", Arity::One, Role::Use},
    {"ddp-num-buckets", Arity::One, Role::NoCost},
    {"ddp-average-in-collective", Arity::Flag, Role::NoCost},
    {"ddp-pad-buckets-for-high-nccl-busbw", Arity::Flag, Role::NoCost},
    {"tp-comm-overlap-cfg", Arity::One, Role::NoCost},
    {"use-nccl-ub", Arity::Flag, Role::NoCost},
    {"defer-embedding-wgrad-compute", Arity::Flag, Role::NoCost},
    {"wgrad-deferral-limit", Arity::One, Role::NoCost},
    {"deallocate-pipeline-outputs", Arity::Flag, Role::NoCost},
    {"grad-reduce-in-bf16", Arity::Flag, Role::Use},
    {"ddp-reduce-scatter-with-fp32-accumulation", Arity::Flag, Role::Use},
    {"fp8-param-gather", Arity::Flag, Role::Use},
    {"fp8-param", Arity::Flag, Role::Refuse,
     "Megatron-LM has no such argument (--fp8-param-gather sets its fp8_param); use --fp8-param-gather"},
    {"cpu-offloading", Arity::Flag, Role::Use},
    {"cpu-offloading-num-layers", Arity::One, Role::Use},
    {"optimizer-cpu-offload", Arity::Flag, Role::Refuse, "offloading to CPU memory is not modelled; remove it"},
    {"fine-grained-activation-offloading", Arity::Flag, Role::Refuse,
     "offloading to CPU memory is not modelled; remove it"},
    {"distribute-saved-activations", Arity::Flag, Role::Refuse,
     "sharding the recompute checkpoints over the TP group is not modelled; remove it"},
    // Batch and precision.
    {"micro-batch-size", Arity::One, Role::Key},
    {"global-batch-size", Arity::One, Role::Key},
    {"batch-size", Arity::One, Role::Refuse, "is Megatron's old name; use --micro-batch-size"},
    {"rampup-batch-size", Arity::Many, Role::NoCost},
    {"step-batch-size-schedule", Arity::One, Role::NoCost},
    {"bf16", Arity::Flag, Role::Use},
    {"fp16", Arity::Flag, Role::Use},
    {"fp8-format", Arity::One, Role::Use},
    {"fp8-recipe", Arity::One, Role::Use},
    {"fp4-format", Arity::One, Role::Refuse, "FP4 GEMMs are not modelled (FP8 and BF16 are); remove it"},
    {"fp8-dot-product-attention", Arity::Flag, Role::Use},
    {"fp8-multi-head-attention", Arity::Flag, Role::Refuse, "FP8 attention whose projections also pass FP8 tensors is not modelled; use --fp8-dot-product-attention alone"},
    {"first-last-layers-bf16", Arity::Flag, Role::Refuse,
     "mixing BF16 and FP8 layers is not modelled; remove it to plan every layer in FP8"},
    {"no-fp8-wgrad", Arity::Flag, Role::Refuse,
     "weight gradients at another precision than the other GEMMs are not modelled; remove it"},
    {"fp8-amax-history-len", Arity::One, Role::NoCost},
    {"fp8-amax-compute-algo", Arity::One, Role::NoCost},
    {"fp8-margin", Arity::One, Role::NoCost},
    {"fp8-interval", Arity::One, Role::NoCost},
    {"accumulate-allreduce-grads-in-fp32", Arity::Flag, Role::Use},
    {"attention-softmax-in-fp32", Arity::Flag, Role::NoCost},
    {"loss-scale", Arity::One, Role::NoCost},
    {"initial-loss-scale", Arity::One, Role::NoCost},
    {"min-loss-scale", Arity::One, Role::NoCost},
    {"loss-scale-window", Arity::One, Role::NoCost},
    {"hysteresis", Arity::One, Role::NoCost},
    // Recomputation.
    {"recompute-granularity", Arity::One, Role::Use},
    {"recompute-method", Arity::One, Role::Use},
    {"recompute-num-layers", Arity::One, Role::Use},
    {"recompute-modules", Arity::Many, Role::Use},
    {"recompute-activations", Arity::Flag, Role::Use},
    {"checkpoint-activations", Arity::Flag, Role::Use},
    // Kernels that stepsim's model assumes (FlashAttention-style attention, grouped expert GEMMs).
    {"use-mcore-models", Arity::Flag, Role::Same},
    {"use-flash-attn", Arity::Flag, Role::Same},
    {"attention-backend", Arity::One, Role::Use},
    {"transformer-impl", Arity::One, Role::Same},
    {"optimizer", Arity::One, Role::Use},
    {"use-precision-aware-optimizer", Arity::Flag, Role::Use},
    {"exp-avg-dtype", Arity::One, Role::Use},
    {"exp-avg-sq-dtype", Arity::One, Role::Use},
    {"main-grads-dtype", Arity::One, Role::Use},
    {"main-params-dtype", Arity::One, Role::Use},
    // No effect in stepsim's cost model: optimisation hyper-parameters, data, logging, checkpoints.
    {"normalization", Arity::One, Role::NoCost},
    {"norm-epsilon", Arity::One, Role::NoCost},
    {"apply-layernorm-1p", Arity::Flag, Role::NoCost},
    {"qk-layernorm", Arity::Flag, Role::Use},
    {"rotary-base", Arity::One, Role::NoCost},
    {"rotary-percent", Arity::One, Role::NoCost},
    {"rotary-interleaved", Arity::Flag, Role::NoCost},
    {"rotary-seq-len-interpolation-factor", Arity::One, Role::NoCost},
    {"rotary-scaling-factor", Arity::One, Role::NoCost},
    {"rope-type", Arity::One, Role::NoCost},
    {"use-rope-scaling", Arity::Flag, Role::NoCost},
    {"rope-scaling-factor", Arity::One, Role::NoCost},
    {"mscale", Arity::One, Role::NoCost},
    {"mscale-all-dim", Arity::One, Role::NoCost},
    {"attention-dropout", Arity::One, Role::NoCost},
    {"hidden-dropout", Arity::One, Role::NoCost},
    {"init-method-std", Arity::One, Role::NoCost},
    {"init-method-xavier-uniform", Arity::Flag, Role::NoCost},
    {"mtp-loss-scaling-factor", Arity::One, Role::NoCost},
    {"lr", Arity::One, Role::NoCost},
    {"min-lr", Arity::One, Role::NoCost},
    {"decoupled-lr", Arity::One, Role::NoCost},
    {"decoupled-min-lr", Arity::One, Role::NoCost},
    {"lr-decay-style", Arity::One, Role::NoCost},
    {"lr-decay-iters", Arity::One, Role::NoCost},
    {"lr-decay-samples", Arity::One, Role::NoCost},
    {"lr-warmup-iters", Arity::One, Role::NoCost},
    {"lr-warmup-samples", Arity::One, Role::NoCost},
    {"lr-warmup-fraction", Arity::One, Role::NoCost},
    {"lr-warmup-init", Arity::One, Role::NoCost},
    {"weight-decay", Arity::One, Role::NoCost},
    {"start-weight-decay", Arity::One, Role::NoCost},
    {"end-weight-decay", Arity::One, Role::NoCost},
    {"weight-decay-incr-style", Arity::One, Role::NoCost},
    {"clip-grad", Arity::One, Role::NoCost},
    {"adam-beta1", Arity::One, Role::NoCost},
    {"adam-beta2", Arity::One, Role::NoCost},
    {"adam-eps", Arity::One, Role::NoCost},
    {"sgd-momentum", Arity::One, Role::NoCost},
    {"train-iters", Arity::One, Role::NoCost},
    {"train-samples", Arity::One, Role::NoCost},
    {"exit-interval", Arity::One, Role::NoCost},
    {"exit-duration-in-mins", Arity::One, Role::NoCost},
    {"exit-signal-handler", Arity::Flag, Role::NoCost},
    {"seed", Arity::One, Role::NoCost},
    {"data-path", Arity::Many, Role::NoCost},
    {"train-data-path", Arity::Many, Role::NoCost},
    {"valid-data-path", Arity::Many, Role::NoCost},
    {"test-data-path", Arity::Many, Role::NoCost},
    {"data-cache-path", Arity::One, Role::NoCost},
    {"mock-data", Arity::Flag, Role::NoCost},
    {"split", Arity::One, Role::NoCost},
    {"num-workers", Arity::One, Role::NoCost},
    {"no-mmap-bin-files", Arity::Flag, Role::NoCost},
    {"no-create-attention-mask-in-dataloader", Arity::Flag, Role::NoCost},
    {"reset-position-ids", Arity::Flag, Role::NoCost},
    {"reset-attention-mask", Arity::Flag, Role::NoCost},
    {"eod-mask-loss", Arity::Flag, Role::NoCost},
    {"dataloader-type", Arity::One, Role::NoCost},
    {"tokenizer-model", Arity::One, Role::NoCost},
    {"tiktoken-pattern", Arity::One, Role::NoCost},
    {"vocab-file", Arity::One, Role::NoCost},
    {"merge-file", Arity::One, Role::NoCost},
    {"save", Arity::One, Role::NoCost},
    {"load", Arity::One, Role::NoCost},
    {"save-interval", Arity::One, Role::NoCost},
    {"no-load-optim", Arity::Flag, Role::NoCost},
    {"no-load-rng", Arity::Flag, Role::NoCost},
    {"no-save-optim", Arity::Flag, Role::NoCost},
    {"no-save-rng", Arity::Flag, Role::NoCost},
    {"finetune", Arity::Flag, Role::NoCost},
    {"pretrained-checkpoint", Arity::One, Role::NoCost},
    {"ckpt-format", Arity::One, Role::NoCost},
    {"async-save", Arity::Flag, Role::NoCost},
    {"use-dist-ckpt", Arity::Flag, Role::NoCost},
    {"auto-detect-ckpt-format", Arity::Flag, Role::NoCost},
    {"dist-ckpt-strictness", Arity::One, Role::NoCost},
    {"eval-iters", Arity::One, Role::NoCost},
    {"eval-interval", Arity::One, Role::NoCost},
    {"skip-train", Arity::Flag, Role::NoCost},
    {"log-interval", Arity::One, Role::NoCost},
    {"log-throughput", Arity::Flag, Role::NoCost},
    {"log-timers-to-tensorboard", Arity::Flag, Role::NoCost},
    {"log-validation-ppl-to-tensorboard", Arity::Flag, Role::NoCost},
    {"log-memory-to-tensorboard", Arity::Flag, Role::NoCost},
    {"log-params-norm", Arity::Flag, Role::NoCost},
    {"log-num-zeros-in-grad", Arity::Flag, Role::NoCost},
    {"log-progress", Arity::Flag, Role::NoCost},
    {"timing-log-level", Arity::One, Role::NoCost},
    {"timing-log-option", Arity::One, Role::NoCost},
    {"tensorboard-dir", Arity::One, Role::NoCost},
    {"tensorboard-log-interval", Arity::One, Role::NoCost},
    {"tensorboard-queue-size", Arity::One, Role::NoCost},
    {"wandb-project", Arity::One, Role::NoCost},
    {"wandb-exp-name", Arity::One, Role::NoCost},
    {"wandb-save-dir", Arity::One, Role::NoCost},
    {"profile", Arity::Flag, Role::NoCost},
    {"use-pytorch-profiler", Arity::Flag, Role::NoCost},
    {"profile-step-start", Arity::One, Role::NoCost},
    {"profile-step-end", Arity::One, Role::NoCost},
    {"profile-ranks", Arity::Many, Role::NoCost},
    {"distributed-backend", Arity::One, Role::NoCost},
    {"distributed-timeout-minutes", Arity::One, Role::NoCost},
    {"use-cpu-initialization", Arity::Flag, Role::NoCost},
    {"manual-gc", Arity::Flag, Role::NoCost},
    {"manual-gc-interval", Arity::One, Role::NoCost},
    {"empty-unused-memory-level", Arity::One, Role::NoCost},
    {"calculate-per-token-loss", Arity::Flag, Role::NoCost},
    {"cross-entropy-loss-fusion", Arity::Flag, Role::Use},
    {"cross-entropy-fusion-impl", Arity::One, Role::Use},
    {"no-masked-softmax-fusion", Arity::Flag, Role::NoCost},
    {"no-bias-gelu-fusion", Arity::Flag, Role::NoCost},
    {"no-bias-swiglu-fusion", Arity::Flag, Role::NoCost},
    {"no-bias-dropout-fusion", Arity::Flag, Role::NoCost},
    {"no-rope-fusion", Arity::Flag, Role::NoCost},
    {"no-persist-layer-norm", Arity::Flag, Role::NoCost},
    {"no-gradient-accumulation-fusion", Arity::Flag, Role::NoCost},
    {"enable-cuda-graph", Arity::Flag, Role::Use},
    {"cuda-graph-impl", Arity::One, Role::Use},
    {"cuda-graph-scope", Arity::Many, Role::Use},
    {"cuda-graph-modules", Arity::Many, Role::Use},  // --cuda-graph-scope's name after core 0.17
    {"cuda-graph-warmup-steps", Arity::One, Role::NoCost},
    {"external-cuda-graph", Arity::Flag, Role::Use},
    {"deterministic-mode", Arity::Flag, Role::NoCost},
    {"no-check-for-nan-in-loss-and-grad", Arity::Flag, Role::NoCost},
    {"check-for-large-grads", Arity::Flag, Role::NoCost},
    {"bias-swiglu-fusion", Arity::Flag, Role::NoCost},
    {"use-te-rng-tracker", Arity::Flag, Role::NoCost},
    {"num-dataset-builder-threads", Arity::One, Role::NoCost},
    {"object-storage-cache-path", Arity::One, Role::NoCost},
    {"mid-level-dataset-surplus", Arity::One, Role::NoCost},
};

const ArgSpec* spec_of(const std::string& name) {
  for (const auto& a : kArgs)
    if (a.name == name) return &a;
  return nullptr;
}

std::string script_of(const std::string& w) { return std::filesystem::path(w).filename().string(); }

bool is_megatron_entry(const std::string& w) {
  const std::string base = script_of(w);
  return base.size() > 3 && base.ends_with(".py") && base.rfind("pretrain_", 0) == 0;
}

// One option as written: its word and its values.
struct Given {
  ShellWord option;
  std::vector<ShellWord> values;
  std::string written;  // the option's name as written ("--num_layers" stays so in messages)
};

class MegatronImport {
 public:
  MegatronImport(const std::string& source, const ImportOptions& options) : source_(source), opt_(options) {}

  ImportedPlan run(const std::string& text) {
    const ShellScript script = read_shell_script(text, source_);
    find_launch(script);
    parse_arguments();
    refuse_unmodelled();
    build();
    refuse_collected();
    return std::move(plan_);
  }

 private:
  [[noreturn]] void fail(int line, const std::string& what) const { throw error_at(source_, line, what); }

  // A problem that leaves the rest of the launch readable: collected, so that one error names every
  // one of them and one edit fixes the file (a launch with four was refused four times before).
  void problem(int line, const std::string& what) { problems_.emplace_back(line, what); }
  void problem_arg(const Given& g, const std::string& what) { problem(g.option.line, shown(g) + ": " + what); }
  void refuse_collected() const {
    if (problems_.empty()) return;
    std::string more;
    for (size_t k = 1; k < problems_.size(); ++k)
      more += (k > 1 ? "; " : "") + (problems_[k].first > 0 ? "line " + std::to_string(problems_[k].first) + ": " : "") +
              problems_[k].second;
    fail(problems_.front().first,
         problems_.front().second +
             (more.empty() ? "" : " (and " + std::to_string(problems_.size() - 1) + " more: " + more + ")"));
  }
  [[noreturn]] void fail_arg(const Given& g, const std::string& what) const { fail(g.option.line, shown(g) + ": " + what); }

  // "--num-layers 80", "--num-layers $NUM_LAYERS = 80".
  static std::string shown(const Given& g) {
    std::string s = io::shortened(g.option.raw.empty() ? g.option.text : g.option.raw, 80);
    for (const auto& v : g.values) {
      s.append(" ").append(io::shortened(v.raw.empty() ? v.text : v.raw, 60));
      // The value as the file holds it when the raw text is more than it quoted.
      const bool quoted = v.raw.size() == v.text.size() + 2 && (v.raw.front() == '\'' || v.raw.front() == '"') &&
                          v.raw.compare(1, v.text.size(), v.text) == 0;
      if (v.known() && !v.raw.empty() && v.raw != v.text && !quoted) s.append(" = ").append(io::shortened(v.text, 40));
    }
    return io::printable(s);
  }

  // --- the launch line -----------------------------------------------------------------------

  void find_launch(const ShellScript& script) {
    std::vector<const ShellCommand*> launches;
    for (const auto& c : script.commands)
      for (const auto& w : c.words)
        if (w.known() && is_megatron_entry(w.text)) {
          launches.push_back(&c);
          break;
        }
    if (launches.size() > 1) {
      std::string lines;
      for (const auto* c : launches) lines += (lines.empty() ? "" : ", ") + std::to_string(c->line);
      fail(0, "holds " + std::to_string(launches.size()) + " Megatron-LM launch lines (lines " + lines +
                  "); keep the one to import in a file of its own");
    }
    if (launches.size() == 1) {
      const ShellCommand& c = *launches.front();
      launch_line_ = c.line;
      size_t k = 0;
      while (!(c.words[k].known() && is_megatron_entry(c.words[k].text))) ++k;
      entry_ = script_of(c.words[k].text);
      if (entry_ != "pretrain_gpt.py")
        fail(c.line, entry_ + ": stepsim models decoder-only GPT-style models (pretrain_gpt.py: GPT, Llama, Mixtral, "
                              "DeepSeek); this entry point trains another kind of model");
      launcher_.assign(c.words.begin(), c.words.begin() + long(k));
      args_.assign(c.words.begin() + long(k) + 1, c.words.end());
      if (!c.certain)
        plan_.header.push_back("The launch line sits inside a branch of the script that stepsim cannot decide; it is "
                               "taken as the one that runs.");
      return;
    }
    // A bare argument list: commands that start with an option.
    for (const auto& c : script.commands)
      if (!c.words.empty() && c.words.front().known() && c.words.front().text.rfind("--", 0) == 0) {
        if (launch_line_ == 0) launch_line_ = c.line;
        args_.insert(args_.end(), c.words.begin(), c.words.end());
      }
    if (!args_.empty()) return;
    // Arrays or strings of options with no launch line.
    for (const auto& list : script.option_lists) {
      if (launch_line_ == 0) launch_line_ = list.front().line;
      args_.insert(args_.end(), list.begin(), list.end());
    }
    if (args_.empty()) {
      std::string unread;
      for (const auto& u : script.unread) unread += (unread.empty() ? "" : ", ") + u;
      fail(0, "no Megatron-LM launch found: expected a pretrain_gpt.py command line (torchrun ... pretrain_gpt.py "
              "--num-layers ...), a list of --arguments, or bash arrays holding them" +
                  (unread.empty() ? std::string()
                                  : "; the file runs code stepsim does not read (" + unread +
                                        "): import the file that launches pretrain_gpt.py, or write its arguments out"));
    }
  }

  // "--name value", "--name=value", flags; an unknown option takes the words up to the next option.
  void parse_arguments() {
    for (size_t i = 0; i < args_.size();) {
      const ShellWord& w = args_[i++];
      if (!w.known()) {
        plan_.unknown.push_back(io::shortened(w.raw, 60).append(" (").append(w.unknown).append(")"));
        continue;
      }
      if (w.text.rfind("--", 0) != 0 || w.text.size() == 2) {
        plan_.unknown.push_back(std::string(1, '"').append(io::shortened(w.text, 40)).append("\" (a word that follows no option)"));
        continue;
      }
      std::string name = w.text.substr(2), inline_value;
      const auto eq = name.find('=');
      const bool has_inline = eq != std::string::npos;
      if (has_inline) inline_value = name.substr(eq + 1), name.resize(eq);
      const std::string written = "--" + name;
      std::replace(name.begin(), name.end(), '_', '-');
      const ArgSpec* spec = spec_of(name);
      Given g;
      g.option = w;
      g.option.text = written;
      g.option.raw = has_inline ? written : w.raw;
      g.written = written;
      if (has_inline) g.values.push_back({inline_value, w.line, inline_value, ""});
      const Arity arity = spec ? spec->arity : Arity::Many;
      const auto is_value = [&](size_t k) { return k < args_.size() && args_[k].text.rfind("--", 0) != 0; };
      if (arity == Arity::Flag && has_inline) fail_arg(g, "takes no value (it is a flag)");
      if (arity == Arity::One && !has_inline) {
        if (!is_value(i)) fail_arg(g, "no value follows it");
        g.values.push_back(args_[i++]);
      }
      if (arity == Arity::Many)
        while (is_value(i)) g.values.push_back(args_[i++]);
      if (!spec) {
        plan_.unknown.push_back(io::shortened(written, 60));
        continue;
      }
      if (!given_.count(name)) order_.push_back(name);
      given_[name] = std::move(g);  // argparse: the last one counts
    }
  }

  void refuse_unmodelled() {
    for (const auto& name : order_) {
      const ArgSpec* spec = spec_of(name);
      const Given& g = given_.at(name);
      if (spec->role == Role::Refuse) problem_arg(g, std::string(spec->why));
      if (spec->role == Role::NoCost) plan_.not_imported.push_back(g.written);
      if (spec->role == Role::Same) same_.push_back(g.written);
    }
  }

  // --- values --------------------------------------------------------------------------------

  const Given* given(const std::string& name) const {
    const auto it = given_.find(name);
    return it == given_.end() ? nullptr : &it->second;
  }
  bool flag(const std::string& name) const { return given(name) != nullptr; }

  const ShellWord& known_value(const Given& g) const {
    const ShellWord& v = g.values.front();
    if (!v.known())
      fail(v.line, shown(g) + ": the value is not known from the file alone: " + v.unknown +
                       "; write the value, or set the variable in the file");
    return v;
  }

  std::optional<int64_t> integer(const std::string& name, int64_t min = 1) const {
    const Given* g = given(name);
    if (!g) return std::nullopt;
    const std::string& t = known_value(*g).text;
    // A sign, then at most 15 digits (no overflow); a negative one is out of range, said as such.
    const size_t start = !t.empty() && (t[0] == '+' || t[0] == '-') ? 1 : 0;
    if (t.size() <= start || t.size() - start > 15 || t.find_first_not_of("0123456789", start) != std::string::npos)
      fail_arg(*g, "expected an integer");
    const int64_t v = (t[0] == '-' ? -1 : 1) * std::stoll(t.substr(start));
    if (v < min) fail_arg(*g, "must be at least " + std::to_string(min));
    return v;
  }

  std::string text(const std::string& name, const std::string& fallback) const {
    const Given* g = given(name);
    return g ? known_value(*g).text : fallback;
  }

  // --num-layers within stepsim's bound, checked here: the layer patterns are listed layer by layer.
  int64_t num_layers() const {
    const int64_t n = required("num-layers");
    if (n > kMaxLayers)
      fail_arg(*given("num-layers"), "more layers than stepsim models (model.num_hidden_layers at most " +
                                        std::to_string(kMaxLayers) + "); give the model's layer count");
    return n;
  }

  int64_t required(const std::string& name) const {
    const auto v = integer(name);
    if (!v)
      fail(launch_line_, "--" + name + " is missing from the launch; Megatron-LM requires it, and stepsim needs it "
                                      "for the model's cost");
    return *v;
  }

  // One-to-one keys through the alias table.
  void key(const std::string& name, int64_t value) {
    const KeyAlias* a = find_alias(name);
    if (a == nullptr || a->key.empty() || !a->hint.empty())
      throw std::logic_error("--" + name + " has no one-to-one entry in simulator/config/key_aliases.cpp");
    const Given* g = given(name);
    plan_.set(std::string(a->key), value, g ? shown(*g) : "--" + name + " left out: Megatron-LM's default",
              g ? g->option.line : 0);
  }
  void key_if_given(const std::string& name, int64_t min = 1) {
    if (const auto v = integer(name, min)) key(name, *v);
  }

  // --- the plan ------------------------------------------------------------------------------

  void build() {
    world();
    refuse_what_megatron_refuses();
    model();
    batch_and_parallelism();
    recompute();
    cpu_offloading();
    precision();
    gradient_reduction();
    hardware_and_cluster();
    software();
    header();
  }

  // Launches Megatron-LM itself refuses (megatron/training/arguments.py validate_args and
  // TransformerConfig): each named with the flags and the fix, all of them in one error.
  void refuse_what_megatron_refuses() {
    const auto both = [&](const char* a, const char* b, const std::string& fix) {
      if (flag(a) && flag(b)) problem_arg(*given(b), "Megatron-LM refuses it with " + given(a)->written + "; " + fix);
    };
    both("bf16", "fp16", "keep one of --bf16 and --fp16");
    if (const Given* fsdp2 = given("use-torch-fsdp2")) {
      both("use-torch-fsdp2", "use-distributed-optimizer",
           "FSDP2 shards the optimizer itself: remove --use-distributed-optimizer");
      both("use-torch-fsdp2", "fp16", "use --bf16");
      if (integer("pipeline-model-parallel-size").value_or(1) > 1)
        problem_arg(*fsdp2, "Megatron-LM refuses it with pipeline parallelism; use --pipeline-model-parallel-size 1");
      if (integer("expert-model-parallel-size").value_or(1) > 1)
        problem_arg(*fsdp2, "Megatron-LM refuses it with expert parallelism; use --expert-model-parallel-size 1");
      if (!flag("untie-embeddings-and-output-weights"))
        problem_arg(*fsdp2, "Megatron-LM requires --untie-embeddings-and-output-weights with it; add it");
    }
    // --recompute-activations turns the granularity to selective, which refuses a recompute method.
    if (const Given* ra = given("recompute-activations"); ra && (given("recompute-method") || text("recompute-granularity", "") == "full"))
      problem_arg(*ra, "Megatron-LM makes it selective recomputation, overriding " +
                           (given("recompute-granularity") ? shown(*given("recompute-granularity")) : std::string("the granularity")) +
                           ", and then refuses " + (given("recompute-method") ? shown(*given("recompute-method")) : "a recompute method") +
                           "; keep either --recompute-activations or the full recompute arguments");
    if (const Given* ca = given("checkpoint-activations"))
      problem_arg(*ca, "Megatron-LM stops on this old name; use --recompute-activations (or --recompute-granularity)");
    if (const Given* opg = given("overlap-param-gather")) {
      if (!flag("overlap-grad-reduce"))
        problem_arg(*opg, "Megatron-LM requires --overlap-grad-reduce with it; add --overlap-grad-reduce");
      if (!flag("use-distributed-optimizer") && !flag("use-megatron-fsdp"))
        problem_arg(*opg, "Megatron-LM runs it only with the distributed optimizer or Megatron FSDP; add "
                          "--use-distributed-optimizer");
    }
    if (const Given* g = given("fp8-param-gather");
        g && !flag("use-distributed-optimizer") && !flag("use-megatron-fsdp") && !flag("use-torch-fsdp2"))
      problem_arg(*g, "Megatron-LM runs it only with the distributed optimizer or an FSDP; add "
                      "--use-distributed-optimizer");
    if (const Given* g = given("overlap-param-gather-with-optimizer-step");
        g && (!flag("use-distributed-optimizer") || !flag("overlap-param-gather") ||
              !(given("num-layers-per-virtual-pipeline-stage") || given("num-virtual-stages-per-pipeline-rank") ||
                given("pipeline-model-parallel-layout"))))
      problem_arg(*g, "Megatron-LM needs --use-distributed-optimizer, --overlap-param-gather and an interleaved pipeline "
                      "with it; remove it or add them");
    if (const Given* g = given("delay-wgrad-compute"); g && !flag("overlap-moe-expert-parallel-comm"))
      problem_arg(*g, "Megatron-LM (TransformerConfig) refuses it without --overlap-moe-expert-parallel-comm; add that "
                      "or remove it");
    if (const Given* g = given("expert-model-parallel-size"); g && !flag("num-experts") && integer("expert-model-parallel-size").value_or(1) > 1)
      problem_arg(*g, "Megatron-LM refuses expert parallelism without --num-experts; remove it or add the experts");
    if (const Given* g = given("moe-shared-expert-overlap")) {
      const std::string d = text("moe-token-dispatcher-type", "allgather");
      if (flag("num-experts") && d != "alltoall" && d != "flex")
        problem_arg(*g, "Megatron-LM runs it only with the alltoall or flex token dispatcher (here " + d +
                            "); use --moe-token-dispatcher-type alltoall");
    }
    // TransformerConfig's checks on activation offloading.
    if (const Given* g = given("cpu-offloading")) {
      if (integer("pipeline-model-parallel-size").value_or(1) > 1)
        problem_arg(*g, "Megatron-LM offloads only without pipeline parallelism; use --pipeline-model-parallel-size 1 "
                        "or remove it");
      if (given("recompute-granularity") || flag("recompute-activations"))
        problem_arg(*g, "Megatron-LM refuses it with activation recomputation; remove one of the two");
      if (const auto n = integer("cpu-offloading-num-layers", 0), layers = integer("num-layers"); n && layers && *n >= *layers)
        problem_arg(*given("cpu-offloading-num-layers"), "must be less than --num-layers " + std::to_string(*layers) +
                                                            " (Megatron-LM refuses it); lower it");
    }
    if (const auto mpe = integer("max-position-embeddings"); mpe && given("seq-length") && *mpe < *integer("seq-length"))
      problem_arg(*given("max-position-embeddings"), "is less than --seq-length " + known_value(*given("seq-length")).text +
                                                         ", which Megatron-LM refuses; raise it to at least the sequence");
    // The model-parallel GPUs of one replica must divide the world.
    const int64_t tp = integer("tensor-model-parallel-size").value_or(1), pp = integer("pipeline-model-parallel-size").value_or(1),
                  cp = integer("context-parallel-size").value_or(1);
    if (world_ % (tp * pp * cp) != 0) {
      const int64_t replica = tp * pp * cp;
      problem(launch_line_, "TP " + std::to_string(tp) + " x PP " + std::to_string(pp) + " x CP " + std::to_string(cp) +
                                " = " + std::to_string(replica) + " GPUs hold one model replica, which the " +
                                std::to_string(world_) + " GPUs of " + world_from_ +
                                " cannot (Megatron-LM refuses a world size that is not a multiple of it); give --gpus " +
                                std::to_string(replica) + " (or a multiple), or lower the parallel sizes");
    }
  }

  // The release is not in a launch script, but arguments Megatron-Core r0.8 did not have date it:
  // those of core_r0.11 - r0.13 (NeMo 25's) and of the releases after (Megatron-Bridge's), checked
  // against megatron/training/arguments.py at each core_r* tag. The pick is a note.
  void software() {
    static const std::pair<const char*, const char*> kDated[] = {
        {"cuda-graph-impl", "megatron-bridge"}, {"overlap-moe-expert-parallel-comm", "megatron-bridge"},
        {"moe-flex-dispatcher-backend", "megatron-bridge"},  // core 0.16
        {"mla-down-proj-fusion", "megatron-bridge"},         // core 0.17
        {"cuda-graph-modules", "megatron-bridge"},           // after core 0.17
        {"use-transformer-engine-op-fuser", "megatron-bridge"},  // core 0.18
        {"delay-wgrad-compute", "nemo-25"},     {"fp8-recipe", "nemo-25"},
        {"moe-router-dtype", "nemo-25"},  // core_r0.12
        {"cross-entropy-fusion-impl", "nemo-25"}, {"moe-enable-deepep", "nemo-25"},
        {"external-cuda-graph", "nemo-25"},     {"enable-cuda-graph", "nemo-25"},
        {"use-precision-aware-optimizer", "nemo-25"}};
    std::string name = "megatron-core-r0.8", why = "no argument newer than Megatron-Core r0.8's";
    int line = 0;
    for (const auto& [arg, release] : kDated)
      if (const Given* g = given(arg)) {
        name = release, line = g->option.line;
        why = shown(*g) + (std::string(release) == "nemo-25" ? ": Megatron-Core r0.11 or later" : ": Megatron-Core r0.14 or later");
        break;
      }
    plan_.set("software.profile", name, why, line);
    plan_.notes.push_back("software.profile " + name + " (" + why + "); another release: --set software.profile=NAME");
    if (const Given* g = given("cross-entropy-loss-fusion"))
      plan_.set("software.fused.cross_entropy", true, shown(*g), g->option.line);
    // CUDA graphs: per layer (--enable-cuda-graph, --external-cuda-graph, --cuda-graph-impl
    // transformer_engine or local) or the whole iteration (--cuda-graph-scope full_iteration).
    // Megatron-LM after core 0.17 names the scopes --cuda-graph-modules (--cuda-graph-scope kept as
    // its deprecated spelling; the two together are refused); "full" is the whole layer, as no scope.
    const Given* impl = given("cuda-graph-impl");
    const std::string impl_text = impl ? known_value(*impl).text : "";
    const Given* old_scope = given("cuda-graph-scope");
    const Given* new_scope = given("cuda-graph-modules");
    if (old_scope && new_scope)
      fail_arg(*new_scope, "Megatron-LM refuses it beside " + shown(*old_scope) + " (its deprecated name); keep one");
    const Given* scope = new_scope ? new_scope : old_scope;
    if (scope && scope->values.empty())
      fail_arg(*scope, "no scope given (Megatron-LM's argparse needs one); write attn, mlp, moe, moe_router, "
                       "moe_preprocess or full_iteration, or leave it out for whole layers");
    bool full = false;
    std::vector<std::string> parts;  // the per-layer graphs' scopes (software.cuda_graph_scope)
    if (scope)
      for (const auto& v : scope->values) {
        if (!v.known()) continue;
        if (v.text == "full_iteration") {
          full = true;
          continue;
        }
        if (v.text == "full") continue;  // the whole layer: no scope
        if (!value_of(kGraphScopes, v.text)) {
          std::string names;
          for (const auto& n : kGraphScopes) names += std::string(names.empty() ? "" : ", ") + n.name;
          fail_arg(*scope, "scope " + v.text + " is not modelled; stepsim graphs full_iteration, whole layers (no scope) "
                           "or any of " + names);
        }
        parts.push_back(v.text);
      }
    if (impl && impl_text != "none" && impl_text != "local" && impl_text != "transformer_engine" && impl_text != "full_iteration")
      fail_arg(*impl, "expected none, local, transformer_engine or full_iteration");
    const Given* on = impl && impl_text != "none" ? impl : given("enable-cuda-graph") ? given("enable-cuda-graph") : given("external-cuda-graph");
    if (on != nullptr) {
      const bool whole = full || impl_text == "full_iteration";
      plan_.set("software.cuda_graphs", whole ? "full_iteration" : "layers",
                shown(*on) + (whole && scope ? " " + shown(*scope) : ""), on->option.line);
      if (!whole && !parts.empty()) plan_.set("software.cuda_graph_scope", parts, shown(*scope), scope->option.line);
    }
  }

  // torchrun --nnodes x --nproc-per-node, or --gpus.
  void world() {
    std::optional<int64_t> nodes, per_node;
    std::string why_not;
    for (size_t i = 0; i < launcher_.size(); ++i) {
      std::string w = launcher_[i].text, value;
      const auto eq = w.find('=');
      const bool inline_v = eq != std::string::npos && w.rfind("--", 0) == 0;
      if (inline_v) value = w.substr(eq + 1), w.resize(eq);
      std::replace(w.begin(), w.end(), '_', '-');
      if (w != "--nnodes" && w != "--nproc-per-node") continue;
      const ShellWord* v = inline_v ? nullptr : (i + 1 < launcher_.size() ? &launcher_[i + 1] : nullptr);
      if (!inline_v && !v) continue;
      const int line = launcher_[i].line;
      if (v && !v->known()) {
        why_not = w + " " + v->raw + ": " + v->unknown;
        continue;
      }
      const std::string t = inline_v ? value : v->text;
      if (t.empty() || t.size() > 9 || t.find_first_not_of("0123456789") != std::string::npos || std::stoll(t) < 1) {
        why_not = w + " " + t + " is not a number of " + (w == "--nnodes" ? "nodes" : "GPUs") + " stepsim can use";
        continue;
      }
      (w == "--nnodes" ? nodes : per_node) = std::stoll(t);
      (w == "--nnodes" ? nodes_line_ : per_node_line_) = line;
    }
    // torchrun's own defaults: one node (also with --standalone), one process per node.
    bool torchrun = false, standalone = false;
    for (const auto& w : launcher_) {
      const std::string base = script_of(w.text);
      torchrun = torchrun || base == "torchrun" || base == "torch.distributed.run" || base == "torch.distributed.launch";
      standalone = standalone || w.text == "--standalone";
    }
    if (torchrun && why_not.empty() && (nodes || per_node || standalone)) {
      if (!nodes) nodes = 1;
      if (!per_node) per_node = 1;
    }
    if (per_node) gpus_per_node_ = *per_node, gpn_from_ = "torchrun --nproc-per-node " + std::to_string(*per_node);
    if (opt_.gpus_per_node > 0)
      gpus_per_node_ = opt_.gpus_per_node, gpn_from_ = "--gpus-per-node " + std::to_string(opt_.gpus_per_node),
      per_node_line_ = 0;
    if (opt_.gpus > 0) {
      world_ = opt_.gpus;
      world_from_ = "--gpus " + std::to_string(opt_.gpus);
      if (nodes && per_node && *nodes * *per_node != opt_.gpus)
        plan_.notes.push_back("--gpus " + std::to_string(opt_.gpus) + " wins over the launch's torchrun (" +
                              std::to_string(*nodes) + " x " + std::to_string(*per_node) + " = " +
                              std::to_string(*nodes * *per_node) + " GPUs)");
      nodes_line_ = 0;
    } else if (nodes && per_node) {
      world_ = *nodes * *per_node;
      world_from_ = "torchrun --nnodes " + std::to_string(*nodes) + " --nproc-per-node " + std::to_string(*per_node);
    } else {
      fail(launch_line_, "the number of GPUs is not in the file (" +
                             (why_not.empty() ? std::string("no torchrun --nnodes and --nproc-per-node") : why_not) +
                             "); give it with --gpus N");
    }
    if (gpus_per_node_ > world_) gpus_per_node_ = world_;
    if (world_ % gpus_per_node_ != 0)
      fail(0, world_from_ + ": " + std::to_string(world_) + " GPUs are not a whole number of " +
                  std::to_string(gpus_per_node_) + "-GPU nodes (" + gpn_from_ + "); give --gpus-per-node");
  }

  void model() {
    const int64_t layers = num_layers(), hidden = required("hidden-size"),
                  heads = required("num-attention-heads");
    plan_.set("model.name", io::shortened(io::printable(std::filesystem::path(source_).filename().string()), 200),
              "the launch file's name");
    key("hidden-size", hidden);
    key("num-layers", layers);
    key("num-attention-heads", heads);
    // Grouped-query attention: --num-query-groups counts only with --group-query-attention.
    if (flag("group-query-attention")) {
      const Given* g = given("num-query-groups");
      const int64_t groups = integer("num-query-groups").value_or(1);
      plan_.set("model.num_key_value_heads", groups,
                g ? "--group-query-attention " + shown(*g) : "--group-query-attention (Megatron-LM's default 1 group)",
                given("group-query-attention")->option.line);
    } else if (const Given* g = given("num-query-groups")) {
      plan_.not_imported.push_back(g->written + " (without --group-query-attention Megatron-LM ignores it)");
    }
    if (const auto kv = integer("kv-channels")) key("kv-channels", *kv);
    const bool mla = flag("multi-latent-attention");
    if (mla) {
      if (flag("group-query-attention")) fail_arg(*given("group-query-attention"), "Megatron-LM refuses it with --multi-latent-attention");
      plan_.set("model.kv_lora_rank", integer("kv-lora-rank").value_or(32),
                given("kv-lora-rank") ? shown(*given("kv-lora-rank")) : "--multi-latent-attention (default --kv-lora-rank 32)",
                given("multi-latent-attention")->option.line);
      if (const auto q = integer("q-lora-rank")) key("q-lora-rank", *q);
      plan_.set("model.qk_nope_head_dim", integer("qk-head-dim").value_or(128),
                given("qk-head-dim") ? shown(*given("qk-head-dim")) : "--multi-latent-attention (default --qk-head-dim 128)");
      plan_.set("model.qk_rope_head_dim", integer("qk-pos-emb-head-dim").value_or(64),
                given("qk-pos-emb-head-dim") ? shown(*given("qk-pos-emb-head-dim"))
                                             : "--multi-latent-attention (default --qk-pos-emb-head-dim 64)");
      plan_.set("model.v_head_dim", integer("v-head-dim").value_or(128),
                given("v-head-dim") ? shown(*given("v-head-dim")) : "--multi-latent-attention (default --v-head-dim 128)");
      // One norm-fused q/kv down projection; without it the Megatron profiles run the two apart.
      if (const Given* g = given("mla-down-proj-fusion")) {
        if (!given("q-lora-rank")) fail_arg(*g, "Megatron-LM's fused MLA needs a q latent; add --q-lora-rank or drop this flag");
        plan_.set("software.fused.mla_down_proj", true, shown(*g), g->option.line);
      }
    } else {
      if (const Given* g = given("mla-down-proj-fusion"))
        fail_arg(*g, "Megatron-LM asserts --multi-latent-attention with it; add that or drop this flag");
      for (const char* n : {"q-lora-rank", "kv-lora-rank", "qk-head-dim", "qk-pos-emb-head-dim", "v-head-dim"})
        if (const Given* g = given(n)) plan_.not_imported.push_back(g->written + " (without --multi-latent-attention Megatron-LM ignores it)");
    }
    // The MLP: SwiGLU (gated, three matrices) or GELU (two); Megatron-LM's default width follows it.
    const bool swiglu = flag("swiglu");
    const int64_t ffn = integer("ffn-hidden-size").value_or(swiglu ? (4 * hidden * 2 / 3) / 64 * 64 : 4 * hidden);
    plan_.set("model.intermediate_size", ffn,
              given("ffn-hidden-size") ? shown(*given("ffn-hidden-size"))
                                       : std::string("--ffn-hidden-size left out: Megatron-LM's default ") +
                                             (swiglu ? "int(4 x hidden x 2/3 / 64) x 64 with --swiglu" : "4 x hidden"),
              given("ffn-hidden-size") ? given("ffn-hidden-size")->option.line : 0);
    activation(swiglu);
    biases();
    qk_norm();
    sliding_window(layers);
    // Rotary or no position embedding costs nothing stepsim counts; a learned table is max positions x
    // hidden parameters (0.1 % of a 7B model at 4096 positions), left out.
    if (const Given* g = given("position-embedding-type")) {
      const std::string pos = known_value(*g).text;
      if (pos != "rope" && pos != "none" && pos != "yarn" && pos != "learned_absolute" && pos != "mrope")
        fail_arg(*g, "only rope, yarn, mrope, learned_absolute and none are known");
      plan_.not_imported.push_back(g->written + " " + pos);
    }
    vocabulary();
    const bool untied = flag("untie-embeddings-and-output-weights");
    plan_.set("model.tie_word_embeddings", !untied,
              untied ? shown(*given("untie-embeddings-and-output-weights"))
                     : "no --untie-embeddings-and-output-weights: Megatron-LM ties them",
              untied ? given("untie-embeddings-and-output-weights")->option.line : 0);
    if (const auto mtp = integer("mtp-num-layers", 0)) {
      key("mtp-num-layers", *mtp);
      if (*mtp > 0)
        plan_.header.push_back("--mtp-num-layers: stepsim leaves multi-token prediction out of the step, as in its "
                               "DeepSeek-V3 plan (explain shows its share).");
    }
    experts(layers, ffn);
  }

  // Megatron's linear layers carry bias vectors unless --disable-bias-linear (add_bias_linear is on by
  // default): the attention projections' and the MLP's, model.attention_bias and model.mlp_bias.
  // --add-qkv-bias alone biases the QKV projection: stepsim's attention bias also counts the output
  // projection's hidden-size vector, one more per layer.
  void biases() {
    const Given* off = given("disable-bias-linear");
    const Given* on = given("add-bias-linear");
    const Given* qkv = given("add-qkv-bias");
    if (off) on = nullptr;  // --disable-bias-linear wins
    const bool linear = off == nullptr;
    const std::string from = off ? shown(*off)
                             : on ? shown(*on)
                                  : "no --disable-bias-linear: Megatron-LM's linear layers carry bias vectors";
    const int line = off ? off->option.line : on ? on->option.line : 0;
    plan_.set("model.attention_bias", linear || qkv != nullptr,
              !linear && qkv ? shown(*qkv) + ": the QKV projection's bias (stepsim adds the output projection's, "
                                             "hidden-size values per layer)"
                             : from,
              !linear && qkv ? qkv->option.line : line);
    plan_.set("model.mlp_bias", linear, from, line);
  }

  // --qk-layernorm: an RMSNorm over each query and key head (Qwen3's attention), model.qk_norm.
  void qk_norm() {
    const Given* g = given("qk-layernorm");
    plan_.set("model.qk_norm", g != nullptr, g ? shown(*g) : "no --qk-layernorm", g ? g->option.line : 0);
  }

  // A finite number written whole (strtod's syntax, nothing after it), or none.
  static std::optional<double> real_number(const std::string& t) {
    char* end = nullptr;
    const double v = t.empty() ? 0 : std::strtod(t.c_str(), &end);
    if (t.empty() || end != t.c_str() + t.size() || !std::isfinite(v)) return std::nullopt;
    return v;
  }

  // A whole number as Python's int() reads one (spaces around, a sign, at most 9 digits), or none.
  static std::optional<int64_t> whole_number(std::string v) {
    while (!v.empty() && v.front() == ' ') v.erase(v.begin());
    while (!v.empty() && v.back() == ' ') v.pop_back();
    const bool negative = !v.empty() && v.front() == '-';
    const size_t start = !v.empty() && (v.front() == '-' || v.front() == '+') ? 1 : 0;
    if (v.size() <= start || v.size() - start > 9 || v.find_first_not_of("0123456789", start) != std::string::npos)
      return std::nullopt;
    const int64_t n = std::stoll(v.substr(start));
    return negative ? -n : n;
  }

  // --window-size L,R (Megatron-LM's tuple: "127,0" or "(127,0)"): each query sees L earlier keys and
  // itself, model.sliding_window L + 1; R must be 0 (causal). --window-attn-skip-freq: every N-th
  // layer, counted from 1, keeps full attention, or a list expression with 1 for a windowed layer
  // (megatron/core/transformer/utils.py is_layer_window_attention); absent: every layer.
  void sliding_window(int64_t layers) {
    const Given* g = given("window-size");
    const Given* skip = given("window-attn-skip-freq");
    if (g == nullptr) {
      if (skip != nullptr) fail_arg(*skip, "has no effect without --window-size; remove it or give the window");
      return;
    }
    std::string t = known_value(*g).text;
    if (t.size() >= 2 && t.front() == '(' && t.back() == ')') t = t.substr(1, t.size() - 2);
    const size_t comma = t.find(',');
    const auto left = comma == std::string::npos ? std::nullopt : whole_number(t.substr(0, comma));
    const auto right = comma == std::string::npos ? std::nullopt : whole_number(t.substr(comma + 1));
    if (!left || !right) fail_arg(*g, "expected two whole numbers, the keys before and after each query, such as 127,0");
    if (*right != 0)
      fail_arg(*g, "a window reaching " + std::to_string(*right) + " later keys is not causal attention; stepsim models "
                   "left windows (L,0) only");
    if (*left < 0) return;  // (-1, 0): no limit, full causal attention
    std::vector<int64_t> windowed;
    if (skip == nullptr) {
      for (int64_t i = 0; i < layers; ++i) windowed.push_back(i);
    } else if (const std::optional<int64_t> n = whole_number(known_value(*skip).text)) {
      if (*n < 1) fail_arg(*skip, "must be at least 1");
      for (int64_t i = 0; i < layers; ++i)
        if ((i + 1) % *n != 0) windowed.push_back(i);
    } else {
      const auto p = layer_pattern(*skip, layers);
      if (int64_t(p.size()) != layers)
        fail_arg(*skip, "describes " + std::to_string(p.size()) + " layers, but --num-layers is " + std::to_string(layers));
      for (int64_t i = 0; i < layers; ++i)
        if (p[size_t(i)] == 1) windowed.push_back(i);
    }
    if (windowed.empty()) return;  // every layer full
    const int line = skip != nullptr ? skip->option.line : g->option.line;
    plan_.set("model.sliding_window", *left + 1, shown(*g) + ": " + std::to_string(*left) + " earlier keys and the query's own",
              g->option.line);
    plan_.set("model.sliding_layers", windowed,
              skip != nullptr ? shown(*skip) : std::string("no --window-attn-skip-freq: every layer"), line);
  }

  // GELU, SwiGLU, quick GeGLU or squared ReLU: model.hidden_act (HF names: silu gated, gelu and relu2
  // not); --activation-func-clamp-value: model.swiglu_limit.
  void activation(bool swiglu) {
    clamp();
    if (const Given* relu2 = given("squared-relu")) {
      if (swiglu) fail_arg(*relu2, "Megatron-LM refuses --squared-relu with --swiglu (one activation); keep one");
      plan_.set("model.hidden_act", "relu2", shown(*relu2) + ": squared ReLU, a non-gated MLP", relu2->option.line);
      if (const Given* quick = given("quick-geglu"))
        plan_.not_imported.push_back(quick->written + " (Megatron-LM ignores it beside --squared-relu)");
      return;
    }
    // GPT-OSS's x sigmoid(1.702 x) gate times (up + offset): a gated SiLU-class activation of three
    // matrices, costed as SwiGLU (HF's GPT-OSS config.json names it silu).
    if (const Given* quick = given("quick-geglu")) {
      if (swiglu) fail_arg(*quick, "Megatron-LM refuses --quick-geglu with --swiglu (one activation); keep one");
      plan_.set("model.hidden_act", "silu", shown(*quick) + ": gated quick GELU (GPT-OSS), three matrices, costed as SwiGLU",
                quick->option.line);
      return;
    }
    const std::string from = swiglu ? shown(*given("swiglu")) : "no --swiglu: Megatron-LM's default GELU MLP";
    const int line = swiglu ? given("swiglu")->option.line : 0;
    if (is_config_key("model.hidden_act")) {
      plan_.set("model.hidden_act", swiglu ? "silu" : "gelu", from, line);
    } else if (!swiglu) {
      fail(launch_line_, "no --swiglu: a GELU MLP (two matrices) is not modelled by this build of stepsim (SwiGLU, "
                         "three matrices, is); add --swiglu to plan a SwiGLU model");
    }
  }

  // --activation-func-clamp-value: the gated activation's clamp (Megatron-LM uses it with --quick-geglu
  // and, for MoE models, --swiglu; with neither it is ignored).
  void clamp() {
    const Given* g = given("activation-func-clamp-value");
    if (g == nullptr) return;
    const std::optional<double> v = real_number(known_value(*g).text);
    if (!v || *v <= 0) fail_arg(*g, "expected a positive number (Megatron-LM: finite and greater than zero)");
    if (!given("quick-geglu") && !given("swiglu")) {
      plan_.not_imported.push_back(g->written + " (Megatron-LM uses it only with --quick-geglu or --swiglu)");
      return;
    }
    plan_.set("model.swiglu_limit", *v, shown(*g) + ": the gate clamped to at most it, the up projection to +-it",
              g->option.line);
  }

  // --vocab-size or the tokenizer's, padded as Megatron-LM pads it: to a multiple of
  // --make-vocab-size-divisible-by (128) x TP.
  void vocabulary() {
    int64_t raw = 0;
    std::string from;
    int line = 0;
    if (const auto v = integer("vocab-size")) {
      raw = *v, from = shown(*given("vocab-size")), line = given("vocab-size")->option.line;
      const Given* t = given("tokenizer-type");
      // NullTokenizer (megatron/training/tokenizer/tokenizer.py _NullTokenizer) holds --vocab-size
      // ids and one more, its end-of-document token.
      if (t && known_value(*t).text == "NullTokenizer") {
        raw = *v + 1, from += " " + shown(*t) + " (and its end-of-document token: " + std::to_string(raw) + " ids)";
      } else if (t) {
        plan_.not_imported.push_back(t->written + " (--vocab-size gives the size)");
      }
    } else {
      static const std::map<std::string, int64_t> fixed = {
          {"GPT2BPETokenizer", 50257}, {"BertWordPieceLowerCase", 30522}, {"BertWordPieceCase", 28996},
          {"Llama2Tokenizer", 32000},  {"TikTokenizer", 131072}};
      const Given* t = given("tokenizer-type");
      const std::string type = t ? known_value(*t).text : "";
      const auto it = fixed.find(type);
      // A vocabulary and a merge file with no type: GPT-2's BPE pair (Megatron-LM's own GPT examples).
      if (!t && given("vocab-file") && given("merge-file")) {
        const Given* m = given("merge-file");
        raw = 50257, from = shown(*m) + " with no --tokenizer-type: GPT-2's BPE vocabulary (50257 tokens) assumed; give "
                                        "--vocab-size N for another", line = m->option.line;
      } else if (it == fixed.end())
        fail(t ? t->option.line : launch_line_,
             (t ? shown(*t) + ": stepsim cannot read the vocabulary size from the tokenizer's files"
                : std::string("no --vocab-size and no --tokenizer-type with a known vocabulary")) +
                 "; add --vocab-size N (the tokenizer's vocabulary size) to the launch");
      else
        raw = it->second, from = shown(*t) + " (" + std::to_string(raw) + " tokens)", line = t->option.line;
    }
    const int64_t divisible = integer("make-vocab-size-divisible-by").value_or(128);
    const int64_t tp = integer("tensor-model-parallel-size").value_or(1);
    const int64_t multiple = divisible * tp;
    if (raw > (int64_t(1) << 24)) fail(line, from + ": over 16,777,216 tokens is no vocabulary");
    const int64_t padded = (raw + multiple - 1) / multiple * multiple;
    plan_.set("model.vocab_size", padded,
              from + (padded != raw ? ", padded to a multiple of " + std::to_string(divisible) + " x TP " +
                                          std::to_string(tp) + " as Megatron-LM pads it"
                                    : ""),
              line);
  }

  // --moe-layer-freq: an integer N (every N-th layer is MoE) or a Python list expression such as
  // "([0]*3+[1]*58)"; stepsim models a leading run of dense layers only.
  std::vector<int> layer_pattern(const Given& g, int64_t layers) const {
    const std::string& t = known_value(g).text;
    if (!t.empty() && t.find_first_not_of("0123456789") == std::string::npos && t.size() < 6) {
      const int64_t n = std::stoll(t);
      if (n < 1) fail_arg(g, "must be at least 1");
      std::vector<int> p;
      for (int64_t i = 0; i < layers; ++i) p.push_back(i % n == 0 ? 1 : 0);
      return p;
    }
    size_t i = 0;
    std::function<std::vector<int>(int)> sum;
    const auto bad = [&]() -> std::vector<int> {
      fail_arg(g, "expected an integer or a list expression such as \"([0]*3+[1]*58)\"");
    };
    const auto skip = [&] {
      while (i < t.size() && t[i] == ' ') ++i;
    };
    const auto atom = [&](int depth) -> std::vector<int> {
      skip();
      if (i < t.size() && t[i] == '(') {
        ++i;
        auto v = sum(depth + 1);
        skip();
        if (i >= t.size() || t[i] != ')') bad();
        ++i;
        return v;
      }
      if (i >= t.size() || t[i] != '[') bad();
      ++i;
      std::vector<int> v;
      for (;;) {
        skip();
        if (i < t.size() && t[i] == ']') break;
        if (i >= t.size() || (t[i] != '0' && t[i] != '1')) bad();
        v.push_back(t[i++] - '0');
        skip();
        if (i < t.size() && t[i] == ',') ++i;
      }
      ++i;
      return v;
    };
    const auto term = [&](int depth) -> std::vector<int> {
      auto v = atom(depth);
      for (;;) {
        skip();
        if (i >= t.size() || t[i] != '*') return v;
        ++i;
        skip();
        size_t j = i;
        while (j < t.size() && std::isdigit(static_cast<unsigned char>(t[j]))) ++j;
        if (j == i || j - i > 5) bad();
        const size_t n = std::stoul(t.substr(i, j - i));
        i = j;
        if (v.size() * n > 65536) bad();
        std::vector<int> r;
        for (size_t k = 0; k < n; ++k) r.insert(r.end(), v.begin(), v.end());
        v = std::move(r);
      }
    };
    sum = [&](int depth) -> std::vector<int> {
      if (depth > 32) bad();
      auto v = term(depth);
      for (;;) {
        skip();
        if (i >= t.size() || t[i] != '+') return v;
        ++i;
        auto r = term(depth);
        if (v.size() + r.size() > 65536) bad();
        v.insert(v.end(), r.begin(), r.end());
      }
    };
    auto v = sum(0);
    skip();
    if (i != t.size()) bad();
    return v;
  }

  void experts(int64_t layers, int64_t ffn) {
    const auto experts = integer("num-experts");
    if (!experts) {
      for (const char* n : {"moe-router-topk", "moe-ffn-hidden-size", "moe-shared-expert-intermediate-size", "moe-layer-freq",
                            "moe-router-num-groups", "moe-router-group-topk", "moe-token-dispatcher-type",
                            "moe-shared-expert-overlap", "expert-tensor-parallel-size", "moe-grouped-gemm",
                            "moe-enable-deepep", "moe-flex-dispatcher-backend", "moe-expert-capacity-factor",
                            "moe-pad-expert-input-to-capacity", "moe-router-dtype", "moe-router-force-load-balancing",
                            "moe-deepep-num-sms", "moe-paged-stash", "moe-expert-rank-capacity-factor"})
        if (const Given* g = given(n)) plan_.not_imported.push_back(g->written + " (without --num-experts the model has no experts)");
      if (const Given* g = given("use-transformer-engine-op-fuser"))
        plan_.not_imported.push_back(g->written + " (a dense MLP through Transformer Engine's op fuser: stepsim charges its "
                                                  "linears and activation as apart)");
      if (const Given* g = given("overlap-moe-expert-parallel-comm"))
        problem_arg(*g, "Megatron-LM runs it only with expert parallelism (--num-experts, --expert-model-parallel-size); "
                        "remove it");
      return;
    }
    key("num-experts", *experts);
    const Given* topk = given("moe-router-topk");
    plan_.set("model.num_experts_per_tok", integer("moe-router-topk").value_or(2),
              topk ? shown(*topk) : "--moe-router-topk left out: Megatron-LM's default 2", topk ? topk->option.line : 0);
    const Given* width = given("moe-ffn-hidden-size");
    plan_.set("model.moe_intermediate_size", integer("moe-ffn-hidden-size").value_or(ffn),
              width ? shown(*width) : "--moe-ffn-hidden-size left out: Megatron-LM uses --ffn-hidden-size",
              width ? width->option.line : 0);
    key_if_given("moe-shared-expert-intermediate-size");
    key_if_given("moe-router-num-groups");
    key_if_given("moe-router-group-topk");
    int64_t dense = 0;
    if (const Given* g = given("moe-layer-freq")) {
      const auto p = layer_pattern(*g, layers);
      if (int64_t(p.size()) != layers)
        fail_arg(*g, "describes " + std::to_string(p.size()) + " layers, but --num-layers is " + std::to_string(layers));
      while (dense < layers && p[size_t(dense)] == 0) ++dense;
      for (int64_t i = dense; i < layers; ++i)
        if (p[size_t(i)] != 1)
          fail_arg(*g, "puts a dense layer (" + std::to_string(i) + ") after an MoE layer; stepsim models a leading run "
                       "of dense layers only (every layer from the first MoE one on is MoE)");
      plan_.set("model.first_k_dense_replace", dense, shown(*g), g->option.line);
    }
    expert_parallelism();
    router_dtype();
    // Benchmarks force every expert its mean load (router.py: random logits in place of the learned
    // ones), which is stepsim's balanced routing.
    if (const Given* g = given("moe-router-force-load-balancing"))
      plan_.set("scenario.routing", "balanced", shown(*g) + ": every expert its mean load", g->option.line);
    // DeepEP's SMs (the profile's software.deepep_sms, Megatron-LM's default 20, unless given).
    if (const Given* g = given("moe-deepep-num-sms"))
      plan_.set("software.deepep_sms", integer("moe-deepep-num-sms").value_or(20), shown(*g), g->option.line);
    if (const Given* g = given("moe-shared-expert-overlap")) plan_.set("parallel.overlap_shared_expert", true, shown(*g), g->option.line);
    rank_capacity_and_stash();
  }

  // --moe-expert-rank-capacity-factor: each EP rank's receive budget (a fixed buffer HybridEP drops
  // beyond); --moe-paged-stash: the experts' saved tensors copied to pages and back, which Megatron-Core
  // runs only with that budget (TransformerConfig's checks). The budget itself costs nothing here:
  // stepsim drops no row.
  void rank_capacity_and_stash() {
    const Given* budget = given("moe-expert-rank-capacity-factor");
    if (budget) {
      const std::optional<double> v = real_number(known_value(*budget).text);
      if (!v || !(*v > 0))
        fail_arg(*budget, "expected a positive number (the receive budget in units of a rank's mean rows, e.g. 1.5)");
      if (text("moe-token-dispatcher-type", "allgather") != "flex" || text("moe-flex-dispatcher-backend", "deepep") != "hybridep")
        problem_arg(*budget, "Megatron-LM runs it only with --moe-token-dispatcher-type flex and "
                             "--moe-flex-dispatcher-backend hybridep; add them or remove it");
      plan_.not_imported.push_back(budget->written + " (a receive budget: stepsim drops no row)");
    }
    const Given* stash = given("moe-paged-stash");
    if (!stash) return;
    if (!budget)
      problem_arg(*stash, "Megatron-LM requires --moe-expert-rank-capacity-factor with it; add it (NVIDIA's recipes "
                          "use 1.5) or remove --moe-paged-stash");
    plan_.set("parallel.moe_paged_stash", true, shown(*stash) + ": the experts' saved tensors copied to pages and back",
              stash->option.line);
  }

  // --moe-router-dtype (arguments.py: fp32 or fp64; left out, the router runs in the parameters'
  // BF16). FP64 runs its GEMMs on FP64 units, whose rate no preset carries: refused.
  void router_dtype() {
    const Given* g = given("moe-router-dtype");
    if (!g) return;
    const std::string dtype = text("moe-router-dtype", "");
    if (dtype == "fp32")
      plan_.set("parallel.moe_router_dtype", "fp32", shown(*g), g->option.line);
    else if (dtype == "fp64")
      problem_arg(*g, "stepsim prices the router in BF16 or FP32 only (no preset carries an FP64 rate); use "
                      "--moe-router-dtype fp32 or leave it out");
    else
      problem_arg(*g, "Megatron-LM's router dtypes are fp32 and fp64; use fp32 or leave it out");
  }

  // How the experts run (Megatron-Core's MoE layer): expert tensor parallelism, the token
  // dispatcher, grouped or per-expert GEMMs, capacity and padding, the all-to-all overlap; each
  // with Megatron-LM's default when left out and its refusals.
  void expert_parallelism() {
    const int64_t tp = integer("tensor-model-parallel-size").value_or(1), ep = integer("expert-model-parallel-size").value_or(1);
    // arguments.py: expert_tensor_parallel_size = tensor_model_parallel_size when not given.
    const Given* etp = given("expert-tensor-parallel-size");
    const int64_t expert_tp = integer("expert-tensor-parallel-size").value_or(tp);
    plan_.set("parallel.expert_tp", expert_tp,
              etp ? shown(*etp)
                  : "--expert-tensor-parallel-size left out: Megatron-LM uses the TP size, " + std::to_string(tp),
              etp ? etp->option.line : 0);
    const std::string dispatcher = token_dispatcher(expert_tp);
    // Grouped GEMM: TEGroupedMLP; without it SequentialMLP, one GEMM per local expert in turn.
    const Given* grouped = given("moe-grouped-gemm");
    plan_.set("parallel.moe_grouped_gemm", grouped != nullptr,
              grouped ? shown(*grouped) : "no --moe-grouped-gemm: Megatron-LM's SequentialMLP, one GEMM per local expert",
              grouped ? grouped->option.line : 0);
    capacity(dispatcher);
    fused_experts(grouped, expert_tp);
    if (const Given* g = given("overlap-moe-expert-parallel-comm")) {
      // TransformerConfig's checks beside the overlap (the schedule's and recompute's are the plan's).
      if (ep <= 1) problem_arg(*g, "Megatron-LM runs it only with expert parallelism; add --expert-model-parallel-size");
      if (dispatcher == "allgather")
        problem_arg(*g, "Megatron-LM runs it only with the alltoall or flex token dispatcher; add "
                        "--moe-token-dispatcher-type alltoall");
      if (integer("pipeline-model-parallel-size").value_or(1) > 1 && !given("num-layers-per-virtual-pipeline-stage") &&
          !given("num-virtual-stages-per-pipeline-rank") && !given("pipeline-model-parallel-layout"))
        problem_arg(*g, "Megatron-LM needs a virtual pipeline with it when --pipeline-model-parallel-size > 1; add "
                        "--num-virtual-stages-per-pipeline-rank");
      if (const Given* m = given("recompute-method"))
        problem_arg(*g, "Megatron-LM refuses it with " + shown(*m) + " (full recomputation); remove the recompute method");
      if (const Given* so = given("moe-shared-expert-overlap"))
        problem_arg(*g, "Megatron-LM refuses it with " + so->written + "; remove " + so->written);
      plan_.set("parallel.moe_overlap_ep_comm", true,
                shown(*g) + ": a backward microbatch's all-to-alls overlap the next forward's compute", g->option.line);
    }
  }

  // --use-transformer-engine-op-fuser: Megatron-Core builds the experts as Transformer Engine's op-fuser
  // pipeline (moe/experts.py, _is_fused_impl_supported), which for a gated MLP asserts
  // NVTE_CUTEDSL_FUSED_GROUPED_MLP=1: the fused grouped MLP, each GEMM one grouped kernel, the
  // activation in their epilogues. It needs grouped GEMMs and no expert TP; the precision and the
  // activation are checked with the plan.
  void fused_experts(const Given* grouped, int64_t expert_tp) {
    const Given* g = given("use-transformer-engine-op-fuser");
    if (!g) return;
    if (!grouped) problem_arg(*g, "Megatron-LM runs the fused experts only as grouped GEMMs; add --moe-grouped-gemm");
    if (expert_tp > 1)
      problem_arg(*g, "Megatron-LM runs the fused experts without expert tensor parallelism; add "
                      "--expert-tensor-parallel-size 1");
    plan_.set("software.fused.grouped_mlp", true,
              shown(*g) + ": Transformer Engine's fused grouped MLP (NVTE_CUTEDSL_FUSED_GROUPED_MLP=1, which Megatron-Core "
                          "asserts for a gated MLP)",
              g->option.line);
    plan_.set("software.grouped_gemm_per_expert", false, shown(*g) + ": each expert GEMM one grouped kernel", g->option.line);
  }

  // --moe-token-dispatcher-type (Megatron-LM's default allgather); flex runs DeepEP (its default
  // backend, --moe-enable-deepep) or HybridEP, both dispatching one copy per remote NVLink domain and
  // forwarding it over NVLink, stepsim's deepep. Returns Megatron's dispatcher name.
  std::string token_dispatcher(int64_t expert_tp) {
    const Given* type = given("moe-token-dispatcher-type");
    const Given* deepep = given("moe-enable-deepep");
    const Given* backend_arg = given("moe-flex-dispatcher-backend");
    const std::string dispatcher = text("moe-token-dispatcher-type", "allgather");
    const std::string backend = text("moe-flex-dispatcher-backend", "deepep");
    if (deepep && dispatcher != "flex")
      problem_arg(*deepep, "Megatron-LM runs DeepEP only with the flex token dispatcher; add --moe-token-dispatcher-type flex");
    if (deepep && backend_arg && backend != "deepep")
      problem_arg(*backend_arg, "Megatron-LM refuses a second flex backend beside --moe-enable-deepep; keep one");
    if (backend_arg && dispatcher != "flex")
      plan_.not_imported.push_back(backend_arg->written + " " + backend + " (read only with --moe-token-dispatcher-type flex)");
    const std::string from = type ? shown(*type) : "--moe-token-dispatcher-type left out: Megatron-LM's allgather";
    const int line = type ? type->option.line : 0;
    if (dispatcher == "alltoall" || dispatcher == "allgather") {
      plan_.set("parallel.moe_dispatcher", dispatcher, from, line);
      return dispatcher;
    }
    if (dispatcher != "flex") {
      problem(line, shown(*type) + ": Megatron-LM's token dispatchers are allgather, alltoall and flex; use one of them");
      return dispatcher;
    }
    if (backend != "deepep" && backend != "hybridep")
      problem_arg(*backend_arg, "the " + backend + " backend is not modelled; use deepep or hybridep (stepsim's deepep) or "
                                "--moe-token-dispatcher-type alltoall");
    if (integer("tensor-model-parallel-size").value_or(1) * integer("expert-model-parallel-size").value_or(1) == 1)
      problem(line, shown(*type) + ": Megatron-LM's flex dispatcher needs TP x EP > 1; add --expert-model-parallel-size or "
                                   "use --moe-token-dispatcher-type alltoall");
    // The flex dispatcher folds expert TP into its group (TP x EP ranks, each expert shard a
    // destination of its own); stepsim's deepep sends whole experts.
    if (expert_tp > 1)
      problem(given("expert-tensor-parallel-size") ? given("expert-tensor-parallel-size")->option.line : line,
              "the flex token dispatcher with expert tensor parallelism " + std::to_string(expert_tp) +
                  (given("expert-tensor-parallel-size") ? "" : " (Megatron-LM's default: the TP size)") +
                  " dispatches to each expert shard, which stepsim's deepep does not model; add "
                  "--expert-tensor-parallel-size 1");
    const std::string via = deepep ? shown(*deepep) : backend_arg ? shown(*backend_arg) : "DeepEP, its default backend";
    const bool hybrid = backend == "hybridep" && !deepep;
    plan_.set("parallel.moe_dispatcher", "deepep",
              from + " with " + via + (hybrid ? ": HybridEP's traffic modelled as DeepEP's (a copy per remote NVLink domain)" : ""),
              line);
    plan_.set("parallel.moe_flex_backend", hybrid ? "hybridep" : "deepep", via,
              deepep ? deepep->option.line : backend_arg ? backend_arg->option.line : line);
    if (const Given* fp8 = given("fp8-format"))
      plan_.set("parallel.moe_fp8_dispatch", false,
                shown(*fp8) + ": Megatron-LM's flex dispatcher sends BF16 tokens (fused_a2a.py: no FP8 dispatch)",
                fp8->option.line);
    return dispatcher;
  }

  // --moe-expert-capacity-factor (negative: dropless, as Megatron-LM reads it) and
  // --moe-pad-expert-input-to-capacity.
  void capacity(const std::string& dispatcher) {
    const Given* cf = given("moe-expert-capacity-factor");
    const Given* pad = given("moe-pad-expert-input-to-capacity");
    double factor = 0;
    if (cf) {
      const std::optional<double> read = real_number(known_value(*cf).text);
      if (!read) fail_arg(*cf, "expected a number");
      const double v = *read;
      factor = v < 0 ? 0 : v;
      // TransformerConfig: a capacity needs an auxiliary-loss (or no) load balancing.
      const std::string balance = text("moe-router-load-balancing-type", "aux_loss");
      if (factor > 0 && balance != "aux_loss" && balance != "seq_aux_loss" && balance != "global_aux_loss" && balance != "none")
        problem_arg(*cf, "Megatron-LM drops tokens only with aux_loss, seq_aux_loss, global_aux_loss or none load "
                         "balancing (here " + balance + "); change --moe-router-load-balancing-type or remove it");
      plan_.set("parallel.moe_capacity_factor", factor,
                shown(*cf) + (v < 0 ? ": negative, Megatron-LM's dropless" : ": tokens beyond it dropped"), cf->option.line);
    }
    if (!pad) return;
    if (factor <= 0)
      problem_arg(*pad, "Megatron-LM refuses it without --moe-expert-capacity-factor; add a capacity factor or remove it");
    else if (dispatcher == "flex" && text("moe-flex-dispatcher-backend", "deepep") == "deepep")
      problem_arg(*pad, "Megatron-LM's flex dispatcher with DeepEP refuses it; remove it or use --moe-token-dispatcher-type "
                        "alltoall");
    else
      plan_.set("parallel.moe_pad_to_capacity", true, shown(*pad), pad->option.line);
  }

  void batch_and_parallelism() {
    const int64_t tp = integer("tensor-model-parallel-size").value_or(1), pp = integer("pipeline-model-parallel-size").value_or(1),
                  cp = integer("context-parallel-size").value_or(1), ep = integer("expert-model-parallel-size").value_or(1);
    key("tensor-model-parallel-size", tp);
    key("pipeline-model-parallel-size", pp);
    key("context-parallel-size", cp);
    if (flag("num-experts") || ep != 1) key("expert-model-parallel-size", ep);
    if (tp > 1 && !flag("sequence-parallel"))
      problem(launch_line_, "--tensor-model-parallel-size " + std::to_string(tp) +
                             " without --sequence-parallel: stepsim models tensor parallelism with sequence parallelism "
                             "(norm and dropout activations sharded too); add --sequence-parallel");
    if (const Given* g = given("sequence-parallel"); g && tp == 1)
      plan_.not_imported.push_back(g->written + " (Megatron-LM turns it off at TP 1)");
    // --cp-comm-type: one value, or one per layer (all the same here); Megatron-LM's default p2p.
    if (const Given* g = given("cp-comm-type")) {
      if (g->values.empty()) fail_arg(*g, "no type given; write p2p, allgather or a2a");
      for (const auto& v : g->values) {
        if (!v.known()) known_value(*g);
        if (v.text != "p2p" && v.text != "allgather" && v.text != "a2a")
          fail_arg(*g, v.text + " is not modelled (stepsim models p2p, allgather and a2a; a2a+p2p's two-level groups "
                                "are not): use one of those");
        if (v.text != g->values.front().text)
          fail_arg(*g, "one type per layer is not modelled: give every layer the same type");
      }
      if (cp > 1)
        plan_.set("parallel.cp_comm_type", g->values.front().text, shown(*g), g->option.line);
      else
        plan_.not_imported.push_back(g->written + " (no context parallelism: --context-parallel-size is 1)");
    } else if (cp > 1) {
      plan_.set("parallel.cp_comm_type", "p2p", "--cp-comm-type left out: Megatron-LM's default", launch_line_);
    }
    // Sequences: the batch and the microbatch (Megatron-LM's --global-batch-size defaults to
    // micro-batch x data-parallel size).
    // --encoder-seq-length is Megatron-LM's older name, used when --seq-length is left out.
    if (!given("seq-length") && given("encoder-seq-length")) {
      const Given* g = given("encoder-seq-length");
      plan_.set("train.seq_len", *integer("encoder-seq-length"), shown(*g), g->option.line);
    } else {
      key("seq-length", required("seq-length"));
      if (const Given* g = given("encoder-seq-length")) plan_.not_imported.push_back(g->written + " (--seq-length wins)");
    }
    const int64_t mbs = required("micro-batch-size");
    const int64_t dp = world_ / std::max<int64_t>(1, tp * pp * cp);
    if (const auto gbs = integer("global-batch-size")) {
      key("global-batch-size", *gbs);
    } else {
      plan_.set("train.global_batch", mbs * dp,
                "--global-batch-size left out: Megatron-LM's default, --micro-batch-size x data-parallel size " +
                    std::to_string(dp));
    }
    key("micro-batch-size", mbs);
    const bool fsdp = flag("use-megatron-fsdp") || flag("use-torch-fsdp2");
    pipeline(pp, fsdp);
    // A plain autograd backward unless the weight gradients are delayed.
    if (const Given* g = given("delay-wgrad-compute")) plan_.set("parallel.split_backward", true, shown(*g), g->option.line);
    else plan_.set("parallel.split_backward", false, "no --delay-wgrad-compute: input and weight gradients in one backward op");
    sharding(pp, dp, fsdp);
    const PlanEntry* zero = plan_.find("parallel.zero");
    overlap(zero != nullptr && zero->value == 3);
  }

  // The pipeline: interleaved 1F1B with virtual stages, else 1F1B; each stage's layers as Megatron-LM
  // places them (workloads/layers/framework_split.hpp), written as parallel.stage_layers so that
  // stepsim replays the launch's split rather than its own balance.
  void pipeline(int64_t pp, bool fsdp) {
    const int64_t layers = num_layers();
    const Given* per_stage = given("num-layers-per-virtual-pipeline-stage");
    const Given* per_rank = given("num-virtual-stages-per-pipeline-rank");
    const Given* old_per_rank = given("virtual-pipeline-model-parallel-size");
    const Given* layout = given("pipeline-model-parallel-layout");
    const Given* first = given("decoder-first-pipeline-num-layers");
    const Given* last = given("decoder-last-pipeline-num-layers");
    const Given* embedding = given("account-for-embedding-in-pipeline-split");
    const Given* loss = given("account-for-loss-in-pipeline-split");
    // What Megatron-LM refuses together (arguments.py validate_args, TransformerConfig).
    const auto together = [&](std::initializer_list<const Given*> gs) {
      std::string s;
      int line = 0;
      for (const Given* g : gs)
        if (g) s += (s.empty() ? "" : " with ") + shown(*g), line = line ? line : g->option.line;
      return std::make_pair(s, line);
    };
    if (int(per_stage != nullptr) + int(per_rank != nullptr || old_per_rank != nullptr) + int(layout != nullptr) > 1 ||
        (per_rank && old_per_rank)) {
      const auto [s, line] = together({per_stage, per_rank, old_per_rank, layout});
      fail(line, s + ": Megatron-LM takes only one of --num-layers-per-virtual-pipeline-stage, "
                     "--num-virtual-stages-per-pipeline-rank and --pipeline-model-parallel-layout; keep one");
    }
    if (layout && (first || last || embedding || loss)) {
      const auto [s, line] = together({layout, first, last, embedding, loss});
      fail(line, s + ": the layout places every layer, and Megatron-LM refuses other pipeline split arguments with "
                     "it; keep the layout alone");
    }
    if ((first || last) && (embedding || loss)) {
      const auto [s, line] = together({first, last, embedding, loss});
      fail(line, s + ": Megatron-LM refuses an uneven first or last stage with the embedding or loss counted as a "
                     "layer; keep one of the two");
    }
    if (per_stage && (first || last)) {
      const auto [s, line] = together({per_stage, first, last});
      fail(line, s + ": with an uneven first or last stage Megatron-LM needs the virtual stages as a count; use "
                     "--num-virtual-stages-per-pipeline-rank");
    }
    std::vector<int64_t> split;
    int64_t vp = 1;
    const Given* vg = per_stage ? per_stage : per_rank ? per_rank : old_per_rank;
    const Given* at = layout ? layout : first ? first : last ? last : embedding ? embedding : loss ? loss : vg;
    std::string how;
    try {
      if (layout) {
        split = megatron_layout_split(known_value(*layout).text, pp, layers, integer("mtp-num-layers", 0).value_or(0));
        vp = int64_t(split.size()) / pp;
        how = shown(*layout);
      } else {
        const int64_t counted = layers + (embedding ? 1 : 0) + (loss ? 1 : 0);
        if (per_stage) {
          const int64_t n = *integer("num-layers-per-virtual-pipeline-stage");
          if (counted % pp != 0 || (counted / pp) % n != 0)
            fail_arg(*per_stage, "does not divide the " + std::to_string(counted / pp) + " layers of a pipeline rank "
                                 "(--num-layers " + std::to_string(layers) + (counted != layers ? " + embedding/loss" : "") +
                                 " / PP " + std::to_string(pp) + "); Megatron-LM refuses it");
          vp = counted / pp / n;
        } else if (vg) {
          vp = *integer(vg == per_rank ? "num-virtual-stages-per-pipeline-rank" : "virtual-pipeline-model-parallel-size");
        }
        const auto layers_of = [&](const Given* g) { return g ? *integer(g == first ? "decoder-first-pipeline-num-layers" : "decoder-last-pipeline-num-layers") : 0; };
        split = first || last ? megatron_uneven_split(layers, pp, vp, layers_of(first), layers_of(last))
                              : megatron_even_split(layers, pp, vp, embedding != nullptr, loss != nullptr);
        for (const Given* g : {first, last, embedding, loss, vg})
          if (g) how += (how.empty() ? "" : " ") + shown(*g);
        if (how.empty()) how = "--num-layers " + std::to_string(layers) + " over PP " + std::to_string(pp);
      }
    } catch (const SplitError& e) {
      if (at) fail_arg(*at, e.what());
      fail(given("num-layers")->option.line, "--num-layers " + std::to_string(layers) + " with --pipeline-model-parallel-size " +
                                                 std::to_string(pp) + ": " + e.what());
    }
    if (vp > 1 && pp == 1)
      fail_arg(*(layout ? layout : vg), "virtual pipeline stages need pipeline parallelism; Megatron-LM refuses them "
                                        "with --pipeline-model-parallel-size 1");
    if (vp > 1) {
      plan_.set("schedule", "interleaved", shown(*(layout ? layout : vg)) + ": Megatron-LM's interleaved 1F1B",
                (layout ? layout : vg)->option.line);
      plan_.set("parallel.virtual_stages", vp,
                shown(*(layout ? layout : vg)) +
                    (vg == per_stage && !layout ? ": " + std::to_string((layers + (embedding ? 1 : 0) + (loss ? 1 : 0)) / pp) +
                                                      " layers per rank / " + known_value(*vg).text
                                                : layout ? ": " + std::to_string(split.size()) + " stages / PP " + std::to_string(pp)
                                                         : ""),
                (layout ? layout : vg)->option.line);
    } else if (!fsdp) {
      plan_.set("schedule", "1f1b", pp > 1 ? "Megatron-LM's 1F1B (no virtual pipeline)" : "no pipeline: gradient accumulation over the microbatches");
    }
    if (split.size() > 1) {
      std::string counts;
      for (size_t k = 0; k < split.size() && counts.size() < 60; ++k) counts += (k ? " " : "") + std::to_string(split[k]);
      plan_.set("parallel.stage_layers", split,
                how + ": Megatron-LM's layers per stage in layer order (" + std::to_string(split.size()) + " stages" +
                    (vp > 1 ? ", stage c x " + std::to_string(pp) + " + r on rank r" : "") + ")",
                at ? at->option.line : 0);
    }
    stage_layers_ = split;
  }

  // The distributed optimizer (ZeRO-1), Megatron FSDP (ZeRO-1, 2 or 3) or plain data parallelism.
  void sharding(int64_t pp, int64_t dp, bool fsdp) {
    if (const auto instances = integer("num-distributed-optimizer-instances"); instances && *instances != 1)
      fail_arg(*given("num-distributed-optimizer-instances"),
               "replicated optimizer shards are not modelled (stepsim shards over the whole data-parallel group); "
               "remove it");
    if (const Given* g = given("data-parallel-sharding-strategy"); g && !fsdp)
      plan_.not_imported.push_back(g->written + " (read only with Megatron FSDP)");
    if (fsdp) {
      const Given* which = given("use-megatron-fsdp") ? given("use-megatron-fsdp") : given("use-torch-fsdp2");
      const std::string strategy = text("data-parallel-sharding-strategy", "optim_grads_params");
      const int64_t zero = strategy == "optim" ? 1 : strategy == "optim_grads" ? 2 : strategy == "optim_grads_params" ? 3 : 0;
      if (zero == 0)
        fail(which->option.line, shown(*which) + " with --data-parallel-sharding-strategy " + strategy +
                                     ": unsharded data parallelism keeps whole optimizer states on every GPU, which "
                                     "stepsim does not model (ZeRO-1 and up); use optim, optim_grads or optim_grads_params");
      if (zero == 3 && pp > 1)
        fail(which->option.line, shown(*which) + " with pipeline parallelism: stepsim models ZeRO-3 with schedule fsdp "
                                                 "(no pipeline) only; use --pipeline-model-parallel-size 1");
      const std::string from = shown(*which) + " --data-parallel-sharding-strategy " + strategy;
      plan_.set("parallel.zero", zero, from, which->option.line);
      if (zero == 3) plan_.set("schedule", "fsdp", from, which->option.line);
      else if (!plan_.find("schedule")) plan_.set("schedule", "1f1b", from, which->option.line);
      return;
    }
    if (const Given* g = given("use-distributed-optimizer")) {
      plan_.set("parallel.zero", 1, shown(*g) + ": ZeRO-1", g->option.line);
    } else if (dp > 1) {
      problem(launch_line_, "no --use-distributed-optimizer with data-parallel size " + std::to_string(dp) +
                             ": every GPU would keep whole optimizer states, which stepsim does not model (ZeRO-1 and "
                             "up); add --use-distributed-optimizer");
    } else {
      plan_.set("parallel.zero", 1, "data-parallel size 1: nothing to shard, ZeRO-1 is the same plan");
    }
  }

  // --overlap-grad-reduce, --overlap-param-gather, --tp-comm-overlap: each on or off as written
  // (ZeRO-3 overlaps its per-layer collectives anyway; stepsim takes no DP overlap keys there).
  void overlap(bool zero3) {
    static const std::pair<const char*, const char*> keys[] = {{"overlap-grad-reduce", "parallel.overlap_grad_reduce"},
                                                               {"overlap-param-gather", "parallel.overlap_param_gather"},
                                                               {"tp-comm-overlap", "parallel.tp_comm_overlap"}};
    for (const auto& [arg, key] : keys) {
      const Given* g = given(arg);
      if (zero3 && std::string(arg) != "tp-comm-overlap") {
        if (g) plan_.not_imported.push_back(g->written + " (ZeRO-3 overlaps its per-layer collectives anyway)");
        continue;
      }
      plan_.set(key, g != nullptr, g ? shown(*g) : std::string("no --") + arg + " (Megatron-LM's default: off)",
                g ? g->option.line : 0);
    }
    // Megatron-LM's gradient buckets, where stepsim models them (with --overlap-grad-reduce).
    if (const Given* g = given("ddp-bucket-size")) {
      if (flag("overlap-grad-reduce") && !zero3)
        plan_.set("parallel.ddp_bucket_size", *integer("ddp-bucket-size"), shown(*g), g->option.line);
      else
        plan_.not_imported.push_back(g->written + " (read only with --overlap-grad-reduce)");
    }
  }

  void recompute() {
    std::string granularity = text("recompute-granularity", "");
    const Given* from = given("recompute-granularity");
    if (granularity.empty() && (flag("recompute-activations") || flag("checkpoint-activations"))) {
      from = flag("recompute-activations") ? given("recompute-activations") : given("checkpoint-activations");
      granularity = "selective";
    }
    const Given* method = given("recompute-method");
    const Given* count = given("recompute-num-layers");
    const Given* modules = given("recompute-modules");
    // Megatron-Core up to 0.15 read an empty --recompute-modules as no module (nargs '*'), later
    // releases refuse it (nargs '+'): neither is its default, core_attn, so it is refused here.
    if (modules && modules->values.empty())
      fail_arg(*modules, "no module given (Megatron-Core up to 0.15 recomputes none, later releases refuse it); write "
                         "the modules, or leave it out for Megatron-LM's default, core_attn");
    // The deprecated --moe-layer-recompute is selective recompute of the moe module (Megatron-LM's
    // transformer_config.py turns it into that, and refuses it with full granularity).
    const Given* moe_layer = given("moe-layer-recompute");
    if (moe_layer && granularity == "full")
      fail_arg(*moe_layer, "Megatron-LM refuses it with --recompute-granularity full; remove one of the two");
    if (moe_layer && granularity.empty()) {
      from = moe_layer;
      granularity = "selective";
    }
    if (granularity.empty()) {
      for (const Given* g : {method, count, modules})
        if (g) plan_.not_imported.push_back(g->written + " (without --recompute-granularity Megatron-LM recomputes nothing)");
      plan_.set("parallel.recompute", "none", "no --recompute-granularity: every activation is kept");
      return;
    }
    if (granularity == "selective") {
      if (method) fail_arg(*method, "Megatron-LM refuses a recompute method with selective granularity");
      // Megatron-LM's modules (vocabulary/plan_names.hpp), any subset, in the order given.
      std::string known;
      for (const auto& m : kRecomputeModules) known += (known.empty() ? "" : " ") + std::string(m.name);
      std::vector<std::string> mods;
      if (modules)
        for (const auto& v : modules->values) {
          if (!v.known()) known_value(*modules);
          if (std::none_of(std::begin(kRecomputeModules), std::end(kRecomputeModules),
                           [&](const auto& m) { return v.text == m.name; }))
            fail_arg(*modules, "unknown module \"" + io::shortened(v.text, 40) + "\"; Megatron-LM's modules are " + known);
          if (std::find(mods.begin(), mods.end(), v.text) == mods.end()) mods.push_back(v.text);
        }
      if (mods.empty()) mods.push_back("core_attn");  // Megatron-LM's default module
      if (moe_layer && std::find(mods.begin(), mods.end(), "moe") == mods.end()) mods.push_back("moe");
      const std::string written = shown(*from) + (modules ? " " + shown(*modules) : "") +
                                  (moe_layer && moe_layer != from ? " " + shown(*moe_layer) : "");
      if (mods == std::vector<std::string>{"core_attn"}) {
        plan_.set("parallel.recompute", "selective", written + ": the attention core, Megatron-LM's default module",
                  from->option.line);
        return;
      }
      plan_.set("parallel.recompute", nlohmann::json(mods), written, from->option.line);
      return;
    }
    if (granularity != "full") fail_arg(*from, "expected selective or full");
    if (!method) fail_arg(*from, "needs --recompute-method uniform or block (Megatron-LM refuses full granularity without one)");
    const std::string how = known_value(*method).text;
    const int64_t n = integer("recompute-num-layers", 0).value_or(1);
    const int64_t layers = num_layers(), pp = integer("pipeline-model-parallel-size").value_or(1);
    // Megatron's block method recomputes the first N layers of every chunk: all of them when N is
    // at least the largest chunk.
    const int64_t per_chunk = stage_layers_.empty() ? layers / std::max<int64_t>(1, pp)
                                                    : *std::max_element(stage_layers_.begin(), stage_layers_.end());
    const std::string shown_all = shown(*from) + " " + shown(*method) + (count ? " " + shown(*count) : "");
    if (how == "uniform") {
      if (n != 1)
        fail(count ? count->option.line : method->option.line,
             shown_all + ": checkpointing groups of " + std::to_string(n) +
                 " layers is not modelled (stepsim's full recompute keeps each layer's input); use "
                 "--recompute-num-layers 1");
      plan_.set("parallel.recompute", "full", shown_all, from->option.line);
      return;
    }
    if (how != "block") fail_arg(*method, "expected uniform or block");
    if (n == 0) {
      plan_.set("parallel.recompute", "none", shown_all + ": no layer recomputed", from->option.line);
      return;
    }
    if (n < per_chunk)
      fail(count ? count->option.line : method->option.line,
           shown_all + ": recomputing " + std::to_string(n) + " of the " + std::to_string(per_chunk) +
               " layers of each pipeline chunk is not modelled (stepsim recomputes every layer or none); use "
               "--recompute-num-layers " + std::to_string(per_chunk) + " or uniform 1");
    plan_.set("parallel.recompute", "full", shown_all + ": every layer of each pipeline chunk", from->option.line);
  }

  // --cpu-offloading with --cpu-offloading-num-layers N: layers 0 .. N-1 keep their saved
  // activations in host memory between forward and backward (Transformer Engine's schedule;
  // activations only, as Megatron-Bridge's recipes set cpu_offloading_weights false).
  void cpu_offloading() {
    const Given* on = given("cpu-offloading");
    const Given* count = given("cpu-offloading-num-layers");
    if (!on) {
      if (count) plan_.not_imported.push_back(count->written + " (without --cpu-offloading Megatron-LM offloads nothing)");
      return;
    }
    const int64_t n = integer("cpu-offloading-num-layers", 0).value_or(0);
    plan_.set("parallel.cpu_offload_layers", n,
              count ? shown(*on) + " " + shown(*count) : shown(*on) + " without --cpu-offloading-num-layers (Megatron-LM's default: 0 layers)",
              (count ? count : on)->option.line);
  }

  void precision() {
    if (const Given* g = given("fp8-format")) {
      const std::string f = known_value(*g).text;
      if (f != "e4m3" && f != "hybrid") fail_arg(*g, "expected e4m3 or hybrid");
      const std::string recipe = text("fp8-recipe", "delayed");
      if (recipe != "delayed" && recipe != "tensorwise" && recipe != "blockwise" && recipe != "mxfp8")
        fail_arg(*given("fp8-recipe"), "the " + recipe + " recipe is not modelled; use delayed, tensorwise, blockwise or mxfp8");
      plan_.set("train.precision", recipe == "mxfp8" ? "mxfp8" : "fp8",
                shown(*g) + (given("fp8-recipe") ? " " + shown(*given("fp8-recipe")) : ""), g->option.line);
      const Given* r = given("fp8-recipe");
      if (recipe != "mxfp8")
        plan_.set("train.fp8_recipe", recipe, r ? shown(*r) : "no --fp8-recipe: Megatron-LM's default, delayed scaling",
                  r ? r->option.line : g->option.line);
      plan_.set("parallel.fp8_stash", true, "Transformer Engine keeps FP8 copies of the GEMM inputs for the backward");
      // --fp8-param-gather: the FP8 GEMMs' weights kept, and all-gathered, in FP8 (MXFP8 ones gathered in
      // BF16 all the same: Plan::gathered_weight_bytes). Megatron-LM turns it off under FSDP2 with
      // Transformer Engine 2 (arguments.py: "FSDP2 FP8 param gather is not supported yet").
      // Written either way: a software profile's default (the NeMo and Megatron-Bridge recipes gather
      // in FP8) must not stand in for a launch that leaves the flag off.
      const Given* pg = given("fp8-param-gather");
      if (pg && flag("use-torch-fsdp2")) {
        plan_.not_imported.push_back(pg->written + " (Megatron-LM turns it off under --use-torch-fsdp2 with "
                                                   "Transformer Engine 2: BF16 gathers)");
        plan_.set("parallel.fp8_param_gather", false, "off under --use-torch-fsdp2", pg->option.line);
      } else if (pg) {
        plan_.set("parallel.fp8_param_gather", true, shown(*pg), pg->option.line);
      } else {
        plan_.set("parallel.fp8_param_gather", false, "no --fp8-param-gather (Megatron-LM's default: off)");
      }
      // --fp8-dot-product-attention: the attention core in FP8 (per-tensor, or MXFP8 under the MXFP8
      // recipe); Transformer Engine's block-scaling recipe is not modelled with it.
      if (const Given* a = given("fp8-dot-product-attention")) {
        if (recipe == "blockwise")
          fail_arg(*a, "FP8 attention under the blockwise recipe is not modelled; remove it, or use --fp8-recipe "
                       "tensorwise, delayed or mxfp8");
        plan_.set("train.fp8_attention", true, shown(*a), a->option.line);
      }
      return;
    }
    if (const Given* g = given("fp8-dot-product-attention"))
      plan_.not_imported.push_back(g->written + " (without --fp8-format no FP8 attention)");
    if (const Given* g = given("fp8-recipe")) plan_.not_imported.push_back(g->written + " (without --fp8-format no FP8)");
    if (const Given* g = given("fp8-param-gather")) plan_.not_imported.push_back(g->written + " (without --fp8-format no FP8 weights)");
    if (const Given* g = given("bf16")) {
      plan_.set("train.precision", "bf16", shown(*g), g->option.line);
    } else if (const Given* h = given("fp16")) {
      plan_.set("train.precision", "bf16", shown(*h) + ": FP16 runs at the BF16 rate with the same bytes", h->option.line);
    } else {
      problem(launch_line_, "no --bf16, --fp16 or --fp8-format: Megatron-LM then trains in FP32, which stepsim does not "
                            "model; add --bf16");
    }
    plan_.set("parallel.fp8_stash", false, "BF16 activations are kept for the backward");
  }

  // The gradients' format in their buffer and their data-parallel reductions (Megatron's
  // grad_reduce_in_fp32 = accumulate_allreduce_grads_in_fp32): FP32 under --bf16 (Megatron turns
  // the accumulation on unless --grad-reduce-in-bf16), FP32 parameters without a 16-bit flag, and the
  // 16-bit parameters' own format under --fp16 unless --accumulate-allreduce-grads-in-fp32.
  void gradient_reduction() {
    const Given* bf16_reduce = given("grad-reduce-in-bf16");
    const Given* fp32_accumulate = given("accumulate-allreduce-grads-in-fp32");
    const Given* fp16 = flag("bf16") ? nullptr : given("fp16");
    std::string dtype = "fp32", from;
    int line = 0;
    if (fp16 && !fp32_accumulate) {
      dtype = "bf16", from = shown(*fp16) + ": Megatron-LM reduces FP16 gradients in FP16 (2 bytes a value)", line = fp16->option.line;
    } else if (bf16_reduce && flag("bf16")) {
      dtype = "bf16", from = shown(*bf16_reduce), line = bf16_reduce->option.line;
    } else if (fp32_accumulate) {
      from = shown(*fp32_accumulate), line = fp32_accumulate->option.line;
    } else {
      from = flag("bf16") ? "--bf16 without --grad-reduce-in-bf16: Megatron-LM accumulates and reduces gradients in FP32"
                          : "FP32 gradients";
    }
    if (bf16_reduce && !flag("bf16"))
      plan_.not_imported.push_back(bf16_reduce->written + " (Megatron-LM reads it only with --bf16)");
    plan_.set("parallel.grad_reduce_dtype", dtype, from, line);
    // BF16 on the wire accumulated in FP32 needs a scratch buffer per reduce-scatter stepsim does not
    // hold; with FP32 gradients Megatron-LM turns it off.
    if (const Given* g = given("ddp-reduce-scatter-with-fp32-accumulation")) {
      if (dtype == "bf16")
        problem_arg(*g, "the FP32 scratch buffer of each BF16 reduce-scatter is not modelled; remove it to plan BF16 "
                        "reductions");
      else
        plan_.not_imported.push_back(g->written + " (Megatron-LM turns it off when gradients are reduced in FP32)");
    }
  }

  void hardware_and_cluster() {
    plan_.set("hardware.preset", opt_.preset,
              "the GPU is not in a launch script: " + std::string(opt_.preset == "h100-sxm" ? "H100 SXM assumed" : "--hardware") +
                  "; change it (" + hardware_preset_names() + ")");
    plan_.set("cluster.nodes", world_ / gpus_per_node_, world_from_, nodes_line_);
    plan_.set("cluster.gpus_per_node", gpus_per_node_, gpn_from_, per_node_line_);
    const std::string attention = text("attention-backend", "auto");
    if (attention != "auto" && attention != "flash" && attention != "fused")
      fail_arg(*given("attention-backend"), "stepsim models FlashAttention-style attention (flash, fused, auto), which "
                                            "keeps no score matrix; the " + attention + " backend is not modelled");
    if (const Given* g = given("attention-backend")) same_.push_back(g->written + " " + attention);
    const std::string optimizer = text("optimizer", "adam");
    if (optimizer != "adam")
      fail_arg(*given("optimizer"), "stepsim models Adam's states (two moments and an FP32 master copy); " + optimizer +
                                        " is not modelled");
    if (const Given* g = given("optimizer")) same_.push_back(g->written + " adam");
    adam_state_dtypes();
  }

  // Megatron keeps Adam's moments in FP32 unless --use-precision-aware-optimizer names another
  // format (--exp-avg-dtype, --exp-avg-sq-dtype); the plan always says which, since stepsim's own
  // default for MLA models is DeepSeek-V3's BF16.
  void adam_state_dtypes() {
    static const char* const kDtypeArgs[] = {"exp-avg-dtype", "exp-avg-sq-dtype", "main-grads-dtype", "main-params-dtype"};
    const Given* aware = given("use-precision-aware-optimizer");
    if (!aware) {
      for (const char* name : kDtypeArgs)
        if (const Given* g = given(name))
          plan_.not_imported.push_back(g->written + " (without --use-precision-aware-optimizer Megatron keeps FP32)");
      plan_.set("train.adam_moments_dtype", "fp32", "Megatron-LM's Adam keeps both moments in FP32");
      return;
    }
    for (const char* name : {"main-grads-dtype", "main-params-dtype"})
      if (const Given* g = given(name); g && known_value(*g).text != "fp32")
        fail_arg(*g, "stepsim keeps FP32 gradients and master weights; use fp32 or remove it");
    const std::string first = text("exp-avg-dtype", "fp32"), second = text("exp-avg-sq-dtype", "fp32");
    for (const char* name : {"exp-avg-dtype", "exp-avg-sq-dtype"})
      if (const Given* g = given(name); g && known_value(*g).text != "fp32" && known_value(*g).text != "bf16")
        fail_arg(*g, "Adam moments in that format are not modelled; use fp32 or bf16");
    if (first != second)
      fail_arg(given("exp-avg-sq-dtype") ? *given("exp-avg-sq-dtype") : *given("exp-avg-dtype"),
               "stepsim keeps both Adam moments in one format; give --exp-avg-dtype and --exp-avg-sq-dtype the same");
    const Given* from = given("exp-avg-dtype") ? given("exp-avg-dtype") : given("exp-avg-sq-dtype");
    plan_.set("train.adam_moments_dtype", first, from ? shown(*aware) + " " + shown(*from) : shown(*aware),
              (from ? from : aware)->option.line);
  }

  void header() {
    std::vector<std::string> h = {
        "Imported by `stepsim import megatron` from " + io::printable(source_) +
            (entry_.empty() ? " (an argument list)" : " (" + entry_ + " launch, line " + std::to_string(launch_line_) + ")") +
            "; each key names the argument it came from. Simulate it with: stepsim simulate THIS_FILE"};
    if (!same_.empty()) {
      std::string s;
      for (const auto& x : same_) s += (s.empty() ? "" : ", ") + x;
      h.push_back("Read, as stepsim models them anyway: " + s + ".");
    }
    if (const std::string note = not_imported_note(plan_); !note.empty()) h.push_back("Note: " + note + ".");
    for (auto& x : plan_.header) h.push_back(std::move(x));
    plan_.header = std::move(h);
  }

  const std::string& source_;
  const ImportOptions& opt_;
  ImportedPlan plan_;
  int launch_line_ = 0, nodes_line_ = 0, per_node_line_ = 0;
  std::string entry_;
  std::vector<ShellWord> launcher_, args_;
  std::map<std::string, Given> given_;
  std::vector<std::string> order_;
  std::vector<std::string> same_;
  int64_t world_ = 0, gpus_per_node_ = 8;
  std::vector<int64_t> stage_layers_;  // decoder layers per pipeline stage, in layer order
  std::vector<std::pair<int, std::string>> problems_;  // (line, what): refused together at the end
  std::string world_from_, gpn_from_ = "8 GPUs per node assumed (give --gpus-per-node)";
};

}  // namespace

const char* megatron_argument_role(std::string_view name) {
  const ArgSpec* spec = spec_of(std::string(name));
  if (spec == nullptr) return nullptr;
  switch (spec->role) {
    case Role::Key: return "key";
    case Role::Use: return "use";
    case Role::NoCost: return "no-cost";
    case Role::Same: return "same";
    case Role::Refuse: return "refuse";
  }
  return nullptr;
}

ImportedPlan import_megatron(const std::string& text, const std::string& source, const ImportOptions& options) {
  MegatronImport imp(source, options);
  ImportedPlan plan = imp.run(text);
  plan.tool = std::string(kTool);
  plan.source = source;
  return plan;
}

}  // namespace stepsim::importers
