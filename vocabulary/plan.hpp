// The validated description of one training step: model, training, parallelism plan, hardware,
// cluster, scenario and simulation options. Every later stage (roofline, workload, schedule,
// engine, report) reads only this struct, never YAML.
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace stepsim {

// Number format of the large GEMMs (and of what they stash and dispatch).
enum class Precision : uint8_t { FP8, BF16 };

// How the quantised (Precision::FP8) GEMMs are scaled, and so their rate and quantisation bytes:
// per-tensor or DeepSeek's 1x128 / 128x128 FP8 (`fp8`), Blackwell's MXFP8 (FP8 values, one E8M0
// scale per 32) or NVFP4 (FP4 values, one E4M3 scale per 16 and a per-tensor FP32 scale).
enum class LowPrecision : uint8_t { Fp8, Mxfp8, Nvfp4 };
// Bytes one value of a block-scaled format takes in one layout, with its block scales: MXFP8 an
// E8M0 per 32 values, NVFP4 an E4M3 per 16 (what a GEMM reads, a gather moves, a stash copies).
inline double block_scaled_copy_bytes(LowPrecision f) { return f == LowPrecision::Nvfp4 ? 0.5 + 1.0 / 16 : 1 + 1.0 / 32; }
// The same once Transformer Engine has quantised it for Blackwell: a row-wise and a column-wise copy
// (the backward's GEMMs read the transpose, whose blocks run the other way). The one home of these
// bytes for activations (layer_work's casts) and held weights.
inline double block_scaled_bytes(LowPrecision f) { return 2 * block_scaled_copy_bytes(f); }
// How per-tensor-or-block FP8 (train.precision fp8) finds its scales (train.fp8_recipe; Megatron-LM's
// --fp8-recipe): DeepSeek's 1x128 tiles, each scaled as it is cast; Transformer Engine's delayed
// scaling (the scale from earlier steps' amax history, this cast's amax recorded as it casts); its
// per-tensor current scaling, "tensorwise" (the tensor's amax measured in a pass of its own first).
enum class Fp8Recipe : uint8_t { Blockwise, Delayed, Tensorwise };

// Number format of Adam's two moments: FP32 as PyTorch's AdamW, Megatron and torchtitan keep them;
// BF16 as DeepSeek-V3 did (report 3.3.4) and Megatron's --exp-avg-dtype / --exp-avg-sq-dtype bf16.
enum class MomentDtype : uint8_t { FP32, BF16 };
// The format gradients are reduced (and their unsharded buffer kept) in: Megatron-LM's default
// FP32 (--grad-reduce-in-bf16: BF16), torchtitan's FSDP2 mixed_precision_reduce.
enum class ReduceDtype : uint8_t { FP32, BF16 };

// The MoE router's precision (Megatron-LM's --moe-router-dtype): BF16, the parameters' (the
// default), or FP32, whose backward runs its two GEMMs on FP32 operands (TF32) and casts around them.
enum class RouterDtype : uint8_t { BF16, FP32 };

// The MLP's activation, by Hugging Face's `hidden_act` name: silu is the gated SwiGLU (three
// matrices: gate, up, down); the GELU family, relu and relu2 (squared ReLU) are non-gated (two
// matrices: up, down). geglu is a gated GELU (three matrices: Grok-1's, Megatron's
// gated_linear_unit with GELU).
enum class HiddenAct : uint8_t { Silu, Gelu, GeluNew, GeluPytorchTanh, GeluFast, Relu, GeGlu, Relu2 };

// The layers' normalisation: RMSNorm (a weight per channel) or LayerNorm (a weight and a bias).
enum class Norm : uint8_t { RmsNorm, LayerNorm };

// The most layers a model may have (model.num_hidden_layers' bound).
inline constexpr int64_t kMaxLayers = 4096;

// Hugging Face config.json names, so a model's own config file can be read as-is.
struct ModelConfig {
  std::string name = "model";
  int64_t hidden_size = 0;
  int64_t num_hidden_layers = 0;
  int64_t first_k_dense_replace = 0;   // the first k layers use a dense FFN
  int64_t intermediate_size = 0;       // dense FFN width
  int64_t moe_intermediate_size = 0;   // one expert's FFN width
  int64_t n_routed_experts = 0;        // 0 = dense model
  int64_t n_shared_experts = 0;
  int64_t shared_expert_intermediate_size = 0;  // Qwen2-MoE: one always-on expert of this width
  int64_t num_experts_per_tok = 0;
  int64_t n_group = 1;                 // expert groups (DeepSeek maps one group to one node)
  int64_t topk_group = 1;              // groups a token may use (node-limited routing)
  int64_t num_attention_heads = 0;
  int64_t num_key_value_heads = 0;     // for non-MLA attention; 0 = same as heads
  int64_t head_dim = 0;                // for non-MLA attention; 0 = hidden / heads
  int64_t q_lora_rank = 0;             // 0 = no query compression
  int64_t kv_lora_rank = 0;            // 0 = standard (non-MLA) attention
  int64_t qk_nope_head_dim = 0;
  int64_t qk_rope_head_dim = 0;
  int64_t v_head_dim = 0;
  int64_t vocab_size = 0;
  bool tie_word_embeddings = false;
  int64_t num_nextn_predict_layers = 0;  // DeepSeek-V3's MTP depth: not in the step (as in the seed); explain's MTP bar
  HiddenAct hidden_act = HiddenAct::Silu;
  double rotary_pct = 1;        // share of each head's dims rotary embeddings turn (GPT-NeoX); 0 = none
  bool attention_bias = false;  // the attention projections carry bias vectors (GPT-NeoX)
  bool mlp_bias = false;        // the MLP matrices carry bias vectors (GPT-NeoX, GPT-OSS)
  // A clamped gated activation (GPT-OSS, HF's swiglu_limit): the gate clamped to at most this, the
  // up projection to +-this, before the activation. 0 = no clamp.
  double swiglu_limit = 0;
  Norm norm = Norm::RmsNorm;
  // An RMSNorm over each query and key head before RoPE (Qwen3, OLMo 2, Gemma 3; Megatron-LM's
  // --qk-layernorm): two more memory-bound kernels in each attention pass.
  bool qk_norm = false;
  // Sliding-window attention (Mistral, Gemma, GPT-OSS; HF's sliding_window with layer_types or
  // Qwen's max_window_layers): each query attends to at most this many keys, itself included, in
  // the layers listed (ascending; the loader lists every layer when a window is given without
  // them). 0 = full causal attention.
  int64_t sliding_window = 0;
  std::vector<int64_t> sliding_layers;

  // Keys a query of this layer attends to at most; 0 = every earlier position (full causal).
  int64_t attention_window(int64_t layer) const {
    return sliding_window > 0 && std::binary_search(sliding_layers.begin(), sliding_layers.end(), layer) ? sliding_window : 0;
  }
  // Gated (SwiGLU: gate, up and down matrices) or not (up and down).
  bool gated_mlp() const { return hidden_act == HiddenAct::Silu || hidden_act == HiddenAct::GeGlu; }
  int64_t mlp_matrices() const { return gated_mlp() ? 3 : 2; }
  bool is_moe() const { return n_routed_experts > 0; }
  bool is_mla() const { return kv_lora_rank > 0; }
  // Key/value heads: num_key_value_heads for grouped-query attention, else one per attention head
  // (multi-head attention, and MLA, whose up-projection makes K and V for every head).
  int64_t kv_heads() const { return is_mla() || num_key_value_heads <= 0 ? num_attention_heads : num_key_value_heads; }
  // The one definition of which layers are MoE: every layer from first_k_dense_replace on (the HF
  // keys that would interleave dense layers, moe_layer_freq and decoder_sparse_step, are refused
  // unless 1, and a leading mlp_only_layers list becomes first_k_dense_replace).
  bool is_moe_layer(int64_t layer) const { return is_moe() && layer >= first_k_dense_replace; }
  int64_t moe_layers() const { return is_moe() ? num_hidden_layers - first_k_dense_replace : 0; }
  int64_t dense_layers() const { return num_hidden_layers - moe_layers(); }
};

struct TrainConfig {
  int64_t global_batch = 0;  // sequences per step (given, or train.global_batch_tokens / seq_len)
  int64_t seq_len = 0;       // tokens per sequence
  int64_t global_batch_tokens = 0;  // the batch as given in tokens (train.global_batch_tokens); 0 = given in sequences
  Precision precision = Precision::FP8;  // GEMMs, stashes, dispatch; default fp8 for MLA (DeepSeek) models, bf16 otherwise
  LowPrecision low_precision = LowPrecision::Fp8;  // the FP8 GEMMs' format (train.precision fp8, mxfp8 or nvfp4)
  Fp8Recipe fp8_recipe = Fp8Recipe::Blockwise;      // train.fp8_recipe, for train.precision fp8 (the profile's default)
  // train.fp8_attention (Megatron-LM's --fp8-dot-product-attention, Transformer Engine's fp8_dpa): the
  // attention core in the GEMMs' FP8 format (per-tensor FP8, or MXFP8 under train.precision mxfp8),
  // at the preset's FP8 attention rates (workloads/cost/attention_cost.hpp).
  bool fp8_attention = false;
  double reported_step_s = 0;  // the user's measured step, for the reports' comparison; 0 = none
  // Or the TFLOP/s per GPU the run logged, in its release's Megatron FLOP count
  // (software.megatron_flops): the step is that count over it (reported_step_s wins); 0 = none.
  double reported_tflops_per_gpu = 0;
  MomentDtype adam_moments_dtype = MomentDtype::FP32;  // default bf16 for MLA (DeepSeek) models, fp32 otherwise
  int64_t tokens_per_step() const { return global_batch * seq_len; }
  // Whether train.fp8_recipe applies: per-tensor or 1x128 FP8 GEMMs (MXFP8 and NVFP4 scale by blocks of their own).
  bool fp8_recipe_applies() const { return precision == Precision::FP8 && low_precision == LowPrecision::Fp8; }
  // Whether train.fp8_attention applies: Transformer Engine runs FP8 attention in per-tensor FP8
  // under the delayed and current-scaling recipes, in MXFP8 under MXFP8's (block scaling and NVFP4
  // are not modelled).
  bool fp8_attention_applies() const {
    return precision == Precision::FP8 && (low_precision == LowPrecision::Mxfp8 ||
                                           (low_precision == LowPrecision::Fp8 && fp8_recipe != Fp8Recipe::Blockwise));
  }
  // Whether the attention core runs in FP8: train.fp8_attention where it applies (a file's true left
  // inert by a --set of NVFP4 or the blockwise recipe runs BF16).
  bool runs_fp8_attention() const { return fp8_attention && fp8_attention_applies(); }
};

// A pipeline schedule, by the name configs use. schedules/registry.cpp is the one list of them
// (adding a schedule adds nothing here); each schedule's file says what it implies.
class Schedule {
 public:
  // `name` must outlive the value: a string literal or the registry's name.
  constexpr explicit Schedule(std::string_view name) : name_(name) {}
  constexpr std::string_view name() const { return name_; }
  friend constexpr bool operator==(Schedule, Schedule) = default;

 private:
  std::string_view name_;
};

// Which activations a layer's backward recomputes instead of keeping from its forward: a set of
// Megatron-LM's recompute modules (--recompute-granularity selective --recompute-modules ...) or
// the whole layer (full: everything but its input). What each module reruns and what it frees:
// workloads/layers/layer_work.cpp and workloads/memory/activation_bytes.cpp; names and shorthands:
// vocabulary/plan_names.hpp.
struct Recompute {
  enum Module : uint16_t {
    CoreAttn = 1 << 0,       // core_attn: the attention core (a plain checkpoint)
    MoeAct = 1 << 1,         // moe_act: the routed experts' activation (its output discarded)
    Layernorm = 1 << 2,      // layernorm: the attention and MLP pre-norms (outputs discarded)
    MlaUpProj = 1 << 3,      // mla_up_proj: MLA's latent norms, up-projections and RoPE (outputs discarded)
    Mlp = 1 << 4,            // mlp: a dense layer's MLP (a plain checkpoint)
    Moe = 1 << 5,            // moe: an MoE layer's MLP: router, dispatch, experts, combine (a plain checkpoint)
    SharedExperts = 1 << 6,  // shared_experts: an MoE layer's shared experts (a plain checkpoint)
    // Not a Megatron module: the activation of dense layers and shared experts too (outputs
    // discarded), which DeepSeek-V3 recomputes with every SwiGLU (report 3.2.3).
    OtherActs = 1 << 7,
    Layer = 1 << 8,          // full: the whole layer from its input
    // Not a Megatron module: torchtitan's per-op selective checkpointing, its save list's GEMMs
    // kept and the rest rerun (workloads/layers/op_sac.hpp).
    TorchtitanOps = 1 << 9,
  };
  uint16_t modules = 0;

  constexpr bool has(Module m) const { return (modules & m) != 0; }
  constexpr bool full() const { return has(Layer); }
  constexpr Recompute with(Module m) const { return Recompute{uint16_t(modules | m)}; }
  friend constexpr bool operator==(Recompute, Recompute) = default;

  static const Recompute None;       // none
  static const Recompute Selective;  // selective: Megatron-LM's default module, the attention core
  static const Recompute DeepSeek;   // deepseek: RMSNorms, MLA up-projections and every SwiGLU (report 3.2.3)
  static const Recompute Full;       // full
  static const Recompute TorchtitanOp;  // torchtitan-op
};
inline constexpr Recompute Recompute::None{0};
inline constexpr Recompute Recompute::Selective{Recompute::CoreAttn};
inline constexpr Recompute Recompute::DeepSeek{Recompute::Layernorm | Recompute::MlaUpProj | Recompute::MoeAct |
                                               Recompute::OtherActs};
inline constexpr Recompute Recompute::Full{Recompute::Layer};
inline constexpr Recompute Recompute::TorchtitanOp{Recompute::TorchtitanOps};

// How an MoE layer's tokens reach the GPUs holding their experts and come back
// (workloads/traffic/ep_traffic.hpp has each one's bytes):
// DeepEP: DeepSeek's kernels (Megatron's flex dispatcher): one copy per remote NVLink domain over
//   InfiniBand, forwarded inside the domain over NVLink, on SMs of their own, so the compute stream
//   goes on where the schedule gives it other work (DualPipe's F&B pairs, half-microbatches).
// AllToAll: Megatron's alltoall dispatcher and torchtitan's expert parallelism: one copy per routed
//   expert held by another GPU (no dedup), a token-count exchange first, and the received rows
//   sorted by expert; nothing of the same microbatch computes meanwhile.
// AllGather: Megatron's allgather dispatcher: every GPU gathers all the tokens of its EP group,
//   keeps its experts' rows, and reduce-scatters the outputs back.
enum class MoeDispatcher : uint8_t { DeepEP, AllToAll, AllGather };
// Which library runs the DeepEP dispatcher's all-to-alls under Megatron's flex dispatcher
// (--moe-flex-dispatcher-backend): the same traffic (a copy per remote NVLink domain), different
// framework calls around it (moe_python_calls): DeepEP's layout, notify and Triton permutes from
// Python; HybridEP's one C++ call for dispatch and permute and one for unpermute and combine.
enum class FlexBackend : uint8_t { DeepEP, HybridEP };
// How context parallelism moves the attention's tensors (Megatron-Core's --cp-comm-type, Transformer
// Engine's attention with CP; workloads/traffic/model_parallel_comm.hpp has each one's traffic):
// P2p (Megatron's default) passes K/V around the CP ring, each step's exchange beside the attention
// of the step before; AllGather gathers K/V before the attention core (again in the backward) and
// reduce-scatters dK/dV; A2a (DeepSpeed-Ulysses) swaps the sequence split for a head split with
// all-to-alls of Q, K, V before the core and of its output after.
enum class CpCommType : uint8_t { P2p, AllGather, A2a };

struct ParallelConfig {
  int64_t pp = 1;            // pipeline ranks (DualPipeV: ranks, each holding two stages)
  int64_t tp = 1;            // tensor-parallel ranks (Megatron, with sequence parallelism)
  int64_t cp = 1;            // context-parallel ranks (a sequence split over them)
  CpCommType cp_comm_type = CpCommType::P2p;  // how they exchange the attention's tensors
  int64_t ep = 1;            // expert-parallel group size
  int64_t expert_tp = 1;     // expert tensor parallelism (Megatron's --expert-tensor-parallel-size):
                             // each expert's matrices split over this many GPUs
  int64_t microbatches = 1;  // per pipeline (per data-parallel replica); given, or derived from micro_batch_size
  int64_t micro_batch_size = 0;  // sequences per microbatch as given (parallel.micro_batch_size); 0 = not given
  int64_t zero = 1;          // 1 = ZeRO-1 (optimizer states sharded), 2 = + gradients, 3 = FSDP
  int64_t fsdp_shard_size = 0;  // HSDP: ZeRO-3 shards over this many of the GPUs holding the same
                                // weights and replicates across the groups; 0 = shard over all
  // Decoder layers whose saved activations go to host memory between their forward and backward
  // (Megatron's --cpu-offloading-num-layers, Transformer Engine's schedule: layers 0 .. n-1;
  // workloads/memory/activation_offload.hpp); 0 = none.
  int64_t cpu_offload_layers = 0;
  Schedule schedule{"dualpipev"};
  int64_t virtual_stages = 0;  // chunks per rank of schedule interleaved (Megatron's virtual pipeline);
                               // 0 = not set: the schedule's default (interleaved 2, the others 1)
  // Decoder layers of each pipeline stage, in layer order (the schedule's path: interleaved stage
  // c x pp + r is rank r's chunk c; a V's stage 2 pp - 1 - r is rank r's second), as a framework
  // places them (Megatron's --decoder-first-pipeline-num-layers, its layout string, NeMo's embedding
  // and loss counted as layers). The embedding sits on the first stage and the LM head on the last;
  // a stage may hold none. Empty = stepsim balances the busiest rank itself.
  std::vector<int64_t> stage_layers;
  // Pipeline chunks with no F&B partner (DualPipeV warm-up and cool-down, every 1F1B chunk) run as
  // two half-microbatches whose compute hides each other's all-to-all. false = DualPipe's reference
  // code: such chunks leave their all-to-all exposed.
  bool split_lone_chunks = false;
  // A backward computes a part's weight gradient (W) as its own op after the input gradient, so the
  // transfers the input gradient starts (dispatch-gradient, the next combine-gradient, a pipeline
  // send) run while W computes. false = a plain autograd backward: both as one op, nothing hides
  // behind W. Zero-bubble schedules, which defer W, need true.
  bool split_backward = true;
  // A forward MoE layer's shared experts compute while its dispatch moves (DeepSeek does; Megatron's
  // moe_shared_expert_overlap); false = they run with the routed experts, after the dispatch.
  bool overlap_shared_expert = false;
  // The token dispatcher (default: DeepEP for DeepSeek (MLA) models, alltoall otherwise).
  MoeDispatcher moe_dispatcher = MoeDispatcher::DeepEP;
  FlexBackend moe_flex_backend = FlexBackend::DeepEP;  // the deepep dispatcher's library
  // DeepEP's FP8 dispatch (1x128 scales; DeepSeek-V3 report 3.3.3); Megatron's flex dispatcher and
  // HybridEP send BF16. Default: on for deepep when train.precision is fp8.
  bool moe_fp8_dispatch = false;
  // A GPU's experts run as one grouped GEMM per matrix (Megatron's --moe-grouped-gemm, DeepSeek's
  // kernels, torchtitan's grouped_mm); false = one GEMM per expert in turn (Megatron's SequentialMLP),
  // each its own launches and tiles.
  bool moe_grouped_gemm = true;
  RouterDtype moe_router_dtype = RouterDtype::BF16;  // the router GEMM's (--moe-router-dtype)
  // Megatron's --moe-expert-capacity-factor: an expert keeps at most this many times its mean rows
  // (the rest are dropped); 0 = dropless. --moe-pad-expert-input-to-capacity: every expert runs
  // (and every dispatch carries) exactly its capacity, padded.
  double moe_capacity_factor = 0;
  bool moe_pad_to_capacity = false;
  // Megatron's --overlap-moe-expert-parallel-comm (with --delay-wgrad-compute): the schedule's
  // steady-state backward and the forward after it run as one F&B op (schedules/overlap_pairs.hpp),
  // so each microbatch's all-to-alls hide behind the other's compute, and the experts' weight
  // gradient waits until the dispatch-gradient is posted.
  bool moe_overlap_ep_comm = false;
  // Megatron's --moe-paged-stash (the full-iteration CUDA-graph recipes: the experts' buffers have
  // a fixed capacity): after an MoE layer's forward, each tensor Transformer Engine's fused grouped
  // MLP saves for the backward (its two GEMM inputs column-wise, the activation's BF16 input, the
  // routing probabilities) is copied by a Triton kernel into pages sized to the rows received, and
  // copied back before the layer's backward (megatron/core/transformer/moe/paged_stash.py).
  bool moe_paged_stash = false;
  // Megatron-LM's communication overlap options, with its names and defaults (all off):
  // --tp-comm-overlap: Transformer Engine's userbuffers split each TP all-gather / reduce-scatter of
  // sequence parallelism into chunks pipelined with the GEMM beside it (workloads/traffic/
  // model_parallel_comm.hpp); a no-op with tp 1, as Megatron-Core r0.8 accepted it there.
  bool tp_comm_overlap = false;
  // --overlap-grad-reduce: the distributed optimizer's gradient reduce-scatter is issued in buckets
  // during the last microbatch's backward, each bucket once its gradients are final; off: after the
  // rank's last backward.
  bool overlap_grad_reduce = false;
  // --overlap-param-gather: the parameter all-gather after the optimizer step runs bucket by bucket
  // ahead of the next step's first forward; off: all of it after the step. Without
  // overlap_grad_reduce each model chunk is one bucket (Megatron-Core's DDP: Megatron-Bridge and NeMo
  // recipes set it alone; Megatron-LM's own arguments refuse that pair).
  bool overlap_param_gather = false;
  // --fp8-param-gather (Megatron-LM; torchtitan's float8 enable_fsdp_float8_all_gather): the weights
  // of the FP8 GEMMs are kept in their low-precision format, so the ZeRO / FSDP parameter all-gather
  // moves Plan::gathered_weight_bytes() per value of them instead of BF16's 2.
  bool fp8_param_gather = false;
  // --ddp-bucket-size: parameters per gradient bucket under overlap_grad_reduce; 0 = Megatron's
  // default, max(40M, 1M x data-parallel size).
  int64_t ddp_bucket_size = 0;
  Recompute recompute = Recompute::None;  // DeepSeek's configs say `deepseek`
  ReduceDtype grad_reduce_dtype = ReduceDtype::FP32;  // the data-parallel gradient reductions' format
  double grad_reduce_bytes() const { return grad_reduce_dtype == ReduceDtype::BF16 ? 2.0 : 4.0; }
  bool fp8_stash = true;  // saved GEMM inputs kept in FP8 (+ scales) as DeepSeek does; false = BF16
                          // (default: train.precision == fp8)
};

// Achievable rates of one GPU and its links. Speed-of-light vs calibrated is only a matter of
// which numbers sit here, never a code path.
struct HardwareConfig {
  std::string name = "H800";
  double fp8_tflops = 0;
  double bf16_tflops = 0;
  double ib_GBps = 0;          // per GPU NIC, per direction
  double nvlink_GBps = 0;      // per GPU, per direction
  double ib_latency_s = 0;     // one hop through the fabric
  double nvlink_latency_s = 0;
  int64_t sms = 132;
  int64_t comm_sms = 0;        // SMs communication kernels take from compute while in flight
  double nonmatmul_s_per_token_layer = 0;  // norms, SwiGLU, casts; 0 in speed-of-light mode
  double memory_GiB = 80;      // HBM per GPU (H800: 80 GiB)
  // Datasheet dense peaks (hardware.preset files cite them; default H800 SXM: 989 BF16, 1979 FP8):
  // MFU's denominator, never a rate used.
  double peak_bf16_tflops = 989;
  double peak_fp8_tflops = 1979;
  double peak_tflops(Precision p) const { return p == Precision::FP8 ? peak_fp8_tflops : peak_bf16_tflops; }
  // The dense peak of the tensor cores a format runs on: NVFP4 GEMMs run on the FP4 units.
  double peak_tflops(Precision p, LowPrecision format) const {
    return p == Precision::FP8 && format == LowPrecision::Nvfp4 ? peak_fp4_tflops : peak_tflops(p);
  }
  double gemm_tflops(Precision p) const { return p == Precision::FP8 ? fp8_tflops : bf16_tflops; }
  // Calibration (hardware profile; 1 / 0 = speed of light): the share of the rate above that real
  // kernels reach, and the all-to-all's share of link bandwidth plus its handshake latency.
  double gemm_efficiency = 1;          // large GEMMs: FP8 forward and input gradient, and the LM head
  double wgrad_gemm_efficiency = 0;    // FP8 weight-gradient GEMMs; 0 = gemm_efficiency
  double bf16_gemm_efficiency = 1;     // BF16 router GEMMs (narrow: N = experts); the LM head uses gemm_efficiency
  double attention_efficiency = 1;     // attention core (FlashAttention) at the BF16 rate
  double a2a_efficiency = 1;           // share of link bandwidth an EP all-to-all reaches
  double a2a_latency_s = 0;            // notify / handshake before every EP all-to-all
  double a2a_layout_latency_s = 0;     // extra for a forward dispatch that computes its layout
  double wgrad_efficiency() const { return wgrad_gemm_efficiency > 0 ? wgrad_gemm_efficiency : gemm_efficiency; }

  // The per-op cost model (sim.compute: predicted; workloads/cost/). Each preset cites its sources;
  // 0 = not set (predicted plans must set every one, a preset does).
  double hbm_GBps = 0;               // HBM bandwidth, datasheet
  double host_link_GBps = 0;         // GPU <-> host memory copies, per GPU and direction, measured; 0 = unknown
  double hbm_efficiency = 0;         // share of it a large elementwise kernel reaches
  double gemm_bf16_peak_share = 0;   // share of the BF16 dense peak a large GEMM's main loop sustains
  double gemm_fp8_peak_share = 0;    // the same for FP8
  double gemm_wgrad_share = 1;       // weight-gradient GEMMs reach this share of the forward's (calibrate fits it)
  double gemm_k_overhead = 0;        // per output tile, prologue and epilogue as this many K elements of BF16 main loop
  int64_t gemm_tile_m = 0;           // output tile of the GEMM kernels (rows x columns); waves of tiles
  int64_t gemm_tile_n = 0;           //   over the SMs quantise the time
  double attention_fwd_tflops = 0;   // FlashAttention causal forward at long sequences, head dim 128
  double attention_bwd_tflops = 0;   // its backward
  double attention_seq_half = 0;     // sequence length at which it reaches half that rate
  double attention_head_dim_half = 0;  // head dim at which it reaches half its rate (rate ~ d / (d + this))
  // A sliding-window layer's BF16 kernel runs at rate x W / (W + this) per pass, W the window's keys:
  // the causal curve's form with its own constant (each query tile's fixed cost and the partial
  // tiles at both window edges); 0 = the causal attention_seq_half.
  double attention_window_fwd_half = 0;
  double attention_window_bwd_half = 0;
  // The attention core in FP8 (train.fp8_attention): its own curves (rate x S / (S + S_half), each
  // pass its own S_half) for per-tensor FP8 and for MXFP8; 0 = no published kernel figure (refused).
  struct AttentionCurve {
    double fwd_tflops = 0, bwd_tflops = 0, fwd_seq_half = 0, bwd_seq_half = 0;
    bool set() const { return fwd_tflops > 0 && bwd_tflops > 0; }
  };
  AttentionCurve attention_fp8, attention_mxfp8;
  // FlashAttention-2's BF16 curve on this GPU (software.attention_kernel flash2: the kernel PyTorch's
  // scaled_dot_product_attention runs on Hopper unless it prefers cuDNN's), from a published benchmark;
  // unset = no figure (refused).
  AttentionCurve attention_flash2;
  // cuDNN's fused attention gets faster from release to release: attention_fwd_tflops and its
  // siblings are the curve of release attention_cudnn_version (cuDNN's own integer: 92200 = 9.22.0;
  // 0 = not stated), attention_early the curve an earlier release (attention_early_cudnn_version)
  // measured on this GPU. A software profile that ships a release older than the first runs the
  // second (software.cudnn_version; cost::attention_format).
  int64_t attention_cudnn_version = 0;
  AttentionCurve attention_early;
  int64_t attention_early_cudnn_version = 0;
  const AttentionCurve& attention_curve(LowPrecision f) const { return f == LowPrecision::Mxfp8 ? attention_mxfp8 : attention_fp8; }
  // Whether the FP8 attention backward skips the key tiles outside a sliding window, as the BF16
  // kernels do; false where the published kernel computes every causal tile (cuDNN 9.22 on GB200).
  bool attention_fp8_bwd_skips_window = true;
  // Blackwell block-scaled formats (train.precision mxfp8, nvfp4): MXFP8 runs on the FP8 peak at its
  // own share (0 = the FP8 share); NVFP4 on the FP4 peak (0 = the GPU has no FP4 tensor cores).
  double gemm_mxfp8_peak_share = 0;
  double peak_fp4_tflops = 0;
  double gemm_nvfp4_peak_share = 0;
  // Whether FP8 GEMMs read an operand in either layout, so a per-tensor FP8 tensor needs no
  // transposed copy for the backward: Blackwell's tensor cores, which are also the ones with
  // block-scaled formats (Transformer Engine 2.12, nvte_is_non_tn_fp8_gemm_supported: compute
  // capability 10.x; Hopper takes FP8 operands only as A x B^T).
  bool fp8_gemm_any_layout() const { return gemm_mxfp8_peak_share > 0; }
};

// Which kernels of a framework release run from CUDA graphs (software.cuda_graphs): none; each
// transformer layer's (Transformer Engine's make_graphed_callables, Megatron's per-layer graphs);
// or the whole forward and backward (Megatron's full_iteration: the layers and the LM head). A
// graphed kernel costs the host nothing to launch.
enum class CudaGraphs : uint8_t { None, Layers, FullIteration };

// Which parts of each layer the per-layer graphs hold (software.cuda_graph_scope, Megatron-Core's
// --cuda-graph-scope with --cuda-graph-impl transformer_engine): a set of these bits, 0 = the
// whole layer. attn: the attention block (its norm, projections, core and residual); mlp: a dense
// layer's MLP block; moe_router: the MLP block's start up to the MoE router (the pre-MLP norm, the
// router's GEMM, top-k and auxiliary loss); moe_preprocess:
// the token dispatcher's count and map kernels before the all-to-all. The rest launches eagerly.
enum GraphScope : uint8_t { kGraphAttn = 1, kGraphMlp = 2, kGraphMoeRouter = 4, kGraphMoePreprocess = 8 };

// Which attention kernel a release runs (software.attention_kernel): the preset's fused kernel
// (cuDNN's, or FlashAttention-3 class: hardware.attention_{fwd,bwd}_tflops), or FlashAttention-2
// (hardware.attention_flash2_*), which PyTorch's scaled_dot_product_attention picks on Hopper unless
// it prefers cuDNN's (a bundled cuDNN newer than 9.15.0).
enum class AttentionKernel : uint8_t { Fused, Flash2 };

// How a release places decoder layers on pipeline stages when the plan gives no
// parallel.stage_layers (software.pipeline_split): stepsim's balance of the busiest rank's compute,
// Megatron-Core's even split (it refuses layers that do not divide; stepsim then balances and says
// so), or torchtitan's (the embedding and the head each counted as one layer).
enum class PipelineSplit : uint8_t { Balanced, Megatron, Torchtitan };

// Which Megatron-Core release's FLOP count the run's logged TFLOP/s per GPU use
// (software.megatron_flops; megatron/training/training.py num_floating_point_operations): r0.8's
// (through 0.11) counts the attention scores over all S x S, v0.12's (0.12 on, and
// Megatron-Bridge's flop_utils.py) only the causal half. MLA is counted as v0.12 counts it either
// way (r0.8 had no MLA count).
enum class MegatronFlops : uint8_t { R08, V012 };

// The framework release that runs the step (software.profile: workloads/software/NAME.yaml): what
// a GPU preset cannot know. Each profile cites its sources; reports name it.
struct SoftwareConfig {
  std::string profile;               // the shipped profile's name or the file it came from
  std::string name;                  // the release, as reports print it
  double kernel_launch_s = 0;        // GPU time each kernel costs beyond its work (launch gap, tails)
  // Host time to issue one kernel (Python, framework, driver): an op of n kernels takes at least
  // n x this, so a stream of short kernels runs at the host's pace and long kernels hide it.
  double host_launch_s = 0;
  // Host time per kernel that a C++ loop issues inside one framework call (Transformer Engine's
  // grouped GEMM run as one cuBLAS GEMM per local expert, its split casts): the framework's per-op
  // cost is paid once per loop, each further kernel costs this. Negative (unset) = host_launch_s.
  double looped_launch_s = -1;
  double looped_host_launch_s() const { return looped_launch_s >= 0 ? looped_launch_s : host_launch_s; }
  // Host time of the framework's own work in one MoE layer and microbatch, forward and backward, that
  // launches no kernel: Python bookkeeping per module and per expert, autograd nodes, hooks, guards,
  // allocations (Megatron-Core's MoE block holds about 38 Python-level calls against the attention's
  // few). Charged where the host launches the layer (not under CUDA graphs); the GPU's time hides it.
  // Priced per call: another dispatcher's block pays it per 38 of its own calls (moe_python_calls).
  double moe_layer_host_s = 0;
  // Host-issued launches of Megatron's alltoall dispatcher per MoE layer forward beyond its permute
  // and sort kernels (token counts, their all-gather and copies to the host, the fused permute's
  // row-map passes, the chunk-sort maps, the probabilities' own all-to-all); 0 = not counted.
  int64_t alltoall_dispatch_launches = 0;
  // Share of the GPU preset's GEMM rate (a kernel benchmark's) that the release's GEMMs reach inside
  // a training step: its GEMM library and shapes, the clocks a GPU sustains under a whole step's load,
  // the memory and SMs that concurrent kernels share. 1 = the benchmark's rate.
  double gemm_efficiency = 1;
  // And of that, what the release's low-precision recipe keeps of its GEMMs' rate (its scaling, the
  // casts and transposes around each GEMM that the memory-bound model does not see): FP8 and MXFP8,
  // NVFP4 (random Hadamard transforms, 2D weight scales, stochastic rounding). 1 = none lost.
  // MXFP8 has its own (its 1x32 block scales and the two quantised copies each GEMM operand needs);
  // 0 = fp8_efficiency.
  double fp8_efficiency = 1;
  double mxfp8_efficiency = 0;
  double nvfp4_efficiency = 1;
  // The low-precision recipe's share for the plan's format (train.low_precision).
  double low_precision_efficiency(LowPrecision f) const {
    if (f == LowPrecision::Nvfp4) return nvfp4_efficiency;
    if (f == LowPrecision::Mxfp8 && mxfp8_efficiency > 0) return mxfp8_efficiency;
    return fp8_efficiency;
  }
  CudaGraphs cuda_graphs = CudaGraphs::None;
  uint8_t cuda_graph_scope = 0;  // GraphScope bits under cuda_graphs layers; 0 = whole layers
  AttentionKernel attention_kernel = AttentionKernel::Fused;
  PipelineSplit pipeline_split = PipelineSplit::Balanced;
  MegatronFlops megatron_flops = MegatronFlops::R08;
  // SMs the framework gives DeepEP's kernels (Megatron-Core's --moe-deepep-num-sms, DeepEP's own
  // Buffer.num_sms): a flex-dispatcher plan with the DeepEP backend pays them as the SM tax while its
  // transfers are in flight (Plan::taxed_comm_sms); 0 = the GPU preset's hardware.comm_sms alone.
  int64_t deepep_sms = 0;
  // Host-device synchronisations per MoE layer and microbatch in the forward (a dispatcher copying
  // its token counts to the host before the all-to-all); each drains the host's lead over the GPU.
  // Charged by the MoE dispatcher (parallel.moe_dispatcher), not by the per-op cost model.
  int64_t host_syncs_per_moe_layer = 0;
  // The cuDNN release the framework's containers ship (cuDNN's own integer: 91002 = 9.10.2; 0 = not
  // stated): it picks the GPU preset's attention curve of that release (HardwareConfig::attention_early).
  int64_t cudnn_version = 0;
  // Whether an MoE layer's backward all-to-all (the dispatch's gradient) leaves only after the
  // experts' weight gradients: the dispatcher is an autograd node after Transformer Engine's
  // linears, whose backward computes input and weight gradients in one call (Megatron-Core's
  // alltoall, allgather and flex dispatchers, DeepEP's and HybridEP's included; torchtitan's
  // all-to-all). false: it leaves once the input gradient is done and W computes while it moves
  // (DeepSeek's own DualPipe code). Megatron's --delay-wgrad-compute (parallel.moe_overlap_ep_comm)
  // delays W either way.
  bool moe_wgrad_before_dispatch = false;
  // A grouped expert GEMM (parallel.moe_grouped_gemm) launches one GEMM per local expert on a few
  // streams (Transformer Engine's GroupedLinear: its multi-stream cuBLAS backend), so its kernels
  // (launch and host cost) count per expert, while its tiles still share the SMs' waves.
  bool grouped_gemm_per_expert = false;
  // The framework keeps a quantised copy of each BF16 weight of an FP8 GEMM for the whole step
  // (Transformer Engine's weight workspace: cast at the step's first microbatch, reused by the
  // others, as Megatron-Core passes is_first_microbatch); torchao casts every microbatch instead.
  bool fp8_weight_cache = false;
  // Memory-bound kernels the release runs fused (software.fused.*): each changes one group's
  // kernels and bytes (workloads/layers/layer_work.cpp).
  bool fused_cross_entropy = false;     // vocabulary-parallel cross-entropy in one pass, its gradient written in the forward
  bool fused_norm_cast = false;         // the norm writes the next GEMM's quantised input itself
  // And in a block format (MXFP8, NVFP4): Transformer Engine 2.12's norms fuse those casts only
  // through cuDNN (NVTE_NORM_FWD_USE_CUDNN), a compiler whatever the format. Unset = fused_norm_cast.
  std::optional<bool> fused_norm_block_cast;
  bool norm_block_cast() const { return fused_norm_block_cast.value_or(fused_norm_cast); }
  bool fused_activation_cast = false;   // SwiGLU / GELU writes the down projection's quantised input itself
  // Norms, the rotary embedding and the gated activation each run as one kernel (a fused kernel or a
  // compiler's); false: as eager PyTorch's composite ops, one kernel each, the norms in FP32.
  bool fused_elementwise = true;
  // A clamped activation (model.swiglu_limit) clamps inside its kernel; false: the clamps, and the
  // re-joining of gate and up, run as eager ops before it, their gradients through autograd.
  bool fused_clamped_glu = true;
  // The experts' second bias (model.mlp_bias) is added in the GEMM's epilogue; false: added after
  // it, weighted by each row's routing probability, by eager ops per local expert.
  bool fused_expert_bias = true;
  // MLA's input norm feeds one fused q/kv down projection that writes its quantised input
  // (Megatron's --mla-down-proj-fusion); false: the norm runs apart and the two down projections
  // each quantise its output (Megatron-Core's MLASelfAttention, Transformer Engine linears).
  bool fused_mla_down_proj = true;
  // MLA's queries, keys and values reach the attention kernel without passes of their own beyond
  // RoPE on the rotary dims (DeepSeek's stack, as calibrated); false: as Megatron-Core's
  // MLASelfAttention runs them with Transformer Engine (layer_memory.hpp, MemoryShape::mla_apart).
  bool fused_mla_qkv = true;
  // Transformer Engine's fused grouped MLP (its op fuser's CuTe DSL kernels, which Megatron-Core's
  // --use-transformer-engine-op-fuser runs with NVTE_CUTEDSL_FUSED_GROUPED_MLP=1; MXFP8 or NVFP4,
  // SM100): the experts' gated activation runs in the first grouped GEMM's epilogue and its
  // gradient in the second's dgrad epilogue, each writing the next GEMM's input (MXFP8: quantised).
  bool fused_grouped_mlp = false;
};

// The fabric between NICs (platforms/topology.hpp): a non-blocking switch, a two-level leaf/spine
// fat tree, or DeepSeek's multi-plane fat tree (NIC k of every node on plane k).
enum class Topology { Star, FatTree, MultiPlane };

struct ClusterConfig {
  int64_t nodes = 0;
  int64_t gpus_per_node = 0;
  Topology topology = Topology::Star;
  double oversubscription = 1;  // a leaf's down-port bandwidth over its up-port bandwidth
  bool rail_optimized = false;  // fat-tree: a leaf holds NIC k of its nodes (multi-plane always does)
  int64_t leaf_nics = 32;       // NICs under one leaf switch (a 64-port switch at 1:1)
  int64_t nvlink_domain = 0;    // GPUs sharing one NVLink fabric (72 for GB200 NVL72); 0 = a node
  int64_t gpus() const { return nodes * gpus_per_node; }
  int64_t nvlink_domain_gpus() const { return nvlink_domain > 0 ? nvlink_domain : gpus_per_node; }
};

// How tokens pick experts (workloads/routing/): balanced = every expert gets its mean load; the
// others draw per-layer popularity and per-microbatch counts from scenario.seed, or read a file.
enum class Routing { Balanced, DeepSeek, Zipf, Dirichlet, Hot, File };

// A slow or faulty piece of hardware (scenario.stragglers): one GPU or every GPU of a node, for
// the whole step or the window [from_s, to_s) of simulated time.
struct Straggler {
  int64_t gpu = -1;         // one GPU (global id), or
  int64_t node = -1;        // every GPU of this node
  double clock = 1;         // compute speed factor (power cap, thermal throttling)
  double nic_GBps = 0;      // NIC bandwidth per direction while degraded; 0 = unchanged
  double nvlink_GBps = 0;   // NVLink bandwidth per direction while degraded; 0 = unchanged
  bool nic_down = false;    // the GPU's NIC is down: its inter-node traffic goes through `via`'s NIC
  int64_t via = -1;         // GPU on the same node lending its NIC; -1 = the next GPU with a working NIC
  // Or a leaf-spine cable of a fat tree (platforms/topology.hpp): slow, or down (traffic spreads
  // over the leaf's other uplinks).
  int64_t leaf = -1;
  int64_t spine = -1;
  double link_GBps = 0;     // the cable's bandwidth while degraded; 0 = unchanged
  bool link_down = false;
  double from_s = 0;
  double to_s = std::numeric_limits<double>::infinity();
};

struct ScenarioConfig {
  Routing routing = Routing::Balanced;
  uint64_t seed = 1;
  int64_t routing_samples = 200000;  // Monte-Carlo tokens for DeepSeek routing statistics
  double zipf_s = 1.0;               // zipf: popularity of the r-th expert ~ 1 / r^s
  double dirichlet_alpha = 1.0;      // dirichlet: concentration (smaller = more skewed)
  int64_t hot_experts = 1;           // hot: this many experts share hot_share of the rows
  double hot_share = 0.5;
  std::string load_file;             // file: per-layer per-expert histogram (CSV or JSON)
  double layer_correlation = 0;      // 0 = each layer picks its popular experts afresh, 1 = same ones
  std::vector<Straggler> stragglers;  // slow GPUs, nodes, NICs and NVLinks; NICs down
  double jitter_sigma = 0;           // per-kernel lognormal jitter on compute ops (mean 1)
  bool perturbed() const { return !stragglers.empty() || jitter_sigma > 0; }
  // Not a config key: the report's balanced baseline keeps the routing's node statistics but gives
  // every expert its mean load.
  bool mean_loads_only = false;
};

enum class SimMode { Auto, Full, Reduced };
// exact: every modelled flow is replayed. fast: flows that cannot set any time in a lock-step
// replay are left out (the NVLink legs of balanced all-to-alls that their IB legs outlast).
enum class SimFidelity { Exact, Fast };

// How compute ops get their time: predicted = the per-op cost model (workloads/cost/: GEMM shapes,
// FlashAttention, memory-bound bytes, kernel launches); speed-of-light = every GEMM at the
// achievable rate (fp8_tflops / bf16_tflops) times the profile's efficiencies, as the roofline.
enum class ComputeModel : uint8_t { Predicted, SpeedOfLight };

// Classes of the per-op cost model (bit mask): explain switches them on one at a time.
enum CostClass : uint8_t { kCostGemm = 1, kCostAttention = 2, kCostMemory = 4, kCostLaunch = 8, kCostAll = 15 };

struct SimConfig {
  SimMode mode = SimMode::Auto;
  SimFidelity fidelity = SimFidelity::Fast;
  ComputeModel compute = ComputeModel::Predicted;
  // Not a config key: which classes of the predicted model are charged (the rest cost nothing;
  // GEMMs and attention left out run at speed of light instead).
  uint8_t cost_classes = kCostAll;
};

enum class WorkloadKind { Model, Synthetic };

// An abstract pipeline for studying a schedule in isolation: fixed per-chunk times.
struct WorkloadConfig {
  WorkloadKind kind = WorkloadKind::Model;
  double f_s = 1;           // forward of one chunk, one microbatch
  double b_s = 2;           // whole backward of one chunk (input + weight gradient)
  double w_s = 1;           // the weight-gradient part of b_s
  double fb_s = 0;          // an overlapped F&B pair; 0 = f_s + b_s (no overlap gain)
  double send_bytes = 0;    // per pipeline send; 0 = no communication
};

struct Plan {
  std::string source;  // the config file it came from, for messages
  std::vector<std::pair<std::string, std::string>> set_by;  // (key, the --set that gave it), for messages
  std::vector<std::string> overrides;  // the --set texts, in the order given (reports record them)
  // Keys a hardware preset or profile held that the config or --set overrode (printed on stderr
  // by the command line, so a switch of GPU that does not take is never silent).
  std::vector<std::string> notes;
  ModelConfig model;
  TrainConfig train;
  ParallelConfig parallel;
  HardwareConfig hardware;
  SoftwareConfig software;
  ClusterConfig cluster;
  ScenarioConfig scenario;
  SimConfig sim;
  WorkloadConfig workload;

  // Derived sizes. GPUs are numbered node-major: gpu = node * gpus_per_node + local; where each
  // GPU sits in the plan is vocabulary/rank_layout.hpp's job.
  int64_t gpus() const { return cluster.gpus(); }
  int64_t stage_gpus() const { return gpus() / parallel.pp; }      // GPUs of one pipeline rank
  int64_t dp() const { return stage_gpus() / (parallel.tp * parallel.cp); }  // replicas of the model
  // Expert data-parallel degree: the copies of one expert shard in a stage (EP x expert TP GPUs hold one copy).
  int64_t edp() const { return stage_gpus() / (parallel.ep * parallel.expert_tp); }
  double sequences_per_replica() const { return double(train.global_batch) / double(dp()); }
  double sequences_per_microbatch() const { return sequences_per_replica() / double(parallel.microbatches); }
  // SMs communication kernels take from compute (the SM tax): DeepEP's all-to-all kernels hold
  // hardware.comm_sms while in flight, so only a model plan that runs an EP all-to-all pays it (an
  // abstract synthetic pipeline pays what it is given).
  bool runs_ep_all_to_all() const { return model.is_moe() && parallel.ep > 1; }
  // A release that launches DeepEP with its own SM count (software.deepep_sms) pays at least that.
  int64_t taxed_comm_sms() const {
    if (workload.kind == WorkloadKind::Synthetic) return hardware.comm_sms;
    if (!runs_ep_all_to_all() || parallel.moe_dispatcher != MoeDispatcher::DeepEP) return 0;
    const int64_t framework = parallel.moe_flex_backend == FlexBackend::DeepEP ? software.deepep_sms : 0;
    return std::max(hardware.comm_sms, framework);
  }
  // Whether only the EP all-to-all holds the taxed SMs: a release's DeepEP SMs alone (no
  // hardware.comm_sms, which every transfer holds).
  bool sm_tax_ep_only() const { return hardware.comm_sms == 0 && taxed_comm_sms() > 0; }
  // Bytes one value of an FP8 GEMM's weight takes in the parameter all-gather. BF16 (2) unless
  // parallel.fp8_param_gather; then the format's own data, as Megatron-Core gathers it
  // (distributed/param_and_grad_buffer.py): per-tensor FP8 1 byte (one scale per tensor, left
  // aside), DeepSeek-style blockwise FP8 1 byte plus an FP32 scale per 128 x 128 block, NVFP4 its
  // packed half byte plus an E4M3 scale per 16 values; MXFP8 2, since Megatron-Core gathers those in
  // BF16 into the gradient buffer and quantises them after (reuse_grad_buf_for_mxfp8_param_ag, which
  // its optimizer requires with MXFP8 parameters).
  double gathered_weight_bytes() const {
    if (!parallel.fp8_param_gather || train.precision != Precision::FP8) return 2;
    switch (train.low_precision) {
      case LowPrecision::Fp8: return train.fp8_recipe == Fp8Recipe::Blockwise ? 1 + 4.0 / (128 * 128) : 1.0;
      case LowPrecision::Mxfp8: return 2;
      case LowPrecision::Nvfp4: return block_scaled_copy_bytes(LowPrecision::Nvfp4);
    }
    return 2;
  }
  // Bytes one value of an FP8 GEMM's weight takes held in its format, with the second layout its
  // backward GEMMs read where the format needs one: per-tensor FP8 1, and its transpose (1 more) on
  // GPUs whose FP8 GEMMs read one layout only (Hopper); blockwise FP8 a row-wise and a column-wise
  // copy with an FP32 scale per 128 x 128 block; MXFP8 and NVFP4 their row- and column-wise blocks
  // (block_scaled_bytes).
  double held_weight_bytes() const {
    switch (train.low_precision) {
      case LowPrecision::Fp8:
        if (train.fp8_recipe == Fp8Recipe::Blockwise) return 2 * (1 + 4.0 / (128 * 128));
        return hardware.fp8_gemm_any_layout() ? 1.0 : 2.0;
      case LowPrecision::Mxfp8:
      case LowPrecision::Nvfp4: return block_scaled_bytes(train.low_precision);
    }
    return 2;
  }
  // Consecutive ranks that share one NVLink domain. A domain holds whole EP groups where it can:
  // with 72-GPU domains and EP 64 each domain runs one group and its other 8 GPUs stay idle
  // (spares, not simulated), so an EP group never straddles two domains.
  int64_t nvlink_ranks() const {
    const int64_t d = cluster.nvlink_domain_gpus(), ep = parallel.ep * parallel.expert_tp;  // an EP x ETP block
    if (d <= cluster.gpus_per_node || d % ep == 0 || ep % d == 0) return d;
    if (d > ep) return d / ep * ep;
    int64_t a = d, b = ep;  // the largest share of an EP group that fits: gcd(d, ep)
    while (b != 0) a = std::exchange(b, a % b);
    return a;
  }
};

const char* to_string(Schedule s);
// The shorthand a set is known by (none, selective, deepseek, full), else its modules as Megatron's
// --recompute-modules lists them ("layernorm mla_up_proj").
std::string to_string(Recompute r);
const char* to_string(MoeDispatcher d);
const char* to_string(Precision p);
const char* to_string(MomentDtype d);
const char* to_string(ReduceDtype d);
const char* to_string(RouterDtype d);
const char* to_string(FlexBackend b);
const char* to_string(CpCommType t);
const char* to_string(HiddenAct a);
const char* to_string(Norm n);
const char* to_string(ComputeModel c);
const char* to_string(CudaGraphs g);
// software.cuda_graph_scope's names, comma-separated in kGraphScopes' order ("" = whole layers).
std::string graph_scope_text(uint8_t scope);
const char* to_string(AttentionKernel k);
const char* to_string(PipelineSplit p);
const char* to_string(MegatronFlops f);
const char* to_string(Fp8Recipe r);
// train.precision as configs write it: bf16, fp8, mxfp8 or nvfp4.
const char* precision_name(const TrainConfig& t);
// For reports: the precision and, for per-tensor or 1x128 FP8, its scaling ("fp8 (tensorwise scaling)").
std::string precision_text(const TrainConfig& t);

// DeepSeek-V3's published shape (the model DeepSeek's reported step and MTP belong to).
bool is_deepseek_v3(const ModelConfig& m);
const char* to_string(Routing r);
const char* to_string(SimMode m);
const char* to_string(SimFidelity f);
const char* to_string(Topology t);

}  // namespace stepsim
