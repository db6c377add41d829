#include "simulator/engine/span_recording.hpp"

#include <algorithm>

namespace stepsim::engine {

using namespace stepsim::ops;
namespace {

// Splits [t0, t1] at every boundary of the classes' intervals and labels each piece with the
// classes covering it (0: none, bubble); adjacent pieces with one label merge. Waits cover a
// handful of intervals, so the quadratic scan is cheap.
void split_idle(EngineState& e, const GpuState& g, double t0, double t1, const std::vector<Interval>* by_class,
                size_t classes) {
  if (!(t1 > t0)) return;
  std::vector<double> cuts{t0, t1};
  for (size_t c = 0; c < classes; ++c)
    for (const Interval& iv : by_class[c]) {
      if (iv.end <= t0 || iv.begin >= t1) continue;
      cuts.push_back(std::max(iv.begin, t0));
      cuts.push_back(std::min(iv.end, t1));
    }
  std::sort(cuts.begin(), cuts.end());
  cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());
  const size_t first_new = e.idle_spans.size();
  for (size_t i = 0; i + 1 < cuts.size(); ++i) {
    const double a = cuts[i], b = cuts[i + 1], mid = 0.5 * (a + b);
    uint8_t mask = 0;
    for (size_t c = 0; c < classes; ++c)
      for (const Interval& iv : by_class[c])
        if (iv.begin <= mid && mid < iv.end) mask |= uint8_t(1u << c);
    const double start = a - e.t_start, end = b - e.t_start;
    if (e.idle_spans.size() > first_new && e.idle_spans.back().exposed_classes == mask &&
        e.idle_spans.back().end_s == start) {
      e.idle_spans.back().end_s = end;
    } else {
      e.idle_spans.push_back({int32_t(g.id), mask, start, end});
    }
  }
}

}  // namespace

void record_span(EngineState& e, const GpuState& g, int stream, const FetchedOp& op, double start, double end) {
  Span s;
  s.rank = int32_t(g.id);
  s.stream = uint8_t(stream);
  s.start_s = start - e.t_start;
  s.end_s = end - e.t_start;
  s.tag = op.op.tag;
  s.seq = op.seq;
  s.flops = op.op.comm ? 0 : op.op.work_flops;
  for (size_t i = 0; i < op.op.n_out; ++i) s.bytes_out += op.flows[i].bytes;
  for (size_t i = op.op.n_out; i < op.flows.size(); ++i) s.bytes_in += op.flows[i].bytes;
  e.spans.push_back(s);
  // A transfer on this GPU that the op needed: the arrow from the data to its consumer.
  for (const OpRef& d : op.deps)
    if (d.gpu() == g.id && d.stream() != kComputeStream && int(d.stream()) != stream)
      e.span_edges.push_back({int32_t(g.id), uint8_t(d.stream()), uint8_t(stream), d.seq, op.seq});
}

void record_wait(EngineState& e, GpuState& g, double t0, double t1) {
  split_idle(e, g, t0, t1, g.watched_by_class, kCommClasses);
}

void record_tail(EngineState& e, GpuState& g, double step_end) {
  // Labelled with the class that reports the tail (collect() adds it to that class's exposed time).
  std::vector<Interval> by_class[kCommClasses];
  for (size_t c = 0; c < kCommClasses; ++c)
    if (comm_class_info(c).reports_tail) by_class[c] = g.comm_after_compute;
  split_idle(e, g, std::max(g.compute_end, e.t_start), step_end, by_class, kCommClasses);
}

}  // namespace stepsim::engine
