#include "simulator/calibration/capture_phases.hpp"

#include <algorithm>

#include "schedules/registry.hpp"
#include "vocabulary/config_error.hpp"
#include "workloads/cost/part_cost.hpp"
#include "workloads/traffic/ep_traffic.hpp"
#include "workloads/layers/layer_work.hpp"
#include "vocabulary/op_sink.hpp"
#include "workloads/routing/routing_stats.hpp"
#include "vocabulary/rank_layout.hpp"

namespace stepsim::calib {

const std::vector<std::string>& phase_names() {
  static const std::vector<std::string> names = {"F", "B", "W", "comm_F", "comm_B"};
  return names;
}

void require_capture(const Plan& plan, const std::string& command) {
  if (!sched::make_unchecked_schedule(plan)->is_profile_capture() || plan.workload.kind != WorkloadKind::Model)
    throw ConfigError(plan.source + ": schedule: " + command +
                      " needs the profiler-capture scenario (schedule: capture); use "
                      "workloads/deepseek-profile-capture.yaml");
}

namespace {

// Seconds of one all-to-all seen from GPU 0: its busiest link direction at the stated bandwidth.
double all_to_all_sol_s(const Plan& plan, const EpLayout& layout, double tokens, double bytes_per_copy) {
  const AllToAll a = ring_equivalent(
      plan, ep_all_to_all(plan, layout, 0, [&](int64_t) { return tokens; }, bytes_per_copy), 0);
  const int64_t g = plan.cluster.gpus_per_node;
  double worst = 0;
  for (const auto* flows : {&a.out, &a.in})
    for (const PeerFlow& f : *flows) {
      const bool ib = f.peer / g != 0;  // GPU 0 sits on node 0
      worst = std::max(worst, f.bytes / ((ib ? plan.hardware.ib_GBps : plan.hardware.nvlink_GBps) * 1e9));
    }
  return worst;
}

}  // namespace

CaptureSol capture_sol(const Plan& plan) {
  require_capture(plan, "this command");
  CaptureSol sol;
  const double sequences = plan.sequences_per_replica() / double(plan.parallel.microbatches);
  sol.tokens = sequences * double(plan.train.seq_len);
  const double rows = sol.tokens * double(plan.model.num_experts_per_tok);  // balanced routing
  const double fp8 = plan.hardware.fp8_tflops * 1e12, bf16 = plan.hardware.bf16_tflops * 1e12;
  const int64_t layers = plan.model.num_hidden_layers;
  const std::pair<LayerPart, const char*> parts[] = {{LayerPart::AttnF, "F"}, {LayerPart::MlpF, "F"},
                                                     {LayerPart::AttnB, "B"}, {LayerPart::MlpB, "B"},
                                                     {LayerPart::AttnW, "W"}, {LayerPart::MlpW, "W"}};
  for (int64_t l = 0; l < layers; ++l) {
    const LayerWork w = layer_work(plan, l, sequences, rows);
    for (const auto& [part, phase] : parts)
      for (const Kernel& k : w.part(part).kernels) {
        const bool attention = k.name.starts_with("attention_core");
        const char* cls = attention ? "attention" : k.precision == Precision::BF16 ? "bf16_gemm" : "fp8_gemm";
        sol.class_s[phase][cls] += k.flops / (k.precision == Precision::BF16 ? bf16 : fp8) / double(layers);
      }
  }
  for (const char* p : {"F", "B", "W"}) {
    sol.phase_s[p] = 0;
    for (const auto& [cls, s] : sol.class_s[p]) sol.phase_s[p] += s;
  }
  // Forward: dispatch (FP8 + scales) then combine (BF16); backward: combine's gradient (FP8) then
  // dispatch's gradient (BF16): the same bytes both ways.
  const EpLayout layout = ep_layout(plan, routing_stats(plan));
  const double one_way = all_to_all_sol_s(plan, layout, sol.tokens, dispatch_bytes_per_token(plan)) +
                         all_to_all_sol_s(plan, layout, sol.tokens, combine_bytes_per_token(plan.model));
  sol.phase_s["comm_F"] = sol.phase_s["comm_B"] = one_way;
  return sol;
}

std::map<std::string, PhaseMap> capture_predicted(const Plan& plan) {
  require_capture(plan, "this command");
  const double sequences = plan.sequences_per_microbatch();
  const cost::MicrobatchShape shape = cost::mean_microbatch_shape(plan);
  const std::pair<LayerPart, const char*> parts[] = {{LayerPart::AttnF, "F"}, {LayerPart::MlpF, "F"},
                                                     {LayerPart::AttnB, "B"}, {LayerPart::MlpB, "B"},
                                                     {LayerPart::AttnW, "W"}, {LayerPart::MlpW, "W"}};
  Plan no_launch = plan;  // the kernels' own times; launches counted apart
  no_launch.software.kernel_launch_s = 0;
  no_launch.software.host_launch_s = 0;
  std::map<std::string, PhaseMap> out;
  const int64_t layers = plan.model.num_hidden_layers;
  for (int64_t l = 0; l < layers; ++l) {
    const LayerWork w = layer_work(plan, l, sequences, shape.routed_rows);
    for (const auto& [part, phase] : parts) {
      const PartWork& pw = w.part(part);
      PhaseMap& m = out[phase];
      m["kernels"] += cost::part_seconds(no_launch, pw, shape).all().kernels / double(layers);
      // GEMMs by number format: time each precision's kernels on their own.
      for (const Precision p : {Precision::FP8, Precision::BF16}) {
        PartWork only;
        for (const Kernel& k : pw.kernels)
          if (k.cls == KernelClass::Gemm && k.precision == p) only.kernels.push_back(k);
        m[p == Precision::FP8 ? "fp8_gemm" : "bf16_gemm"] += cost::part_seconds(no_launch, only, shape).all().gemm / double(layers);
      }
      const cost::ClassSeconds all = cost::part_seconds(no_launch, pw, shape).all();
      m["attention"] += all.attention / double(layers);
      m["memory"] += all.memory / double(layers);
    }
  }
  return out;
}

PhaseMap capture_sim(const Plan& plan, const SimResult& result) {
  require_capture(plan, "this command");
  if (!result.has_spans) throw std::logic_error("capture_sim needs a simulation with record_spans");
  PhaseMap m;
  for (const auto& p : phase_names()) m[p] = 0;
  for (const Span& s : result.spans) {
    if (s.rank != 0) continue;
    const double d = s.end_s - s.start_s;
    const ops::Phase ph = s.tag.phase;
    if (s.stream == ops::kComputeStream) {
      if (ph == ops::Phase::Forward) m["F"] += d;
      if (ph == ops::Phase::Backward) m["B"] += d;
      if (ph == ops::Phase::Weight) m["W"] += d;
    } else if (s.tag.comm_class == ops::CommClass::Ep) {
      if (ph == ops::Phase::Forward) m["comm_F"] += d;
      if (ph == ops::Phase::Backward) m["comm_B"] += d;
    }
  }
  for (auto& [p, v] : m) v /= double(plan.model.num_hidden_layers);
  return m;
}

PhaseMap capture_real(const traces::ProfileSummary& trace) {
  if (trace.layers <= 0 || trace.annotations == 0)
    throw ConfigError(trace.path + ": no phase annotations (user_annotation ranges named like attn(F), mlp(B), "
                                   "mlp(W)), so F, B and W cannot be told apart; record the capture with them");
  PhaseMap m;
  for (const auto& p : phase_names()) {
    const auto span = trace.phase_span_s.find(p);
    const auto sum = trace.phase_s.find(p);
    const double v = span != trace.phase_span_s.end() && span->second > 0 ? span->second
                     : sum != trace.phase_s.end()                         ? sum->second
                                                                          : 0.0;
    m[p] = v / double(trace.layers);
    if (!(m[p] > 0))
      throw ConfigError(trace.path + ": no kernels in phase " + p + " (" +
                        (p.starts_with("comm") ? "DeepEP kernels under " + p.substr(5) + " annotations"
                                               : "compute kernels launched under (" + p + ") annotations") +
                        "); pass a capture of overlapped forward and backward chunks");
  }
  return m;
}

}  // namespace stepsim::calib
