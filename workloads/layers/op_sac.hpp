// torchtitan's per-op selective activation checkpointing (parallel.recompute: torchtitan-op), as
// torchtitan/distributed/activation_checkpoint.py _apply_op_sac runs it with Llama 3's save list
// (torchtitan/models/llama3/infra/parallelize.py _op_sac_save_list, 2025): inside a transformer
// block the outputs of aten.mm (every second one excepted, counting in forward order) and of the
// attention kernel are saved; everything else is recomputed in the backward (torch.utils.checkpoint
// replays the block's forward, serving the saved outputs from its cache). A Llama block's GEMMs run
// wq, wk, wv, wo, w1, w3, w2: wq, wv, w1 and w2 are saved, wk, wo and w3 recomputed, with the norms,
// RoPE, residual adds and SwiGLU. With torchao's float8 linears (train.precision fp8) every linear
// is torch._scaled_mm, which the save list does not hold: all seven GEMMs are recomputed, only the
// attention kernel's output (and the amax values, aten.max) kept. Modelled for a dense Llama-style
// block at TP 1 (validated in simulator/config): under TP its collectives would be recomputed too,
// and MoE experts run grouped GEMMs.
#pragma once

#include <string_view>
#include <vector>

#include "vocabulary/plan.hpp"
#include "workloads/layers/layer_work.hpp"

namespace stepsim {

struct OpSacGemm {
  std::string_view name;  // the recompute kernel's name
  GemmShape shape;
  bool mlp = false;       // recomputed before the MLP's backward (else the attention's)
};

// The forward GEMMs the backward recomputes: wk, wo and w3 (float8 linears: all of them).
std::vector<OpSacGemm> op_sac_recomputed_gemms(const ModelConfig& m, bool float8_linears);

// Bytes per token a block keeps for its backward: its input (the checkpoint's), the saved GEMM
// outputs (wq, wv, w1, w2; none with float8 linears) in BF16, the attention's output and its
// log-sum-exp per head in FP32.
double op_sac_saved_bytes_per_token(const ModelConfig& m, bool float8_linears);

}  // namespace stepsim
