#include "simulator/calibration/calibrate.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <optional>

#include "simulator/io/json_text.hpp"
#include "workloads/cost/attention_cost.hpp"
#include "vocabulary/config_error.hpp"

namespace stepsim::calib {
namespace {

double at(const std::map<std::string, double>& m, const std::string& k) {
  const auto it = m.find(k);
  return it == m.end() ? 0.0 : it->second;
}

// What every fit reads of a capture: a class's kernel seconds in a phase, per layer; a sum that
// must be positive (or the trace lacks those kernels); the matmul kernels of F and B.
struct CaptureKernels {
  const traces::ProfileSummary& trace;
  double layers = double(trace.layers);
  double cls(const std::string& phase, const std::string& c) const {
    const auto it = trace.phase_class_s.find(phase);
    return it == trace.phase_class_s.end() ? 0.0 : at(it->second, c) / layers;
  }
  double need(double v, const std::string& what) const {
    if (!(v > 0))
      throw ConfigError(trace.path + ": no " + what + " kernels found; cannot calibrate from this trace");
    return v;
  }
  // The FP8 forward and input-gradient GEMM kernels of F and B.
  double fp8_gemm_fb() const {
    return need(cls("F", "gemm_moe_fp8") + cls("F", "gemm_dense_fp8") + cls("B", "gemm_moe_fp8") +
                    cls("B", "gemm_dense_fp8"),
                "FP8 GEMM");
  }
  double matmul_fb() const {
    double s = 0;
    for (const char* ph : {"F", "B"})
      for (const char* cl : {"gemm_moe_fp8", "gemm_dense_fp8", "gemm_wgrad_fp8", "gemm_bf16", "attention"})
        s += cls(ph, cl);
    return s;
  }
};

// A calibration of `model`'s keys, starting from the capture config's hardware.
Calibration start(ComputeModel model, const Plan& plan) {
  Calibration c;
  c.model = model;
  c.hardware = plan.hardware;
  c.software = plan.software;
  return c;
}

// The average SM-tax factor the capture's kernels saw: `k` (SMs / SMs left to compute) while the
// communication stream is busy, 1 otherwise; its derivation line goes to `d`.
double average_sm_tax(const traces::ProfileSummary& trace, double k,
                      std::vector<std::pair<std::string, std::string>>& d) {
  const double comm_busy = at(trace.phase_s, "comm_F") + at(trace.phase_s, "comm_B");
  const double f = trace.capture_span_s > 0 ? std::clamp(comm_busy / trace.capture_span_s, 0.0, 1.0) : 1.0;
  const double tax = 1 + f * (k - 1);
  d.push_back({"comm_sms", fmt::format("the capture config's DeepEP SMs; the trace's communication stream is busy "
                                       "{:.1f} % of the capture, so kernels see an average SM-tax factor "
                                       "1 + {:.3f} x ({:.4f} - 1) = {:.4f}",
                                       100 * f, f, k, tax)});
  return tax;
}


// The all-to-all's share of link bandwidth and its handshakes (both compute models).
void fit_all_to_all(const traces::ProfileSummary& trace, const CaptureSol& sol, const PhaseMap& real,
                    HardwareConfig& hw, std::vector<std::pair<std::string, std::string>>& d) {
  const CaptureKernels ck{trace};
  const double xfer_f = ck.cls("comm_F", "ep_dispatch") + ck.cls("comm_F", "ep_combine");
  const double xfer_b = ck.cls("comm_B", "ep_dispatch") + ck.cls("comm_B", "ep_combine");
  ck.need(xfer_f + xfer_b, "DeepEP dispatch / combine");
  const double xfer_sol = sol.phase_s.at("comm_F") + sol.phase_s.at("comm_B");
  hw.a2a_efficiency = std::min(1.0, xfer_sol / (xfer_f + xfer_b));
  d.push_back({"a2a_efficiency", fmt::format("dispatch + combine transfers F + B: SOL {:.3f} ms / trace {:.3f} ms",
                                             xfer_sol * 1e3, (xfer_f + xfer_b) * 1e3)});
  const double sim_xfer_f = sol.phase_s.at("comm_F") / hw.a2a_efficiency;
  const double sim_xfer_b = sol.phase_s.at("comm_B") / hw.a2a_efficiency;
  hw.a2a_latency_s = std::max(0.0, (real.at("comm_B") - sim_xfer_b) / 2);
  hw.a2a_layout_latency_s = std::max(0.0, real.at("comm_F") - sim_xfer_f - 2 * hw.a2a_latency_s);
  d.push_back({"a2a_latency_s",
               fmt::format("comm_B {:.3f} ms less its two transfers at that efficiency ({:.3f} ms), per all-to-all "
                           "(trace notify kernels in B: {:.3f} ms)",
                           real.at("comm_B") * 1e3, sim_xfer_b * 1e3, ck.cls("comm_B", "ep_notify") * 1e3)});
  d.push_back({"a2a_layout_latency_s",
               fmt::format("comm_F {:.3f} ms less its transfers ({:.3f} ms) and two handshakes (trace notify kernels "
                           "in F: {:.3f} ms)",
                           real.at("comm_F") * 1e3, sim_xfer_f * 1e3, ck.cls("comm_F", "ep_notify") * 1e3)});
}

Calibration calibrate_predicted(const traces::ProfileSummary& trace, const Plan& plan);

// The fitted keys a profile holds, in file order: each compute model's own (`model`), then the
// all-to-all's (both); shares to 4 places, rates to 0.1 TFLOP/s, seconds in scientific notation.
enum class Form { Share, Tflops, Seconds };
struct ProfileKey {
  const char* name;
  double HardwareConfig::*value;
  Form form;
  std::optional<ComputeModel> model;
  double SoftwareConfig::*software = nullptr;  // a software key (written under software:), not a hardware one
};
constexpr ProfileKey kProfileKeys[] = {
    {"gemm_fp8_peak_share", &HardwareConfig::gemm_fp8_peak_share, Form::Share, ComputeModel::Predicted},
    {"gemm_wgrad_share", &HardwareConfig::gemm_wgrad_share, Form::Share, ComputeModel::Predicted},
    {"attention_fwd_tflops", &HardwareConfig::attention_fwd_tflops, Form::Tflops, ComputeModel::Predicted},
    {"attention_bwd_tflops", &HardwareConfig::attention_bwd_tflops, Form::Tflops, ComputeModel::Predicted},
    {"hbm_efficiency", &HardwareConfig::hbm_efficiency, Form::Share, ComputeModel::Predicted},
    {"kernel_launch_s", nullptr, Form::Seconds, ComputeModel::Predicted, &SoftwareConfig::kernel_launch_s},
    {"gemm_efficiency", &HardwareConfig::gemm_efficiency, Form::Share, ComputeModel::SpeedOfLight},
    {"wgrad_gemm_efficiency", &HardwareConfig::wgrad_gemm_efficiency, Form::Share, ComputeModel::SpeedOfLight},
    {"bf16_gemm_efficiency", &HardwareConfig::bf16_gemm_efficiency, Form::Share, ComputeModel::SpeedOfLight},
    {"attention_efficiency", &HardwareConfig::attention_efficiency, Form::Share, ComputeModel::SpeedOfLight},
    {"nonmatmul_s_per_token_layer", &HardwareConfig::nonmatmul_s_per_token_layer, Form::Seconds,
     ComputeModel::SpeedOfLight},
    {"a2a_efficiency", &HardwareConfig::a2a_efficiency, Form::Share, std::nullopt},
    {"a2a_latency_s", &HardwareConfig::a2a_latency_s, Form::Seconds, std::nullopt},
    {"a2a_layout_latency_s", &HardwareConfig::a2a_layout_latency_s, Form::Seconds, std::nullopt},
};

}  // namespace

Calibration calibrate(const traces::ProfileSummary& trace, const Plan& plan) {
  require_capture(plan, "calibrate");
  if (plan.train.runs_fp8_attention())
    throw ConfigError("train.fp8_attention: calibrate fits the BF16 attention rates (hardware.attention_fwd_tflops, "
                      "attention_bwd_tflops) to the trace's attention kernels; set train.fp8_attention=false");
  if (plan.sim.compute == ComputeModel::Predicted && plan.software.attention_kernel == AttentionKernel::Flash2)
    throw ConfigError("software.attention_kernel: calibrate fits the fused kernel's attention rates "
                      "(hardware.attention_fwd_tflops, attention_bwd_tflops), which flash2 does not read; set "
                      "software.attention_kernel=fused");
  if (plan.sim.compute == ComputeModel::Predicted && cost::attention_format(plan) == cost::AttentionFormat::Bf16EarlyCudnn)
    throw ConfigError("software.cudnn_version: calibrate fits the preset curve's attention rates "
                      "(hardware.attention_fwd_tflops, attention_bwd_tflops), and this cuDNN release runs the preset's "
                      "earlier curve (hardware.attention_early_*); set software.cudnn_version=0");
  if (plan.sim.compute == ComputeModel::Predicted) return calibrate_predicted(trace, plan);
  const CaptureSol sol = capture_sol(plan);
  const PhaseMap real = capture_real(trace);
  const CaptureKernels ck{trace};
  const auto sol_cls = [&](const std::string& phase, const std::string& c) {
    const auto it = sol.class_s.find(phase);
    return it == sol.class_s.end() ? 0.0 : at(it->second, c);
  };

  const HardwareConfig& hw0 = plan.hardware;
  Calibration c = start(ComputeModel::SpeedOfLight, plan);
  HardwareConfig& hw = c.hardware;
  auto& d = c.derivation;
  const double tax = average_sm_tax(trace, double(hw0.sms) / double(hw0.sms - hw0.comm_sms), d);

  const double fp8_real = ck.fp8_gemm_fb();
  const double fp8_sol = sol_cls("F", "fp8_gemm") + sol_cls("B", "fp8_gemm");
  hw.gemm_efficiency = std::min(1.0, fp8_sol * tax / fp8_real);
  d.push_back({"gemm_efficiency", fmt::format("FP8 GEMMs of F and B: SOL {:.3f} ms x {:.4f} / trace {:.3f} ms per layer",
                                              fp8_sol * 1e3, tax, fp8_real * 1e3)});

  const double att_real = ck.need(ck.cls("F", "attention") + ck.cls("B", "attention"), "attention");
  const double att_sol = sol_cls("F", "attention") + sol_cls("B", "attention");
  hw.attention_efficiency = std::min(1.0, att_sol * tax / att_real);
  d.push_back({"attention_efficiency", fmt::format("attention F + B: SOL {:.3f} ms x {:.4f} / trace {:.3f} ms",
                                                   att_sol * 1e3, tax, att_real * 1e3)});

  const double bf16_real = ck.cls("F", "gemm_bf16") + ck.cls("B", "gemm_bf16");
  const double bf16_sol = sol_cls("F", "bf16_gemm") + sol_cls("B", "bf16_gemm");
  hw.bf16_gemm_efficiency = bf16_real > 0 ? std::min(1.0, bf16_sol * tax / bf16_real) : hw0.bf16_gemm_efficiency;
  d.push_back({"bf16_gemm_efficiency",
               fmt::format("BF16 GEMMs (routers, N = {} experts) F + B: SOL {:.4f} ms x {:.4f} / trace {:.4f} ms; "
                           "the LM head (not in the trace) gets gemm_efficiency, being one large GEMM",
                           plan.model.n_routed_experts, bf16_sol * 1e3, tax, bf16_real * 1e3)});

  const double w_bf16 = sol_cls("W", "bf16_gemm") * tax / hw.bf16_gemm_efficiency;
  const double w_real = ck.need(real.at("W") - w_bf16, "weight-gradient");
  hw.wgrad_gemm_efficiency = std::min(1.0, sol_cls("W", "fp8_gemm") * tax / w_real);
  d.push_back({"wgrad_gemm_efficiency",
               fmt::format("W span {:.3f} ms less its BF16 GEMMs {:.3f} ms, against SOL {:.3f} ms x {:.4f}",
                           real.at("W") * 1e3, w_bf16 * 1e3, sol_cls("W", "fp8_gemm") * 1e3, tax)});

  const double matmul_fb = ck.matmul_fb();
  const double nonmatmul = std::max(0.0, real.at("F") + real.at("B") - matmul_fb);
  hw.nonmatmul_s_per_token_layer = nonmatmul / tax / sol.tokens;
  d.push_back({"nonmatmul_s_per_token_layer",
               fmt::format("F + B spans {:.3f} ms less their matmul kernels {:.3f} ms = {:.3f} ms per layer, / {:.4f} "
                           "/ {:.0f} tokens (a third charged to F, two thirds to B)",
                           (real.at("F") + real.at("B")) * 1e3, matmul_fb * 1e3, nonmatmul * 1e3, tax, sol.tokens)});

  fit_all_to_all(trace, sol, real, hw, d);
  return c;
}

namespace {

// sim.compute: predicted: the per-op cost model's keys that a capture shows, each scaled so the
// model, under the same average SM tax, takes as long as the trace's kernels of that class:
//   gemm_fp8_peak_share    FP8 forward + input-gradient GEMM kernels (F and B)
//   attention_{fwd,bwd}_tflops  the FlashAttention forward (F) and backward (B) kernels
//   hbm_efficiency         every other kernel of F and B (norms, casts, SwiGLU, top-k, permutes)
//   kernel_launch_s        F + B spans less all their kernels (the idle gaps), per modelled launch
//   gemm_wgrad_share       the W span against the model's weight-gradient GEMMs at that share
// The BF16 peak share stays the preset's: the capture's only BF16 GEMMs are its routers.
Calibration calibrate_predicted(const traces::ProfileSummary& trace, const Plan& plan) {
  const CaptureSol sol = capture_sol(plan);
  const PhaseMap real = capture_real(trace);
  const auto pred = capture_predicted(plan);
  const CaptureKernels ck{trace};
  const auto kernels = [&](const std::string& phase) { return at(trace.phase_s, phase) / ck.layers; };
  const auto model = [&](const std::string& phase, const std::string& c) { return at(pred.at(phase), c); };
  const HardwareConfig& hw0 = plan.hardware;
  Calibration c = start(ComputeModel::Predicted, plan);
  HardwareConfig& hw = c.hardware;
  auto& d = c.derivation;
  const auto share = [](double v) { return std::clamp(v, 0.01, 1.0); };
  const double tax = average_sm_tax(trace, double(hw0.sms) / double(hw0.sms - plan.taxed_comm_sms()), d);
  const double fp8_real = ck.fp8_gemm_fb();
  const double fp8_model = model("F", "fp8_gemm") + model("B", "fp8_gemm");
  hw.gemm_fp8_peak_share = share(hw0.gemm_fp8_peak_share * fp8_model * tax / fp8_real);
  d.push_back({"gemm_fp8_peak_share",
               fmt::format("FP8 GEMMs of F and B: the model's {:.3f} ms at {:.4f} x {:.4f} / trace {:.3f} ms, times {:.4f}",
                           fp8_model * 1e3, hw0.gemm_fp8_peak_share, tax, fp8_real * 1e3, hw0.gemm_fp8_peak_share)});
  const double att_f = ck.need(ck.cls("F", "attention"), "forward attention");
  const double att_b = ck.need(ck.cls("B", "attention"), "backward attention");
  hw.attention_fwd_tflops = hw0.attention_fwd_tflops * model("F", "attention") * tax / att_f;
  hw.attention_bwd_tflops = hw0.attention_bwd_tflops * model("B", "attention") * tax / att_b;
  d.push_back({"attention_fwd_tflops", fmt::format("{:g} x the model's {:.3f} ms x {:.4f} / trace {:.3f} ms (F)",
                                                   hw0.attention_fwd_tflops, model("F", "attention") * 1e3, tax, att_f * 1e3)});
  d.push_back({"attention_bwd_tflops", fmt::format("{:g} x the model's {:.3f} ms x {:.4f} / trace {:.3f} ms (B)",
                                                   hw0.attention_bwd_tflops, model("B", "attention") * 1e3, tax, att_b * 1e3)});
  const double matmul_fb = ck.matmul_fb();
  const double memory_real = ck.need(kernels("F") + kernels("B") - matmul_fb, "non-matmul");
  const double memory_model = model("F", "memory") + model("B", "memory");
  hw.hbm_efficiency = share(hw0.hbm_efficiency * memory_model * tax / memory_real);
  d.push_back({"hbm_efficiency", fmt::format("F + B kernels less their matmuls, {:.3f} ms, against the model's "
                                             "memory-bound {:.3f} ms at {:.3f} x {:.4f}",
                                             memory_real * 1e3, memory_model * 1e3, hw0.hbm_efficiency, tax)});
  const double gaps = std::max(0.0, real.at("F") + real.at("B") - kernels("F") - kernels("B"));
  const double launches = model("F", "kernels") + model("B", "kernels");
  c.software.kernel_launch_s = launches > 0 ? gaps / launches / tax : 0.0;
  d.push_back({"kernel_launch_s", fmt::format("F + B spans {:.3f} ms less their kernels {:.3f} ms = {:.3f} ms idle, "
                                              "over the model's {:.0f} launches per layer, / {:.4f}",
                                              (real.at("F") + real.at("B")) * 1e3, (kernels("F") + kernels("B")) * 1e3,
                                              gaps * 1e3, launches, tax)});
  // W: the model's weight-gradient GEMMs at the fitted share, its BF16 GEMMs and launches.
  const double w_fp8 = model("W", "fp8_gemm") * hw0.gemm_fp8_peak_share / hw.gemm_fp8_peak_share;
  const double w_rest = model("W", "bf16_gemm") + model("W", "kernels") * c.software.kernel_launch_s;
  const double w_real = ck.need(real.at("W") / tax - w_rest, "weight-gradient");
  hw.gemm_wgrad_share = share(w_fp8 / w_real);
  d.push_back({"gemm_wgrad_share", fmt::format("W span {:.3f} ms / {:.4f} less its BF16 GEMMs and launches {:.3f} ms, "
                                               "against the model's weight-gradient GEMMs {:.3f} ms",
                                               real.at("W") * 1e3, tax, w_rest * 1e3, w_fp8 * 1e3)});
  fit_all_to_all(trace, sol, real, hw, d);
  return c;
}

double key_value(const Calibration& c, const ProfileKey& k) {
  return k.software != nullptr ? c.software.*k.software : c.hardware.*k.value;
}

std::string key_text(const ProfileKey& k, double v) {
  return k.form == Form::Share ? fmt::format("{:.4f}", v) : k.form == Form::Tflops ? fmt::format("{:.1f}", v)
                                                                                     : fmt::format("{:.4e}", v);
}

}  // namespace

std::string profile_yaml(const Calibration& c, const std::string& trace_path) {
  const HardwareConfig& h = c.hardware;
  std::string out = fmt::format(
      "# Hardware profile made by `stepsim calibrate {}`.\n"
      "# Load it with --set hardware.profile=PATH (keys set in the config or by --set win).\n"
      "# {} (fp8_tflops {}, bf16_tflops {}, ib_GBps {}, nvlink_GBps {}).\n"
      "# How each value was derived (per layer of the capture):\n",
      trace_path,
      c.model == ComputeModel::Predicted
          ? "Keys of the per-op cost model (sim.compute: predicted): use it with a predicted config; the software: map is "
            "the capture's software with its fitted launch cost"
          : "Efficiencies are shares of the stated rates (sim.compute: speed-of-light)",
      h.fp8_tflops, h.bf16_tflops, h.ib_GBps, h.nvlink_GBps);
  for (const auto& [key, how] : c.derivation) out += fmt::format("#   {}: {}\n", key, how);
  out += "hardware:\n";
  out += fmt::format("  comm_sms: {}\n", h.comm_sms);
  for (const ProfileKey& k : kProfileKeys)
    if (k.software == nullptr && (!k.model || *k.model == c.model))
      out += fmt::format("  {}: {}\n", k.name, key_text(k, key_value(c, k)));
  if (c.model == ComputeModel::Predicted) {
    out += "software:\n";
    out += fmt::format("  name: \"calibrated from {}\"\n", io::shortened(std::filesystem::path(trace_path).filename().string(), 120));
    for (const ProfileKey& k : kProfileKeys)
      if (k.software != nullptr) out += fmt::format("  {}: {}\n", k.name, key_text(k, key_value(c, k)));
  }
  return out;
}

std::vector<std::pair<std::string, double>> derived_keys(const Calibration& c) {
  std::vector<std::pair<std::string, double>> out;
  for (const ProfileKey& k : kProfileKeys)
    if (!k.model || *k.model == c.model) out.emplace_back(k.software != nullptr ? std::string("software.") + k.name : std::string(k.name), key_value(c, k));
  return out;
}

}  // namespace stepsim::calib
