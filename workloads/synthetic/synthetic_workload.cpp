// Communication (send_bytes > 0): each pipeline channel (direction x sending chunk, see
// sched::pipeline_channel) gets its own send stream and receive stream on every GPU, as DualPipe
// posts independent P2P ops. A chunk op's receives are posted when the previous chunk op ends (the
// moment DualPipe commits them) and the chunk op waits for them; its sends are posted when it ends
// and nobody waits for them, though a send only moves once its receiver has posted the receive.
// Transfers within a rank (DualPipeV's turn at rank P-1, a last stage's loss) cost nothing.
#include "workloads/synthetic/synthetic_workload.hpp"

#include <optional>
#include <stdexcept>
#include <vector>

#include "platforms/cluster_platform.hpp"
#include "schedules/pipeline_flow.hpp"
#include "schedules/registry.hpp"
#include "schedules/scheduled_program.hpp"
#include "vocabulary/rank_layout.hpp"

namespace stepsim {
namespace {

using ops::FlowSpec;
using ops::OpKind;
using ops::OpRef;
using ops::OpSink;
using ops::Phase;
using ops::Tag;
using sched::ChunkOp;
using sched::Pass;

// Stream 0 computes; then one send stream per pipeline channel, then one receive stream each.
int send_stream(int32_t channel) { return 1 + channel; }
int recv_stream(const sched::Schedule& s, int32_t channel) { return 1 + sched::pipeline_channels(s) + channel; }

struct Costs {
  double f_s, b_s, w_s, fb_s;
  double of(const ChunkOp& op) const {
    switch (op.pass) {
      case Pass::F: return f_s;
      case Pass::B: return op.zero_bubble ? b_s - w_s : b_s;
      case Pass::W: return w_s;
      case Pass::FB: return op.zero_bubble ? fb_s - w_s : fb_s;
    }
    return 0;
  }
};

Tag chunk_tag(const ChunkOp& op) {
  Tag t;
  switch (op.pass) {
    case Pass::F: t.kind = OpKind::Forward; t.phase = Phase::Forward; break;
    case Pass::B:
      t.kind = op.zero_bubble ? OpKind::BackwardInput : OpKind::Backward;
      t.phase = Phase::Backward;
      break;
    case Pass::W: t.kind = OpKind::WeightGrad; t.phase = Phase::Weight; break;
    case Pass::FB: t.kind = OpKind::ForwardBackward; t.phase = Phase::Forward; break;
  }
  const sched::ChunkRef& main = op.has_forward() ? op.fwd : op.bwd;
  t.microbatch = uint16_t(main.mb);
  t.chunk = uint8_t(main.chunk);
  if (op.pass == Pass::FB) {
    t.microbatch2 = uint16_t(op.bwd.mb);
    t.chunk2 = uint8_t(op.bwd.chunk);
  }
  return t;
}

// Everything the per-rank programs share.
struct Shared {
  std::unique_ptr<sched::Schedule> schedule;
  std::vector<std::vector<ChunkOp>> programs;  // per rank
  std::optional<sched::ProducerIndex> producers;
  Costs costs{};
  double send_bytes = 0;
};

// The transfers of a chunk op that `forward` and `backward` give for its two passes (inputs or
// outputs), those with another rank.
template <class Forward, class Backward>
std::vector<sched::StageTransfer> remote(const sched::Schedule& s, int64_t rank, const ChunkOp& op, Forward forward,
                                         Backward backward) {
  std::vector<sched::StageTransfer> v;
  if (op.has_forward())
    if (auto t = forward(s, rank, op.fwd); t && t->peer_rank != rank) v.push_back(*t);
  if (op.has_backward())
    if (auto t = backward(s, rank, op.bwd); t && t->peer_rank != rank) v.push_back(*t);
  return v;
}

// Pipeline inputs of a chunk op that come from another rank, and outputs that go to one.
std::vector<sched::StageTransfer> remote_inputs(const sched::Schedule& s, int64_t rank, const ChunkOp& op) {
  return remote(s, rank, op, sched::forward_input, sched::backward_input);
}

std::vector<sched::StageTransfer> remote_outputs(const sched::Schedule& s, int64_t rank, const ChunkOp& op) {
  return remote(s, rank, op, sched::forward_output, sched::backward_output);
}

class SyntheticProgram final : public sched::ScheduledGpuProgram {
 public:
  SyntheticProgram(const Shared& sh, int64_t rank)
      : ScheduledGpuProgram(sh.programs[size_t(rank)]), sh_(sh), rank_(rank) {}

