#include "workloads/layers/op_sac.hpp"

#include "vocabulary/model_params.hpp"

namespace stepsim {

std::vector<OpSacGemm> op_sac_recomputed_gemms(const ModelConfig& m, bool float8_linears) {
  const double h = double(m.hidden_size), heads = double(m.num_attention_heads), kv = double(m.kv_heads());
  const double qk = double(qk_head_dim(m)), v = double(v_head_dim(m)), f = double(m.intermediate_size);
  if (float8_linears) {  // torch._scaled_mm is not in the save list: every linear reruns
    std::vector<OpSacGemm> all = {{"recompute_wq", {heads * qk, h}, false},
                                  {"recompute_wk", {kv * qk, h}, false},
                                  {"recompute_wv", {kv * v, h}, false},
                                  {"recompute_wo", {h, heads * v, TpSplit::Reduction}, false}};
    if (m.gated_mlp()) all.push_back({"recompute_w1", {f, h}, true}), all.push_back({"recompute_w3", {f, h}, true});
    else all.push_back({"recompute_fc1", {f, h}, true});
    all.push_back({m.gated_mlp() ? "recompute_w2" : "recompute_fc2", {h, f, TpSplit::Reduction}, true});
    return all;
  }
  std::vector<OpSacGemm> out = {{"recompute_wk", {kv * qk, h}, false}, {"recompute_wo", {h, heads * v, TpSplit::Reduction}, false}};
  if (m.gated_mlp()) out.push_back({"recompute_w3", {f, h}, true});  // gate (w1) saved, up (w3) recomputed
  else out.push_back({"recompute_fc2", {h, f, TpSplit::Reduction}, true});  // fc1 saved, fc2 (the second mm) recomputed
  return out;
}

double op_sac_saved_bytes_per_token(const ModelConfig& m, bool float8_linears) {
  constexpr double kBf16 = 2, kFp32 = 4;
  const double h = double(m.hidden_size), heads = double(m.num_attention_heads), kv = double(m.kv_heads());
  const double qk = double(qk_head_dim(m)), v = double(v_head_dim(m)), f = double(m.intermediate_size);
  if (float8_linears) return kBf16 * (h + heads * v) + kFp32 * heads;  // input; attention output and log-sum-exp
  // input; wq and wv outputs; attention output and log-sum-exp; w1 (gate) and w2 (down) outputs.
  const double mlp = m.gated_mlp() ? f + h : f;  // a GELU MLP's fc1 output is saved, its fc2 recomputed
  return kBf16 * (h + heads * qk + kv * v + heads * v + mlp) + kFp32 * heads;
}

}  // namespace stepsim
