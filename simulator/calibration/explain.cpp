#include "simulator/calibration/explain.hpp"

#include <fmt/format.h>

#include <cmath>

#include "simulator/roofline/roofline.hpp"

namespace stepsim::calib {

Plan speed_of_light(const Plan& plan) {
  Plan p = plan;
  HardwareConfig& h = p.hardware;
  h.gemm_efficiency = h.bf16_gemm_efficiency = h.attention_efficiency = h.a2a_efficiency = 1;
  h.wgrad_gemm_efficiency = 0;
  h.a2a_latency_s = h.a2a_layout_latency_s = 0;
  h.comm_sms = 0;
  h.nonmatmul_s_per_token_layer = 0;
  p.sim.compute = ComputeModel::SpeedOfLight;
  return p;
}

namespace {

// DeepSeek-V3 report 4.2: the batch grows from 3072 to 15360 sequences over the first 469B of the
// 14.8T pre-training tokens.
constexpr double kRampStartBatch = 3072, kRampTokens = 469e9, kPretrainTokens = 14.8e12;


// Effects a balanced single-step simulation cannot show, each simulated against `base` (the full
// simulation of `cal`) and added: routing imbalance (MoE; a whole EP group per stage: the slow
// one), stragglers (not modelled), DeepSeek-V3's MTP module and batch ramp.
void add_extras(const Plan& cal, const SimulateFn& sim, bool routing_sim, const StepSplit& base, Explanation& x,
                double& total) {
  auto& st = x.steps;
  const auto step = [&](const std::string& effect, double to, const std::string& how) {
    st.push_back({effect, to, to - total, WaterfallStep::Kind::Step, how});
    total = to;
  };
  const StepSplit& s4 = base;
  // Effects the balanced single-step capture cannot show, each simulated against the calibrated
  // simulation and added (routing imbalance replays a whole EP group per stage: the slow one).
  StepSplit last = s4;
  if (!cal.model.is_moe()) {
    // A dense model: no experts, no routing.
  } else if (cal.scenario.routing == Routing::Balanced && !routing_sim) {
    step("routing imbalance", total,
         "0: not replayed (explain --no-routing-sim, or report without --routing-sim); replay it to simulate "
         "scenario.routing=deepseek");
  } else if (cal.scenario.routing == Routing::Balanced) {
    Plan routed = cal;
    routed.scenario.routing = Routing::DeepSeek;
    const StepSplit r = sim(routed);
    step("routing imbalance", total + r.step_time_s - s4.step_time_s,
         fmt::format("simulation + scenario.routing=deepseek (seeded group-limited top-{} routing): "
                     "{:.3f} s - {:.3f} s",
                     cal.model.num_experts_per_tok, r.step_time_s, s4.step_time_s));
    last = r;
  } else {
    step("routing imbalance", total,
         fmt::format("already in the calibrated simulation (scenario.routing={})", to_string(cal.scenario.routing)));
  }
  step("stragglers", total,
       std::string("0: not modelled here -- ") +
           (is_deepseek_v3(cal.model) ? "DeepSeek published no per-GPU speed data" : "no per-GPU speed data given") +
           "; simulate with scenario.stragglers or scenario.jitter_sigma to see what a given slow GPU costs");
  // DeepSeek-V3's own extras: its MTP module (depth from num_nextn_predict_layers; the shipped
  // YAML omits the key, as the seed does, and V3 has depth 1) and its batch-size ramp.
  const bool v3 = is_deepseek_v3(cal.model);
  const int64_t mtp_depth = cal.model.num_nextn_predict_layers > 0 ? cal.model.num_nextn_predict_layers : v3 ? 1 : 0;
  if (mtp_depth > 0 && cal.model.is_moe()) {
    Plan mtp = cal;
    mtp.model.num_hidden_layers += mtp_depth;
    const StepSplit m = sim(mtp);
    step(fmt::format("MTP (depth {})", mtp_depth), total + m.step_time_s - s4.step_time_s,
         fmt::format("simulation + {} more MoE layer(s) (the MTP modules' transformer blocks; their projections and "
                     "extra LM-head passes not counted): {:.3f} s - {:.3f} s",
                     mtp_depth, m.step_time_s, s4.step_time_s));
  }
  if (v3) {
    // Per-step fixed costs (the bubble) weigh more on the smaller batches of the ramp: per token the
    // ramp costs bubble x (mean over its tokens of B / b - 1) more, b rising linearly in tokens.
    const double b1 = double(cal.train.global_batch);
    const double mean_ratio = b1 * std::log(b1 / kRampStartBatch) / (b1 - kRampStartBatch);
    const double ramp = b1 > kRampStartBatch ? last.bubble_s * (mean_ratio - 1) * kRampTokens / kPretrainTokens : 0;
    step("batch-size ramp", total + ramp,
         fmt::format("formula: bubble {:.3f} s x (B ln(B/3072)/(B-3072) - 1 = {:.3f}) x 469B/14.8T tokens "
                     "(DeepSeek-V3's ramp)",
                     last.bubble_s, mean_ratio - 1));
  }
}


// sim.compute: predicted: from speed of light to the predicted step, one class of the per-op cost
// model at a time (GEMM shapes and the attention kernels, memory-bound kernels, launches), then
// the SM tax where an EP all-to-all runs, exposed communication and the bubble; model-neutral.
Explanation explain_predicted(const Plan& plan, const SimulateFn& sim, bool routing_sim) {
  Explanation x;
  Plan full = plan;
  full.sim.mode = SimMode::Reduced;
  const Plan sol = speed_of_light(full);
  const Roofline roof = compute_roofline(sol);
  x.roofline_step_s = roof.step_time_s;
  x.reported_step_s = roof.reported_step_s;
  const auto with_classes = [&](uint8_t classes) {
    Plan p = full;
    p.sim.cost_classes = classes;
    p.hardware.comm_sms = 0;
    return p;
  };
  const StepSplit s0 = sim(sol), s1 = sim(with_classes(kCostGemm | kCostAttention)),
                  s2 = sim(with_classes(kCostGemm | kCostAttention | kCostMemory)), s3 = sim(with_classes(kCostAll)),
                  s4 = full.taxed_comm_sms() > 0 ? sim(full) : s3;
  x.sol_sim_step_s = s0.step_time_s;
  x.calibrated_sim_s = s4.step_time_s;
  auto& st = x.steps;
  double total = 0;
  const auto add = [&](const std::string& effect, double to, WaterfallStep::Kind kind, const std::string& how) {
    st.push_back({effect, to, to - total, kind, how});
    total = to;
  };
  const auto step = [&](const std::string& effect, double to, const std::string& how) {
    add(effect, to, WaterfallStep::Kind::Step, how);
  };
  const HardwareConfig& hw = plan.hardware;
  add("speed-of-light compute", s0.compute_s, WaterfallStep::Kind::Total,
      fmt::format("simulation at the achievable rates (sim.compute=speed-of-light): mean compute per GPU (the "
                  "closed-form roofline step is {:.3f} s)",
                  x.roofline_step_s));
  step("GEMM shapes and attention kernels", s1.compute_s,
       fmt::format("simulation, GEMMs by shape at {:.3f} / {:.3f} of the BF16 / FP8 peak, attention at {:g} / {:g} "
                   "TFLOP/s: mean compute",
                   hw.gemm_bf16_peak_share, hw.gemm_fp8_peak_share, hw.attention_fwd_tflops, hw.attention_bwd_tflops));
  step("memory-bound kernels", s2.compute_s,
       fmt::format("simulation + norms, activations, RoPE, residuals, casts, softmax / cross-entropy, optimizer at "
                   "{:g} x {:g} GB/s: mean compute",
                   hw.hbm_efficiency, hw.hbm_GBps));
  step("kernel launches", s3.compute_s,
       fmt::format("simulation + {:g} us per kernel: mean compute", hw.kernel_launch_s * 1e6));
  if (full.taxed_comm_sms() > 0)
    step(fmt::format("SM tax ({} of {} SMs)", full.taxed_comm_sms(), hw.sms), s4.compute_s,
         "simulation + the SMs the EP all-to-all kernels hold: mean compute");
  step("exposed communication", s4.compute_s + s4.exposed_comm_s, "same simulation: mean exposed communication per GPU");
  step("pipeline bubble", s4.compute_s + s4.exposed_comm_s + s4.bubble_s,
       "same simulation: mean bubble per GPU (compute + exposed + bubble = its step time)");
  add("predicted simulation", s4.step_time_s, WaterfallStep::Kind::Total, "stepsim simulate (sim.compute: predicted)");
  add_extras(full, sim, routing_sim, s4, x, total);
  x.prediction_s = total;
  add("prediction", total, WaterfallStep::Kind::Total, "every modelled effect");
  if (x.reported_step_s > 0) {
    x.unexplained_s = x.reported_step_s - x.prediction_s;
    add("unexplained", x.reported_step_s, WaterfallStep::Kind::Unexplained,
        fmt::format("the reported {:.2f} s ({}) less the prediction", x.reported_step_s,
                    plan.train.reported_step_s > 0 ? "train.reported_step_s" : "DeepSeek's published cost"));
  }
  return x;
}

}  // namespace

Explanation explain(const Plan& calibrated, const SimulateFn& sim, bool routing_sim) {
  if (calibrated.sim.compute == ComputeModel::Predicted) return explain_predicted(calibrated, sim, routing_sim);
  Explanation x;
  Plan cal = calibrated;
  cal.sim.mode = SimMode::Reduced;
  const Plan sol = speed_of_light(cal);
  const Roofline roof = compute_roofline(sol);
  x.roofline_step_s = roof.step_time_s;
  x.reported_step_s = roof.reported_step_s;

  // One more effect switched on per simulation.
  Plan eff = sol;
  eff.hardware.gemm_efficiency = cal.hardware.gemm_efficiency;
  eff.hardware.wgrad_gemm_efficiency = cal.hardware.wgrad_gemm_efficiency;
  eff.hardware.bf16_gemm_efficiency = cal.hardware.bf16_gemm_efficiency;
  eff.hardware.attention_efficiency = cal.hardware.attention_efficiency;
  Plan nonmatmul = eff;
  nonmatmul.hardware.nonmatmul_s_per_token_layer = cal.hardware.nonmatmul_s_per_token_layer;
  const StepSplit s0 = sim(sol), s1 = sim(eff), s2 = sim(nonmatmul), s4 = sim(cal);
  x.sol_sim_step_s = s0.step_time_s;
  x.calibrated_sim_s = s4.step_time_s;

  auto& st = x.steps;
  double total = 0;
  const auto add = [&](const std::string& effect, double to, WaterfallStep::Kind kind, const std::string& how) {
    st.push_back({effect, to, to - total, kind, how});
    total = to;
  };
  const auto step = [&](const std::string& effect, double to, const std::string& how) {
    add(effect, to, WaterfallStep::Kind::Step, how);
  };
  add("speed-of-light compute", s0.compute_s, WaterfallStep::Kind::Total,
      fmt::format("simulation, every calibration key off: mean compute per GPU (the closed-form roofline step is {:.3f} s)",
                  x.roofline_step_s));
  step("kernel efficiency", s1.compute_s,
       fmt::format("simulation + gemm {:.3f}, wgrad {:.3f}, bf16 {:.3f}, attention {:.3f} efficiency: mean compute",
                   cal.hardware.gemm_efficiency, cal.hardware.wgrad_efficiency(), cal.hardware.bf16_gemm_efficiency,
                   cal.hardware.attention_efficiency));
  step("non-matmul kernels", s2.compute_s,
       fmt::format("simulation + {:.3g} s per token-layer of norms, casts, SwiGLU: mean compute",
                   cal.hardware.nonmatmul_s_per_token_layer));
  step(fmt::format("SM tax ({} of {} SMs)", cal.taxed_comm_sms(), cal.hardware.sms), s4.compute_s,
       "simulation + comm SMs and the calibrated all-to-all (the whole profile): mean compute");
  step("exposed communication", s4.compute_s + s4.exposed_comm_s,
       "same simulation: mean exposed communication per GPU");
  step("pipeline bubble", s4.compute_s + s4.exposed_comm_s + s4.bubble_s,
       "same simulation: mean bubble per GPU (compute + exposed + bubble = its step time)");
  add("calibrated simulation", s4.step_time_s, WaterfallStep::Kind::Total,
      "stepsim simulate with the hardware profile");

  add_extras(cal, sim, routing_sim, s4, x, total);
  x.prediction_s = total;
  add("calibrated prediction", total, WaterfallStep::Kind::Total, "every modelled effect");
  if (x.reported_step_s > 0) {
    x.unexplained_s = x.reported_step_s - x.prediction_s;
    add("unexplained", x.reported_step_s, WaterfallStep::Kind::Unexplained,
        cal.train.reported_step_s > 0
            ? fmt::format("the reported {:.2f} s (train.reported_step_s) less the prediction", x.reported_step_s)
            : fmt::format("DeepSeek's reported {:.2f} s less the prediction (checkpointing, restarts, evaluation, ...)",
                          x.reported_step_s));
  }
  return x;
}

}  // namespace stepsim::calib
