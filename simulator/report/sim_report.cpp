#include "simulator/report/sim_report.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <limits>

#include "schedules/registry.hpp"
#include "simulator/report/expert_layout_report.hpp"
#include "simulator/report/memory_report.hpp"
#include "simulator/report/roofline_report.hpp"
#include "simulator/report/stage_layers_report.hpp"
#include "simulator/report/straggler_report.hpp"
#include "vocabulary/rank_layout.hpp"
#include "simulator/report/percent.hpp"
#include "workloads/cost/compute_breakdown.hpp"

namespace stepsim {
namespace {

// The step's FLOPs as Megatron-LM counts them (its release's count: software.megatron_flops), per
// GPU per second: what its logs report, to compare with published Megatron throughputs like with like.
double megatron_tflops_per_gpu(const Plan& plan, const Roofline& roof, double step_s) {
  return roof.terms.megatron_flops / step_s / double(plan.gpus()) / 1e12;
}

using ops::CommClass;

// Min, mean and max over the ranks of what `value` reads from each.
template <class Value>
Spread spread_of(const SimResult& r, Value value) {
  Spread s{std::numeric_limits<double>::infinity(), 0, -std::numeric_limits<double>::infinity()};
  for (const auto& rank : r.ranks) {
    const double v = value(rank);
    s.min = std::min(s.min, v);
    s.max = std::max(s.max, v);
    s.mean += v;
  }
  if (r.ranks.empty()) return {};
  s.mean /= double(r.ranks.size());
  return s;
}

Spread spread(const SimResult& r, double RankResult::*field) {
  return spread_of(r, [field](const RankResult& rank) { return rank.*field; });
}

nlohmann::json spread_json(const Spread& s) { return {{"min", s.min}, {"mean", s.mean}, {"max", s.max}}; }

nlohmann::json classes_json(const cost::ClassSeconds& c) {
  return {{"gemm_s", c.gemm}, {"attention_s", c.attention}, {"memory_bound_s", c.memory}, {"launch_s", c.launch},
          {"total_s", c.total()}};
}

// The GPU that sets the step and the cost model's breakdown of its pipeline rank (model workloads).
struct CriticalBreakdown {
  const RankResult* crit;
  int64_t pipeline_rank;
  cost::ComputeBreakdown breakdown;
};
std::optional<CriticalBreakdown> critical_breakdown(const Plan& plan, const SimResult& r) {
  const RankResult* crit = r.critical();
  if (plan.workload.kind != WorkloadKind::Model || !crit) return std::nullopt;
  const int64_t pipeline_rank = RankLayout(plan).pipeline_rank(crit->rank);
  return CriticalBreakdown{crit, pipeline_rank, cost::compute_breakdown(plan, pipeline_rank)};
}

}  // namespace

// Where the critical GPU's time goes: its compute by layer kind and class (the cost model's own
// numbers for the mean microbatch), and what it waited for.
nlohmann::json compute_breakdown_json(const Plan& plan, const SimResult& r) {
  const auto critical = critical_breakdown(plan, r);
  if (!critical) return nullptr;
  const auto& [crit, pipeline_rank, b] = *critical;
  nlohmann::json j;
  j["model"] = to_string(b.model);
  j["gpu"] = crit->rank;
  j["pipeline_rank"] = pipeline_rank;
  j["microbatches_per_chunk"] = b.microbatches;
  j["per_microbatch"] = nlohmann::json::array();
  for (const auto& k : b.kinds) {
    nlohmann::json e = classes_json(k.total());
    e["kind"] = k.kind;
    e["on_rank"] = k.on_rank;
    e["forward_s"] = k.forward.total();
    e["input_grad_s"] = k.input_grad.total();
    e["weight_grad_s"] = k.weight_grad.total();
    j["per_microbatch"].push_back(e);
  }
  j["step"] = classes_json(b.step);
  j["step"]["ub_sm_margin_s"] = b.ub_sm_margin_s;
  j["step"]["lone_halves_launch_s"] = b.lone_halves_launch_s;
  j["step"]["simulated_compute_s"] = crit->compute_s;
  j["step"]["exposed_comm_s"] = crit->exposed_comm_s;
  j["step"]["exposed_by_kind"] = nlohmann::json::object();
  for (size_t c = 0; c < ops::kCommClasses; ++c)
    if (ops::comm_class_info(c).in_json)
      j["step"]["exposed_by_kind"][std::string(ops::comm_class_info(c).name) + "_s"] = crit->exposed_s[c];
  j["step"]["bubble_s"] = crit->bubble_s;
  return j;
}

std::string compute_breakdown_text(const Plan& plan, const SimResult& r) {
  const auto critical = critical_breakdown(plan, r);
  if (!critical) return "";
  const auto& [crit, pipeline_rank, b] = *critical;
  std::string out = fmt::format("\nwhere GPU {}'s time goes (sim.compute {}; ms per microbatch, {:g} microbatches per chunk):\n",
                    crit->rank, to_string(b.model), b.microbatches);
  out += fmt::format("  {:<16}{:>8}{:>10}{:>11}{:>14}{:>9}{:>10}\n", "kind", "on rank", "GEMM", "attention",
                     "memory-bound", "launch", "total");
  for (const auto& k : b.kinds) {
    const cost::ClassSeconds c = k.total();
    out += fmt::format("  {:<16}{:>8}{:>10.3f}{:>11.3f}{:>14.3f}{:>9.3f}{:>10.3f}\n", k.kind, k.on_rank, c.gemm * 1e3,
                       c.attention * 1e3, c.memory * 1e3, c.launch * 1e3, c.total() * 1e3);
  }
  const cost::ClassSeconds& st = b.step;
  std::string by_class;
  for (size_t c = 0; c < ops::kCommClasses; ++c)
    if (ops::comm_class_info(c).in_json || (ops::comm_class_info(c).copy_engine && crit->exposed_s[c] > 0))
      by_class += fmt::format("{}{} {:.3f}", by_class.empty() ? "" : ", ", ops::comm_class_info(c).label, crit->exposed_s[c]);
  const std::string margin =
      b.ub_sm_margin_s > 0 ? fmt::format(" (of which {:.3f} userbuffers' SM margin)", b.ub_sm_margin_s) : "";
  const std::string halves =
      b.lone_halves_launch_s > 0 ? fmt::format(" (of which {:.3f} lone chunks' second halves)", b.lone_halves_launch_s) : "";
  out += fmt::format("  step (s): GEMM {:.3f}{}, attention {:.3f}, memory-bound {:.3f}, launch {:.3f}{} = compute {:.3f} "
                     "(simulated {:.3f}); exposed communication {:.3f} ({}); bubble {:.3f}\n",
                     st.gemm, margin, st.attention, st.memory, st.launch, halves, st.total(), crit->compute_s,
                     crit->exposed_comm_s, by_class, crit->bubble_s);
  return out;
}

StepSummary summarize(const SimResult& r) {
  StepSummary s;
  s.step = spread(r, &RankResult::step_time_s);
  s.compute = spread(r, &RankResult::compute_s);
  s.exposed = spread(r, &RankResult::exposed_comm_s);
  s.bubble = spread(r, &RankResult::bubble_s);
  s.critical_rank = r.critical_rank;
  return s;
}

nlohmann::json sim_json(const Plan& plan, const SimResult& r, const Roofline& roof) {
  const StepSummary s = summarize(r);
  nlohmann::json j;
  j["step_time_s"] = r.step_time_s;
  add_plan_inputs(j, plan);
  // Step-level compute / exposed / bubble are means over ranks (the roofline's "average GPU").
  j["compute_s"] = s.compute.mean;
  j["exposed_comm_s"] = s.exposed.mean;
  j["bubble_s"] = s.bubble.mean;
  j["exposed_comm_share"] = r.step_time_s > 0 ? s.exposed.mean / r.step_time_s : 0.0;
  j["bubble_share_of_compute"] = s.compute.mean > 0 ? s.bubble.mean / s.compute.mean : 0.0;
  // Per communication class (the table's rows with JSON fields): `ep_comm_s`, `exposed_by_kind.ep_s`,
  // `ranks[].ep_comm_s`, `ranks[].exposed_ep_s`, ...
  for (size_t c = 0; c < ops::kCommClasses; ++c)
    if (ops::comm_class_info(c).in_json) j[std::string(ops::comm_class_info(c).name) + "_comm_s"] = r.comm_s[c];
  j["critical_rank"] = r.critical_rank;
  j["tokens_per_step"] = plan.train.tokens_per_step();
  j["tokens_per_s_per_gpu"] = r.step_time_s > 0 ? roof.tokens_per_step / r.step_time_s / double(plan.gpus()) : 0.0;
  j["vs_roofline"] = roof.step_time_s > 0 ? r.step_time_s / roof.step_time_s - 1.0 : 0.0;
  const bool model = plan.workload.kind == WorkloadKind::Model && r.step_time_s > 0;
  j["mfu"] = model ? mfu(plan, roof, r.step_time_s) : 0.0;
  j["achieved_tflops_per_gpu"] = model ? roof.terms.model_flops / r.step_time_s / double(plan.gpus()) / 1e12 : 0.0;
  j["megatron_tflops_per_gpu"] = model && roof.terms.megatron_flops > 0
                                     ? nlohmann::json(megatron_tflops_per_gpu(plan, roof, r.step_time_s))
                                     : nlohmann::json();
  j["exposed_by_kind"] = {{"outside_fb_pairs_s", spread(r, &RankResult::exposed_unpaired_s).mean}};
  for (size_t c = 0; c < ops::kCommClasses; ++c)
    if (ops::comm_class_info(c).in_json)
      j["exposed_by_kind"][std::string(ops::comm_class_info(c).name) + "_s"] =
          spread_of(r, [c](const RankResult& rank) { return rank.exposed_s[c]; }).mean;
  j["stats"] = {{"step_time_s", spread_json(s.step)},
                {"compute_s", spread_json(s.compute)},
                {"exposed_comm_s", spread_json(s.exposed)},
                {"bubble_s", spread_json(s.bubble)}};
  j["ranks"] = nlohmann::json::array();
  for (const auto& rank : r.ranks) {
    nlohmann::json rj = {{"rank", rank.rank},
                         {"step_time_s", rank.step_time_s},
                         {"compute_s", rank.compute_s},
                         {"exposed_comm_s", rank.exposed_comm_s},
                         {"bubble_s", rank.bubble_s},
                         {"exposed_unpaired_s", rank.exposed_unpaired_s},
                         {"memory_peak_bytes", r.has_memory ? nlohmann::json(rank.memory.peak_bytes) : nullptr}};
    for (size_t c = 0; c < ops::kCommClasses; ++c) {
      if (!ops::comm_class_info(c).in_json) continue;
      const std::string name = ops::comm_class_info(c).name;
      rj[name + "_comm_s"] = rank.comm_s[c];
      rj["exposed_" + name + "_s"] = rank.exposed_s[c];
    }
    j["ranks"].push_back(std::move(rj));
  }
  j["memory"] = memory_json(plan, r);
  j["explanation"] = explain_difference(plan, r, roof);
  j["roofline"] = roofline_json(plan, roof);
  j["stragglers"] = stragglers_json(plan, r);
  // The workload states its mode as "KIND: what was simulated and why": the kind is a value a
  // script or sweep chart can compare, the sentence is for people.
  const auto colon = r.mode.find(':');
  j["sim"] = {{"activities", r.activities},
              {"ops", r.ops},
              {"wall_s", r.wall_s},
              {"mode", r.mode.substr(0, colon)},
              {"mode_description", r.mode},
              {"fidelity", r.fidelity.substr(0, r.fidelity.find(':'))},
              {"fidelity_description", r.fidelity},
              {"workload", r.workload},
              {"schedule", r.schedule},
              {"ranks_simulated", r.ranks.size()},
              {"compute", to_string(plan.sim.compute)}};
  j["compute_breakdown"] = compute_breakdown_json(plan, r);
  return j;
}

namespace {

// What the data-parallel collectives leave exposed under the plan's ZeRO stage and overlap options.
std::string dp_exposure(const Plan& plan) {
  const ParallelConfig& p = plan.parallel;
  if (p.zero == 3) return ", FSDP's per-layer gathers and reductions";
  std::string s = p.overlap_param_gather ? ", the buckets of the ZeRO all-gather the first forward waited for"
                                         : ", the ZeRO-1 all-gather at the step's end";
  if (!p.overlap_grad_reduce)
    s += " and the reduce-scatter after the last backward (parallel.overlap_grad_reduce=true would run it in buckets "
         "during the backward)";
  return s;
}

}  // namespace

std::string explain_difference(const Plan& plan, const SimResult& r, const Roofline& roof) {
  const RankLayout layout(plan);
  const StepSummary s = summarize(r);
  const double diff = r.step_time_s - roof.step_time_s;
  if (roof.step_time_s <= 0 || std::abs(diff) <= 0.02 * roof.step_time_s) return "";
  // Split the gap along the rank that sets the step: its compute, exposed comm and bubble against
  // the roofline's perfect-overlap assumptions.
  const RankResult* crit = r.critical();
  if (!crit) return "";
  std::string out = fmt::format(
      "The simulated step is {:+.3f} s ({:+.1f} %) against the roofline. On GPU {} (pipeline rank {}), which sets the "
      "step: ",
      diff, 100.0 * diff / roof.step_time_s, crit->rank, layout.pipeline_rank(crit->rank));
  const double d_compute = crit->compute_s - roof.compute_s;
  const double d_exposed = crit->exposed_comm_s - roof.exposed_comm_s;
  const double d_bubble = crit->bubble_s - roof.bubble_s;
  const bool pairs = sched::make_schedule(plan)->overlaps_pairs();
  std::vector<std::string> parts;
  // The compute gap is the replay's costs against the roofline's on the mean GPU (the per-op cost
  // model's GEMM shapes, memory-bound kernels and launches under sim.compute: predicted), then this
  // rank's share against the mean (the pipeline's imbalance).
  const double d_costs = s.compute.mean - roof.compute_s, d_share = crit->compute_s - s.compute.mean;
  const std::string sm_tax = plan.taxed_comm_sms() > 0 ? ", and communication kernels take SMs from compute while in flight" : "";
  if (std::abs(d_compute) > 0.005 * roof.step_time_s && std::abs(d_costs) <= 0.005 * roof.step_time_s)
    parts.push_back(fmt::format(
        "compute {:+.3f} s ({}; the roofline spreads FLOPs evenly, the pipeline gives this rank {:.3f} s against a mean of {:.3f} s{})",
        d_compute, d_compute > 0 ? "more" : "less", crit->compute_s, s.compute.mean, sm_tax));
  else if (std::abs(d_compute) > 0.005 * roof.step_time_s)
    parts.push_back(fmt::format(
        "compute {:+.3f} s: {:+.3f} s on the mean GPU, {} against the roofline's {:.3f} s{}{}, and {:+.3f} s from the "
        "pipeline giving this rank {:.3f} s against that mean of {:.3f} s (the roofline spreads FLOPs evenly; stepsim "
        "explain splits the first term)",
        d_compute, d_costs,
        plan.sim.compute == ComputeModel::Predicted
            ? "the per-op cost model (GEMM shapes, attention kernels, memory-bound kernels, launches, the optimizer "
              "step)"
            : "the replay's per-op costs",
        roof.compute_s,
        roof.overlap.tp_sm_margin_s > 0 && plan.parallel.tp_comm_overlap
            ? fmt::format(" (of it, about {:.3f} s of GEMMs slowed by the SMs userbuffers hold, which the roofline "
                          "counts as exposed TP communication)",
                          roof.overlap.tp_sm_margin_s)
            : "",
        sm_tax, d_share, crit->compute_s, s.compute.mean));
  if (std::abs(d_exposed) > 0.005 * roof.step_time_s) {
    std::string what = fmt::format("exposed communication {:+.3f} s (the roofline hides every transfer behind compute; "
                                   "here the compute stream waited {:.3f} s on transfers: EP all-to-all {:.3f} s",
                                   d_exposed, crit->exposed_comm_s, crit->exposed_s[CommClass::Ep]);
    if (pairs)
      what += fmt::format(", {:.3f} s of it outside overlapped F&B pairs, i.e. in the warm-up and cool-down chunks "
                          "where no other chunk's compute can hide it{}",
                          crit->exposed_unpaired_s,
                          plan.parallel.split_lone_chunks
                              ? " (they run as two halves hiding each other's transfers, but a forward's "
                                "all-to-all outlasts its compute)"
                              : " (parallel.split_lone_chunks=true would overlap two halves of each)");
    what += fmt::format("; pipeline sends {:.3f} s{}; data-parallel collectives {:.3f} s{})", crit->exposed_s[CommClass::Pp],
                        pairs ? ", each F&B pair waiting for its neighbours' activations and gradients"
                            : "",
                        crit->exposed_s[CommClass::Dp], dp_exposure(plan));
    if (layout.tp() > 1)
      what += fmt::format("; tensor-parallel gathers and reductions {:.3f} s ({})", crit->exposed_s[CommClass::Tp],
                          plan.parallel.tp_comm_overlap ? "what userbuffers' chunked pipelines leave exposed beside their GEMMs"
                                                        : "on the critical path of every layer; parallel.tp_comm_overlap=true "
                                                          "pipelines them with their GEMMs");
    if (layout.cp() > 1)
      what += fmt::format("; context-parallel exchanges {:.3f} s ({})", crit->exposed_s[CommClass::Cp],
                          plan.parallel.cp_comm_type == CpCommType::P2p
                              ? "p2p: what outlasts the attention steps the ring runs beside"
                          : plan.parallel.cp_comm_type == CpCommType::AllGather
                              ? "allgather: K/V gathered before every attention core, dK/dV reduce-scattered after; "
                                "parallel.cp_comm_type=p2p passes them beside it"
                              : "a2a: all-to-alls before and after every attention core");
    if (plan.parallel.cpu_offload_layers > 0)
      what += fmt::format("; activation copies to and from host memory {:.3f} s (layers 0-{} offloaded at {:g} GB/s{})",
                          crit->exposed_s[CommClass::Host], plan.parallel.cpu_offload_layers - 1,
                          plan.hardware.host_link_GBps,
                          crit->exposed_s[CommClass::Host] > 0
                              ? ": the copies outlast the compute that should hide them; offload fewer layers"
                              : ", hidden behind compute");
    parts.push_back(what);
  }
  if (std::abs(d_bubble) > 0.005 * roof.step_time_s)
    parts.push_back(layout.pp() > 1
                        ? fmt::format("bubble {:+.3f} s (the roofline's closed form assumes B = 2F and W = F per "
                                      "chunk; here the rank idled {:.3f} s waiting for other stages)",
                                      d_bubble, crit->bubble_s)
                        : fmt::format("bubble {:+.3f} s (no pipeline: the rank idled {:.3f} s on no transfer it "
                                      "waited for, e.g. behind slower GPUs)",
                                      d_bubble, crit->bubble_s));
  if (parts.empty()) parts.push_back("no single term dominates");
  for (size_t i = 0; i < parts.size(); ++i) out += (i ? "; " : "") + parts[i];
  return out + ".";
}

namespace {

// The synthetic pipeline's closed-form bubble with communication off, as its schedule states it.
double synthetic_bubble_s(const Plan& plan) {
  const auto& w = plan.workload;
  return sched::make_schedule(plan)->bubble_s({w.f_s, w.b_s, w.w_s, w.fb_s > 0 ? w.fb_s : w.f_s + w.b_s});
}

std::string synthetic_text(const Plan& plan, const SimResult& r) {
  const StepSummary s = summarize(r);
  std::string out = fmt::format(
      "stepsim simulate: synthetic {} pipeline, {} ranks, {} microbatches; per chunk F {} s, B {} s (W {} s), {} bytes "
      "per send over {} GB/s\n",
      to_string(plan.parallel.schedule), RankLayout(plan).pp(), plan.parallel.microbatches, plan.workload.f_s,
      plan.workload.b_s, plan.workload.w_s, plan.workload.send_bytes, plan.hardware.ib_GBps);
  out += fmt::format("  {:<26}{:>12}{:>12}{:>12}\n", "per rank (s)", "min", "mean", "max");
  const auto line = [&](const char* name, const Spread& sp) {
    out += fmt::format("  {:<26}{:>12.6g}{:>12.6g}{:>12.6g}\n", name, sp.min, sp.mean, sp.max);
  };
  line("step time", s.step);
  line("compute", s.compute);
  line("exposed communication", s.exposed);
  line("bubble", s.bubble);
  out += fmt::format("closed-form bubble with communication off: {:.6g} s\n", synthetic_bubble_s(plan));
  return out;
}

}  // namespace

std::string sim_text(const Plan& plan, const SimResult& r, const Roofline& roof) {
  const RankLayout layout(plan);
  if (plan.workload.kind == WorkloadKind::Synthetic) return synthetic_text(plan, r) + stragglers_text(plan, r);
  const StepSummary s = summarize(r);
  std::string out;
  out += fmt::format("stepsim simulate: {} on {} x {} {} ({} GPUs), {} PP {} ({} stages), {}EP {}, DP {}, ZeRO-{}, {} "
                     "microbatches; config {}\n",
                     plan.model.name, plan.cluster.nodes, plan.cluster.gpus_per_node, plan.hardware.name, plan.gpus(),
                     to_string(plan.parallel.schedule), layout.pp(), sched::path_stages(plan), tp_cp_text(plan),
                     layout.ep(), plan.dp(),
                     plan.parallel.zero, plan.parallel.microbatches, plan.source);
  out += fmt::format("batch: {} sequences x {} tokens = {} tokens per step (sequences per microbatch: {:.4g})\n",
                     plan.train.global_batch, plan.train.seq_len, plan.train.tokens_per_step(),
                     plan.sequences_per_microbatch());
  out += expert_layout_text(plan);
  out += stage_layers_text(plan);
  if (const ModelConfig& m = plan.model; m.sliding_window > 0) {
    out += fmt::format("attention: a sliding window of {} keys per query in {} of {} layers (model.sliding_window, "
                       "model.sliding_layers), full causal in the rest\n",
                       m.sliding_window, m.sliding_layers.size(), m.num_hidden_layers);
  }
  out += fmt::format("assumed: FP8 {} TFLOP/s, BF16 {} TFLOP/s achievable per GPU; IB {} GB/s, NVLink {} GB/s per GPU "
                     "per direction; {} of {} SMs for communication; non-matmul {} s per token-layer\n",
                     plan.hardware.fp8_tflops, plan.hardware.bf16_tflops, plan.hardware.ib_GBps,
                     plan.hardware.nvlink_GBps, plan.taxed_comm_sms(), plan.hardware.sms,
                     plan.hardware.nonmatmul_s_per_token_layer);
  out += "software: " + software_text(plan) + "\n";
  out += fmt::format("replay: {} GPUs simulated, {} SimGrid activities, {:.2f} s wall; mode {}; fidelity {}\n",
                     r.ranks.size(), r.activities, r.wall_s, r.mode, r.fidelity);
  out += plan.sim.compute == ComputeModel::Predicted
             ? fmt::format("compute: predicted (per-op cost model: GEMMs by shape at {:.3g} / {:.3g} of the BF16 / FP8 "
                           "peak, attention {}, memory-bound kernels at {:g} x "
                           "{:g} GB/s, {:g} us per kernel launch); the roofline beside it is speed of light\n\n",
                           plan.hardware.gemm_bf16_peak_share, plan.hardware.gemm_fp8_peak_share,
                           attention_rates_text(plan), plan.hardware.hbm_efficiency, plan.hardware.hbm_GBps,
                           plan.software.kernel_launch_s * 1e6)
             : std::string("compute: speed-of-light (every GEMM at the achievable rate above, as the roofline)\n\n");
  out += fmt::format("  {:<26}{:>10}{:>10}{:>10}{:>10}{:>12}\n", "per rank (s)", "min", "mean", "max",
                     fmt::format("GPU {}*", r.critical_rank), "roofline");
  const RankResult* crit = r.critical();
  const auto line = [&](const char* name, const Spread& sp, double crit_v, double roof_v) {
    out += fmt::format("  {:<26}{:>10.3f}{:>10.3f}{:>10.3f}{:>10.3f}{:>12.3f}\n", name, sp.min, sp.mean, sp.max, crit_v,
                       roof_v);
  };
  line("step time", s.step, crit ? crit->step_time_s : 0, roof.step_time_s);
  line("compute", s.compute, crit ? crit->compute_s : 0, roof.compute_s);
  line("exposed communication", s.exposed, crit ? crit->exposed_comm_s : 0, roof.exposed_comm_s);
  line("bubble", s.bubble, crit ? crit->bubble_s : 0, roof.bubble_s);
  out += fmt::format("  (* the GPU that sets the step: pipeline rank {})\n", layout.pipeline_rank(r.critical_rank));
  out += fmt::format("\n  transfers busy on GPU {} (s):  EP {:.3f} (roofline {:.3f})  PP {:.3f} (roofline {:.3f})  DP {:.3f} "
                     "(roofline {:.3f})\n",
                     r.critical_rank, r.comm_s[CommClass::Ep], roof.ep_comm_s, r.comm_s[CommClass::Pp], roof.pp_comm_s,
                     r.comm_s[CommClass::Dp], roof.dp_comm_s);
  out += fmt::format("\nstep: {:.3f} s simulated vs {:.3f} s roofline ({:+.1f} %); exposed communication {} of the step; "
                     "bubble {} of compute; {:.0f} tokens/s/GPU\n",
                     r.step_time_s, roof.step_time_s, 100.0 * (r.step_time_s / roof.step_time_s - 1.0),
                     pct(s.exposed.mean / r.step_time_s), pct(s.bubble.mean / s.compute.mean),
                     roof.tokens_per_step / r.step_time_s / double(plan.gpus()));
  // Megatron's own count beside it: what that release's logs print (software.megatron_flops).
  const std::string megatron =
      roof.terms.megatron_flops > 0
          ? fmt::format(", {:.0f} in Megatron-Core {}'s count (software.megatron_flops)",
                        megatron_tflops_per_gpu(plan, roof, r.step_time_s), to_string(plan.software.megatron_flops))
          : "";
  out += fmt::format("MFU {} of the {:g} TFLOP/s dense {} peak ({:.0f} TFLOP/s of model FLOPs per GPU{}; roofline {})\n",
                     pct(mfu(plan, roof, r.step_time_s)), roof.peak_tflops, precision_name(plan.train),
                     roof.terms.model_flops / r.step_time_s / double(plan.gpus()) / 1e12, megatron, pct(roof.mfu));
  const std::string why = explain_difference(plan, r, roof);
  if (!why.empty()) out += why + "\n";
  out += compute_breakdown_text(plan, r);
  out += stragglers_text(plan, r);
  out += memory_text(plan, r);
  return out;
}

}  // namespace stepsim
