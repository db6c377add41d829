#include "simulator/report/html_report.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <utility>

#include "simulator/io/json_text.hpp"
#include "simulator/report/expert_layout_report.hpp"
#include "simulator/report/html/assets.hpp"
#include "simulator/report/layer_breakdown.hpp"
#include "simulator/report/roofline_report.hpp"
#include "simulator/report/memory_report.hpp"
#include "simulator/report/percent.hpp"
#include "schedules/registry.hpp"
#include "simulator/report/sim_report.hpp"
#include "simulator/report/stage_layers_report.hpp"
#include "vocabulary/rank_layout.hpp"

namespace stepsim {
namespace {

using ops::CommClass;
using ops::OpKind;
using json = nlohmann::json;

// ---- colours: one palette for every chart of the page --------------------------------------

// Timeline categories: compute by part, communication by class, then the compute stream's idle time.
enum Cat : int {
  kAttention,
  kMlp,
  kRouterHead,
  kNonMatmul,
  kOtherCompute,
  kEp,
  kPp,
  kDp,
  kTp,
  kCp,
  kOtherComm,
  kBubble,
  kExposed,
  kCats
};
struct CatInfo {
  const char* name;
  const char* colour;
};
constexpr CatInfo kCatInfo[kCats] = {
    {"attention", "#1f5fa8"},
    {"MLP / experts", "#4f9bd9"},
    {"router / LM head / embedding", "#3d5a80"},
    {"non-matmul", "#a6bddb"},
    {"other compute", "#8c6d31"},
    {"EP all-to-all", "#e6550d"},
    {"PP send / recv", "#31a354"},
    {"DP / ZeRO / FSDP collectives", "#756bb1"},
    {"TP collectives", "#d6a000"},
    {"CP exchanges", "#c51b8a"},
    {"other communication", "#636363"},
    {"bubble (idle, waiting for another stage or the schedule)", "#d9dce3"},
    {"exposed communication (idle, waiting for a transfer)", "#d62728"},
};
// Per communication class (CommClass order) in the rank chart; other communication and host copies
// join them where some GPU waited on them (the chart splits the exposed time over its classes).
constexpr std::pair<CommClass, Cat> kClasses[] = {{CommClass::Ep, kEp}, {CommClass::Pp, kPp}, {CommClass::Dp, kDp},
                                                  {CommClass::Tp, kTp}, {CommClass::Cp, kCp}};
constexpr std::pair<CommClass, Cat> kClassesWhenExposed[] = {{CommClass::Other, kOtherComm}, {CommClass::Host, kOtherComm}};

Cat category(OpKind k) {
  switch (ops::comm_class(k)) {
    case CommClass::Ep: return kEp;
    case CommClass::Pp: return kPp;
    case CommClass::Dp: return kDp;
    case CommClass::Tp: return kTp;
    case CommClass::Cp: return kCp;
    case CommClass::Other:
    case CommClass::Host: return kOtherComm;  // activation copies to and from host memory
    default: break;
  }
  switch (k) {
    case OpKind::Attention: return kAttention;
    case OpKind::DenseMlp:
    case OpKind::MoeGemm:
    case OpKind::SharedExpert: return kMlp;
    case OpKind::Router:
    case OpKind::Head:
    case OpKind::Embedding: return kRouterHead;
    case OpKind::NonMatmul: return kNonMatmul;
    default: return kOtherCompute;
  }
}

// Layer parts: compute in blues and teals, exposed communication in its class's colour.
const char* part_colour(const LayerBreakdown::Part& p) {
  static const std::map<std::string, const char*> colours = {
      {"attention", "#1f5fa8"},      {"dense MLP", "#4f9bd9"},          {"routed experts", "#2a8c82"},
      {"shared experts", "#7cc5b9"}, {"router", "#8da0cb"},             {"LM head / embedding", "#3d5a80"},
      {"non-matmul", "#a6bddb"},     {"other compute", "#8c6d31"},      {"exposed EP all-to-all", "#e6550d"},
      {"exposed PP send/recv", "#31a354"}, {"exposed DP / ZeRO / FSDP", "#756bb1"}, {"exposed TP", "#d6a000"},
      {"exposed CP", "#c51b8a"},     {"exposed other", "#636363"},     {"exposed host copies", "#636363"}};
  const auto it = colours.find(p.name);
  return it == colours.end() ? (p.exposed ? "#d62728" : "#2171b5") : it->second;
}

std::string seconds_text(double s) {
  if (s == 0) return "0 s";
  if (std::abs(s) >= 1) return fmt::format("{:.3f} s", s);
  if (std::abs(s) >= 1e-3) return fmt::format("{:.2f} ms", s * 1e3);
  return fmt::format("{:.1f} us", s * 1e6);
}

// A communication stream's row in the timeline, by a kind it carries (short: the labels column is narrow).
const char* row_label(OpKind k) {
  switch (ops::comm_class(k)) {
    case CommClass::Ep: return "EP all-to-all";
    case CommClass::Pp: return k == OpKind::PpRecv ? "PP recv" : "PP send";
    case CommClass::Dp: return k == OpKind::DpAllGather || k == OpKind::FsdpAllGather ? "DP all-gather" : "DP reduce";
    case CommClass::Tp: return "TP collectives";
    case CommClass::Cp: return "CP exchanges";
    case CommClass::Host: return "host copy";
    default: return "other comm";
  }
}

// 62.9 M, 8.21 k, 512: three significant figures and a prefix.
std::string count_text(double v) {
  const double a = std::abs(v);
  if (a >= 1e12) return fmt::format("{:.3g} T", v / 1e12);
  if (a >= 1e9) return fmt::format("{:.3g} G", v / 1e9);
  if (a >= 1e6) return fmt::format("{:.3g} M", v / 1e6);
  if (a >= 1e4) return fmt::format("{:.3g} k", v / 1e3);
  return fmt::format("{:.0f}", v);
}

// ---- the timeline ---------------------------------------------------------------------------

struct Block {
  int64_t a_ns = 0, b_ns = 0;
  int cat = 0;
  int kind = 0;   // OpKind, -1: merged ops of one category, -2: idle, -3: mixed (its parts in `mix`)
  int phase = 0;  // idle: the exposed classes' bit mask; mixed: its index in the page's mix list
  int layer = -1, mb = -1;
  int64_t ops = 1;  // ops it draws (idle time: none)
};

struct TimelineRow {
  std::string label;
  int32_t gpu = 0;
  bool first = false;  // the GPU's first row (its compute stream)
  std::vector<Block> blocks;
};

int64_t ns(double s) { return std::llround(s * 1e9); }

// A row's blocks drawn at a resolution of `q_ns`: neighbours of one category less than q_ns apart
// become one block; any block starting less than q_ns after the start of the block before it joins
// that one as a mixed block, which keeps each category's time (`mix`, ns per category). So two
// blocks of a row start at least q_ns apart: a row spanning T ns keeps at most T / q_ns + 1 blocks,
// whatever the ops (alternating categories, overlapping streams).
struct MergedRow {
  std::vector<Block> blocks;
  std::vector<std::array<int64_t, kCats>> mix;  // per mixed block (Block::phase), ns per category
};
MergedRow merged(const std::vector<Block>& in, int64_t q_ns) {
  MergedRow out;
  std::array<int64_t, kCats> open{};  // the open block's ns per category
  const auto close = [&] {
    if (out.blocks.empty() || out.blocks.back().kind != -3) return;
    Block& m = out.blocks.back();
    m.cat = int(std::max_element(open.begin(), open.end()) - open.begin());  // the category of most of it
    m.phase = int(out.mix.size());
    out.mix.push_back(open);
  };
  for (const Block& b : in) {
    if (!out.blocks.empty()) {
      Block& m = out.blocks.back();
      const bool same = m.kind != -3 && m.cat == b.cat && b.a_ns - m.b_ns <= q_ns;
      if (same || b.a_ns - m.a_ns < q_ns) {
        if (!same) {
          m.kind = -3;
          m.layer = m.mb = -1;
        } else if (m.kind != -2) {
          m.kind = -1;
        } else {
          m.phase |= b.phase;
        }
        open[size_t(b.cat)] += b.b_ns - b.a_ns;
        m.b_ns = std::max(m.b_ns, b.b_ns);
        m.ops += b.ops;
        continue;
      }
    }
    close();
    out.blocks.push_back(b);
    open.fill(0);
    open[size_t(b.cat)] = b.b_ns - b.a_ns;
  }
  close();
  return out;
}

json timeline_json(const HtmlReportInput& in, std::string& note) {
  const SimResult& r = *in.result;
  // Per GPU: the compute stream, then one row per kind of communication stream (the streams of
  // one label, e.g. a pipeline rank's several "pp send" channels, share a row and may overlap).
  std::map<int32_t, std::map<std::string, TimelineRow>> by_gpu;  // gpu -> row key -> row
  const auto key_of = [](const Span& s) {
    return s.stream == 0 ? std::string(" compute") : std::string(row_label(s.tag.kind));
  };
  size_t ops = 0;
  for (const Span& s : r.spans) {
    TimelineRow& row = by_gpu[s.rank][key_of(s)];
    Block b;
    b.a_ns = ns(s.start_s);
    b.b_ns = std::max(b.a_ns, ns(s.end_s));
    b.cat = category(s.tag.kind);
    b.kind = int(s.tag.kind);
    b.phase = int(s.tag.phase);
    b.layer = s.tag.layer == ops::kNoIndex ? -1 : int(s.tag.layer);
    b.mb = s.tag.microbatch == ops::kNoIndex ? -1 : int(s.tag.microbatch);
    row.blocks.push_back(b);
    ++ops;
  }
  for (const IdleSpan& s : r.idle_spans) {
    Block b;
    b.a_ns = ns(s.start_s);
    b.b_ns = ns(s.end_s);
    if (b.b_ns <= b.a_ns) continue;
    b.cat = s.exposed_classes == 0 ? kBubble : kExposed;
    b.kind = -2;
    b.phase = s.exposed_classes;
    b.ops = 0;
    by_gpu[s.rank][" compute"].blocks.push_back(b);
  }
  std::vector<TimelineRow> rows;
  size_t blocks = 0;
  for (auto& [gpu, streams] : by_gpu) {
    bool first = true;
    for (auto& [key, row] : streams) {  // " compute" sorts first
      row.gpu = gpu;
      row.first = first;
      row.label = key == " compute" ? fmt::format("GPU {} compute", gpu) : fmt::format("GPU {} {}", gpu, key);
      std::stable_sort(row.blocks.begin(), row.blocks.end(),
                       [](const Block& a, const Block& b) { return a.a_ns < b.a_ns; });
      blocks += row.blocks.size();
      first = false;
      rows.push_back(std::move(row));
    }
  }
  // Too many blocks for a page: merge them at a resolution doubled until they fit. At a resolution
  // past the step every row is one block, so the doubling ends (rows are far fewer than the cap).
  int64_t q_ns = 0;
  size_t mixed = 0;
  std::vector<std::array<int64_t, kCats>> mix;
  if (blocks > kMaxTimelineBlocks) {
    const int64_t step_ns = std::max<int64_t>(1, ns(r.step_time_s));
    q_ns = std::max<int64_t>(1000, step_ns / 100000);
    for (; q_ns <= step_ns; q_ns *= 2) {
      size_t n = 0;
      for (const TimelineRow& row : rows) n += merged(row.blocks, q_ns).blocks.size();
      if (n <= kMaxTimelineBlocks) break;
    }
    blocks = 0;
    for (TimelineRow& row : rows) {
      MergedRow m = merged(row.blocks, q_ns);
      for (Block& b : m.blocks)
        if (b.kind == -3) b.phase += int(mix.size());
      mix.insert(mix.end(), m.mix.begin(), m.mix.end());
      row.blocks = std::move(m.blocks);
      blocks += row.blocks.size();
    }
    mixed = mix.size();
  }
  json j;
  j["step_ns"] = ns(r.step_time_s);
  j["cats"] = json::array();
  for (const CatInfo& c : kCatInfo) j["cats"].push_back({{"name", c.name}, {"color", c.colour}});
  j["kinds"] = json::array();
  for (size_t k = 0; k < size_t(OpKind::Count_); ++k) j["kinds"].push_back(ops::to_string(OpKind(k)));
  j["classes"] = json::array();  // the idle blocks' bit mask: bit c is CommClass c
  for (size_t c = 0; c < ops::kCommClasses; ++c) j["classes"].push_back(ops::comm_class_info(c).label);
  j["mix"] = json::array();  // per mixed block: [category, ns, category, ns, ...] in category order
  for (const auto& parts : mix) {
    json m = json::array();
    for (size_t c = 0; c < kCats; ++c)
      if (parts[c] > 0) m.push_back(int64_t(c)), m.push_back(parts[c]);
    j["mix"].push_back(std::move(m));
  }
  j["rows"] = json::array();
  for (const TimelineRow& row : rows) {
    json ev = json::array();
    int64_t t = 0;
    for (const Block& b : row.blocks) {
      for (const int64_t v : {b.a_ns - t, b.b_ns - b.a_ns, int64_t(b.cat), int64_t(b.kind), int64_t(b.phase),
                              int64_t(b.layer), int64_t(b.mb), b.ops})
        ev.push_back(v);
      t = b.b_ns;
    }
    j["rows"].push_back({{"label", row.label}, {"gpu", row.gpu}, {"first", row.first}, {"tall", row.first},
                         {"ev", std::move(ev)}});
  }
  std::string gpus;
  for (const auto& [gpu, streams] : by_gpu) gpus += (gpus.empty() ? "" : ", ") + std::to_string(gpu);
  note = fmt::format("GPUs {} ({} ops and their idle time)", gpus.empty() ? "none" : gpus, ops);
  if (q_ns > 0) {
    const std::string q = seconds_text(double(q_ns) * 1e-9);
    note += fmt::format("; to keep the page small ({} blocks at most), ops of one kind less than {} apart on a row "
                        "are drawn as one block, and ops starting within {} of a block's start join it as a mixed "
                        "block, striped by each kind's share of its time ({} blocks, {} mixed)",
                        kMaxTimelineBlocks, q, q, blocks, mixed);
  }
  else
    note += fmt::format("; every op is drawn ({} blocks)", blocks);
  return j;
}

// ---- memory ---------------------------------------------------------------------------------

json memory_series_json(const HtmlReportInput& in, std::string& note) {
  const SimResult& r = *in.result;
  if (!r.has_memory || r.memory_samples.empty()) return nullptr;
  std::map<int32_t, std::vector<const MemorySample*>> by_gpu;
  for (const MemorySample& m : r.memory_samples) by_gpu[m.rank].push_back(&m);
  std::map<int64_t, double> peaks;
  for (const RankResult& rank : r.ranks) peaks[rank.rank] = rank.memory.peak_bytes;
  json j;
  j["capacity_bytes"] = memory_capacity_bytes(*in.plan);
  j["series"] = json::array();
  bool thinned = false;
  const double step = std::max(r.step_time_s, 1e-12);
  for (auto& [gpu, samples] : by_gpu) {
    std::stable_sort(samples.begin(), samples.end(),
                     [](const MemorySample* a, const MemorySample* b) { return a->t_s < b->t_s; });
    json t = json::array(), bytes = json::array();
    if (samples.size() <= kMaxMemoryPoints) {
      for (const MemorySample* m : samples) {
        t.push_back(m->t_s);
        bytes.push_back(m->bytes);
      }
    } else {
      // The highest level within each slice of the step, so no peak is lost.
      thinned = true;
      size_t i = 0;
      for (size_t k = 0; k < kMaxMemoryPoints && i < samples.size(); ++k) {
        const double end = step * double(k + 1) / double(kMaxMemoryPoints);
        if (samples[i]->t_s >= end && k + 1 < kMaxMemoryPoints) continue;
        double hi = samples[i]->bytes;
        const double at = samples[i]->t_s;
        for (; i < samples.size() && (samples[i]->t_s < end || k + 1 == kMaxMemoryPoints); ++i)
          hi = std::max(hi, samples[i]->bytes);
        t.push_back(at);
        bytes.push_back(hi);
      }
    }
    const auto peak = peaks.find(gpu);
    j["series"].push_back({{"gpu", gpu},
                           {"peak_bytes", peak == peaks.end() ? 0.0 : peak->second},
                           {"t", std::move(t)},
                           {"bytes", std::move(bytes)}});
  }
  note = thinned ? fmt::format("each line keeps the highest level within each 1/{} of the step", kMaxMemoryPoints)
                 : "every change of each GPU's memory is drawn";
  return j;
}

// ---- the page -------------------------------------------------------------------------------

std::string json_for_script(const json& j) {
  // Inside <script>, "</" or "<!--" would end or confuse the element: every < > & is written as its
  // \u escape, which JSON.parse reads back as the same character.
  const std::string text = io::json_text(j);
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    if (c == '<') out += "\\u003c";
    else if (c == '>') out += "\\u003e";
    else if (c == '&') out += "\\u0026";
    else out += c;
  }
  return out;
}

std::string row_html(const std::string& key, const std::string& value) {
  return "<tr><th>" + html_escape(key) + "</th><td>" + html_escape(value) + "</td></tr>\n";
}

std::string card(const std::string& key, const std::string& value, const std::string& detail, bool bad = false) {
  return fmt::format("<div class=\"card{}\"><div class=\"k\">{}</div><div class=\"v\">{}</div><div class=\"d\">{}</div></div>\n",
                     bad ? " bad" : "", html_escape(key), html_escape(value), html_escape(detail));
}

std::string plan_table(const Plan& p, const SimResult& r, const Roofline* roof) {
  const RankLayout layout(p);
  std::string out = "<table>\n";
  const bool model = p.workload.kind == WorkloadKind::Model;
  if (model) {
    std::string shape = fmt::format("{} layers, hidden {}", p.model.num_hidden_layers, p.model.hidden_size);
    if (p.model.is_moe()) {
      // A shared expert given by its width (Megatron's --moe-shared-expert-intermediate-size, Qwen2's
      // config) rather than counted in units of a routed expert.
      const std::string shared = p.model.n_shared_experts == 0 && p.model.shared_expert_intermediate_size > 0
                                     ? fmt::format("a shared expert {} wide", p.model.shared_expert_intermediate_size)
                                     : fmt::format("{} shared", p.model.n_shared_experts);
      shape += fmt::format(", {} routed experts (top {}), {}", p.model.n_routed_experts, p.model.num_experts_per_tok, shared);
    }
    if (roof)
      shape += fmt::format("; {:.4g} B parameters, {:.4g} B activated per token", double(roof->total_params) / 1e9,
                           double(roof->activated_params) / 1e9);
    out += row_html("model", p.model.name + " (" + shape + ")");
  } else {
    out += row_html("workload", fmt::format("synthetic pipeline: per chunk F {} s, B {} s (W {} s), {} bytes per send",
                                            p.workload.f_s, p.workload.b_s, p.workload.w_s, p.workload.send_bytes));
  }
  if (!model)
    out += row_html("cluster", fmt::format("the synthetic platform: one GPU per pipeline rank ({} GPUs), links at "
                                           "hardware.ib_GBps", layout.pp()));
  else
    out += row_html("cluster", fmt::format("{} nodes x {} {} = {} GPUs; {} fabric{}; NVLink domain {} GPUs", p.cluster.nodes,
                                         p.cluster.gpus_per_node, p.hardware.name, p.gpus(), to_string(p.cluster.topology),
                                         p.cluster.topology == Topology::Star
                                             ? std::string()
                                             : fmt::format(" ({}:1, {} NICs per leaf{})", p.cluster.oversubscription,
                                                           p.cluster.leaf_nics, p.cluster.rail_optimized ? ", rail-optimised" : ""),
                                         p.cluster.nvlink_domain_gpus()));
  if (model)
    out += row_html("parallelism", fmt::format("TP {} x PP {} ({} stages) x CP {}{} x DP {} = {} GPUs; EP {} (expert DP {}); ZeRO-{}{}",
                                               layout.tp(), layout.pp(), sched::path_stages(p), layout.cp(),
                                               layout.cp() > 1 ? fmt::format(" ({})", to_string(p.parallel.cp_comm_type)) : "",
                                               p.dp(), p.gpus(),
                                               layout.ep(), p.edp(), p.parallel.zero,
                                               p.parallel.fsdp_shard_size > 0
                                                   ? fmt::format(" (HSDP shards of {})", p.parallel.fsdp_shard_size)
                                                   : std::string()));
  std::string sched = to_string(p.parallel.schedule);
  if (p.parallel.virtual_stages > 1) sched += fmt::format(", {} virtual stages per rank", p.parallel.virtual_stages);
  out += row_html("schedule", fmt::format("{}; {} microbatches per pipeline", sched, p.parallel.microbatches));
  if (model && sched::path_stages(p) > 1) {
    const StageLayersView v = stage_layers_view(p);
    out += row_html("layers", fmt::format("per stage in layer order: {}; per pipeline rank: {} ({})", counts_text(v.per_stage),
                                          counts_text(v.per_rank),
                                          v.source));
  }
  if (model) {
    out += row_html("batch", fmt::format("{} sequences x {} tokens = {} tokens per step", p.train.global_batch,
                                         p.train.seq_len, p.train.tokens_per_step()));
    // What the data-parallel collectives move: the gradients' format, and the low-precision weights
    // kept and gathered in their own (parallel.fp8_param_gather; often a release's default).
    const std::string gathered = p.parallel.fp8_param_gather ? "; the GEMMs' weights kept and gathered in their format" : "";
    out += row_html("precision", fmt::format("{} GEMMs; stashed activations {}; Adam moments {}; gradients reduced in {}{}",
                                             precision_text(p.train), p.parallel.fp8_stash ? "FP8" : "BF16",
                                             p.train.adam_moments_dtype == MomentDtype::FP32 ? "FP32" : "BF16",
                                             p.parallel.grad_reduce_dtype == ReduceDtype::BF16 ? "BF16" : "FP32", gathered));
    out += row_html("recompute", to_string(p.parallel.recompute));
    out += row_html("routing", fmt::format("{} (seed {})", to_string(p.scenario.routing), p.scenario.seed));
    // The text reports' experts: line (dispatcher, expert TP, grouped GEMMs, capacity, router, paged
    // stash, the EP group's nodes).
    if (p.model.is_moe()) out += row_html("experts", expert_layout_summary(p));
  }
  if (p.scenario.perturbed())
    out += row_html("stragglers", fmt::format("{} item(s), jitter sigma {}", p.scenario.stragglers.size(),
                                              p.scenario.jitter_sigma));
  out += row_html("assumed rates", fmt::format("FP8 {} / BF16 {} TFLOP/s achievable per GPU (dense peaks {} / {}); "
                                               "IB {} GB/s and NVLink {} GB/s per GPU per direction; {} of {} SMs for "
                                               "communication",
                                               p.hardware.fp8_tflops, p.hardware.bf16_tflops, p.hardware.peak_fp8_tflops,
                                               p.hardware.peak_bf16_tflops, p.hardware.ib_GBps, p.hardware.nvlink_GBps,
                                               p.hardware.comm_sms, p.hardware.sms));
  if (model) out += row_html("software", software_text(p));
  out += row_html("replay", fmt::format("{}; fidelity {}; {} GPUs simulated, {} SimGrid activities", r.mode, r.fidelity,
                                        r.ranks.size(), r.activities));
  out += row_html("config", p.source);
  for (const auto& note : p.notes) out += row_html("note", note);
  return out + "</table>\n";
}

json ranks_json(const Plan& plan, const SimResult& r) {
  const RankLayout layout(plan);
  std::vector<const RankResult*> ranks;
  for (const RankResult& rank : r.ranks) ranks.push_back(&rank);
  std::sort(ranks.begin(), ranks.end(), [](const RankResult* a, const RankResult* b) { return a->rank < b->rank; });
  constexpr size_t kMaxBars = 96;
  const size_t per_bar = std::max<size_t>(1, (ranks.size() + kMaxBars - 1) / kMaxBars);
  const bool model = plan.workload.kind == WorkloadKind::Model;
  json j;
  std::vector<std::pair<CommClass, Cat>> classes(std::begin(kClasses), std::end(kClasses));
  for (const auto& c : kClassesWhenExposed)
    if (std::any_of(ranks.begin(), ranks.end(), [&](const RankResult* x) { return x->exposed_s[c.first] > 0; }))
      classes.push_back(c);
  j["classes"] = json::array();
  for (const auto& [c, cat] : classes)
    j["classes"].push_back({{"name", ops::comm_class_info(size_t(c)).label}, {"color", kCatInfo[cat].colour}});
  j["axis"] = per_bar == 1 ? "simulated GPU"
                           : fmt::format("simulated GPUs (each bar: the mean of {} consecutive ones)", per_bar);
  j["rows"] = json::array();
  for (size_t i = 0; i < ranks.size(); i += per_bar) {
    const size_t n = std::min(per_bar, ranks.size() - i);
    double step = 0, compute = 0, exposed = 0, bubble = 0;
    std::vector<double> by_class(classes.size(), 0.0);
    for (size_t k = i; k < i + n; ++k) {
      const RankResult& x = *ranks[k];
      step += x.step_time_s / double(n);
      compute += x.compute_s / double(n);
      exposed += x.exposed_comm_s / double(n);
      bubble += x.bubble_s / double(n);
      for (size_t c = 0; c < classes.size(); ++c) by_class[c] += x.exposed_s[classes[c].first] / double(n);
    }
    const int64_t a = ranks[i]->rank, b = ranks[i + n - 1]->rank;
    std::string label = n == 1 ? fmt::format("GPU {}", a) : fmt::format("GPUs {}-{}", a, b);
    if (n == 1 && model && layout.pp() > 1)
      label += fmt::format(" (pipeline rank {})", layout.pipeline_rank(a));
    j["rows"].push_back({{"label", label},
                         {"short", n == 1 ? std::to_string(a) : fmt::format("{}-{}", a, b)},
                         {"step_s", step},
                         {"compute_s", compute},
                         {"exposed_s", exposed},
                         {"bubble_s", bubble},
                         {"exposed_by_class", by_class}});
  }
  return j;
}

json layers_json(const LayerBreakdown& lb) {
  if (lb.rows.empty()) return nullptr;
  json j;
  j["parts"] = json::array();
  for (const auto& p : lb.parts) j["parts"].push_back({{"name", p.name}, {"color", part_colour(p)}});
  j["rows"] = json::array();
  for (const auto& row : lb.rows) {
    json r = json::array({row.label});
    for (const double v : row.seconds) r.push_back(v);
    j["rows"].push_back(std::move(r));
  }
  return j;
}

json waterfall_json(const calib::Explanation& x) {
  json j;
  j["bars"] = json::array();
  for (const auto& s : x.steps)
    j["bars"].push_back({{"label", s.effect},
                         {"value", s.step_time_s},
                         {"how", s.how},
                         {"kind", s.kind == calib::WaterfallStep::Kind::Total  ? "total"
                                  : s.kind == calib::WaterfallStep::Kind::Step ? "step"
                                                                               : "unexplained"}});
  j["reference"] = x.reported_step_s;
  j["reference_label"] = x.reported_step_s > 0 ? fmt::format("reported {:.2f} s", x.reported_step_s) : "";
  return j;
}

// A chart's section: its heading, then its note (HTML), legend and chart, or the line saying why
// there is none. The page's script draws into `<id>-chart` with its legend in `<id>-legend`.
std::string chart_section(const std::string& id, const std::string& title, bool drawn, const std::string& missing,
                          const std::string& note) {
  std::string h = "<h2 id=\"" + id + "\">" + title + "</h2>\n";
  if (!drawn) return h + "<p class=\"missing\">" + missing + "</p>\n";
  return h + "<p class=\"note\">" + note + "</p>\n<div class=\"legend\" id=\"" + id + "-legend\"></div><div class=\"chart\" id=\"" +
         id + "-chart\"></div>\n";
}

}  // namespace

