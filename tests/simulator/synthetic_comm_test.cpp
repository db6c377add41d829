// The synthetic pipeline with communication: every hop between ranks moves send_bytes over one
// InfiniBand NIC pair, t = send_bytes / ib_Bps (+ ib latency).
#include <gtest/gtest.h>

#include "schedules/registry.hpp"
#include "tests/simulator/sim_test_util.hpp"

namespace stepsim::test {
namespace {

constexpr double kIbGBps = 50;  // the default config's hardware.ib_GBps

// One microbatch through P stages of 1F1B: the forward crosses P-1 hops, the backward P-1 more, and
// nothing overlaps: makespan = P(F + B) + 2(P - 1)t.
TEST(SyntheticComm, OneMicrobatch1F1B) {
  const int P = 4;
  const double F = 1e-3, B = 2e-3, bytes = 50e6;
  const double t = bytes / (kIbGBps * 1e9);  // 1 ms
  Synthetic s{.schedule = "1f1b", .pp = P, .microbatches = 1, .f_s = F, .b_s = B, .w_s = 0, .send_bytes = bytes,
              .extra = {"hardware.ib_GBps=" + num(kIbGBps), "hardware.ib_latency_s=0", "hardware.comm_sms=0"}};
  const SimResult r = run_synthetic(s);
  const double makespan = P * (F + B) + 2 * (P - 1) * t;
  EXPECT_NEAR(r.step_time_s, makespan, 1e-9 * makespan);
  expect_exact_split(r);
  // A chunk op waits for the receive of its input; sends are not waited for. So each rank's
  // compute stream sits through the data movement of the hops into it: the first rank the
  // gradient from rank 1, the last rank the activation from rank P-2, a middle rank both. Waiting
  // for upstream compute (and earlier hops) is bubble.
  for (const RankResult& rr : r.ranks) {
    const int hops_in = (rr.rank > 0 ? 1 : 0) + (rr.rank < P - 1 ? 1 : 0);
    EXPECT_NEAR(rr.compute_s, F + B, 1e-9 * makespan) << "rank " << rr.rank;
    EXPECT_NEAR(rr.exposed_comm_s, hops_in * t, 1e-9 * makespan) << "rank " << rr.rank;
    // Each rank moves one activation and one gradient in each direction it has a neighbour.
    EXPECT_NEAR(rr.comm_s[ops::CommClass::Pp], 2 * hops_in * t, 1e-9 * makespan) << "rank " << rr.rank;
  }
  EXPECT_EQ(r.activities, uint64_t(2 * P + 2 * (P - 1)));  // P F + P B Execs, 2(P-1) transfers
}

// A latency adds to every hop.
TEST(SyntheticComm, OneMicrobatch1F1BWithLatency) {
  const int P = 3;
  const double F = 1e-3, B = 2e-3, bytes = 25e6, lat = 5e-6;
  const double t = bytes / (kIbGBps * 1e9) + lat;
  Synthetic s{.schedule = "1f1b", .pp = P, .microbatches = 1, .f_s = F, .b_s = B, .w_s = 0, .send_bytes = bytes};
  s.extra = {"hardware.ib_GBps=" + num(kIbGBps), "hardware.ib_latency_s=" + num(lat),
             "hardware.comm_sms=0"};
  const SimResult r = run_synthetic(s);
  const double makespan = P * (F + B) + 2 * (P - 1) * t;
  EXPECT_NEAR(r.step_time_s, makespan, 1e-9 * makespan);
  expect_exact_split(r);
}

// A full DualPipeV step with communication and the SM tax: the split is exact on every rank, and
// each rank's compute time lies between its comm-free busy time and that stretched by 132/112
// (compute runs at 112/132 speed at worst, while a transfer is in flight).
TEST(SyntheticComm, DualPipeVSplitIsExact) {
  const int P = 4, N = 10;
  const double F = 1e-3, B = 2e-3, W = 1e-3, FB = 2.5e-3;
  Synthetic s{.schedule = "dualpipev", .pp = P, .microbatches = N, .f_s = F, .b_s = B, .w_s = W, .fb_s = FB,
              .extra = {"hardware.comm_sms=20", "hardware.sms=132"}};
  s.send_bytes = 20e6;  // 0.4 ms per hop
  const SimResult r = run_synthetic(s);
  expect_exact_split(r);
  const auto sch = sched::make_schedule(Schedule{"dualpipev"}, P, N);
  for (const RankResult& rr : r.ranks) {
    double busy = 0;
    for (const sched::ChunkOp& op : sch->program(rr.rank)) {
      switch (op.pass) {
        case sched::Pass::F: busy += F; break;
        case sched::Pass::B: busy += op.zero_bubble ? B - W : B; break;
        case sched::Pass::W: busy += W; break;
        case sched::Pass::FB: busy += FB; break;
      }
    }
    EXPECT_GE(rr.compute_s, busy * (1 - 1e-9)) << "rank " << rr.rank;
    EXPECT_LE(rr.compute_s, busy * 132.0 / 112.0) << "rank " << rr.rank;
    EXPECT_GT(rr.comm_s[ops::CommClass::Pp], 0) << "rank " << rr.rank;
    EXPECT_GT(rr.exposed_comm_s, 0) << "rank " << rr.rank;
  }
}

// With (nearly) free transfers the communicating pipeline runs exactly like the comm-free one:
// receives are posted when the previous chunk op ends, so they add nothing but transfer time.
// FACTS.md section 3: P=4, N=10, F=1, B=2, W=1, F&B=2 -> 52 with bubbles 1 2 3 3.
TEST(SyntheticComm, TinyTransfersMatchCommFreeDualPipeV) {
  Synthetic s{.schedule = "dualpipev", .pp = 4, .microbatches = 10, .f_s = 1, .b_s = 2, .w_s = 1, .fb_s = 2,
              .extra = {"hardware.ib_latency_s=0", "hardware.comm_sms=0"}};
  s.send_bytes = 1;  // 20 ps per hop
  const SimResult r = run_synthetic(s);
  EXPECT_NEAR(r.step_time_s, 52, 1e-6);
  const double bubbles[] = {1, 2, 3, 3};
  for (int i = 0; i < 4; ++i) EXPECT_NEAR(r.ranks[size_t(i)].bubble_s, bubbles[i], 1e-6) << "rank " << i;
  expect_exact_split(r);
}

TEST(SyntheticComm, TinyTransfersMatchCommFree1F1B) {
  Synthetic s{.schedule = "1f1b", .pp = 4, .microbatches = 8, .f_s = 1, .b_s = 2, .w_s = 0, .send_bytes = 1,
              .extra = {"hardware.ib_latency_s=0", "hardware.comm_sms=0"}};
  const SimResult r = run_synthetic(s);
  EXPECT_NEAR(r.step_time_s, (8 + 4 - 1) * 3.0, 1e-6);
  expect_exact_split(r);
}

// Same for 1F1B with several microbatches (sends and receives pair up both ways).
TEST(SyntheticComm, OneFOneBManyMicrobatchesSplitIsExact) {
  Synthetic s{.schedule = "1f1b", .pp = 4, .microbatches = 8, .f_s = 1e-3, .b_s = 2e-3, .w_s = 0, .send_bytes = 10e6};
  const SimResult r = run_synthetic(s);
  expect_exact_split(r);
  EXPECT_GT(r.step_time_s, (8 + 4 - 1) * 3e-3);
}

}  // namespace
}  // namespace stepsim::test
