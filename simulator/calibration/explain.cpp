#include "simulator/calibration/explain.hpp"

#include <fmt/format.h>

#include <cmath>
#include <utility>

#include "simulator/report/roofline_report.hpp"
#include "simulator/roofline/roofline.hpp"

namespace stepsim::calib {

Plan speed_of_light(const Plan& plan) {
  Plan p = plan;
  HardwareConfig& h = p.hardware;
  h.gemm_efficiency = h.bf16_gemm_efficiency = h.attention_efficiency = h.a2a_efficiency = 1;
  h.wgrad_gemm_efficiency = 0;
  h.a2a_latency_s = h.a2a_layout_latency_s = 0;
  h.comm_sms = 0;
  p.software.deepep_sms = 0;
  h.nonmatmul_s_per_token_layer = 0;
  p.sim.compute = ComputeModel::SpeedOfLight;
  return p;
}

namespace {

// DeepSeek-V3 report 4.2: the batch grows from 3072 to 15360 sequences over the first 469B of the
// 14.8T pre-training tokens.
constexpr double kRampStartBatch = 3072, kRampTokens = 469e9, kPretrainTokens = 14.8e12;


// The waterfall being built: each bar runs from the running total to `to`.
struct Waterfall {
  Explanation& x;
  double total = 0;
  void add(const std::string& effect, double to, WaterfallStep::Kind kind, const std::string& how) {
    x.steps.push_back({effect, to, to - total, kind, how});
    total = to;
  }
  void step(const std::string& effect, double to, const std::string& how) {
    add(effect, to, WaterfallStep::Kind::Step, how);
  }
  // The full simulation's exposed communication and bubble, atop its compute (the running total).
  void exposed_and_bubble(const StepSplit& s) {
    step("exposed communication", s.compute_s + s.exposed_comm_s,
         "same simulation: mean exposed communication per GPU");
    step("pipeline bubble", s.compute_s + s.exposed_comm_s + s.bubble_s,
         "same simulation: mean bubble per GPU (compute + exposed + bubble = its step time)");
  }
};

// Both explanations start from `plan` at the reduced mode and its speed of light, whose closed
// form gives the roofline step and the reported step.
std::pair<Plan, Plan> reduced_and_sol(const Plan& plan, Explanation& x) {
  Plan reduced = plan;
  reduced.sim.mode = SimMode::Reduced;
  Plan sol = speed_of_light(reduced);
  const Roofline roof = compute_roofline(sol);
  x.roofline_step_s = roof.step_time_s;
  x.reported_step_s = roof.reported_step_s;
  return {std::move(reduced), std::move(sol)};
}

// Effects a balanced single-step simulation cannot show, each simulated against `base` (the full
// simulation of `cal`) and added: routing imbalance (MoE; a whole EP group per stage: the slow
// one), stragglers (not modelled), DeepSeek-V3's MTP module and batch ramp.
void add_extras(const Plan& cal, const SimulateFn& sim, bool routing_sim, const StepSplit& base, Waterfall& w) {
  StepSplit last = base;
  if (!cal.model.is_moe()) {  // a dense model: no experts, no routing
  } else if (cal.scenario.routing == Routing::Balanced && !routing_sim) {
    w.step("routing imbalance", w.total,
         "0: not replayed (explain --no-routing-sim, or report without --routing-sim); replay it to simulate "
         "scenario.routing=deepseek");
  } else if (cal.scenario.routing == Routing::Balanced) {
    Plan routed = cal;
    routed.scenario.routing = Routing::DeepSeek;
    const StepSplit r = sim(routed);
    w.step("routing imbalance", w.total + r.step_time_s - base.step_time_s,
         fmt::format("simulation + scenario.routing=deepseek (seeded group-limited top-{} routing): "
                     "{:.3f} s - {:.3f} s",
                     cal.model.num_experts_per_tok, r.step_time_s, base.step_time_s));
    last = r;
  } else {
    w.step("routing imbalance", w.total,
         fmt::format("already in the calibrated simulation (scenario.routing={})", to_string(cal.scenario.routing)));
  }
  w.step("stragglers", w.total,
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
    w.step(fmt::format("MTP (depth {})", mtp_depth), w.total + m.step_time_s - base.step_time_s,
         fmt::format("simulation + {} more MoE layer(s) (the MTP modules' transformer blocks; their projections and "
                     "extra LM-head passes not counted): {:.3f} s - {:.3f} s",
                     mtp_depth, m.step_time_s, base.step_time_s));
  }
  if (v3) {
    // Per-step fixed costs (the bubble) weigh more on the smaller batches of the ramp: per token the
    // ramp costs bubble x (mean over its tokens of B / b - 1) more, b rising linearly in tokens.
    const double b1 = double(cal.train.global_batch);
    const double mean_ratio = b1 * std::log(b1 / kRampStartBatch) / (b1 - kRampStartBatch);
    const double ramp = b1 > kRampStartBatch ? last.bubble_s * (mean_ratio - 1) * kRampTokens / kPretrainTokens : 0;
    w.step("batch-size ramp", w.total + ramp,
         fmt::format("formula: bubble {:.3f} s x (B ln(B/3072)/(B-3072) - 1 = {:.3f}) x 469B/14.8T tokens "
                     "(DeepSeek-V3's ramp)",
                     last.bubble_s, mean_ratio - 1));
  }
}

// The effects a single step cannot show (add_extras), the prediction `name` they sum to, and what
// is left of the reported step (`unexplained_how`, when there is a reported step).
void finish(const Plan& cal, const SimulateFn& sim, bool routing_sim, const StepSplit& base, Waterfall& w,
            const std::string& name, const std::string& unexplained_how) {
  Explanation& x = w.x;
  add_extras(cal, sim, routing_sim, base, w);
  x.prediction_s = w.total;
  w.add(name, w.total, WaterfallStep::Kind::Total, "every modelled effect");
  if (x.reported_step_s > 0) {
    x.unexplained_s = x.reported_step_s - x.prediction_s;
    w.add("unexplained", x.reported_step_s, WaterfallStep::Kind::Unexplained, unexplained_how);
  }
}


// sim.compute: predicted: from speed of light to the predicted step, one class of the per-op cost
// model at a time (GEMM shapes and the attention kernels, memory-bound kernels, launches), then
// the SM tax where an EP all-to-all runs, exposed communication and the bubble; model-neutral.
Explanation explain_predicted(const Plan& plan, const SimulateFn& sim, bool routing_sim) {
  Explanation x;
  const auto start = reduced_and_sol(plan, x);
  const Plan &full = start.first, &sol = start.second;
  const auto with_classes = [&](uint8_t classes) {
    Plan p = full;
    p.sim.cost_classes = classes;
    p.hardware.comm_sms = 0;
    p.software.deepep_sms = 0;
    return p;
  };
  const StepSplit s0 = sim(sol), s1 = sim(with_classes(kCostGemm | kCostAttention)),
                  s2 = sim(with_classes(kCostGemm | kCostAttention | kCostMemory)), s3 = sim(with_classes(kCostAll)),
                  s4 = full.taxed_comm_sms() > 0 ? sim(full) : s3;
  x.sol_sim_step_s = s0.step_time_s;
  x.calibrated_sim_s = s4.step_time_s;
  Waterfall w{x};
  const HardwareConfig& hw = plan.hardware;
  w.add("speed-of-light compute", s0.compute_s, WaterfallStep::Kind::Total,
      fmt::format("simulation at the achievable rates (sim.compute=speed-of-light): mean compute per GPU (the "
                  "closed-form roofline step is {:.3f} s)",
                  x.roofline_step_s));
  w.step("GEMM shapes and attention kernels", s1.compute_s,
       fmt::format("simulation, GEMMs by shape at {:.3f} / {:.3f} of the BF16 / FP8 peak, attention {}: mean compute",
                   hw.gemm_bf16_peak_share, hw.gemm_fp8_peak_share, attention_rates_text(plan)));
  w.step("memory-bound kernels", s2.compute_s,
       fmt::format("simulation + norms, activations, RoPE, residuals, casts, softmax / cross-entropy, optimizer{}{} at "
                   "{:g} x {:g} GB/s: mean compute",
                   plan.parallel.moe_paged_stash ? ", the paged stash's copies" : "",
                   plan.software.fused_grouped_mlp ? ", the fused grouped MLP's epilogues (software.fused.grouped_mlp)" : "",
                   hw.hbm_efficiency, hw.hbm_GBps));
  w.step("kernel launches", s3.compute_s,
       fmt::format("simulation + {:g} us per kernel on the GPU{}: mean compute ({})", plan.software.kernel_launch_s * 1e6,
                   plan.software.host_launch_s > 0
                       ? fmt::format(", {:g} us per kernel on the host where the GPU does not hide it", plan.software.host_launch_s * 1e6)
                       : std::string(),
                   plan.software.name));
  if (full.taxed_comm_sms() > 0)
    w.step(fmt::format("SM tax ({} of {} SMs)", full.taxed_comm_sms(), hw.sms), s4.compute_s,
         "simulation + the SMs the EP all-to-all kernels hold: mean compute");
  w.exposed_and_bubble(s4);
  w.add("predicted simulation", s4.step_time_s, WaterfallStep::Kind::Total, "stepsim simulate (sim.compute: predicted)");
  finish(full, sim, routing_sim, s4, w, "prediction",
         fmt::format("the reported {:.2f} s ({}) less the prediction", x.reported_step_s,
                     plan.train.reported_step_s > 0 ? "train.reported_step_s" : "DeepSeek's published cost"));
  return x;
}

}  // namespace

Explanation explain(const Plan& calibrated, const SimulateFn& sim, bool routing_sim) {
  if (calibrated.sim.compute == ComputeModel::Predicted) return explain_predicted(calibrated, sim, routing_sim);
  Explanation x;
  const auto start = reduced_and_sol(calibrated, x);
  const Plan &cal = start.first, &sol = start.second;

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

  Waterfall w{x};
  w.add("speed-of-light compute", s0.compute_s, WaterfallStep::Kind::Total,
      fmt::format("simulation, every calibration key off: mean compute per GPU (the closed-form roofline step is {:.3f} s)",
                  x.roofline_step_s));
  w.step("kernel efficiency", s1.compute_s,
       fmt::format("simulation + gemm {:.3f}, wgrad {:.3f}, bf16 {:.3f}, attention {:.3f} efficiency: mean compute",
                   cal.hardware.gemm_efficiency, cal.hardware.wgrad_efficiency(), cal.hardware.bf16_gemm_efficiency,
                   cal.hardware.attention_efficiency));
  w.step("non-matmul kernels", s2.compute_s,
       fmt::format("simulation + {:.3g} s per token-layer of norms, casts, SwiGLU: mean compute",
                   cal.hardware.nonmatmul_s_per_token_layer));
  w.step(fmt::format("SM tax ({} of {} SMs)", cal.taxed_comm_sms(), cal.hardware.sms), s4.compute_s,
       "simulation + comm SMs and the calibrated all-to-all (the whole profile): mean compute");
  w.exposed_and_bubble(s4);
  w.add("calibrated simulation", s4.step_time_s, WaterfallStep::Kind::Total,
      "stepsim simulate with the hardware profile");
  finish(cal, sim, routing_sim, s4, w, "calibrated prediction",
         cal.train.reported_step_s > 0
             ? fmt::format("the reported {:.2f} s (train.reported_step_s) less the prediction", x.reported_step_s)
             : fmt::format("DeepSeek's reported {:.2f} s less the prediction (checkpointing, restarts, evaluation, ...)",
                           x.reported_step_s));
  return x;
}

}  // namespace stepsim::calib
