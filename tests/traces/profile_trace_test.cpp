// The profiler-trace reader against DeepSeek's published training capture. Expected values are the
// per-layer kernel sums and stream spans of the hand-made summary of that trace
// (shared/reference/deepseek-profile/SUMMARY.md: sum of kernel durations / 4 layers, classified
// by kernel name and by the CPU annotation the launch falls in), not stepsim's output.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <string>

#include "vocabulary/config_error.hpp"
#include "../scratch_dir.hpp"
#include "simulator/io/profile_trace.hpp"

namespace stepsim::traces {
namespace {

const std::string kTrain = std::string(STEPSIM_SOURCE_DIR) + "/tests/data/deepseek-train.json";

double per_layer_ms(const ProfileSummary& s, const std::map<std::string, double>& m, const std::string& k) {
  const auto it = m.find(k);
  return it == m.end() ? 0.0 : it->second / double(s.layers) * 1e3;
}

double class_ms(const ProfileSummary& s, const std::string& phase, const std::string& cls) {
  const auto it = s.phase_class_s.find(phase);
  if (it == s.phase_class_s.end()) return 0;
  return per_layer_ms(s, it->second, cls);
}

std::string temp_file(const std::string& name, const std::string& text) {
  const std::string path = stepsim::test::process_scratch().file(name);
  std::ofstream(path) << text;
  return path;
}

TEST(ProfileTrace, DeepSeekPhasesMatchTheSummaryTable) {
  const ProfileSummary s = read_profile_trace(kTrain);
  EXPECT_EQ(s.layers, 4);
  EXPECT_EQ(s.kernels, 963 + 8 + 12);  // kernels, memcpys, memsets (SUMMARY "Format")
  // "compute total (streams 7+23)" and "comm total (stream 27, 20 SMs)", ms per layer.
  const double tol = 0.02;
  EXPECT_NEAR(per_layer_ms(s, s.phase_s, "F"), 8.97, 8.97 * tol);
  EXPECT_NEAR(per_layer_ms(s, s.phase_s, "B"), 14.65, 14.65 * tol);
  EXPECT_NEAR(per_layer_ms(s, s.phase_s, "W"), 8.77, 8.77 * tol);
  EXPECT_NEAR(per_layer_ms(s, s.phase_s, "comm_F"), 15.37, 15.37 * tol);
  EXPECT_NEAR(per_layer_ms(s, s.phase_s, "comm_B"), 13.26, 13.26 * tol);
  // Every kernel was launched inside a phase annotation.
  EXPECT_EQ(s.phase_s.count("other"), 0u);
  EXPECT_EQ(s.phase_s.count("comm_other"), 0u);
}

TEST(ProfileTrace, DeepSeekKernelClassesMatchTheSummaryTable) {
  const ProfileSummary s = read_profile_trace(kTrain);
  struct Row {
    const char *phase, *cls;
    double ms;
  };
  // SUMMARY "Per-layer kernel time" rows; the small rows are given to 0.01 ms, hence the floor.
  const Row rows[] = {
      {"F", "gemm_moe_fp8", 2.90},   {"B", "gemm_moe_fp8", 2.83},  {"F", "gemm_dense_fp8", 2.07},
      {"B", "gemm_dense_fp8", 2.64}, {"W", "gemm_wgrad_fp8", 8.19}, {"F", "gemm_bf16", 0.05},
      {"B", "gemm_bf16", 0.09},      {"F", "attention", 1.24},      {"B", "attention", 4.25},
      {"F", "norm", 0.27},           {"B", "norm", 0.59},           {"F", "cast", 1.03},
      {"B", "cast", 2.29},           {"W", "cast", 0.58},           {"F", "elementwise", 1.42},
      {"B", "elementwise", 1.95},    {"comm_F", "ep_combine", 5.99}, {"comm_B", "ep_combine", 6.37},
      {"comm_F", "ep_dispatch", 4.35}, {"comm_B", "ep_dispatch", 3.41},
      // notify_dispatch / cached_notify, plus get_dispatch_layout (0.10) in forward
      {"comm_F", "ep_notify", 4.93 + 0.10}, {"comm_B", "ep_notify", 3.21},
      {"comm_B", "cast", 0.27},  // the FP8 cast DeepEP runs on the communication stream
  };
  for (const Row& r : rows)
    EXPECT_NEAR(class_ms(s, r.phase, r.cls), r.ms, std::max(0.02 * r.ms, 0.011)) << r.phase << " " << r.cls;
  EXPECT_EQ(s.unknown_kernels, 0);
}

TEST(ProfileTrace, DeepSeekStreamSpans) {
  const ProfileSummary s = read_profile_trace(kTrain);
  // SUMMARY "GPU timeline per layer-pair": compute spans attn(F) 4.60 + mlp(F) 4.64, mlp(B) 5.36
  // + attn(B) 9.54, mlp(W) 5.07 + attn(W) 2.40; comm spans dispatch(F) 6.74 + combine(F) 8.70,
  // combine(B) 5.78 + dispatch(B) 7.56; whole capture 129.0 ms.
  EXPECT_NEAR(per_layer_ms(s, s.phase_span_s, "F"), 4.60 + 4.64, 0.02 * 9.24);
  EXPECT_NEAR(per_layer_ms(s, s.phase_span_s, "B"), 5.36 + 9.54, 0.02 * 14.90);
  EXPECT_NEAR(per_layer_ms(s, s.phase_span_s, "W"), 5.07 + 2.40, 0.02 * 7.47);
  EXPECT_NEAR(per_layer_ms(s, s.phase_span_s, "comm_F"), 6.74 + 8.70, 0.02 * 15.44);
  EXPECT_NEAR(per_layer_ms(s, s.phase_span_s, "comm_B"), 5.78 + 7.56, 0.02 * 13.34);
  EXPECT_NEAR(s.capture_span_s, 129.0e-3, 0.005 * 129.0e-3);
}

TEST(ProfileTrace, KernelNamesClassify) {
  EXPECT_EQ(kernel_class("void dpsk::ep::internode::notify_dispatch<false, 8>(int const*)"), "ep_notify");
  EXPECT_EQ(kernel_class("void deep_ep::internode::combine<8>(int4*)"), "ep_combine");
  EXPECT_EQ(kernel_class("void deep_ep::intranode::dispatch<8>(int4*)"), "ep_dispatch");
  EXPECT_EQ(kernel_class("sm90_xmma_gemm_bf16bf16_bf16f32_f32_nn_n_tilesize128x128x64"), "gemm_bf16");
  EXPECT_EQ(kernel_class("void flash::compute_attn_ws<Flash_fwd_kernel_traits<192>>"), "attention");
  EXPECT_EQ(kernel_class("void at::native::unrolled_elementwise_kernel<LoadWithCast<2>>"), "elementwise");
  EXPECT_EQ(kernel_class("ncclDevKernel_AllGather_RING_LL(ncclDevComm*)"), "other");
  EXPECT_TRUE(is_comm_kernel("ncclDevKernel_AllGather_RING_LL(ncclDevComm*)"));
  EXPECT_EQ(kernel_class("my_mystery_kernel"), "other");
}

// A trace it has never seen: an unknown kernel is counted, in "other", under its launch's phase;
// a kernel whose launch lies outside every phase range goes to the "other" phase.
TEST(ProfileTrace, UnknownKernelsGoToOther) {
  const std::string path = temp_file("unknown_kernels.json", R"JSON([
    {"ph":"X","cat":"user_annotation","name":"block(F)","pid":1,"tid":1,"ts":100,"dur":50},
    {"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":110,"dur":2,"args":{"correlation":7}},
    {"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":400,"dur":2,"args":{"correlation":8}},
    {"ph":"X","cat":"kernel","name":"my_mystery_kernel","pid":0,"tid":7,"ts":120,"dur":500,"args":{"correlation":7,"stream":7,"grid":[1,2,3]}},
    {"ph":"X","cat":"kernel","name":"rotary_kernel","pid":0,"tid":7,"ts":700,"dur":30,"args":{"correlation":8,"stream":7}}
  ])JSON");
  const ProfileSummary s = read_profile_trace(path);
  EXPECT_EQ(s.kernels, 2);
  EXPECT_EQ(s.unknown_kernels, 1);
  EXPECT_EQ(s.layers, 1);
  EXPECT_NEAR(s.phase_class_s.at("F").at("other"), 500e-6, 1e-12);
  EXPECT_NEAR(s.phase_class_s.at("other").at("elementwise"), 30e-6, 1e-12);
  EXPECT_NEAR(s.capture_span_s, (730 - 120) * 1e-6, 1e-12);
}

void expect_one_line_error_naming(const std::string& path) {
  try {
    read_profile_trace(path);
    FAIL() << "no error for " << path;
  } catch (const ConfigError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find(path), std::string::npos) << msg;
    EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
  }
}

TEST(ProfileTrace, BadFilesGiveOneErrorLine) {
  expect_one_line_error_naming(stepsim::test::process_scratch().file("no-such-trace.json"));
  expect_one_line_error_naming(temp_file("truncated.json", "{\"traceEvents\": [\n {\"ph\": \"X\", \"name\": \n"));
  expect_one_line_error_naming(temp_file("no_kernels.json", R"({"traceEvents": []})"));
}

}  // namespace
}  // namespace stepsim::traces