std::string html_escape(const std::string& s) {
  const std::string text = io::printable(s);
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

void write_html_report(const HtmlReportInput& in, std::ostream& out) {
  const Plan& plan = *in.plan;
  const RankLayout layout(plan);
  const SimResult& r = *in.result;
  const Roofline* roof = in.roofline;
  const bool model = plan.workload.kind == WorkloadKind::Model && roof != nullptr;
  const StepSummary s = summarize(r);
  const RankResult* crit = r.critical();

  json data;
  data["step_s"] = r.step_time_s;
  data["step"]["sim"] = {{"compute_s", s.compute.mean}, {"exposed_s", s.exposed.mean}, {"bubble_s", s.bubble.mean}};
  data["step"]["critical"] = crit ? json{{"gpu", crit->rank},
                                         {"compute_s", crit->compute_s},
                                         {"exposed_s", crit->exposed_comm_s},
                                         {"bubble_s", crit->bubble_s}}
                                  : json(nullptr);
  data["step"]["roofline"] = model ? json{{"compute_s", roof->compute_s},
                                          {"exposed_s", roof->exposed_comm_s},
                                          {"bubble_s", roof->bubble_s}}
                                   : json(nullptr);
  data["ranks"] = ranks_json(plan, r);
  std::string timeline_note, memory_note;
  data["timeline"] = timeline_json(in, timeline_note);
  data["memory"] = memory_series_json(in, memory_note);
  const LayerBreakdown layers = layer_breakdown(r);
  data["layers"] = model ? layers_json(layers) : json(nullptr);
  data["waterfall"] = in.waterfall ? waterfall_json(*in.waterfall) : json(nullptr);

  // Headline figures.
  const double tokens = model ? roof->tokens_per_step : 0;
  const double tok_s_gpu = model && r.step_time_s > 0 ? tokens / r.step_time_s / double(plan.gpus()) : 0;
  const std::string title =
      model ? fmt::format("{} on {} {} GPUs: {}, {} microbatches", plan.model.name, plan.gpus(), plan.hardware.name,
                          to_string(plan.parallel.schedule), plan.parallel.microbatches)
            : fmt::format("synthetic {} pipeline of {} ranks, {} microbatches", to_string(plan.parallel.schedule),
                          layout.pp(), plan.parallel.microbatches);

  std::string html;
  html += "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
  html += "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n";
  html += "<title>" + html_escape("stepsim report: " + title) + "</title>\n";
  // First, so an error anywhere later is caught: shown on the page and counted on <html data-errors>.
  html += "<script>\n";
  html += html_assets::kErrorTrapJs;
  html += "</script>\n<style>\n";
  html += html_assets::kReportCss;
  html += "</style>\n</head>\n<body>\n<main>\n";
  html += "<div id=\"stepsim-errors\"></div>\n";
  html += "<h1>" + html_escape(title) + "</h1>\n";
  html += "<p class=\"sub\">" + html_escape(in.version) + " &middot; one simulated training step" +
          (model ? " beside its speed-of-light roofline" : "") + "</p>\n";
  html += "<nav><a href=\"#plan\">plan</a><a href=\"#step\">step vs roofline</a><a href=\"#ranks\">per GPU</a>"
          "<a href=\"#timeline-section\">timeline</a><a href=\"#memory\">memory</a><a href=\"#layers\">layers</a>"
          "<a href=\"#waterfall\">waterfall</a><a href=\"#reproduce\">reproduce</a></nav>\n";

  // Cards.
  html += "<div class=\"cards\">\n";
  html += card("step time", seconds_text(r.step_time_s),
               model ? fmt::format("roofline {} ({:+.1f} %)", seconds_text(roof->step_time_s),
                                   100.0 * (r.step_time_s / roof->step_time_s - 1.0))
                     : fmt::format("{} GPUs simulated", r.ranks.size()));
  if (model) {
    html += card("MFU", pct(mfu(plan, *roof, r.step_time_s)),
                 fmt::format("of the {:g} TFLOP/s dense {} peak; roofline {}", roof->peak_tflops,
                             precision_name(plan.train), pct(roof->mfu)));
    html += card("throughput", fmt::format("{:.0f} tokens/s per GPU", tok_s_gpu),
                 fmt::format("{} tokens per step; {} tokens/s on the {} GPUs", count_text(tokens),
                             count_text(tok_s_gpu * double(plan.gpus())), plan.gpus()));
  }
  html += card("time split (mean GPU)",
               fmt::format("{} compute", pct(r.step_time_s > 0 ? s.compute.mean / r.step_time_s : 0)),
               fmt::format("exposed communication {}, bubble {} of the step",
                           pct(r.step_time_s > 0 ? s.exposed.mean / r.step_time_s : 0),
                           pct(r.step_time_s > 0 ? s.bubble.mean / r.step_time_s : 0)));
  if (const RankResult* peak = memory_peak_rank(r)) {
    const bool fits = memory_fits(plan, r);
    html += card("peak memory", fmt::format("{:.1f} GB", peak->memory.peak_bytes / 1e9),
                 fmt::format("GPU {} at {:.3f} s; capacity {:.1f} GB ({:g} GiB): {}", peak->rank, peak->memory.peak_t_s,
                             memory_capacity_bytes(plan) / 1e9, plan.hardware.memory_GiB,
                             fits ? "fits" : "DOES NOT FIT"),
                 !fits);
  }
  html += "</div>\n";

  html += "<h2 id=\"plan\">Plan</h2>\n" + plan_table(plan, r, roof);

  html += model ? "<h2 id=\"step\">The step against the roofline</h2>\n" : "<h2 id=\"step\">The step</h2>\n";
  html += "<p class=\"note\">Compute, communication left exposed (the compute stream waiting for a transfer) and "
          "bubble (waiting for another stage or the schedule) add up to the step on every GPU. The roofline assumes "
          "perfect overlap and the schedule's closed-form bubble.</p>\n";
  html += "<div class=\"legend\" id=\"step-legend\"></div><div class=\"chart\" id=\"step-chart\"></div>\n";
  if (model) {
    html += "<table>\n<tr><th></th><th class=\"num\">simulated</th><th class=\"num\">roofline</th></tr>\n";
    const auto num_row = [&](const std::string& name, double sim, double rf) {
      html += "<tr><th>" + html_escape(name) + "</th><td class=\"num\">" + html_escape(seconds_text(sim)) +
              "</td><td class=\"num\">" + html_escape(seconds_text(rf)) + "</td></tr>\n";
    };
    num_row("step", r.step_time_s, roof->step_time_s);
    num_row("compute (mean GPU)", s.compute.mean, roof->compute_s);
    num_row("exposed communication (mean GPU)", s.exposed.mean, roof->exposed_comm_s);
    num_row("bubble (mean GPU)", s.bubble.mean, roof->bubble_s);
    num_row(fmt::format("EP all-to-all busy (GPU {})", r.critical_rank), r.comm_s[CommClass::Ep], roof->ep_comm_s);
    num_row(fmt::format("PP sends busy (GPU {})", r.critical_rank), r.comm_s[CommClass::Pp], roof->pp_comm_s);
    num_row(fmt::format("DP collectives busy (GPU {})", r.critical_rank), r.comm_s[CommClass::Dp], roof->dp_comm_s);
    if (layout.tp() > 1) num_row(fmt::format("TP collectives busy (GPU {})", r.critical_rank), r.comm_s[CommClass::Tp], roof->tp_comm_s);
    if (layout.cp() > 1) num_row(fmt::format("CP exchanges busy (GPU {})", r.critical_rank), r.comm_s[CommClass::Cp], roof->cp_comm_s);
    html += "</table>\n";
    const std::string why = explain_difference(plan, r, *roof);
    html += "<p>" + html_escape(why.empty() ? "The simulation and the roofline agree within 2 %." : why) + "</p>\n";
  }

  html += "<h2 id=\"ranks\">Per GPU: compute, exposed communication, bubble</h2>\n";
  html += "<p class=\"note\">Every simulated GPU (" + html_escape(r.mode.substr(0, r.mode.find(':'))) +
          " mode). Exposed time is split by what the GPU waited for; a wait on two kinds at once is shared between "
          "them. Hover a bar for its figures.</p>\n";
  html += "<div class=\"legend\" id=\"ranks-legend\"></div><div class=\"chart\" id=\"ranks-chart\"></div>\n";

  html += "<h2 id=\"timeline-section\">Timeline</h2>\n";
  html += "<p class=\"note\">" + html_escape(timeline_note) +
          ". Each GPU's compute stream (with its idle time marked as bubble or exposed communication) and its "
          "communication streams, one row per kind (a transfer is drawn from when its kernel is posted until its "
          "data has moved, so a receive posted early spans its wait). Scroll to zoom, drag to pan, double-click to "
          "see the whole step; hover for an op.</p>\n";
  html += "<div class=\"tools\"><button id=\"tl-in\" type=\"button\">zoom in</button><button id=\"tl-out\" "
          "type=\"button\">zoom out</button><button id=\"tl-reset\" type=\"button\">whole step</button></div>\n";
  html += "<div class=\"legend\" id=\"timeline-legend\"></div>\n";
  html += "<div id=\"timeline-wrap\"><canvas id=\"timeline\" height=\"100\"></canvas><div id=\"tip\"></div></div>\n";

  html += chart_section("memory", "Memory over time", !data["memory"].is_null(), "No memory model for this workload.",
                        "Bytes each recorded GPU holds (weights, gradients, optimizer states, buffers and the "
                        "activations alive at that moment) against hardware.memory_GiB; " +
                            html_escape(memory_note) + ".");

  html += chart_section("layers", "Where each layer's time goes", !data["layers"].is_null(),
                        "No model layers in this workload.",
                        "Seconds per GPU holding the layer, over the whole step (every microbatch, forward and "
                        "backward): its compute by part and the exposed communication its ops waited for (an idle "
                        "stretch of the compute stream is charged to the op that ran after it). Bubble is not charged "
                        "to layers.");

  html += "<h2 id=\"waterfall\">From speed of light to this plan</h2>\n";
  if (in.waterfall) {
    html += "<p class=\"note\">stepsim explain's waterfall for this plan: each bar switches one more effect on (one "
            "simulation each, in reduced mode) or adds a stated formula. Hover a bar for how it was obtained." +
            (in.waterfall_note.empty() ? std::string() : " " + html_escape(in.waterfall_note)) + "</p>\n";
    html += "<div class=\"chart\" id=\"waterfall-chart\"></div>\n";
  } else {
    html += "<p class=\"missing\">" + html_escape(in.waterfall_note.empty() ? "No waterfall." : in.waterfall_note) +
            "</p>\n";
  }

  html += "<h2 id=\"reproduce\">Reproduce</h2>\n";
  html += "<p class=\"note\">The command that wrote this page (the same inputs give the same page, byte for "
          "byte):</p>\n<pre>" + html_escape(in.command) + "</pre>\n";
  html += "<footer>Written by " + html_escape(in.version) +
          ". Self-contained: this page loads nothing from the network.</footer>\n";
  html += "</main>\n";
  html += "<script type=\"application/json\" id=\"stepsim-data\">" + json_for_script(data) + "</script>\n";
  html += "<script>\n";
  html += html_assets::kReportJs;
  html += "</script>\n</body>\n</html>\n";
  out << html;
}

}  // namespace stepsim