 protected:
  void expand(const ChunkOp& op, size_t, OpSink& sink) override {
    const Tag tag = chunk_tag(op);
    const ops::Work work = ops::Work::seconds(sh_.costs.of(op));
    const auto inputs = remote_inputs(*sh_.schedule, rank_, op);
    if (sh_.send_bytes <= 0) {
      // No communication: wait for the producing chunk ops themselves (compute stream seq = index).
      deps_.clear();
      for (const auto& in : inputs) {
        const auto site = in.backward ? sh_.producers->backward(in.peer_stage, in.mb)
                                      : sh_.producers->forward(in.peer_stage, in.mb);
        deps_.push_back(OpRef(uint32_t(site.rank), ops::kComputeStream, uint32_t(site.index)));
      }
      sink.compute(tag, work, deps_);
      return;
    }
    deps_.clear();
    for (const auto& in : inputs) {
      const FlowSpec from[] = {{0, uint32_t(in.peer_rank), uint8_t(in.channel)}};
      deps_.push_back(sink.comm(recv_stream(*sh_.schedule, in.channel), comm_tag(OpKind::PpRecv, in), {}, from,
                                last_ ? std::span<const OpRef>(&*last_, 1) : std::span<const OpRef>()));
    }
    last_ = sink.compute(tag, work, deps_);
    for (const auto& o : remote_outputs(*sh_.schedule, rank_, op)) {
      const FlowSpec to[] = {{sh_.send_bytes, uint32_t(o.peer_rank), uint8_t(o.channel)}};
      sink.comm(send_stream(o.channel), comm_tag(OpKind::PpSend, o), to, {}, {*last_});
    }
  }

 private:
  static Tag comm_tag(OpKind kind, const sched::StageTransfer& t) {
    Tag tag;
    tag.kind = kind;
    tag.phase = t.backward ? Phase::Backward : Phase::Forward;
    tag.microbatch = uint16_t(t.mb);
    tag.chunk = uint8_t(t.sending_chunk);
    return tag;
  }

  const Shared& sh_;
  int64_t rank_;
  std::optional<OpRef> last_;  // the previous chunk op's compute
  std::vector<OpRef> deps_;
};

class SyntheticWorkload final : public ops::Workload {
 public:
  explicit SyntheticWorkload(const Plan& plan) : plan_(plan) {
    const int64_t P = RankLayout(plan).pp();
    sh_.schedule = sched::make_schedule(plan);
    for (int64_t r = 0; r < P; ++r) sh_.programs.push_back(sh_.schedule->program(r));
    sh_.producers.emplace(*sh_.schedule, sh_.programs);
    const WorkloadConfig& w = plan.workload;
    sh_.costs = {w.f_s, w.b_s, w.w_s, w.fb_s > 0 ? w.fb_s : w.f_s + w.b_s};
    if (w.w_s > w.b_s) throw std::invalid_argument("workload.w_s exceeds workload.b_s");
    sh_.send_bytes = w.send_bytes;
  }

  std::string name() const override { return "synthetic"; }
  double bf16_flops() const override { return plan_.hardware.bf16_tflops * 1e12; }
  int num_streams() const override { return sh_.send_bytes > 0 ? 1 + 2 * sched::pipeline_channels(*sh_.schedule) : 1; }
  std::unique_ptr<ops::GpuProgram> program(int64_t gpu) const override {
    return std::make_unique<SyntheticProgram>(sh_, gpu);
  }

 private:
  Plan plan_;
  Shared sh_;
};

}  // namespace

PlatformSpec synthetic_platform(const Plan& plan) {
  PlatformSpec spec = platform_spec(plan);
  spec.nodes = RankLayout(plan).pp();
  spec.gpus_per_node = 1;
  spec.nvlink_ranks = 1;  // one-GPU nodes on a star (validate_plan refuses other fabrics here)
  return spec;
}

std::unique_ptr<ops::Workload> make_synthetic_workload(const Plan& plan) {
  return std::make_unique<SyntheticWorkload>(plan);
}

}  // namespace stepsim
