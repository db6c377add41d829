#include "simulator/engine/memory_tracking.hpp"

namespace stepsim::engine {

using namespace stepsim::ops;

namespace {

double total(const MemoryTrack& m) { return m.fixed.total() + m.saved_bytes + m.recompute_bytes; }

void note_peak(MemoryTrack& m, double t_s) {
  const double now = total(m);
  if (now <= m.peak.peak_bytes) return;
  m.peak.peak_bytes = now;
  m.peak.peak_t_s = t_s;
  m.peak.activations_bytes = m.saved_bytes;
  m.peak.recompute_bytes = m.recompute_bytes;
}

}  // namespace

void start_memory(MemoryTrack& m, const StaticMemory& fixed) {
  m.fixed = fixed;
  m.peak = RankMemory{};
  m.peak.weights_bytes = fixed.weights_bytes;
  m.peak.grads_bytes = fixed.grads_bytes;
  m.peak.optimizer_bytes = fixed.optimizer_bytes;
  m.peak.buffers_bytes = fixed.buffers_bytes;
  m.peak.peak_bytes = fixed.total();
}

void track_memory(MemoryTrack& m, const MemoryModel& model, int64_t gpu, const Tag& tag, double start_s,
                  double end_s, std::vector<MemorySample>* samples) {
  ActivationEvent ev[kMaxActivationEvents];
  const int n = model.activation_events(gpu, tag, ev);
  // Allocations first, at the op's start; then frees, at its end (a compute stream runs one op at
  // a time, so the times stay in order).
  for (int pass = 0; pass < 2; ++pass) {
    const bool alloc = pass == 0;
    bool changed = false;
    for (int i = 0; i < n; ++i) {
      if (ev[i].allocate != alloc) continue;
      double& bucket = ev[i].recompute ? m.recompute_bytes : m.saved_bytes;
      if (alloc) {
        if (!m.live.emplace(ev[i].key, ev[i].bytes).second) continue;
        bucket += ev[i].bytes;
      } else {
        const auto it = m.live.find(ev[i].key);
        if (it == m.live.end()) continue;
        bucket -= it->second;
        m.live.erase(it);
      }
      changed = true;
    }
    if (!changed) continue;
    const double t = alloc ? start_s : end_s;
    if (alloc) note_peak(m, t);
    if (samples) samples->push_back({int32_t(gpu), t, total(m)});
  }
}

}  // namespace stepsim::engine
