#include "simulator/engine/replay_count.hpp"

#include <vector>

namespace stepsim::engine {

using namespace stepsim::ops;

ReplayCount count_replay(const PlatformSpec& spec, const Workload& w, double stop_above) {
  const int64_t gpus = spec.nodes * spec.gpus_per_node;
  std::vector<bool> simulated(static_cast<size_t>(gpus));
  ReplayCount c;
  for (int64_t g = 0; g < gpus; ++g) {
    simulated[size_t(g)] = w.simulated(g);
    c.gpus += simulated[size_t(g)] ? 1 : 0;
  }
  const double bf16 = w.bf16_flops() > 0 ? w.bf16_flops() : spec.gpu_flops;
  std::vector<StreamQueue> queues(static_cast<size_t>(w.num_streams()));
  for (int64_t g = 0; g < gpus && !c.stopped; ++g) {
    if (!simulated[size_t(g)]) continue;
    for (StreamQueue& q : queues) q = StreamQueue{};
    OpSink sink(uint32_t(g), queues, spec.gpu_flops, bf16);
    const auto program = w.program(g);
    while (program->emit_next(sink)) {
      for (StreamQueue& q : queues) {
        size_t flow = 0;
        for (const Op& op : q.ops) {
          c.ops += 1;
          if (!op.comm) {
            c.activities += op.work_flops > 0 ? 1 : 0;  // GpuDriver::start_op: an op without work completes at once
          } else {
            c.activities += op.n_out;  // a transfer is one activity, counted at its sender
            for (size_t i = 0; i < op.n_in; ++i)  // GpuDriver::post_flows: a mirrored sender's flow
              c.activities += simulated[q.flows[flow + op.n_out + i].peer] ? 0 : 1;
            flow += size_t(op.n_out) + op.n_in;
          }
        }
        q.ops.clear();  // drop what was counted; `emitted` keeps the sequence numbers
        q.deps.clear();
        q.flows.clear();
      }
      if (c.activities > stop_above) {
        c.stopped = true;
        break;
      }
    }
    ++c.gpus_counted;
  }
  c.simulated = std::move(simulated);
  return c;
}

}  // namespace stepsim::engine
