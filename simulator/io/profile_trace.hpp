// Reads a real PyTorch-profiler Chrome trace (e.g. DeepSeek's DualPipe F&B capture) into per-phase
// GPU time by kernel class, streaming the file: a trace of hundreds of MB is never held whole.
//
// Each kernel's phase comes from where the CPU launched it: kernel args.correlation -> the
// cuda_runtime / cuda_driver launch event with that correlation -> the innermost user_annotation
// range around the launch whose name ends in "(F)", "(B)" or "(W)" (DeepSeek's "attn(F)",
// "mlp(B)", "mlp(W)", "dispatch(F)", ...). Kernels on a communication stream (one that runs a
// DeepEP or NCCL kernel) count in "comm_F" / "comm_B" (/ "comm_W"); kernels launched outside any
// phase range count in "other" / "comm_other". Kernel classes are chosen by name (see
// kernel_class); a kernel no rule knows goes to "other", so an unseen trace still reads.
#pragma once

#include <cstdint>
#include <map>
#include <string>

namespace stepsim::traces {

// Per phase of a DualPipe F&B capture: "F", "B", "W" (compute) and "comm_F", "comm_B"
// (communication-stream kernels launched under forward / backward phases).
struct ProfileSummary {
  std::string path;
  int64_t layers = 0;  // layer pairs seen (4 in DeepSeek's train.json)
  // seconds summed over the capture, by phase then kernel class name
  // (classes: "gemm_moe_fp8", "gemm_dense_fp8", "gemm_wgrad_fp8", "gemm_bf16", "attention",
  //  "norm", "cast", "elementwise", "ep_dispatch", "ep_combine", "ep_notify", "other")
  std::map<std::string, std::map<std::string, double>> phase_class_s;
  std::map<std::string, double> phase_s;       // sum over classes
  std::map<std::string, double> phase_span_s;  // per-phase wall span on its stream, summed
  double capture_span_s = 0;                   // first kernel start to last kernel end
  int64_t kernels = 0, unknown_kernels = 0;
  int64_t annotations = 0;  // phase ranges ("attn(F)", ...) found; 0: the phases cannot be told apart
};

// Streams the file (plain or gzipped JSON); ConfigError (one line naming the file) on a missing,
// unreadable, non-regular or malformed file, a kept event with a missing, negative or non-numeric
// ts or dur, or a file with no GPU kernels.
ProfileSummary read_profile_trace(const std::string& path);

// The class of a GPU kernel (or "Memcpy ..." / "Memset ...") by its name; "other" if unknown.
std::string kernel_class(const std::string& kernel_name);

// True for the classes that communicate (ep_dispatch, ep_combine, ep_notify) and for NCCL kernels.
bool is_comm_kernel(const std::string& kernel_name);

}  // namespace stepsim::traces
