// The engine on hand-written programs: SM tax, lazily generated long programs, deadlock reports.
#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <stdexcept>
#include <string>

#include "simulator/engine/engine.hpp"
#include "tests/simulator/sim_test_util.hpp"

namespace stepsim::test {
namespace {

using ops::FlowSpec;
using ops::OpKind;
using ops::OpRef;
using ops::OpSink;
using ops::Tag;
using ops::Work;

// Each GPU's program is a function called with the piece number until it returns false.
using PieceFn = std::function<bool(int64_t gpu, int64_t piece, OpSink& sink)>;

class HandWorkload final : public ops::Workload {
 public:
  HandWorkload(PlatformSpec spec, int streams, PieceFn fn) : spec_(spec), streams_(streams), fn_(std::move(fn)) {}
  std::string name() const override { return "hand"; }
  double bf16_flops() const override { return spec_.gpu_flops / 2; }
  int num_streams() const override { return streams_; }
  std::unique_ptr<ops::GpuProgram> program(int64_t gpu) const override {
    return std::make_unique<Program>(gpu, fn_);
  }

 private:
  struct Program final : ops::GpuProgram {
    Program(int64_t g, PieceFn f) : gpu(g), fn(std::move(f)) {}
    bool emit_next(OpSink& sink) override { return fn(gpu, piece++, sink); }
    int64_t gpu;
    int64_t piece = 0;
    PieceFn fn;
  };
  PlatformSpec spec_;
  int streams_;
  PieceFn fn_;
};

PlatformSpec two_nodes(double comm_speed_factor) {
  PlatformSpec s;
  s.nodes = 2;
  s.gpus_per_node = 1;
  s.gpu_flops = 1e15;
  s.comm_speed_factor = comm_speed_factor;
  s.ib_Bps = 50e9;
  s.nvlink_Bps = 160e9;
  return s;
}

SimResult run_hand(PlatformSpec spec, int streams, PieceFn fn) {
  return in_child([&] {
    HandWorkload w(spec, streams, fn);
    SimOptions opt;
    opt.quiet = true;
    return engine::run(spec, w, opt);
  });
}

Tag tag(OpKind k) {
  Tag t;
  t.kind = k;
  return t;
}

// A 10 ms GEMM overlapped with a 5.21 ms IB send on the same GPU, communication holding 20 of 132
// SMs: during the send the GEMM runs at 112/132 speed, so it ends at 10 + 5.21 (1 - 112/132) ms.
TEST(Engine, SmTaxStretchesOverlappedCompute) {
  const double gemm_s = 10e-3, send_s = 5.21e-3, factor = 112.0 / 132.0;
  const PlatformSpec spec = two_nodes(factor);
  const double bytes = send_s * spec.ib_Bps;
  const SimResult r = run_hand(spec, 2, [=](int64_t gpu, int64_t piece, OpSink& sink) {
    if (piece > 0) return false;
    if (gpu == 0) {
      sink.compute(tag(OpKind::MoeGemm), Work::seconds(gemm_s));
      const FlowSpec out[] = {{bytes, 1, 0}};
      sink.comm(1, tag(OpKind::EpDispatch), out, {});
    } else {
      const FlowSpec in[] = {{0, 0, 0}};
      sink.comm(1, tag(OpKind::EpDispatch), {}, in);
    }
    return true;
  });
  const double expected = gemm_s + send_s * (1 - factor);  // 10.789 ms
  EXPECT_NEAR(r.step_time_s, expected, 1e-9);
  EXPECT_NEAR(r.ranks[0].compute_s, expected, 1e-9);
  EXPECT_NEAR(r.ranks[0].comm_s[ops::CommClass::Ep], send_s, 1e-9);
  EXPECT_NEAR(r.ranks[1].comm_s[ops::CommClass::Ep], send_s, 1e-9);
  EXPECT_EQ(r.activities, 2u);  // one Exec, one transfer
  expect_exact_split(r);
}

// The engine counts a wait as exposed communication the way the op's class row says
// (vocabulary/comm_classes.hpp), not by the op's name. GPU 1 computes 1 ms, then sends 2 ms of
// data to GPU 0, whose compute waits on the receive posted at t = 0. A pipeline receive (class
// pp, exposed while data moves) leaves 1 ms of bubble and 2 ms exposed; a tensor-parallel
// collective (class tp, exposed from its kernel's start) 3 ms exposed and no bubble.
TEST(Engine, ExposureFollowsTheCommClassRow) {
  const double before_s = 1e-3, transfer_s = 2e-3, after_s = 1e-3;
  const PlatformSpec spec = two_nodes(1);
  const auto step = [&](OpKind kind) {
    return run_hand(spec, 2, [=](int64_t gpu, int64_t piece, OpSink& sink) {
      if (piece > 0) return false;
      if (gpu == 1) {
        const OpRef done = sink.compute(tag(OpKind::MoeGemm), Work::seconds(before_s));
        const FlowSpec out[] = {{transfer_s * spec.ib_Bps, 0, 0}};
        sink.comm(1, tag(kind), out, {}, {done});
      } else {
        const FlowSpec in[] = {{0, 1, 0}};
        const OpRef got = sink.comm(1, tag(kind), {}, in);
        sink.compute(tag(OpKind::MoeGemm), Work::seconds(after_s), {got});
      }
      return true;
    });
  };
  const SimResult pp = step(OpKind::PpRecv), tp = step(OpKind::TpAllGather);
  for (const SimResult* r : {&pp, &tp}) {
    EXPECT_NEAR(r->step_time_s, before_s + transfer_s + after_s, 1e-9);
    expect_exact_split(*r);
  }
  ASSERT_EQ(pp.ranks[0].rank, 0);
  EXPECT_NEAR(pp.ranks[0].exposed_s[ops::CommClass::Pp], transfer_s, 1e-9);
  EXPECT_NEAR(pp.ranks[0].bubble_s, before_s, 1e-9);
  EXPECT_NEAR(tp.ranks[0].exposed_s[ops::CommClass::Tp], before_s + transfer_s, 1e-9);
  EXPECT_NEAR(tp.ranks[0].bubble_s, 0, 1e-9);
  // Both classes' transfers move for the same 2 ms.
  EXPECT_NEAR(pp.ranks[0].comm_s[ops::CommClass::Pp], transfer_s, 1e-9);
  EXPECT_NEAR(tp.ranks[0].comm_s[ops::CommClass::Tp], transfer_s, 1e-9);
}

// BF16 work runs at the BF16 rate: 1e12 BF16 FLOP at 5e14 FLOP/s = 2 ms.
TEST(Engine, Bf16WorkRunsAtBf16Rate) {
  const SimResult r = run_hand(two_nodes(1), 1, [](int64_t gpu, int64_t piece, OpSink& sink) {
    if (piece > 0 || gpu > 0) return false;
    sink.compute(tag(OpKind::Attention), Work::bf16(1e12));
    sink.compute(tag(OpKind::MoeGemm), Work::fp8(1e12));
    return true;
  });
  EXPECT_NEAR(r.step_time_s, 2e-3 + 1e-3, 1e-12);
}

// A long producer/consumer stream generated piece by piece (exercises the queues' compaction):
// GPU 0 computes a, then sends for t; GPU 1 receives, then computes a. With t < a, GPU 1's k-th
// compute runs from (k+1)a + t to (k+2)a + t, so the makespan is (N + 1)a + t.
TEST(Engine, LongLazyProgramStreams) {
  const int64_t N = 20000, per_piece = 64;
  const double a = 1e-3, t = 0.5e-3;
  const PlatformSpec spec = two_nodes(1);
  const double bytes = t * spec.ib_Bps;
  const SimResult r = run_hand(spec, 2, [=](int64_t gpu, int64_t piece, OpSink& sink) {
    const int64_t first = piece * per_piece;
    if (first >= N) return false;
    for (int64_t k = first; k < std::min(N, first + per_piece); ++k) {
      Tag tg = tag(OpKind::Forward);
      tg.microbatch = uint16_t(k);
      if (gpu == 0) {
        const OpRef c = sink.compute(tg, Work::seconds(a));
        const FlowSpec out[] = {{bytes, 1, 3}};
        sink.comm(1, tag(OpKind::PpSend), out, {}, {c});
      } else {
        const FlowSpec in[] = {{0, 0, 3}};
        const OpRef got = sink.comm(1, tag(OpKind::PpRecv), {}, in);
        sink.compute(tg, Work::seconds(a), {got});
      }
    }
    return true;
  });
  const double makespan = (N + 1) * a + t;
  EXPECT_NEAR(r.step_time_s, makespan, 1e-9 * makespan);
  EXPECT_EQ(r.ops, uint64_t(4 * N));
  EXPECT_EQ(r.activities, uint64_t(3 * N));
  // GPU 1 first idles a (GPU 0's first compute: bubble), then t while the first transfer moves
  // (exposed); every later transfer moves while GPU 1 computes, so it never waits again.
  EXPECT_NEAR(r.ranks[1].exposed_comm_s, t, 1e-9 * makespan);
  EXPECT_NEAR(r.ranks[1].bubble_s, a, 1e-9 * makespan);
  expect_exact_split(r);
}

// A dependency nothing satisfies: the run reports where it got stuck instead of hanging.
TEST(Engine, DeadlockIsReported) {
  try {
    run_hand(two_nodes(1), 1, [](int64_t gpu, int64_t piece, OpSink& sink) {
      if (piece > 0) return false;
      sink.compute(tag(OpKind::Forward), Work::seconds(1e-3), {OpRef(uint32_t(1 - gpu), 0, 0)});
      return true;
    });
    FAIL() << "expected a deadlock error";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("deadlock"), std::string::npos) << e.what();
  }
}

// Errors in a program surface as exceptions from the run.
TEST(Engine, ProgramErrorsPropagate) {
  try {
    run_hand(two_nodes(1), 1, [](int64_t, int64_t, OpSink& sink) {
      const FlowSpec out[] = {{1, 1, 0}};
      sink.comm(1, tag(OpKind::PpSend), out, {});  // stream 1 does not exist
      return true;
    });
    FAIL() << "expected an error";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("stream"), std::string::npos) << e.what();
  }
}

// Spans, when asked for, cover every op with its stream and times.
TEST(Engine, SpansWhenAsked) {
  Synthetic s{.schedule = "1f1b", .pp = 2, .microbatches = 2, .w_s = 0};
  const SimResult r = run_synthetic(s, /*spans=*/true);
  ASSERT_TRUE(r.has_spans);
  EXPECT_EQ(r.spans.size(), size_t(2 * 2 * 2));
  double compute = 0;
  for (const Span& sp : r.spans) {
    EXPECT_EQ(sp.stream, 0);
    EXPECT_LE(sp.end_s, r.step_time_s + 1e-12);
    compute += sp.end_s - sp.start_s;
  }
  EXPECT_NEAR(compute, r.ranks[0].compute_s + r.ranks[1].compute_s, 1e-9);
}

}  // namespace
}  // namespace stepsim::test
