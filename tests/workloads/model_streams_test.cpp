// The model workload's streams and transfer channels (workloads/model/model_streams.hpp): handed
// out by counters, so every id is taken once, none is skipped, and every op lands on the stream its
// kind belongs to, with the transfer channel that goes with it.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>
#include <string>

#include "simulator/config/config_loader.hpp"
#include "vocabulary/op_sink.hpp"
#include "workloads/model/model_workload.hpp"

namespace stepsim {
namespace {

using ops::OpKind;

TEST(ModelStreams, EveryStreamAndChannelIdOnceWithoutGaps) {
  for (const int32_t channels : {4, 6, 16})
  for (const bool host_copies : {false, true}) {
    const ModelStreams s(channels, host_copies);
    std::multiset<int> streams = {s.compute, s.ep, s.dp_gather, s.dp_reduce, s.tp, s.cp};
    streams.insert(s.pp_send.begin(), s.pp_send.end());
    streams.insert(s.pp_recv.begin(), s.pp_recv.end());
    if (host_copies) streams.insert(s.host_copy);
    else EXPECT_EQ(s.host_copy, -1);
    // Compute, EP, DP gather and reduce, TP, CP, a send and a receive stream per channel, and the
    // copy engine's stream when the plan offloads activations.
    ASSERT_EQ(s.count, 6 + 2 * channels + (host_copies ? 1 : 0)) << channels;
    ASSERT_EQ(streams.size(), size_t(s.count)) << channels;
    int expected = 0;
    for (const int id : streams) EXPECT_EQ(id, expected++) << channels;  // 0 .. count-1, each once
    EXPECT_EQ(s.compute, ops::kComputeStream);

    std::multiset<int> ids = {s.ep_channel, s.dp_gather_channel, s.dp_reduce_channel, s.tp_channel, s.cp_channel,
                              s.dp_allreduce_channel};
    ids.insert(s.pp_channel.begin(), s.pp_channel.end());
    ASSERT_EQ(s.pp_channel.size(), size_t(channels));
    expected = 0;
    for (const int id : ids) EXPECT_EQ(id, expected++) << channels;
  }
}

// Interleaved 1F1B with 8 stages per rank: 16 pipeline channels, more than the first four streams
// and the first eight channel ids the workload once numbered by hand.
TEST(ModelStreams, EveryOpOnItsKindsStreamAndChannel) {
  const Plan p = load_plan(std::string(STEPSIM_SOURCE_DIR) + "/workloads/llama-3.1-8b.yaml",
                           {"schedule=interleaved", "parallel.virtual_stages=8", "parallel.tp=2", "parallel.zero=2"});
  const ModelWorkload w(p);
  const ModelStreams& s = w.streams();
  ASSERT_EQ(s.pp_send.size(), 16u);
  ASSERT_EQ(w.num_streams(), s.count);
  std::vector<ops::StreamQueue> queues(static_cast<size_t>(w.num_streams()));
  ops::OpSink sink(0, queues, p.hardware.fp8_tflops * 1e12, p.hardware.bf16_tflops * 1e12);
  const auto prog = w.program(0);
  std::set<int> pp_streams_used;
  std::map<OpKind, int> ops_by_kind;
  while (prog->emit_next(sink)) {
    for (size_t stream = 0; stream < queues.size(); ++stream) {
      auto& q = queues[stream];
      size_t flow = 0;
      for (const auto& op : q.ops) {
        ++ops_by_kind[op.tag.kind];
        const int st = int(stream);
        std::vector<uint8_t> channels;
        for (int i = 0; i < op.n_out + op.n_in; ++i) channels.push_back(q.flows[flow + size_t(i)].channel);
        flow += size_t(op.n_out + op.n_in);
        switch (op.tag.kind) {
          case OpKind::PpSend:
          case OpKind::PpRecv: {
            const auto& mine = op.tag.kind == OpKind::PpSend ? s.pp_send : s.pp_recv;
            const auto it = std::find(mine.begin(), mine.end(), st);
            ASSERT_NE(it, mine.end()) << ops::to_string(op.tag.kind) << " on stream " << st;
            pp_streams_used.insert(st);
            for (const uint8_t c : channels) EXPECT_EQ(c, s.pp_channel[size_t(it - mine.begin())]);
            break;
          }
          case OpKind::TpAllGather:
          case OpKind::TpReduceScatter:
          case OpKind::TpAllGatherWgrad:
            EXPECT_EQ(st, s.tp);
            for (const uint8_t c : channels) EXPECT_EQ(c, s.tp_channel);
            break;
          case OpKind::DpReduceScatter:
            EXPECT_EQ(st, s.dp_reduce);
            for (const uint8_t c : channels) EXPECT_EQ(c, s.dp_reduce_channel);
            break;
          case OpKind::DpAllGather:
            EXPECT_EQ(st, s.dp_gather);
            for (const uint8_t c : channels) EXPECT_EQ(c, s.dp_gather_channel);
            break;
          default:
            EXPECT_FALSE(op.comm) << ops::to_string(op.tag.kind);
            EXPECT_EQ(st, s.compute);
        }
      }
      q.ops.clear();
      q.deps.clear();
      q.flows.clear();
    }
  }
  // Pipeline rank 0 sends and receives on most of its 16 channels (all but the first stage's
  // backward send and forward receive): well past the first four send and receive streams.
  EXPECT_GE(pp_streams_used.size(), 16u);
  EXPECT_GT(ops_by_kind[OpKind::TpAllGather], 0);
  EXPECT_GT(ops_by_kind[OpKind::DpReduceScatter], 0);
  EXPECT_GT(ops_by_kind[OpKind::DpAllGather], 0);
}

}  // namespace
}  // namespace stepsim
