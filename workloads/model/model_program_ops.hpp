// Small helpers the ModelGpuProgram files share: op tags, dependency lists, the compute stream's
// last op. Internal to workloads/model/.
#pragma once

#include <optional>
#include <vector>

#include "schedules/scheduled_program.hpp"
#include "vocabulary/op_sink.hpp"
#include "workloads/layers/layer_work.hpp"

namespace stepsim::model_program_ops {

using ops::OpKind;
using ops::OpRef;
using ops::Phase;

inline Phase phase_of(LayerPart p) {
  switch (p) {
    case LayerPart::AttnF:
    case LayerPart::MlpF: return Phase::Forward;
    case LayerPart::AttnB:
    case LayerPart::MlpB: return Phase::Backward;
    case LayerPart::AttnW:
    case LayerPart::MlpW: return Phase::Weight;
  }
  return Phase::None;
}

inline ops::Tag tag(OpKind kind, Phase phase, const sched::ChunkRef& ref, int64_t layer,
                const sched::ChunkRef* partner = nullptr, uint8_t half = 0) {
  ops::Tag t;
  if (partner) {
    t.microbatch2 = uint16_t(partner->mb);
    t.chunk2 = uint8_t(partner->chunk);
  }
  t.kind = kind;
  t.phase = phase;
  t.chunk = uint8_t(ref.chunk);
  t.microbatch = uint16_t(ref.mb);
  t.layer = layer < 0 ? ops::kNoIndex : uint16_t(layer);
  t.half = half;
  return t;
}

template <class... Refs>
std::vector<OpRef> present(Refs... refs) {
  std::vector<OpRef> out;
  (
      [&](const std::optional<OpRef>& r) {
        if (r) out.push_back(*r);
      }(refs),
      ...);
  return out;
}

// The compute op emitted last on this GPU (the producer of whatever the next step consumes).
inline OpRef last_compute(const ops::OpSink& sink) {
  const OpRef next = sink.next_ref(ops::kComputeStream);
  return OpRef(next.gpu(), ops::kComputeStream, next.seq > 0 ? next.seq - 1 : 0);
}

}  // namespace stepsim::model_program_ops
