#include "simulator/report/layer_breakdown.hpp"

#include <algorithm>
#include <map>
#include <set>

namespace stepsim {
namespace {

using ops::CommClass;
using ops::OpKind;

// Compute parts, in the order the report draws them.
enum ComputePart { Attention, DenseMlp, RoutedExperts, SharedExperts, Router, HeadEmbedding, NonMatmul, OtherCompute, kComputeParts };
constexpr const char* kComputeNames[kComputeParts] = {"attention",     "dense MLP",          "routed experts",
                                                      "shared experts", "router",             "LM head / embedding",
                                                      "non-matmul",    "other compute"};
// Exposed parts by communication class (CommClass order, None left out).
constexpr CommClass kExposedClasses[] = {CommClass::Ep, CommClass::Pp, CommClass::Dp, CommClass::Tp, CommClass::Cp,
                                         CommClass::Other, CommClass::Host};
constexpr const char* kExposedNames[] = {"exposed EP all-to-all", "exposed PP send/recv", "exposed DP / ZeRO / FSDP",
                                         "exposed TP", "exposed CP", "exposed other", "exposed host copies"};
constexpr size_t kExposedParts = std::size(kExposedClasses);

ComputePart compute_part(OpKind k) {
  switch (k) {
    case OpKind::Attention: return Attention;
    case OpKind::DenseMlp: return DenseMlp;
    case OpKind::MoeGemm: return RoutedExperts;
    case OpKind::SharedExpert: return SharedExperts;
    case OpKind::Router: return Router;
    case OpKind::Head:
    case OpKind::Embedding: return HeadEmbedding;
    case OpKind::NonMatmul: return NonMatmul;
    default: return OtherCompute;
  }
}

struct Acc {
  std::vector<double> seconds = std::vector<double>(kComputeParts + kExposedParts, 0.0);
  std::set<int32_t> gpus;
};

}  // namespace

LayerBreakdown layer_breakdown(const SimResult& r) {
  constexpr int kOutside = -1;
  std::map<int, Acc> acc;  // layer (kOutside last in the report) -> sums
  // Compute spans per GPU in start order, to find the op that ran after each wait.
  std::map<int32_t, std::vector<const Span*>> compute;
  for (const Span& s : r.spans) {
    if (s.stream != 0 || ops::is_comm_kind(s.tag.kind)) continue;
    compute[s.rank].push_back(&s);
    const int layer = s.tag.layer == ops::kNoIndex ? kOutside : int(s.tag.layer);
    Acc& a = acc[layer];
    a.seconds[compute_part(s.tag.kind)] += s.end_s - s.start_s;
    a.gpus.insert(s.rank);
  }
  for (auto& [rank, v] : compute)
    std::stable_sort(v.begin(), v.end(), [](const Span* a, const Span* b) { return a->start_s < b->start_s; });
  for (const IdleSpan& idle : r.idle_spans) {
    if (idle.exposed_classes == 0) continue;
    const double length = idle.end_s - idle.start_s;
    if (!(length > 0)) continue;
    int layer = kOutside;
    const auto it = compute.find(idle.rank);
    if (it != compute.end()) {
      // The first op starting at or after the wait's end (a wait ends when its op starts).
      const auto& v = it->second;
      const double tol = 1e-12 * std::max(1.0, idle.end_s);
      const auto next = std::lower_bound(v.begin(), v.end(), idle.end_s - tol,
                                         [](const Span* s, double t) { return s->start_s < t; });
      if (next != v.end() && (*next)->tag.layer != ops::kNoIndex) layer = (*next)->tag.layer;
    }
    std::vector<size_t> parts;
    for (size_t c = 0; c < kExposedParts; ++c)
      if (idle.exposed_classes & (1u << unsigned(kExposedClasses[c]))) parts.push_back(c);
    if (parts.empty()) continue;
    Acc& a = acc[layer];
    a.gpus.insert(idle.rank);
    for (const size_t c : parts) a.seconds[kComputeParts + c] += length / double(parts.size());
  }

  LayerBreakdown out;
  std::vector<bool> used(kComputeParts + kExposedParts, false);
  for (const auto& [layer, a] : acc)
    for (size_t p = 0; p < used.size(); ++p) used[p] = used[p] || a.seconds[p] > 0;
  for (size_t p = 0; p < used.size(); ++p) {
    if (!used[p]) continue;
    out.parts.push_back(p < kComputeParts ? LayerBreakdown::Part{kComputeNames[p], false}
                                          : LayerBreakdown::Part{kExposedNames[p - kComputeParts], true});
  }
  const auto add_row = [&](int layer, const Acc& a) {
    LayerBreakdown::Row row;
    row.layer = layer;
    row.label = layer == kOutside ? "outside layers" : "layer " + std::to_string(layer);
    row.gpus = int(a.gpus.size());
    for (size_t p = 0; p < used.size(); ++p)
      if (used[p]) row.seconds.push_back(a.gpus.empty() ? 0.0 : a.seconds[p] / double(a.gpus.size()));
    out.rows.push_back(std::move(row));
  };
  for (const auto& [layer, a] : acc)
    if (layer != kOutside) add_row(layer, a);
  if (acc.count(kOutside)) add_row(kOutside, acc.at(kOutside));
  return out;
}

}  // namespace stepsim
