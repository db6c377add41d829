// software.profile: what belongs to the framework release (launch costs, CUDA graphs, fused kernels,
// host syncs, the release's default options) comes from workloads/software/NAME.yaml, one key picks
// it, and its keys layer like the hardware's: --set > the config > a calibrated hardware.profile's
// software: map > software.profile. Expected values are the published figures the profiles cite
// (44.8 us: Megatron-Core's 1.7B H100 row; 6.142 us: calibrate on DeepSeek's trace), typed in here.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "simulator/config/config_loader.hpp"
#include "workloads/cost/attention_cost.hpp"
#include "tests/config/config_test_util.hpp"

namespace stepsim {
namespace {

using test::config_error_of;
using test::default_text;
using test::default_yaml;
using test::expect_message;
using test::replaced;
using test::source_path;
using test::TempFile;

const std::string kLlama = source_path("workloads/llama-3.1-8b.yaml");

TEST(SoftwareProfile, WithoutOneAPlanRunsMegatronCoreR08AndItsFittedLaunchCost) {
  const Plan p = load_plan(kLlama);
  EXPECT_EQ(p.software.profile, "megatron-core-r0.8");
  EXPECT_DOUBLE_EQ(p.software.kernel_launch_s, 44.8e-6);
  EXPECT_EQ(p.software.host_launch_s, 0);
  EXPECT_EQ(p.software.cuda_graphs, CudaGraphs::None);
  EXPECT_FALSE(p.software.fused_cross_entropy);
  // Megatron-LM's overlap options stay off: that release's recipes do not turn them on.
  EXPECT_FALSE(p.parallel.overlap_grad_reduce);
}

TEST(SoftwareProfile, OneKeyPicksARelease) {
  const Plan p = load_plan(kLlama, {"software.profile=deepseek-v3"});
  EXPECT_EQ(p.software.profile, "deepseek-v3");
  EXPECT_DOUBLE_EQ(p.software.kernel_launch_s, 6.142e-6);
  EXPECT_NE(p.software.name.find("DeepSeek"), std::string::npos);
  const Plan n = load_plan(kLlama, {"software.profile=nemo-25"});
  EXPECT_TRUE(n.software.fused_cross_entropy);
  EXPECT_TRUE(n.software.fused_norm_cast);
  EXPECT_GT(n.software.host_launch_s, 0);
}

TEST(SoftwareProfile, ConfigAndSetKeysWinOverTheProfile) {
  const std::string text = replaced(default_text(), "software:\n  profile: deepseek-v3\n",
                                    "software:\n  profile: deepseek-v3\n  kernel_launch_s: 1.0e-5\n");
  TempFile f("sw.yaml", text);
  const Plan p = load_plan(f.path());
  EXPECT_DOUBLE_EQ(p.software.kernel_launch_s, 1.0e-5);
  EXPECT_FALSE(p.notes.empty());  // the override is said
  const Plan q = load_plan(f.path(), {"software.kernel_launch_s=2.0e-6"});
  EXPECT_DOUBLE_EQ(q.software.kernel_launch_s, 2.0e-6);
  // A release given with --set switches the release outright, as a preset given with --set does.
  const Plan r = load_plan(f.path(), {"software.profile=megatron-core-r0.8"});
  EXPECT_DOUBLE_EQ(r.software.kernel_launch_s, 44.8e-6);
}

TEST(SoftwareProfile, ReleaseDefaultsFillWhatTheConfigLeavesUnsetWhereThePlanReadsThem) {
  // nemo-25 turns Megatron's three overlap options on (its recipes' DDP and comm-overlap configs).
  const Plan tp2 = load_plan(kLlama, {"software.profile=nemo-25", "parallel.tp=2"});
  EXPECT_TRUE(tp2.parallel.tp_comm_overlap);
  EXPECT_TRUE(tp2.parallel.overlap_grad_reduce);
  EXPECT_TRUE(tp2.parallel.overlap_param_gather);
  // At TP 1 there is nothing for tp_comm_overlap to overlap: the default is left out, silently.
  const Plan tp1 = load_plan(kLlama, {"software.profile=nemo-25", "parallel.tp=1"});
  EXPECT_FALSE(tp1.parallel.tp_comm_overlap);
  for (const auto& n : tp1.notes) EXPECT_EQ(n.find("tp_comm_overlap"), std::string::npos) << n;
  // A key the config gives wins; the others keep the release's default (Megatron-Core's DDP runs the
  // parameter gather's overlap without the gradient reduce's, one bucket per chunk).
  const Plan off = load_plan(kLlama, {"software.profile=nemo-25", "parallel.overlap_grad_reduce=false"});
  EXPECT_FALSE(off.parallel.overlap_grad_reduce);
  EXPECT_TRUE(off.parallel.overlap_param_gather);
}

TEST(SoftwareProfile, HardwareKernelLaunchIsRefusedWithTheKeyItMovedTo) {
  const std::string text = replaced(default_text(), "hardware:\n", "hardware:\n  kernel_launch_s: 4.48e-5\n");
  const auto msg = config_error_of([&] { load_plan_from_string(text, "old.yaml"); });
  expect_message(msg, {"old.yaml", "hardware.kernel_launch_s", "software.kernel_launch_s"});
  const auto set = config_error_of([&] { load_plan(default_yaml(), {"hardware.kernel_launch_s=1e-5"}); });
  expect_message(set, {"--set", "hardware.kernel_launch_s", "software.kernel_launch_s"});
}

TEST(SoftwareProfile, BadProfilesGetOneLineWithTheFix) {
  expect_message(config_error_of([&] { load_plan(kLlama, {"software.profile=nemo25"}); }),
                 {"software.profile", "nemo25", "did you mean nemo-25", "megatron-core-r0.8"});
  expect_message(config_error_of([&] { load_plan(kLlama, {"software.profile=/no/such/profile.yaml"}); }),
                 {"software.profile", "/no/such/profile.yaml"});
  TempFile bad("bad.yaml", "software:\n  kernel_launch_us: 5\n");
  expect_message(config_error_of([&] { load_plan(kLlama, {"software.profile=" + bad.path()}); }),
                 {bad.path(), "software.kernel_launch_us", "software.kernel_launch_s"});
  TempFile nested("nested.yaml", "software:\n  profile: nemo-25\n");
  expect_message(config_error_of([&] { load_plan(kLlama, {"software.profile=" + nested.path()}); }),
                 {nested.path(), "software.profile", "not allowed"});
  TempFile negative("neg.yaml", "software:\n  host_launch_s: -1\n");
  expect_message(config_error_of([&] { load_plan(kLlama, {"software.profile=" + negative.path()}); }),
                 {negative.path(), "software.host_launch_s", "negative"});
  // A release's defaults belong to profiles; a config sets the keys themselves.
  const std::string text = replaced(default_text(), "software:\n  profile: deepseek-v3\n",
                                    "software:\n  profile: deepseek-v3\n  defaults:\n    parallel:\n      tp_comm_overlap: true\n");
  expect_message(config_error_of([&] { load_plan_from_string(text, "d.yaml"); }),
                 {"d.yaml", "software.defaults", "parallel.tp_comm_overlap"});
}

// torchtitan's attention is PyTorch's SDPA, which runs FlashAttention-2 on Hopper unless cuDNN's
// kernel is asked for; Megatron's releases run Transformer Engine's fused (cuDNN) kernel.
TEST(SoftwareProfile, TheAttentionKernelIsTheReleases) {
  EXPECT_EQ(load_plan(kLlama).software.attention_kernel, AttentionKernel::Fused);
  EXPECT_EQ(load_plan(kLlama, {"software.profile=torchtitan"}).software.attention_kernel, AttentionKernel::Flash2);
  EXPECT_EQ(load_plan(kLlama, {"software.profile=torchtitan-compile"}).software.attention_kernel, AttentionKernel::Flash2);
  EXPECT_EQ(load_plan(kLlama, {"software.profile=torchtitan", "software.attention_kernel=fused"}).software.attention_kernel,
            AttentionKernel::Fused);
  expect_message(config_error_of([&] { load_plan(kLlama, {"software.attention_kernel=flash3"}); }),
                 {"--set", "software.attention_kernel", "flash3", "fused", "flash2"});
  // FA2 has no FP8 kernel, and a GPU without a published FA2 rate (ROCm runs its own kernels) has no
  // figure to give.
  expect_message(config_error_of([&] {
                   load_plan(kLlama, {"software.profile=torchtitan", "hardware.preset=b200", "train.precision=fp8",
                                     "train.fp8_attention=true"});
                 }),
                 {"software.attention_kernel", "no FP8 kernel", "train.fp8_attention=false"});
  expect_message(config_error_of([&] { load_plan(kLlama, {"software.profile=torchtitan", "hardware.preset=mi300x"}); }),
                 {"hardware.attention_flash2_fwd_tflops", "no published rate", "software.attention_kernel=fused"});
  EXPECT_EQ(load_plan(kLlama, {"software.profile=torchtitan", "hardware.preset=b200"}).software.attention_kernel,
            AttentionKernel::Flash2);
}

// cuDNN's attention kernels got faster between releases: the B200 and GB200 presets hold the curve of
// cuDNN 9.22 and an earlier one of 9.10.2; NeMo 25.02-25.07's containers ship cuDNN 9.7 to 9.10 and
// run the earlier curve, Megatron-Bridge's (not stated) and every Hopper preset (one curve) the later.
TEST(SoftwareProfile, TheCudnnReleasePicksTheAttentionCurve) {
  const auto format = [&](const std::vector<std::string>& sets) {
    std::vector<std::string> all = {"hardware.preset=b200"};
    all.insert(all.end(), sets.begin(), sets.end());
    return cost::attention_format(load_plan(kLlama, all));
  };
  using F = cost::AttentionFormat;
  EXPECT_EQ(load_plan(kLlama, {"software.profile=nemo-25"}).software.cudnn_version, 91002);
  EXPECT_EQ(format({"software.profile=nemo-25"}), F::Bf16EarlyCudnn);
  EXPECT_EQ(format({"software.profile=nemo-25", "hardware.preset=gb200"}), F::Bf16EarlyCudnn);
  EXPECT_EQ(format({"software.profile=megatron-bridge"}), F::Bf16);
  EXPECT_EQ(format({"software.cudnn_version=92199"}), F::Bf16EarlyCudnn);
  EXPECT_EQ(format({"software.cudnn_version=92200"}), F::Bf16);
  EXPECT_EQ(format({"software.cudnn_version=0"}), F::Bf16);
  EXPECT_EQ(format({"software.profile=nemo-25", "hardware.preset=h100-sxm"}), F::Bf16);
  // A config that gives the curve itself states its rate: the preset's early curve is not taken.
  const Plan own = load_plan(kLlama, {"hardware.preset=b200", "software.profile=nemo-25", "hardware.attention_fwd_tflops=1000"});
  EXPECT_EQ(cost::attention_format(own), F::Bf16);
  EXPECT_EQ(own.hardware.attention_cudnn_version, 0);
  EXPECT_FALSE(own.hardware.attention_early.set());
  EXPECT_DOUBLE_EQ(own.hardware.attention_fwd_tflops, 1000);
  // Versions are cuDNN's own integers; an early curve needs its release and the later curve's.
  expect_message(config_error_of([&] { load_plan(kLlama, {"hardware.preset=b200", "software.cudnn_version=9.10"}); }),
                 {"--set", "software.cudnn_version", "integer", "91002 for 9.10.2"});
  expect_message(config_error_of([&] { load_plan(kLlama, {"hardware.preset=b200", "software.cudnn_version=910"}); }),
                 {"software.cudnn_version", "910 is no cuDNN version", "91002 for 9.10.2"});
  expect_message(config_error_of([&] { load_plan(kLlama, {"hardware.attention_early_fwd_tflops=900"}); }),
                 {"hardware.attention_early_bwd_tflops", "missing", "leave attention_early_* out"});
  expect_message(config_error_of([&] {
                   load_plan(kLlama, {"hardware.preset=b200", "hardware.attention_early_cudnn_version=92200"});
                 }),
                 {"hardware.attention_early_cudnn_version", "92200 is not older than", "92200"});
}

TEST(SoftwareProfile, AProfileFileIsAPath) {
  TempFile f("mine.yaml", "software:\n  name: my fork\n  kernel_launch_s: 3.0e-6\n  cuda_graphs: layers\n"
                          "  fused:\n    cross_entropy: true\n");
  const Plan p = load_plan(kLlama, {"software.profile=" + f.path()});
  EXPECT_EQ(p.software.name, "my fork");
  EXPECT_DOUBLE_EQ(p.software.kernel_launch_s, 3.0e-6);
  EXPECT_EQ(p.software.cuda_graphs, CudaGraphs::Layers);
  EXPECT_TRUE(p.software.fused_cross_entropy);
  EXPECT_FALSE(p.software.fused_norm_cast);  // not in the file, not set: off
}

TEST(SoftwareProfile, ACalibratedHardwareProfileCarriesTheLaunchCostItFitted) {
  // workloads/hardware/h800-predicted-calibrated.yaml: `stepsim calibrate` on DeepSeek's trace,
  // 6.142 us per kernel (docs/validation.md), in its software: map.
  const Plan p = load_plan(source_path("workloads/deepseek-profile-capture.yaml"),
                           {"hardware.profile=" + source_path("workloads/hardware/h800-predicted-calibrated.yaml")});
  EXPECT_NEAR(p.software.kernel_launch_s, 6.142e-6, 1e-9);
  EXPECT_EQ(p.software.name, "calibrated from train.json");
}

// NeMo 25's performance scripts run FP8 with bf16_with_fp8_mixed (fp8_params, so fp8_param_gather)
// and grad_reduce_in_fp32 False (scripts/performance/utils.py at r2.3.0); NVIDIA's blockwise recipe
// sets fp8_param_gather False, and the scripts drop it under Megatron's FSDP. The nemo-25 profile's
// defaults follow, each where those recipes would set it; a config's own key wins.
TEST(SoftwareProfile, NemoRecipesGatherPerTensorFp8WeightsInFp8AndReduceGradientsInBf16) {
  const std::string nemo = "software.profile=nemo-25";
  const Plan fp8 = load_plan(kLlama, {nemo, "train.precision=fp8"});
  EXPECT_TRUE(fp8.parallel.fp8_param_gather);
  EXPECT_EQ(fp8.parallel.grad_reduce_dtype, ReduceDtype::BF16);
  EXPECT_TRUE(load_plan(kLlama, {nemo, "train.precision=fp8", "train.fp8_recipe=delayed"}).parallel.fp8_param_gather);
  EXPECT_TRUE(load_plan(kLlama, {nemo, "train.precision=mxfp8", "hardware.preset=b200"}).parallel.fp8_param_gather);
  EXPECT_FALSE(load_plan(kLlama, {nemo, "train.precision=fp8", "train.fp8_recipe=blockwise"}).parallel.fp8_param_gather);
  EXPECT_FALSE(load_plan(kLlama, {nemo, "train.precision=nvfp4", "hardware.preset=b200"}).parallel.fp8_param_gather);
  EXPECT_FALSE(load_plan(kLlama, {nemo, "train.precision=fp8", "parallel.zero=3", "schedule=fsdp"}).parallel.fp8_param_gather);
  EXPECT_FALSE(load_plan(kLlama, {nemo, "train.precision=fp8", "parallel.fp8_param_gather=false"}).parallel.fp8_param_gather);
  // BF16 GEMMs have no FP8 weights to gather: the default is left out, silently; gradients in BF16.
  const Plan bf16 = load_plan(kLlama, {nemo, "train.precision=bf16"});
  EXPECT_FALSE(bf16.parallel.fp8_param_gather);
  EXPECT_EQ(bf16.parallel.grad_reduce_dtype, ReduceDtype::BF16);
  for (const auto& n : bf16.notes) EXPECT_EQ(n.find("fp8_param_gather"), std::string::npos) << n;
  // NeMo 24's Grok-1 recipes too (configure.sh's model.fp8_params, grok1_314b.yaml's grad_sync_dtype bf16).
  const Plan nemo24 = load_plan(kLlama, {"software.profile=nemo-24", "train.precision=fp8"});
  EXPECT_TRUE(nemo24.parallel.fp8_param_gather);
  EXPECT_EQ(nemo24.parallel.grad_reduce_dtype, ReduceDtype::BF16);
  // Megatron-Bridge's precision configs set it too (current scaling, MXFP8; not NVFP4).
  EXPECT_TRUE(load_plan(kLlama, {"software.profile=megatron-bridge", "train.precision=fp8"}).parallel.fp8_param_gather);
  EXPECT_FALSE(load_plan(kLlama, {"software.profile=megatron-bridge", "train.precision=nvfp4", "hardware.preset=b200"})
                   .parallel.fp8_param_gather);
  // Megatron-Core r0.8's profile keeps Megatron-LM's defaults.
  EXPECT_FALSE(load_plan(kLlama, {"software.profile=megatron-core-r0.8", "train.precision=fp8"}).parallel.fp8_param_gather);
}

// Megatron-Bridge's performance recipes reduce gradients in BF16 (grad_reduce_in_fp32 False), where
// Megatron-LM's own default reduces in FP32: the megatron-bridge profile's default, which a config
// or --set overrides; Megatron-Core r0.8's profile keeps Megatron-LM's.
TEST(SoftwareProfile, MegatronBridgeRecipesReduceGradientsInBf16) {
  EXPECT_EQ(load_plan(kLlama, {"software.profile=megatron-bridge"}).parallel.grad_reduce_dtype, ReduceDtype::BF16);
  EXPECT_EQ(load_plan(kLlama, {"software.profile=megatron-bridge", "parallel.grad_reduce_dtype=fp32"})
                .parallel.grad_reduce_dtype,
            ReduceDtype::FP32);
  EXPECT_EQ(load_plan(kLlama, {"software.profile=megatron-core-r0.8"}).parallel.grad_reduce_dtype, ReduceDtype::FP32);
}

}  // namespace
}  // namespace stepsim
