// Precision, recompute, MFU and the model-neutral report for a model other than DeepSeek-V3: each
// figure against a hand computation from the Llama 3.1 8B (and Mixtral 8x7B) shapes.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "simulator/calibration/explain.hpp"
#include "simulator/config/config_loader.hpp"
#include "simulator/roofline/roofline.hpp"
#include "simulator/report/roofline_report.hpp"
#include "tests/mixtral_plan.hpp"
#include "workloads/traffic/ep_traffic.hpp"
#include "workloads/layers/layer_work.hpp"

namespace stepsim {
namespace {

const std::string kLlama = std::string(STEPSIM_SOURCE_DIR) + "/workloads/llama-3.1-8b.yaml";
Plan llama(std::vector<std::string> sets = {}) { return load_plan(kLlama, sets); }

// Llama 3.1 8B by hand: per layer q, o 4096^2, k, v 4096 x 1024, SwiGLU 3 x 4096 x 14336, two
// norms; LM head 128256 x 4096; final norm. 512 sequences of 8192 tokens on 64 GPUs.
constexpr double kH = 4096, kLayers = 32, kSeq = 8192, kSeqs = 512, kGpus = 64;
constexpr double kLayerParams = 2 * kH * kH + 2 * kH * 1024 + 3 * kH * 14336 + 2 * kH;
constexpr double kHead = 128256 * kH;
constexpr double kTokens = kSeqs * kSeq;
// Causal attention core forward per layer and sequence: 2 x S^2/2 x 32 heads x (128 + 128).
constexpr double kAttnFwd = kSeq * kSeq * 32 * 256;
constexpr double kFp8 = 1456.6e12, kBf16 = 757.7e12;

TEST(Precision, Bf16GemmsRunAtTheBf16Rate) {
  const Roofline a = compute_roofline(llama({"train.precision=fp8"})), b = compute_roofline(llama());
  EXPECT_DOUBLE_EQ(a.terms.matmul_flops, b.terms.matmul_flops);
  EXPECT_EQ(b.terms.matmul_fp8_s, 0);
  EXPECT_EQ(b.terms.bf16_correction_s, 0);
  // The GEMMs off the (always BF16) LM head take the rate ratio longer.
  const double gemm_fp8_s = a.terms.matmul_fp8_s, gemm_bf16_s = b.terms.matmul_bf16_s - a.terms.matmul_bf16_s;
  EXPECT_NEAR(gemm_bf16_s / gemm_fp8_s, kFp8 / kBf16, 1e-12);
  EXPECT_NEAR(gemm_bf16_s, 6 * (kLayers * kLayerParams + kH) * kTokens / (kBf16 * kGpus), 1e-9 * gemm_bf16_s);
  EXPECT_DOUBLE_EQ(a.terms.attention_s, b.terms.attention_s);

  // The replay's kernels: a layer's GEMM part takes fp8 / bf16 times longer.
  const Plan pa = llama({"train.precision=fp8"}), pb = llama();
  const auto wa = layer_work(pa, 5, 1.0, 0), wb = layer_work(pb, 5, 1.0, 0);
  EXPECT_NEAR(wb.part(LayerPart::MlpF).seconds(pb.hardware) / wa.part(LayerPart::MlpF).seconds(pa.hardware),
              kFp8 / kBf16, 1e-12);
  // Dispatch copies: DeepEP in an FP8 plan sends FP8 + one FP32 scale per 128 channels (DeepSeek-V3's
  // 7168 + 224 bytes), in a BF16 plan BF16; Megatron's alltoall BF16 either way.
  const auto deepseek = [](std::vector<std::string> sets) { return load_plan(default_config_path(), sets); };
  EXPECT_DOUBLE_EQ(dispatch_bytes_per_token(deepseek({})), 7168 + 7168 / 128 * 4);
  EXPECT_DOUBLE_EQ(dispatch_bytes_per_token(deepseek({"train.precision=bf16"})), 2 * 7168);
  EXPECT_DOUBLE_EQ(dispatch_bytes_per_token(deepseek({"parallel.moe_dispatcher=alltoall", "parallel.split_lone_chunks=false"})),
                   2 * 7168);
}

TEST(Recompute, FullAddsOneForwardPerLayer) {
  const Roofline none = compute_roofline(llama({"parallel.recompute=none"}));
  const Roofline full = compute_roofline(llama({"parallel.recompute=full"}));
  EXPECT_EQ(none.terms.recompute_flops, 0);
  // Every layer's forward: 2 FLOPs per layer parameter per token, and the attention core.
  const double forward = 2 * kLayers * kLayerParams * kTokens + kLayers * kSeqs * kAttnFwd;
  EXPECT_NEAR(full.terms.recompute_flops, forward, 1e-12 * forward);
  EXPECT_NEAR(full.terms.recompute_s, (forward - kLayers * kSeqs * kAttnFwd) / (kBf16 * kGpus) +
                                          kLayers * kSeqs * kAttnFwd / (kBf16 * kGpus),
              1e-9 * full.terms.recompute_s);
  EXPECT_NEAR(full.compute_s - none.compute_s, full.terms.recompute_s, 1e-9 * full.compute_s);
  // Megatron's selective: the attention core's forward only.
  const Roofline sel = compute_roofline(llama({"parallel.recompute=selective"}));
  EXPECT_NEAR(sel.terms.recompute_flops, kLayers * kSeqs * kAttnFwd, 1e-12 * sel.terms.recompute_flops);
  // DeepSeek's policy rebuilds MLA up-projections: none in a GQA model.
  EXPECT_EQ(compute_roofline(llama({"parallel.recompute=deepseek"})).terms.recompute_flops, 0);

  // The replay's layer: its backward grows by exactly its forward.
  const Plan pn = llama({"parallel.recompute=none"}), pf = llama({"parallel.recompute=full"});
  const auto wn = layer_work(pn, 3, 2.0, 0), wf = layer_work(pf, 3, 2.0, 0);
  const auto flops = [](const PartWork& w) { return w.flops(Precision::FP8) + w.flops(Precision::BF16); };
  EXPECT_NEAR(flops(wf.part(LayerPart::AttnB)) - flops(wn.part(LayerPart::AttnB)), flops(wn.part(LayerPart::AttnF)), 1);
  EXPECT_NEAR(flops(wf.part(LayerPart::MlpB)) - flops(wn.part(LayerPart::MlpB)), flops(wn.part(LayerPart::MlpF)), 1);
  EXPECT_DOUBLE_EQ(flops(wf.part(LayerPart::AttnF)), flops(wn.part(LayerPart::AttnF)));
}

// Sliding-window attention on every other layer (GPT-OSS's pattern), a window of S/2: those layers'
// cores do S x W - W^2 / 2 = 3/4 of the causal S^2 / 2 pairs; the GEMMs do not change.
TEST(SlidingWindow, TheRooflineCountsEachLayersQueryKeyPairs) {
  std::string layers = "model.sliding_layers=[0";
  for (int l = 2; l < 32; l += 2) layers += ", " + std::to_string(l);
  const Plan p = llama({"model.sliding_window=4096", layers + "]"});
  const Roofline r = compute_roofline(p), full = compute_roofline(llama());
  const double forward = 16 * kAttnFwd + 16 * 0.75 * kAttnFwd;  // per sequence
  // Training: QK-shaped 4 times, PV-shaped 3 times, the two equal here (d 128 each): 3.5 x forward.
  EXPECT_NEAR(r.terms.attention_flops, 3.5 * forward * kSeqs, 1e-12 * r.terms.attention_flops);
  EXPECT_NEAR(full.terms.attention_flops, 3.5 * 32 * kAttnFwd * kSeqs, 1e-12 * full.terms.attention_flops);
  EXPECT_NEAR(full.terms.model_flops - r.terms.model_flops, 3 * 16 * 0.25 * kAttnFwd * kSeqs, 1e-9 * r.terms.model_flops);
  EXPECT_DOUBLE_EQ(r.terms.matmul_flops, full.terms.matmul_flops);
  // The replay's kernels carry the same count and their window.
  const auto core = [&](int64_t layer) { return layer_work(p, layer, 1.0, 0).part(LayerPart::AttnF).kernels; };
  for (const Kernel& k : core(2))
    if (k.cls == KernelClass::Attention) {
      EXPECT_NEAR(k.flops, 0.75 * kAttnFwd, 1e-6);
      EXPECT_EQ(k.attention_window, 4096);
    }
  for (const Kernel& k : core(3))
    if (k.cls == KernelClass::Attention) {
      EXPECT_NEAR(k.flops, kAttnFwd, 1e-6);
      EXPECT_EQ(k.attention_window, 0);
    }
}

TEST(Mfu, ModelFlopsOverStepGpusAndDensePeak) {
  const Plan p = llama();
  const Roofline r = compute_roofline(p);
  // 6ND (N with the LM head and final norm) + attention core forward and backward (3x forward).
  const double model = 6 * (kLayers * kLayerParams + kHead + kH) * kTokens + 3 * kLayers * kSeqs * kAttnFwd;
  EXPECT_NEAR(r.terms.model_flops, model, 1e-12 * model);
  EXPECT_DOUBLE_EQ(r.peak_tflops, 989);  // H800 dense BF16
  EXPECT_NEAR(r.mfu, model / (r.step_time_s * kGpus * 989e12), 1e-12);
  EXPECT_NEAR(r.achieved_tflops_per_gpu, model / r.step_time_s / kGpus / 1e12, 1e-9);
  EXPECT_NEAR(mfu(p, r, 2 * r.step_time_s), r.mfu / 2, 1e-12);
  // FP8 training is measured against the FP8 peak.
  const Roofline f = compute_roofline(llama({"train.precision=fp8", "hardware.peak_fp8_tflops=2000"}));
  EXPECT_NEAR(f.mfu, model / (f.step_time_s * kGpus * 2000e12), 1e-12);
  // NVFP4 GEMMs run on the FP4 tensor cores: its MFU is against their dense peak, not FP8's.
  const Roofline n = compute_roofline(llama({"train.precision=nvfp4", "hardware.peak_fp8_tflops=2000",
                                             "hardware.peak_fp4_tflops=4000", "hardware.gemm_nvfp4_peak_share=0.5"}));
  EXPECT_DOUBLE_EQ(n.peak_tflops, 4000);
  EXPECT_NEAR(n.mfu, model / (n.step_time_s * kGpus * 4000e12), 1e-12);
  const auto j = roofline_json(p, r);
  EXPECT_DOUBLE_EQ(j["mfu"].get<double>(), r.mfu);
  EXPECT_DOUBLE_EQ(j["achieved_tflops_per_gpu"].get<double>(), r.achieved_tflops_per_gpu);
}

TEST(Reports, DeepSeeksReportedStepOnlyForDeepSeekV3OrWhenGiven) {
  const Plan p = llama();
  const Roofline r = compute_roofline(p);
  EXPECT_EQ(r.reported_step_s, 0);
  EXPECT_TRUE(roofline_json(p, r)["reported_step_s"].is_null());
  EXPECT_EQ(roofline_text(p, r).find("DeepSeek"), std::string::npos);
  const Roofline given = compute_roofline(llama({"train.reported_step_s=12.5"}));
  EXPECT_DOUBLE_EQ(given.reported_step_s, 12.5);
  EXPECT_DOUBLE_EQ(given.speedup_vs_reported, 12.5 / given.step_time_s);
  // DeepSeek-V3: 180K GPU-hours per 1e12 tokens, 15360 x 4096 tokens on 2048 GPUs.
  const Roofline ds = compute_roofline(load_plan(default_config_path()));
  EXPECT_NEAR(ds.reported_step_s, 180e3 * 3600 / 1e12 * 15360 * 4096 / 2048, 1e-9);

  // The waterfall (with stand-in simulations): no MTP, ramp or reported bar for Llama.
  const calib::SimulateFn fake = [](const Plan&) { return calib::StepSplit{1.0, 0.8, 0.1, 0.1}; };
  const auto has = [](const calib::Explanation& x, const std::string& effect) {
    for (const auto& s : x.steps)
      if (s.effect.find(effect) != std::string::npos) return true;
    return false;
  };
  const auto lx = calib::explain(p, fake, false);
  EXPECT_FALSE(has(lx, "MTP"));
  EXPECT_FALSE(has(lx, "ramp"));
  EXPECT_FALSE(has(lx, "unexplained"));
  EXPECT_EQ(lx.reported_step_s, 0);
  const auto gx = calib::explain(llama({"train.reported_step_s=12.5"}), fake, false);
  EXPECT_TRUE(has(gx, "unexplained"));
  EXPECT_DOUBLE_EQ(gx.unexplained_s, 12.5 - gx.prediction_s);
  const auto dx = calib::explain(load_plan(default_config_path()), fake, false);
  EXPECT_TRUE(has(dx, "MTP (depth 1)"));
  EXPECT_TRUE(has(dx, "ramp"));
  EXPECT_TRUE(has(dx, "unexplained"));
}

TEST(EpInsideANode, NvlinkAllToAllIsInTheRoofline) {
  // Mixtral 8x7B, EP 8 inside each node of the Llama plan: every copy goes over NVLink. Token-layer
  // visits per GPU; dispatch and combine both BF16, forward and backward.
  const double visits = kTokens * 32 / kGpus, bytes = 2 * kH + 2 * kH;
  // Megatron's alltoall (Mixtral's default): each of a token's 2 rows goes to the GPU holding its
  // expert, another GPU 7 times in 8.
  const Roofline r = compute_roofline(test::mixtral_on_llama_plan({"parallel.ep=8"}));
  const double alltoall_s = 2 * visits * 2 * 7.0 / 8 * bytes / 160e9;
  EXPECT_NEAR(r.ep_comm_s, alltoall_s, 1e-9 * alltoall_s);
  EXPECT_NEAR(r.ep_share_of_compute, alltoall_s / r.compute_s, 1e-12);
  EXPECT_GT(r.ep_share_of_compute, 0.05);  // the NVLink-only plan read 0
  // DeepEP: one copy to each GPU holding one of its 2 experts, 1 - (7/8)^2 of each of the 7 others.
  const Roofline d = compute_roofline(test::mixtral_on_llama_plan({"parallel.ep=8", "parallel.moe_dispatcher=deepep"}));
  const double deepep_s = 2 * visits * (1 - 49.0 / 64) * 7 * bytes / 160e9;
  EXPECT_NEAR(d.ep_comm_s, deepep_s, 1e-9 * deepep_s);
}

}  // namespace
}  // namespace stepsim
