#include "schedules/pipeline_flow.hpp"

#include <stdexcept>

namespace stepsim::sched {
namespace {

StageTransfer transfer(const Schedule& s, int64_t stage, int64_t peer_stage, bool backward, int32_t mb,
                       int32_t sending_chunk) {
  StageTransfer t;
  t.peer_rank = s.where(peer_stage).rank;
  t.peer_stage = peer_stage;
  t.stage = stage;
  t.backward = backward;
  t.mb = mb;
  t.sending_chunk = sending_chunk;
  t.channel = pipeline_channel(s, backward, sending_chunk);
  return t;
}

bool first_in_path(const Schedule& s, int64_t stage) { return stage % s.path_stages() == 0; }
bool last_in_path(const Schedule& s, int64_t stage) { return stage % s.path_stages() == s.path_stages() - 1; }

}  // namespace

std::optional<StageTransfer> forward_input(const Schedule& s, int64_t rank, ChunkRef ref) {
  const int64_t stage = s.stage_of(rank, ref.chunk);
  if (first_in_path(s, stage)) return std::nullopt;
  return transfer(s, stage, stage - 1, false, ref.mb, s.where(stage - 1).chunk);
}

std::optional<StageTransfer> forward_output(const Schedule& s, int64_t rank, ChunkRef ref) {
  const int64_t stage = s.stage_of(rank, ref.chunk);
  if (last_in_path(s, stage)) return std::nullopt;
  return transfer(s, stage, stage + 1, false, ref.mb, ref.chunk);
}

std::optional<StageTransfer> backward_input(const Schedule& s, int64_t rank, ChunkRef ref) {
  const int64_t stage = s.stage_of(rank, ref.chunk);
  if (last_in_path(s, stage)) return std::nullopt;
  return transfer(s, stage, stage + 1, true, ref.mb, s.where(stage + 1).chunk);
}

std::optional<StageTransfer> backward_output(const Schedule& s, int64_t rank, ChunkRef ref) {
  const int64_t stage = s.stage_of(rank, ref.chunk);
  if (first_in_path(s, stage)) return std::nullopt;
  return transfer(s, stage, stage - 1, true, ref.mb, ref.chunk);
}

ProducerIndex::ProducerIndex(const Schedule& s, const std::vector<std::vector<ChunkOp>>& programs)
    : microbatches_(s.microbatches()),
      fwd_(size_t(s.stages() * s.microbatches())),
      bwd_(size_t(s.stages() * s.microbatches())) {
  for (int64_t rank = 0; rank < int64_t(programs.size()); ++rank) {
    const auto& prog = programs[size_t(rank)];
    for (int64_t i = 0; i < int64_t(prog.size()); ++i) {
      const ChunkOp& op = prog[size_t(i)];
      if (op.has_forward()) fwd_[slot(s.stage_of(rank, op.fwd.chunk), op.fwd.mb)] = {rank, i};
      if (op.has_backward()) bwd_[slot(s.stage_of(rank, op.bwd.chunk), op.bwd.mb)] = {rank, i};
    }
  }
}

}  // namespace stepsim::sched
