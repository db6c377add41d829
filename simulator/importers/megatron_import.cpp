// Megatron-LM launch → stepsim plan. Names, defaults and checks follow megatron/training/arguments.py
// and the TransformerConfig fields it exposes (NVIDIA/Megatron-LM, 2025-2026); docs/import.md lists
// every argument read and why.
#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <functional>
#include <set>
#include <stdexcept>
#include <string_view>

#include "vocabulary/config_error.hpp"
#include "simulator/config/config_loader.hpp"
#include "simulator/config/key_aliases.hpp"
#include "simulator/importers/imported_plan.hpp"
#include "simulator/importers/importers.hpp"
#include "simulator/importers/shell_script.hpp"
#include "simulator/io/json_text.hpp"

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
    {"add-qkv-bias", Arity::Flag, Role::Refuse,
     "bias vectors are not modelled (a few parameters per layer, no matmul FLOPs); remove it to plan without them"},
    {"squared-relu", Arity::Flag, Role::Refuse, "stepsim models SwiGLU (--swiglu) and GELU MLPs; use one of them"},
    {"quick-geglu", Arity::Flag, Role::Refuse, "stepsim models SwiGLU (--swiglu) and GELU MLPs; use one of them"},
    {"openai-gelu", Arity::Flag, Role::NoCost},
    {"position-embedding-type", Arity::One, Role::Use},
    {"max-position-embeddings", Arity::One, Role::NoCost},
    {"use-rotary-position-embeddings", Arity::Flag, Role::NoCost},
    {"no-position-embedding", Arity::Flag, Role::NoCost},
    {"multi-latent-attention", Arity::Flag, Role::Use},
    {"q-lora-rank", Arity::One, Role::Key},
    {"kv-lora-rank", Arity::One, Role::Key},
    {"qk-head-dim", Arity::One, Role::Key},
    {"qk-pos-emb-head-dim", Arity::One, Role::Key},
    {"v-head-dim", Arity::One, Role::Key},
    {"mtp-num-layers", Arity::One, Role::Key},
    {"window-size", Arity::Many, Role::Refuse,
     "sliding-window attention is not modelled (the attention core is counted over the whole causal sequence); "
     "remove it to plan full attention"},
    {"window-attn-skip-freq", Arity::One, Role::Refuse, "sliding-window attention is not modelled; remove it"},
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
    {"moe-grouped-gemm", Arity::Flag, Role::Same},
    {"moe-enable-deepep", Arity::Flag, Role::Same},
    {"moe-flex-dispatcher-backend", Arity::One, Role::Same},
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
    {"moe-router-dtype", Arity::One, Role::NoCost},
    {"moe-input-jitter-eps", Arity::One, Role::NoCost},
    {"moe-per-layer-logging", Arity::Flag, Role::NoCost},
    {"moe-token-drop-policy", Arity::One, Role::NoCost},
    {"moe-expert-capacity-factor", Arity::One, Role::Refuse,
     "stepsim does not drop tokens (its MoE is dropless); remove it to plan dropless routing"},
    {"moe-pad-expert-input-to-capacity", Arity::Flag, Role::Refuse,
     "padding every expert to its capacity is not modelled; remove it (and the capacity factor)"},
    {"moe-layer-recompute", Arity::Flag, Role::Refuse,
     "recomputing whole MoE layers is not modelled; use --recompute-granularity selective or full"},
    {"overlap-moe-expert-parallel-comm", Arity::Flag, Role::Refuse,
     "Megatron's batch-level overlap of one microbatch's all-to-all with another's compute is DualPipe's F&B pairing, "
     "which stepsim models as schedule dualpipe or dualpipev, not inside 1F1B; remove it"},
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
    {"decoder-first-pipeline-num-layers", Arity::One, Role::Refuse,
     "stepsim splits the layers over the stages itself (the busiest rank as light as possible); remove it"},
    {"decoder-last-pipeline-num-layers", Arity::One, Role::Refuse,
     "stepsim splits the layers over the stages itself (the busiest rank as light as possible); remove it"},
    {"pipeline-model-parallel-layout", Arity::One, Role::Refuse,
     "stepsim splits the layers over the stages itself (the busiest rank as light as possible); remove it"},
    {"account-for-embedding-in-pipeline-split", Arity::Flag, Role::Refuse,
     "stepsim splits the layers over the stages itself (the busiest rank as light as possible); remove it"},
    {"account-for-loss-in-pipeline-split", Arity::Flag, Role::Refuse,
     "stepsim splits the layers over the stages itself (the busiest rank as light as possible); remove it"},
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
    {"grad-reduce-in-bf16", Arity::Flag, Role::Refuse,
     "stepsim reduces gradients in FP32 (4 bytes a value); remove it to plan FP32 reductions"},
    {"ddp-reduce-scatter-with-fp32-accumulation", Arity::Flag, Role::Refuse,
     "stepsim reduces gradients in FP32 (4 bytes a value); remove it"},
    {"fp8-param-gather", Arity::Flag, Role::Refuse,
     "stepsim gathers parameters in BF16 (2 bytes a value), not FP8; remove it to plan BF16 gathers"},
    {"fp8-param", Arity::Flag, Role::Refuse, "stepsim keeps parameters in BF16, not FP8; remove it"},
    {"cpu-offloading", Arity::Flag, Role::Refuse, "offloading to CPU memory is not modelled; remove it"},
    {"cpu-offloading-num-layers", Arity::One, Role::Refuse, "offloading to CPU memory is not modelled; remove it"},
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
    {"fp8-dot-product-attention", Arity::Flag, Role::Refuse,
     "stepsim runs the attention core in BF16; remove it"},
    {"fp8-multi-head-attention", Arity::Flag, Role::Refuse, "stepsim runs the attention core in BF16; remove it"},
    {"first-last-layers-bf16", Arity::Flag, Role::Refuse,
     "mixing BF16 and FP8 layers is not modelled; remove it to plan every layer in FP8"},
    {"no-fp8-wgrad", Arity::Flag, Role::Refuse,
     "weight gradients at another precision than the other GEMMs are not modelled; remove it"},
    {"fp8-amax-history-len", Arity::One, Role::NoCost},
    {"fp8-amax-compute-algo", Arity::One, Role::NoCost},
    {"fp8-margin", Arity::One, Role::NoCost},
    {"fp8-interval", Arity::One, Role::NoCost},
    {"accumulate-allreduce-grads-in-fp32", Arity::Flag, Role::Same},
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
    {"qk-layernorm", Arity::Flag, Role::NoCost},
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
    return std::move(plan_);
  }

 private:
  [[noreturn]] void fail(int line, const std::string& what) const { throw error_at(source_, line, what); }
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
    if (args_.empty())
      fail(0, "no Megatron-LM launch found: expected a pretrain_gpt.py command line (torchrun ... pretrain_gpt.py "
              "--num-layers ...), a list of --arguments, or bash arrays holding them");
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
      if (spec->role == Role::Refuse) fail_arg(g, std::string(spec->why));
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
    const size_t start = !t.empty() && t[0] == '+' ? 1 : 0;
    if (t.size() <= start || t.size() - start > 15 || t.find_first_not_of("0123456789", start) != std::string::npos)
      fail_arg(*g, "expected an integer");
    const int64_t v = std::stoll(t.substr(start));
    if (v < min) fail_arg(*g, "must be at least " + std::to_string(min));
    return v;
  }

  std::string text(const std::string& name, const std::string& fallback) const {
    const Given* g = given(name);
    return g ? known_value(*g).text : fallback;
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
    model();
    batch_and_parallelism();
    recompute();
    precision();
    hardware_and_cluster();
    software();
    header();
  }

  // The release is not in a launch script, but arguments Megatron-Core r0.8 did not have date it:
  // those of core_r0.11 - r0.13 (NeMo 25's) and of the releases after (Megatron-Bridge's), checked
  // against megatron/training/arguments.py at each core_r* tag. The pick is a note.
  void software() {
    static const std::pair<const char*, const char*> kDated[] = {
        {"cuda-graph-impl", "megatron-bridge"}, {"overlap-moe-expert-parallel-comm", "megatron-bridge"},
        {"delay-wgrad-compute", "nemo-25"},     {"fp8-recipe", "nemo-25"},
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
    const Given* impl = given("cuda-graph-impl");
    const std::string impl_text = impl ? known_value(*impl).text : "";
    const Given* scope = given("cuda-graph-scope");
    bool full = false;
    if (scope)
      for (const auto& v : scope->values) full = full || (v.known() && v.text == "full_iteration");
    if (impl && impl_text != "none" && impl_text != "local" && impl_text != "transformer_engine" && impl_text != "full_iteration")
      fail_arg(*impl, "expected none, local, transformer_engine or full_iteration");
    const Given* on = impl && impl_text != "none" ? impl : given("enable-cuda-graph") ? given("enable-cuda-graph") : given("external-cuda-graph");
    if (on != nullptr) {
      const bool whole = full || impl_text == "full_iteration";
      plan_.set("software.cuda_graphs", whole ? "full_iteration" : "layers",
                shown(*on) + (whole && scope ? " " + shown(*scope) : ""), on->option.line);
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
    const int64_t layers = required("num-layers"), hidden = required("hidden-size"),
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
    } else {
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
    if (!flag("disable-bias-linear"))
      fail(flag("add-bias-linear") ? given("add-bias-linear")->option.line : launch_line_,
           "no --disable-bias-linear: Megatron-LM's linear layers then carry bias vectors, which stepsim does not model "
           "(a few parameters per layer, no matmul FLOPs); add --disable-bias-linear to plan without them");
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

  // GELU or SwiGLU: model.hidden_act (HF names: silu gated, gelu not).
  void activation(bool swiglu) {
    const std::string from = swiglu ? shown(*given("swiglu")) : "no --swiglu: Megatron-LM's default GELU MLP";
    const int line = swiglu ? given("swiglu")->option.line : 0;
    if (is_config_key("model.hidden_act")) {
      plan_.set("model.hidden_act", swiglu ? "silu" : "gelu", from, line);
    } else if (!swiglu) {
      fail(launch_line_, "no --swiglu: a GELU MLP (two matrices) is not modelled by this build of stepsim (SwiGLU, "
                         "three matrices, is); add --swiglu to plan a SwiGLU model");
    }
  }

  // --vocab-size or the tokenizer's, padded as Megatron-LM pads it: to a multiple of
  // --make-vocab-size-divisible-by (128) x TP.
  void vocabulary() {
    int64_t raw = 0;
    std::string from;
    int line = 0;
    if (const auto v = integer("vocab-size")) {
      raw = *v, from = shown(*given("vocab-size")), line = given("vocab-size")->option.line;
      if (const Given* t = given("tokenizer-type")) plan_.not_imported.push_back(t->written + " (--vocab-size gives the size)");
    } else {
      static const std::map<std::string, int64_t> fixed = {
          {"GPT2BPETokenizer", 50257}, {"BertWordPieceLowerCase", 30522}, {"BertWordPieceCase", 28996},
          {"Llama2Tokenizer", 32000},  {"TikTokenizer", 131072}};
      const Given* t = given("tokenizer-type");
      const std::string type = t ? known_value(*t).text : "";
      const auto it = fixed.find(type);
      if (it == fixed.end())
        fail(t ? t->option.line : launch_line_,
             (t ? shown(*t) + ": stepsim cannot read the vocabulary size from the tokenizer's files"
                : std::string("no --vocab-size and no --tokenizer-type with a known vocabulary")) +
                 "; add --vocab-size N (the tokenizer's vocabulary size) to the launch");
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
                            "moe-shared-expert-overlap", "expert-tensor-parallel-size"})
        if (const Given* g = given(n)) plan_.not_imported.push_back(g->written + " (without --num-experts the model has no experts)");
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
    // Experts keep TP 1 in stepsim: Megatron-LM's expert TP defaults to the TP size.
    const int64_t tp = integer("tensor-model-parallel-size").value_or(1);
    const Given* etp = given("expert-tensor-parallel-size");
    const int64_t expert_tp = integer("expert-tensor-parallel-size").value_or(tp);
    if (expert_tp != 1)
      fail(etp ? etp->option.line : launch_line_,
           (etp ? shown(*etp) : "--expert-tensor-parallel-size left out (Megatron-LM then uses the TP size, " +
                                    std::to_string(tp) + ")") +
               ": stepsim runs the experts without tensor parallelism; add --expert-tensor-parallel-size 1");
    const std::string dispatcher = text("moe-token-dispatcher-type", "allgather");
    const int64_t ep = integer("expert-model-parallel-size").value_or(1);
    if (dispatcher != "alltoall" && dispatcher != "flex" && ep > 1)
      fail(given("moe-token-dispatcher-type") ? given("moe-token-dispatcher-type")->option.line : launch_line_,
           "the " + dispatcher + " token dispatcher" +
               (given("moe-token-dispatcher-type") ? "" : " (Megatron-LM's default)") +
               " is not modelled; stepsim's expert parallelism is an all-to-all dispatch: add "
               "--moe-token-dispatcher-type alltoall (or flex)");
    if (const Given* g = given("moe-shared-expert-overlap")) plan_.set("parallel.overlap_shared_expert", true, shown(*g), g->option.line);
  }

  void batch_and_parallelism() {
    const int64_t tp = integer("tensor-model-parallel-size").value_or(1), pp = integer("pipeline-model-parallel-size").value_or(1),
                  cp = integer("context-parallel-size").value_or(1), ep = integer("expert-model-parallel-size").value_or(1);
    key("tensor-model-parallel-size", tp);
    key("pipeline-model-parallel-size", pp);
    key("context-parallel-size", cp);
    if (flag("num-experts") || ep != 1) key("expert-model-parallel-size", ep);
    if (tp > 1 && !flag("sequence-parallel"))
      fail(launch_line_, "--tensor-model-parallel-size " + std::to_string(tp) +
                             " without --sequence-parallel: stepsim models tensor parallelism with sequence parallelism "
                             "(norm and dropout activations sharded too); add --sequence-parallel");
    if (const Given* g = given("sequence-parallel"); g && tp == 1)
      plan_.not_imported.push_back(g->written + " (Megatron-LM turns it off at TP 1)");
    if (const Given* g = given("cp-comm-type")) {
      for (const auto& v : g->values) {
        if (!v.known()) known_value(*g);
        if (v.text != "p2p" && v.text != "allgather")
          fail_arg(*g, "stepsim's context parallelism moves K/V as an all-gather (the bytes of p2p's ring); " + v.text +
                           " is not modelled: use p2p or allgather");
      }
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
    // The pipeline schedule: interleaved 1F1B with virtual stages, else 1F1B.
    int64_t vpp = 1;
    const Given* vg = nullptr;
    if (const auto per_stage = integer("num-layers-per-virtual-pipeline-stage")) {
      vg = given("num-layers-per-virtual-pipeline-stage");
      const int64_t layers = required("num-layers");
      if (layers % pp != 0 || (layers / pp) % *per_stage != 0)
        fail_arg(*vg, "does not divide the " + std::to_string(layers / pp) + " layers of a pipeline rank (--num-layers " +
                          std::to_string(layers) + " / PP " + std::to_string(pp) + "); Megatron-LM refuses it");
      vpp = layers / pp / *per_stage;
    } else if (const auto v = integer("num-virtual-stages-per-pipeline-rank")) {
      vg = given("num-virtual-stages-per-pipeline-rank"), vpp = *v;
    } else if (const auto v2 = integer("virtual-pipeline-model-parallel-size")) {
      vg = given("virtual-pipeline-model-parallel-size"), vpp = *v2;
    }
    const bool fsdp = flag("use-megatron-fsdp") || flag("use-torch-fsdp2");
    if (vpp > 1) {
      plan_.set("schedule", "interleaved", shown(*vg) + ": Megatron-LM's interleaved 1F1B", vg->option.line);
      plan_.set("parallel.virtual_stages", vpp,
                shown(*vg) + (vg == given("num-layers-per-virtual-pipeline-stage")
                                  ? ": " + std::to_string(required("num-layers") / pp) + " layers per rank / " +
                                        known_value(*vg).text
                                  : ""),
                vg->option.line);
    } else if (fsdp) {
      // set below with the sharding strategy
    } else {
      plan_.set("schedule", "1f1b", pp > 1 ? "Megatron-LM's 1F1B (no virtual pipeline)" : "no pipeline: gradient accumulation over the microbatches");
    }
    // A plain autograd backward unless the weight gradients are delayed.
    if (const Given* g = given("delay-wgrad-compute")) plan_.set("parallel.split_backward", true, shown(*g), g->option.line);
    else plan_.set("parallel.split_backward", false, "no --delay-wgrad-compute: input and weight gradients in one backward op");
    sharding(pp, dp, fsdp);
    const PlanEntry* zero = plan_.find("parallel.zero");
    overlap(zero != nullptr && zero->value == 3);
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
      fail(launch_line_, "no --use-distributed-optimizer with data-parallel size " + std::to_string(dp) +
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
    if (granularity.empty()) {
      for (const Given* g : {method, count, modules})
        if (g) plan_.not_imported.push_back(g->written + " (without --recompute-granularity Megatron-LM recomputes nothing)");
      plan_.set("parallel.recompute", "none", "no --recompute-granularity: every activation is kept");
      return;
    }
    if (granularity == "selective") {
      if (method) fail_arg(*method, "Megatron-LM refuses a recompute method with selective granularity");
      std::set<std::string> mods;
      if (modules)
        for (const auto& v : modules->values) {
          if (!v.known()) known_value(*modules);
          mods.insert(v.text);
        }
      if (mods.empty() || mods == std::set<std::string>{"core_attn"}) {
        plan_.set("parallel.recompute", "selective", shown(*from) + (modules ? " " + shown(*modules) : "") +
                                                         ": the attention core, Megatron-LM's default module",
                  from->option.line);
        return;
      }
      if (mods == std::set<std::string>{"layernorm", "mla_up_proj", "moe_act"}) {
        plan_.set("parallel.recompute", "deepseek",
                  shown(*from) + " " + shown(*modules) + ": RMSNorms, MLA up-projections and the experts' SwiGLU",
                  from->option.line);
        return;
      }
      fail_arg(*modules, "stepsim models selective recompute of the attention core (core_attn) and DeepSeek's "
                         "(layernorm mla_up_proj moe_act); use one of those, --recompute-granularity full, or none");
    }
    if (granularity != "full") fail_arg(*from, "expected selective or full");
    if (!method) fail_arg(*from, "needs --recompute-method uniform or block (Megatron-LM refuses full granularity without one)");
    const std::string how = known_value(*method).text;
    const int64_t n = integer("recompute-num-layers", 0).value_or(1);
    const int64_t layers = required("num-layers"), pp = integer("pipeline-model-parallel-size").value_or(1);
    const Given* vp = given("num-layers-per-virtual-pipeline-stage");
    const int64_t per_chunk = vp ? integer("num-layers-per-virtual-pipeline-stage").value_or(1) : layers / std::max<int64_t>(1, pp);
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

  void precision() {
    if (const Given* g = given("fp8-format")) {
      const std::string f = known_value(*g).text;
      if (f != "e4m3" && f != "hybrid") fail_arg(*g, "expected e4m3 or hybrid");
      const std::string recipe = text("fp8-recipe", "delayed");
      if (recipe != "delayed" && recipe != "tensorwise" && recipe != "blockwise" && recipe != "mxfp8")
        fail_arg(*given("fp8-recipe"), "the " + recipe + " recipe is not modelled; use delayed, tensorwise, blockwise or mxfp8");
      plan_.set("train.precision", recipe == "mxfp8" ? "mxfp8" : "fp8",
                shown(*g) + (given("fp8-recipe") ? " " + shown(*given("fp8-recipe")) : ""), g->option.line);
      plan_.set("parallel.fp8_stash", true, "Transformer Engine keeps FP8 copies of the GEMM inputs for the backward");
      return;
    }
    if (const Given* g = given("fp8-recipe")) plan_.not_imported.push_back(g->written + " (without --fp8-format no FP8)");
    if (const Given* g = given("bf16")) {
      plan_.set("train.precision", "bf16", shown(*g), g->option.line);
    } else if (const Given* h = given("fp16")) {
      plan_.set("train.precision", "bf16", shown(*h) + ": FP16 runs at the BF16 rate with the same bytes", h->option.line);
    } else {
      fail(launch_line_, "no --bf16, --fp16 or --fp8-format: Megatron-LM then trains in FP32, which stepsim does not "
                         "model; add --bf16");
    }
    plan_.set("parallel.fp8_stash", false, "BF16 activations are kept for the backward");
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
  std::string world_from_, gpn_from_ = "8 GPUs per node assumed (give --gpus-per-node)";
};

}  // namespace

ImportedPlan import_megatron(const std::string& text, const std::string& source, const ImportOptions& options) {
  MegatronImport imp(source, options);
  ImportedPlan plan = imp.run(text);
  plan.tool = std::string(kTool);
  plan.source = source;
  return plan;
}

}  // namespace stepsim::importers
