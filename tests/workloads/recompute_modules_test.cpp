// parallel.recompute as Megatron-LM's recompute modules: each module's time (the FLOPs and bytes its
// backward reruns) and memory (the activations no longer kept), against hand formulas on
// DeepSeek-V3 (MLA, MoE with a shared expert) and Llama 3.1 8B (dense, GQA); the shorthands against
// their modules.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "simulator/config/config_loader.hpp"
#include "simulator/roofline/roofline.hpp"
#include "vocabulary/config_error.hpp"
#include "vocabulary/model_params.hpp"
#include "workloads/cost/part_cost.hpp"
#include "tests/workloads/layer_work_sums.hpp"
#include "workloads/layers/layer_work.hpp"
#include "workloads/memory/activation_bytes.hpp"

namespace stepsim {
namespace {

using test::memory_bytes;

const std::string kLlama = std::string(STEPSIM_SOURCE_DIR) + "/workloads/llama-3.1-8b.yaml";

Plan deepseek(const std::string& recompute) {
  return load_plan(default_config_path(), {"parallel.recompute=" + recompute});
}
Plan llama(const std::string& recompute, std::vector<std::string> sets = {}) {
  sets.push_back("parallel.recompute=" + recompute);
  return load_plan(kLlama, sets);
}

// FLOPs of one part's kernels whose name starts with "recompute", for one sequence (and per routed row).
double recompute_flops(const Plan& p, int64_t layer, LayerPart part, double rows = 0) {
  const LayerWork w = layer_work(p, layer, 1.0, rows);
  double sum = 0;
  for (const Kernel& k : w.part(part).kernels)
    if (k.name.starts_with("recompute")) sum += k.flops;
  return sum;
}

// DeepSeek-V3: h 7168, 128 heads, q latent 1536, kv latent 512, qk 128 + 64, v 128; 8 of 256
// experts of width 2048 and one shared; FP8 stashes at 1 + 4/128 bytes.
constexpr double kH = 7168, kHeads = 128, kQLat = 1536, kKvLat = 512, kQk = 192, kV = 128, kFe = 2048, kTopK = 8,
                 kExperts = 256, kT = 4096, kFp8 = 1 + 4.0 / 128;

TEST(RecomputeModules, ShorthandsAreTheirModules) {
  EXPECT_EQ(deepseek("[core_attn]").parallel.recompute, Recompute::Selective);
  EXPECT_EQ(deepseek("core_attn").parallel.recompute, Recompute::Selective);
  EXPECT_EQ(deepseek("[]").parallel.recompute, Recompute::None);
  EXPECT_EQ(to_string(deepseek("[layernorm, mla_up_proj]").parallel.recompute), "layernorm mla_up_proj");
  EXPECT_EQ(to_string(deepseek("[core_attn]").parallel.recompute), "selective");
  // deepseek is Megatron's layernorm, mla_up_proj and moe_act, and also the shared experts' and the
  // dense layers' activation outputs: s x f_s and s x f more kept without them.
  const Plan megatron = deepseek("[layernorm, mla_up_proj, moe_act]"), ds = deepseek("deepseek");
  EXPECT_NEAR(layer_activations(megatron, true).saved_per_token - layer_activations(ds, true).saved_per_token,
              kFp8 * kFe, 1e-9);
  EXPECT_NEAR(layer_activations(megatron, false).saved_per_token - layer_activations(ds, false).saved_per_token,
              kFp8 * 18432, 1e-9);
  // Their backward reruns the same GEMMs: the MLA up-projections.
  EXPECT_DOUBLE_EQ(recompute_flops(megatron, 10, LayerPart::AttnB), recompute_flops(ds, 10, LayerPart::AttnB));
}

TEST(RecomputeModules, WhatEachModuleFreesOnADeepSeekMoeLayer) {
  const double none = layer_activations(deepseek("none"), true).saved_per_token;
  const auto freed = [&](const std::string& m) { return none - layer_activations(deepseek(m), true).saved_per_token; };
  // Both pre-norms' FP8 outputs and their FP32 rstd.
  EXPECT_NEAR(freed("layernorm"), 2 * (kFp8 * kH + 4), 1e-9);
  // The normed latents and their two rstd; q and k, v after RoPE in BF16.
  EXPECT_NEAR(freed("mla_up_proj"), kFp8 * (kQLat + kKvLat) + 4 * 2 + 2 * kHeads * kQk + 2 * kHeads * (kQk + kV), 1e-9);
  // The routed experts' activation output: 8 rows of 2048 per token.
  EXPECT_NEAR(freed("moe_act"), kFp8 * kTopK * kFe, 1e-9);
  EXPECT_NEAR(freed("core_attn"), 0, 1e-9);  // FlashAttention keeps no scores
  // Plain checkpoints free their part and rebuild it at the start of the layer's backward.
  const LayerActivations shared = layer_activations(deepseek("shared_experts"), true);
  EXPECT_NEAR(none - shared.saved_per_token, 3 * kFp8 * kFe, 1e-9);  // gate/up (2 f_s) + activation (f_s)
  EXPECT_NEAR(shared.recompute_per_token, 3 * kFp8 * kFe, 1e-9);
  const LayerActivations moe = layer_activations(deepseek("moe"), true);
  const double moe_part = 4 * (2 * kExperts + 4 * kTopK) + kFp8 * kTopK * kH + 3 * kFp8 * (kTopK + 1) * kFe;
  EXPECT_NEAR(none - moe.saved_per_token, moe_part, 1e-9);
  EXPECT_NEAR(moe.recompute_per_token, moe_part, 1e-9);
  // A dense layer's mlp: gate/up and activation of the 18,432-wide FFN.
  const LayerActivations mlp = layer_activations(deepseek("mlp"), false);
  EXPECT_NEAR(layer_activations(deepseek("none"), false).saved_per_token - mlp.saved_per_token, 3 * kFp8 * 18432, 1e-9);
  EXPECT_NEAR(mlp.recompute_per_token, 3 * kFp8 * 18432, 1e-9);
}

TEST(RecomputeModules, WhatEachModuleRerunsOnDeepSeek) {
  const ModelParams p = count_params(deepseek("none").model);
  // mla_up_proj: the q and kv up-projections, 2 FLOPs per weight per token.
  const double up = 2 * (kQLat * kHeads * kQk + kKvLat * kHeads * (128 + kV)) * kT;
  EXPECT_NEAR(recompute_flops(deepseek("mla_up_proj"), 10, LayerPart::AttnB), up, 1e-12 * up);
  EXPECT_DOUBLE_EQ(recompute_flops(deepseek("layernorm"), 10, LayerPart::AttnB), 0);  // memory-bound only
  EXPECT_NEAR(memory_bytes(deepseek("layernorm"), 10, LayerPart::AttnB, "recompute_attn_norm"), 4 * kH, 1e-9);
  EXPECT_NEAR(memory_bytes(deepseek("layernorm"), 10, LayerPart::MlpB, "recompute_mlp_norm"), 4 * kH, 1e-9);
  // core_attn: the causal attention core's forward, QK^T and PV over half the 4096^2 scores.
  const double core = kT * kT * kHeads * (kQk + kV);
  EXPECT_NEAR(recompute_flops(deepseek("core_attn"), 10, LayerPart::AttnB), core, 1e-12 * core);
  // shared_experts: the shared expert's three 7168 x 2048 matrices over every token.
  const double shared = 2 * 3 * kH * kFe * kT;
  EXPECT_NEAR(recompute_flops(deepseek("shared_experts"), 10, LayerPart::MlpB), shared, 1e-12 * shared);
  // moe: the router (256 x 7168 weights and DeepSeek's 256 balancing biases), the shared expert,
  // and per routed row one expert's three matrices.
  EXPECT_EQ(p.router, 256 * 7168 + 256);
  const double moe_tokens = 2 * (double(p.router) + 3 * kH * kFe) * kT;
  EXPECT_NEAR(recompute_flops(deepseek("moe"), 10, LayerPart::MlpB), moe_tokens, 1e-12 * moe_tokens);
  EXPECT_NEAR(recompute_flops(deepseek("moe"), 10, LayerPart::MlpB, 1) - recompute_flops(deepseek("moe"), 10, LayerPart::MlpB),
              2 * 3 * kH * kFe, 1e-3);
  // The roofline: moe reruns router (BF16), k experts and the shared expert per token of every MoE
  // layer, and sends the dispatch and combine a third time.
  const Roofline none = compute_roofline(deepseek("none")), moe = compute_roofline(deepseek("moe"));
  const double tokens = 15360 * kT, moe_layers = 58;
  EXPECT_NEAR(moe.terms.recompute_bf16_flops, 2 * double(p.router) * moe_layers * tokens, 1e-6 * moe.terms.recompute_bf16_flops);
  EXPECT_NEAR(moe.terms.recompute_flops, 2 * (double(p.router) + (kTopK + 1) * 3 * kH * kFe) * moe_layers * tokens,
              1e-9 * moe.terms.recompute_flops);
  EXPECT_NEAR(moe.ep.ib_bytes_per_gpu, 1.5 * none.ep.ib_bytes_per_gpu, 1e-9 * moe.ep.ib_bytes_per_gpu);
  // mla_up_proj is the roofline's recompute of DeepSeek's policy.
  EXPECT_DOUBLE_EQ(compute_roofline(deepseek("mla_up_proj")).terms.recompute_flops,
                   compute_roofline(deepseek("deepseek")).terms.recompute_flops);
}

TEST(RecomputeModules, MlpOnADenseModelRerunsItsFfn) {
  // Llama 3.1 8B: h 4096, SwiGLU 14336: three matrices, rerun over every token.
  const Plan p = llama("mlp");
  const double ffn = 2 * 3 * 4096.0 * 14336 * 8192;
  EXPECT_NEAR(recompute_flops(p, 3, LayerPart::MlpB), ffn, 1e-12 * ffn);
  const Roofline r = compute_roofline(p);
  EXPECT_NEAR(r.terms.recompute_flops, 2 * 3 * 4096.0 * 14336 * 32 * 512 * 8192, 1e-9 * r.terms.recompute_flops);
  EXPECT_DOUBLE_EQ(r.terms.recompute_bf16_flops, 0);
}

TEST(RecomputeModules, ModulesTheModelLacks) {
  // Megatron-LM refuses mla_up_proj without MLA and moe_act without experts: so does the plan.
  for (const char* module : {"mla_up_proj", "moe_act"}) {
    try {
      llama(std::string("[") + module + "]");
      ADD_FAILURE() << module << " accepted on a dense GQA model";
    } catch (const ConfigError& e) {
      EXPECT_NE(std::string(e.what()).find(std::string("remove ") + module), std::string::npos) << e.what();
    }
  }
  // moe and shared_experts on a dense model are Megatron's no-ops: a note each, nothing rerun.
  const Plan p = llama("[core_attn, moe, shared_experts]");
  int notes = 0;
  for (const auto& n : p.notes) notes += n.find("recomputes nothing here") != std::string::npos;
  EXPECT_EQ(notes, 2);
  EXPECT_DOUBLE_EQ(recompute_flops(p, 3, LayerPart::MlpB), 0);
  // shared_experts beside the shared experts' overlap: Megatron refuses the pair.
  EXPECT_THROW(load_plan(default_config_path(), {"parallel.recompute=[shared_experts]", "parallel.overlap_shared_expert=true"}),
               ConfigError);
  // moe beside Megatron's all-to-all overlap: it sends the dispatch and combine the overlap hides again.
  try {
    load_plan(default_config_path(), {"schedule=1f1b", "parallel.moe_dispatcher=alltoall", "parallel.moe_overlap_ep_comm=true",
                                      "parallel.recompute=[moe]"});
    ADD_FAILURE() << "moe recompute accepted beside parallel.moe_overlap_ep_comm";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("remove moe from parallel.recompute"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace stepsim
