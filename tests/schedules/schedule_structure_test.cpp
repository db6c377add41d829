// Properties every schedule must have, over a range of sizes: each rank runs the forward, the
// backward and the weight gradient of each (microbatch, chunk) exactly once, locally in that
// order, and the ranks' programs together can run to the end when every op waits for its pipeline
// input (no cross-rank deadlock), checked by a small logical simulation.
#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <map>
#include <tuple>
#include <vector>

#include "schedules/pipeline_flow.hpp"
#include "schedules/registry.hpp"
#include "schedules/schedule.hpp"
#include "tests/schedules/schedule_test_util.hpp"

namespace stepsim::test {
namespace {

using sched::ChunkOp;
using sched::Pass;

// Position of F, B and W of each (mb, chunk) on one rank; -1 = not seen. A B without deferral
// is its own W.
void check_each_once(const sched::Schedule& s, int64_t rank) {
  const auto ops = s.program(rank);
  std::map<std::pair<int, int>, std::array<int, 3>> seen;
  auto mark = [&](const sched::ChunkRef& r, int which, int pos) {
    auto [it, fresh] = seen.try_emplace({r.mb, r.chunk}, std::array<int, 3>{-1, -1, -1});
    EXPECT_EQ(it->second[size_t(which)], -1) << "rank " << rank << " runs " << "FBW"[which] << r.chunk << "." << r.mb
                                             << " twice";
    it->second[size_t(which)] = pos;
  };
  for (int i = 0; i < int(ops.size()); ++i) {
    const ChunkOp& op = ops[size_t(i)];
    if (op.has_forward()) mark(op.fwd, 0, i);
    if (op.has_backward()) {
      mark(op.bwd, 1, i);
      if (!op.zero_bubble) mark(op.bwd, 2, i);
    }
    if (op.pass == Pass::W) mark(op.bwd, 2, i);
  }
  ASSERT_EQ(int64_t(seen.size()), s.microbatches_per_chunk() * s.chunks_per_rank()) << "rank " << rank;
  for (const auto& [key, pos] : seen) {
    for (int k = 0; k < 3; ++k) EXPECT_GE(pos[size_t(k)], 0) << "rank " << rank << " misses " << "FBW"[k];
    EXPECT_LT(pos[0], pos[1]) << "rank " << rank << ": backward before forward of mb " << key.first;
    EXPECT_LE(pos[1], pos[2]) << "rank " << rank << ": W before B of mb " << key.first;
  }
}

// Runs all ranks' programs in lock-free logical time: an op may run once its pipeline inputs have
// run (forward of the previous stage, backward of the next stage). Returns false on a deadlock.
bool runs_to_completion(const sched::Schedule& s) {
  const int64_t P = s.ranks();
  std::vector<std::vector<ChunkOp>> progs;
  for (int64_t r = 0; r < P; ++r) progs.push_back(s.program(r));
  std::map<std::tuple<bool, int64_t, int>, bool> done;  // (backward, stage, mb)
  std::vector<size_t> next(size_t(P), 0);
  auto ready = [&](int64_t r, const ChunkOp& op) {
    if (op.has_forward())
      if (auto in = sched::forward_input(s, r, op.fwd); in && !done[{false, in->peer_stage, in->mb}]) return false;
    if (op.has_backward()) {
      if (auto in = sched::backward_input(s, r, op.bwd); in && !done[{true, in->peer_stage, in->mb}]) return false;
      // The last stage's backward starts from its own forward.
      if (!done[{false, s.stage_of(r, op.bwd.chunk), op.bwd.mb}]) return false;
    }
    return true;
  };
  for (bool progress = true; progress;) {
    progress = false;
    for (int64_t r = 0; r < P; ++r) {
      auto& i = next[size_t(r)];
      while (i < progs[size_t(r)].size() && ready(r, progs[size_t(r)][i])) {
        const ChunkOp& op = progs[size_t(r)][i];
        if (op.has_forward()) done[{false, s.stage_of(r, op.fwd.chunk), op.fwd.mb}] = true;
        if (op.has_backward()) done[{true, s.stage_of(r, op.bwd.chunk), op.bwd.mb}] = true;
        ++i;
        progress = true;
      }
    }
  }
  for (int64_t r = 0; r < P; ++r)
    if (next[size_t(r)] != progs[size_t(r)].size()) return false;
  return true;
}

void check_schedule(Schedule kind, int64_t P, int64_t N, int64_t v = 1) {
  const auto s = sched::make_schedule(kind, P, N, v);
  for (int64_t r = 0; r < P; ++r) check_each_once(*s, r);
  EXPECT_TRUE(runs_to_completion(*s)) << s->name() << " P=" << P << " N=" << N << " deadlocks";
}

TEST(ScheduleStructure, OneFOneB) {
  for (int64_t P : {1, 2, 3, 4, 8})
    for (int64_t N : {1, 2, 5, 8, 16}) check_schedule(Schedule{"1f1b"}, P, N);
}

TEST(ScheduleStructure, DualPipeV) {
  for (int64_t P : {1, 2, 3, 4, 5, 8})
    for (int64_t N : {2 * P, 2 * P + 1, 3 * P, int64_t(20), int64_t(64)})
      if (N >= 2 * P) check_schedule(Schedule{"dualpipev"}, P, N);
}

TEST(ScheduleStructure, Fsdp) { check_schedule(Schedule{"fsdp"}, 1, 6); }

TEST(ScheduleStructure, GPipe) {
  for (int64_t P : {1, 2, 4, 8})
    for (int64_t N : {1, 3, 8}) check_schedule(Schedule{"gpipe"}, P, N);
}

TEST(ScheduleStructure, Interleaved) {
  for (int64_t P : {1, 2, 3, 4})
    for (int64_t v : {2, 3, 4})
      for (int64_t m : {P, 2 * P, 5 * P}) check_schedule(Schedule{"interleaved"}, P, m, v);
}

TEST(ScheduleStructure, ZbH1) {
  for (int64_t P : {1, 2, 3, 4, 8})
    for (int64_t N : {1, 2, 5, 8, 16}) check_schedule(Schedule{"zb-h1"}, P, N);
}

TEST(ScheduleStructure, ZbV) {
  for (int64_t P : {1, 2, 3, 4, 8})
    for (int64_t N : {2 * P, 2 * P + 1, 3 * P + 2, int64_t(40)}) check_schedule(Schedule{"zb-v"}, P, N);
}

TEST(ScheduleStructure, DualPipe) {
  for (int64_t P : {2, 4, 6, 8})
    for (int64_t N : {2 * P, 2 * P + 2, 4 * P, int64_t(64)}) check_schedule(Schedule{"dualpipe"}, P, N);
}

// The logical simulation does catch an order that cannot run.
TEST(ScheduleStructure, DetectsImpossibleOrder) {
  struct Reversed final : sched::LinearSchedule {
    Reversed() : LinearSchedule({2, 2}, {.name = "reversed"}) {}
    double bubble_s(const sched::ChunkTimes&) const override { return 0; }
    std::vector<ChunkOp> program(int64_t r) const override {
      // Rank 0 runs mb 0 first, rank 1 mb 1 first: each waits for the other.
      if (r == 0) return {{Pass::F, false, {0, 0}, {}}, {Pass::B, false, {}, {0, 0}}, {Pass::F, false, {1, 0}, {}},
                          {Pass::B, false, {}, {1, 0}}};
      return {{Pass::F, false, {1, 0}, {}}, {Pass::B, false, {}, {1, 0}}, {Pass::F, false, {0, 0}, {}},
              {Pass::B, false, {}, {0, 0}}};
    }
  } bad;
  EXPECT_FALSE(runs_to_completion(bad));
}

// Stage hand-offs: DualPipeV's turn at rank P-1 stays local; chunk 1 flows towards rank 0.
TEST(PipelineFlow, DualPipeVHandOffs) {
  const auto s = sched::make_schedule(Schedule{"dualpipev"}, 4, 8);
  auto out = sched::forward_output(*s, 3, {2, 0});  // stage 3 -> stage 4, both on rank 3
  ASSERT_TRUE(out);
  EXPECT_EQ(out->peer_rank, 3);
  out = sched::forward_output(*s, 2, {2, 1});  // stage 5 -> 6 on rank 1
  ASSERT_TRUE(out);
  EXPECT_EQ(out->peer_rank, 1);
  EXPECT_EQ(out->peer_stage, 6);
  EXPECT_FALSE(sched::forward_output(*s, 0, {0, 1}));  // stage 7 is the last
  EXPECT_FALSE(sched::backward_input(*s, 0, {0, 1}));
  EXPECT_FALSE(sched::forward_input(*s, 0, {0, 0}));
  auto in = sched::backward_input(*s, 1, {5, 0});  // stage 1's gradient comes from stage 2, rank 2
  ASSERT_TRUE(in);
  EXPECT_EQ(in->peer_rank, 2);
  EXPECT_TRUE(in->backward);
  // Both ends of a transfer name the same channel.
  const auto sent = sched::forward_output(*s, 1, {4, 0});
  const auto got = sched::forward_input(*s, 2, {4, 0});
  ASSERT_TRUE(sent && got);
  EXPECT_EQ(sent->channel, got->channel);
}

TEST(PipelineFlow, ProducerIndexFindsEveryChunk) {
  const auto s = sched::make_schedule(Schedule{"dualpipev"}, 3, 7);
  std::vector<std::vector<ChunkOp>> progs;
  for (int r = 0; r < 3; ++r) progs.push_back(s->program(r));
  sched::ProducerIndex idx(*s, progs);
  for (int64_t st = 0; st < s->stages(); ++st)
    for (int32_t mb = 0; mb < 7; ++mb) {
      const auto f = idx.forward(st, mb), b = idx.backward(st, mb);
      ASSERT_GE(f.index, 0);
      ASSERT_GE(b.index, 0);
      const ChunkOp& fop = progs[size_t(f.rank)][size_t(f.index)];
      EXPECT_EQ(s->stage_of(f.rank, fop.fwd.chunk), st);
      EXPECT_EQ(fop.fwd.mb, mb);
      EXPECT_LT(f.index, b.rank == f.rank ? b.index : INT64_MAX);
    }
}

}  // namespace
}  // namespace stepsim::test
