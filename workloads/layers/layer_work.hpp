// The compute of one layer for one microbatch on one GPU, kernel by kernel (FLOPs and precision),
// grouped into the parts a schedule interleaves: attention and MLP, each in forward (F),
// input-gradient backward (B) and weight-gradient backward (W). No timing decisions here: the
// speed-of-light path charges the FLOPs at the stated rates, the per-op cost model
// (workloads/cost/) times each kernel from the shapes and bytes listed here.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "vocabulary/plan.hpp"

namespace stepsim {

enum class LayerPart : uint8_t { AttnF, MlpF, MlpB, AttnB, MlpW, AttnW };
inline constexpr int kLayerParts = 6;
std::string_view to_string(LayerPart p);

// How Megatron's tensor parallelism splits a GEMM: its output columns (column-parallel: QKV, the
// MLP's first matrices), its reduction (row-parallel: the output projection, the MLP's last
// matrix), or not at all, the GPU running it on its 1/tp token shard (routers, shared experts).
// Routed experts split the same way over expert TP (parallel.expert_tp) instead of TP.
enum class TpSplit : uint8_t { Columns, Reduction, Tokens };

// One GEMM as the forward runs it: rows x n outputs, k deep (rows = the part's tokens, or one
// expert's routed rows). A backward part runs it transposed: its input gradient (rows x k, n deep)
// or its weight gradient (k x n, rows deep).
struct GemmShape {
  double n = 0, k = 0;
  TpSplit split = TpSplit::Columns;
};

enum class KernelClass : uint8_t { Gemm, Attention };
// Which pass a kernel belongs to: the forward (also what a backward recomputes), the input
// gradient or the weight gradient.
enum class KernelPass : uint8_t { Forward, InputGrad, WeightGrad };

// Where an op sits for a scoped CUDA graph (software.cuda_graph_scope): its part's block, or the
// MoE router or the dispatcher's preprocess inside it, which Megatron-Core graphs on their own.
enum class GraphGroup : uint8_t { Block, MoeRouter, MoePreprocess };
// A layer part's block: attention, a dense MLP or an MoE block.
enum class LayerBlock : uint8_t { Attention, Mlp, Moe };

struct Kernel {
  std::string_view name;  // e.g. "q_up", "attention_core_bwd", "routed_experts"
  double flops = 0;       // the replica's (before TP / CP splits)
  Precision precision = Precision::FP8;
  KernelClass cls = KernelClass::Gemm;
  KernelPass pass = KernelPass::Forward;
  // GEMMs: one or two matrices (an MLP's gate-and-up, then its down), each one launch.
  GemmShape gemm[2] = {};
  int gemms = 0;
  bool routed = false;  // routed experts: rows are one expert's, over the GPU's experts
  int64_t attention_window = 0;  // attention: keys per query at most (sliding window); 0 = the sequence
  // GEMMs: the share of the precision's rate they run at. TF32 (FP32 operands on the tensor cores,
  // as an FP32 router's backward runs) is half BF16's on every preset's datasheet (H100 494.7 of
  // 989.4 TFLOP/s, B200 1.1 of 2.25 PFLOP/s, MI300X 653.7 of 1307.4).
  double rate_share = 1.0;
  GraphGroup graph = GraphGroup::Block;
};

// A memory-bound kernel group (norms, activations, RoPE, residual adds, casts, MoE permutes,
// softmax and cross-entropy): bytes read and written, per token of the replica's microbatch (TP
// and CP shard them) and per routed row.
struct MemoryOp {
  std::string_view name;
  double bytes_per_token = 0;
  double bytes_per_row = 0;
  int kernels = 1;
  bool shared_expert = false;  // part of the shared experts (they can run on their own)
  bool per_expert = false;     // one launch per local expert unless they run grouped (an expert's activation)
  // One launch per local expert wherever the experts' GEMMs launch per expert (no grouped GEMM, or
  // software.grouped_gemm_per_expert): Transformer Engine's GroupedLinear quantises its input and
  // output gradient with split_quantize, a kernel per expert's rows beside its GEMM loop.
  bool split_per_expert = false;
  // Launches more, per local expert, from a Python loop over the experts whatever the GEMMs do
  // (Megatron-Core's per-expert bias add: software.fused.expert_bias false); each a host call.
  int kernels_per_local_expert = 0;
  GraphGroup graph = GraphGroup::Block;
};

struct PartWork {
  LayerBlock block = LayerBlock::Mlp;
  std::vector<Kernel> kernels;
  std::vector<MemoryOp> memory;  // the per-op cost model's memory-bound kernels
  double nonmatmul_s = 0;  // norms, SwiGLU, casts: hardware.nonmatmul_s_per_token_layer model
  double framework_host_s = 0;  // the framework's host work here that launches no kernel (software.moe_layer_host_s)
  // Collectives the host issues here beside the kernels (their own time is the replay's communication):
  // tensor- and context-parallel ones each a framework call, FP8 current scaling's amax all-reduces
  // issued inside a cast's C++ (tp_collective_launches in model_parallel_comm.hpp).
  double collective_launches = 0;
  double looped_collective_launches = 0;
  double flops(Precision p) const;
  // Seconds at the plan's achievable rates (what the engine charges at speed of light).
  double seconds(const HardwareConfig& hw) const;
};

struct LayerWork {
  bool moe = false;
  double tokens = 0;         // tokens of the microbatch on this GPU
  double routed_rows = 0;    // token-expert rows this GPU's experts process
  PartWork parts[kLayerParts];
  const PartWork& part(LayerPart p) const { return parts[int(p)]; }
};

// Python-level calls of Megatron-Core's MoE block per layer and microbatch (calls into PyTorch,
// Triton launchers, NCCL collectives, copies to the host, Transformer Engine's calls that issue C++
// loops; as the Qwen3 recipes run it: docs/megatron-moe-audit.md, sections 2.3 to 2.6). The flex
// dispatcher's (DeepEP, HybridEP) 38 are what software.moe_layer_host_s was fitted against; Megatron's
// alltoall dispatcher makes more (its counting ops, copies, Triton permutes and sorts and the
// experts' FP8 paddings are each their own call); the allgather dispatcher is not audited and
// counts as flex.
struct MoePythonCalls {
  static constexpr double kFlexForward = 17, kFlexBackward = 21, kFlexTotal = kFlexForward + kFlexBackward;
  double forward = kFlexForward, backward = kFlexBackward;
};
MoePythonCalls moe_python_calls(const Plan& plan);

// `tokens` = sequences x seq_len of the microbatch; `routed_rows` = rows for this GPU's experts
// (tokens x experts per token when routing is balanced).
LayerWork layer_work(const Plan& plan, int64_t layer, double sequences, double routed_rows);

// The LM head on the last stage, in BF16: F, B (input gradient) and W each cost this much.
PartWork lm_head_work(const Plan& plan, double sequences);

// The head's three passes for the per-op cost model: F = final norm, logits GEMM, softmax and
// cross-entropy over the vocabulary; B = their backward (input gradient); W = the weight gradient.
// Their FLOPs equal lm_head_work's each.
struct HeadWork {
  PartWork forward, input_grad, weight_grad;
};
HeadWork lm_head_passes(const Plan& plan, double sequences);

// Memory-bound bytes of softmax + cross-entropy over the vocabulary per logit, as Megatron-Core's
// unfused vocab-parallel cross-entropy (tensor_parallel/cross_entropy.py, core r0.8) moves them:
// forward: cast to FP32 (2 read + 4 written), max (4), subtract (4 + 4), exp (4 + 4), sum (4),
// normalise (4 + 4) = 38; backward: scale by the loss gradient (4 + 4) and cast back to BF16
// (4 + 2) = 14.
inline constexpr double kCrossEntropyForwardBytesPerLogit = 38;
inline constexpr double kCrossEntropyBackwardBytesPerLogit = 14;
// Fused (software.fused.cross_entropy: Megatron's --cross-entropy-loss-fusion, Transformer
// Engine's cross-entropy): the forward reads the BF16 logits twice (max and sum in one online
// pass, then the gradient) and writes the gradient over them in BF16 (2 + 2 + 2), two kernels;
// the backward scales that gradient by the loss's (2 + 2), one kernel.
inline constexpr double kFusedCrossEntropyForwardBytesPerLogit = 6;
inline constexpr double kFusedCrossEntropyBackwardBytesPerLogit = 4;

}  // namespace stepsim
