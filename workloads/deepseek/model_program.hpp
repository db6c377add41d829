// One GPU's program under the model workload: expands each chunk op of its pipeline rank's
// schedule into layer-by-layer stream ops. F&B pairs interleave the two chunks' layers as
// DeepSeek's trace shows (attn F | mlp B | mlp W | mlp F | attn B | attn W on the compute stream,
// with combine B, dispatch F, dispatch B, combine F on the communication stream), so each chunk's
// compute hides the other's all-to-all.
#pragma once

#include <map>
#include <optional>
#include <utility>
#include <vector>

#include "simulator/engine/scheduled_program.hpp"
#include "workloads/deepseek/dp_collectives.hpp"
#include "workloads/deepseek/model_workload.hpp"

namespace stepsim {

class ModelGpuProgram : public engine::ScheduledGpuProgram {
 public:
  ModelGpuProgram(const ModelWorkload& workload, int64_t gpu);

 protected:
  void expand(const sched::ChunkOp& op, size_t index, engine::OpSink& sink) override;
  void finish(engine::OpSink& sink) override;

 private:
  // The running state of one chunk's forward or backward: the op its next step must wait for.
  struct Pass {
    sched::ChunkRef ref;
    int64_t stage = 0;
    std::vector<int64_t> items;       // layer indices in execution order; kHead for the LM head
    std::optional<engine::OpRef> last;  // last op of the pass so far (data dependency)
    bool zero_bubble = false;
  };
  static constexpr int64_t kHead = -1;

  Pass forward_pass(sched::ChunkRef ref) const;
  Pass backward_pass(sched::ChunkRef ref, bool zero_bubble) const;

  void receive(Pass& pass, bool backward, engine::OpSink& sink);
  void send(const Pass& pass, bool backward, engine::OpSink& sink);

  // One item of a forward / backward pass, not overlapped with anything.
  void forward_item(Pass& f, int64_t item, engine::OpSink& sink);
  void backward_item(Pass& b, int64_t item, engine::OpSink& sink);
  // A forward MoE layer overlapped with a backward MoE layer (DualPipe's F&B).
  void overlapped_moe_layers(Pass& f, int64_t f_layer, Pass& b, int64_t b_layer, engine::OpSink& sink);
  void weight_pass(sched::ChunkRef ref, engine::OpSink& sink);
  // parallel.split_lone_chunks: a chunk without an F&B partner runs as two interleaved halves.
  bool split_lone(const Pass& p) const;
  void forward_halves(Pass& f, engine::OpSink& sink);
  void backward_halves(Pass& b, engine::OpSink& sink);

  engine::OpRef compute(engine::OpSink& sink, int64_t layer, LayerPart part, const sched::ChunkRef& ref,
                        const std::vector<engine::OpRef>& deps);
  engine::OpRef head(engine::OpSink& sink, engine::Phase phase, const sched::ChunkRef& ref,
                     std::optional<engine::OpRef> dep);
  // dispatch-direction (to experts) or combine-direction all-to-all of one layer.
  // Under full recompute: the layer's dispatch and combine sent again before its backward; else `dep`.
  engine::OpRef recomputed_all_to_all(engine::OpSink& sink, int64_t layer, const sched::ChunkRef& ref, engine::OpRef dep);
  engine::OpRef all_to_all(engine::OpSink& sink, engine::OpKind kind, engine::Phase phase, int64_t layer,
                           const sched::ChunkRef& ref, bool fp8_payload, engine::OpRef dep);

  // FSDP: all-gather a layer's parameters one layer ahead, reduce-scatter its gradients after.
  std::optional<engine::OpRef> fsdp_gather(engine::OpSink& sink, int64_t item);
  void fsdp_reduce(engine::OpSink& sink, int64_t item, engine::OpRef after);
  std::pair<double, double> item_params(int64_t item) const;  // (non-expert, expert per GPU)
  engine::OpRef collective(engine::OpSink& sink, int stream, engine::OpKind kind, uint8_t channel,
                           const RingFlows& flows, const std::vector<engine::OpRef>& deps);

  const ModelWorkload& w_;
  const Plan& plan_;
  int64_t gpu_ = 0, rank_ = 0;
  bool fsdp_ = false;
  DpGroup dp_group_;
  std::vector<int64_t> final_grad_op_;         // per chunk: program index after which its grads are final
  std::vector<engine::OpRef> reduce_scatters_;  // ZeRO-1, one per chunk
  std::map<std::pair<bool, int32_t>, engine::OpRef> handoff_;  // (backward, mb) -> last op, V's local turn
  std::vector<engine::FlowSpec> out_, in_;     // scratch
  struct CachedFlows {
    std::vector<engine::FlowSpec> out, in;
  };
  std::map<int64_t, CachedFlows> a2a_cache_;  // see all_to_all()
  const sched::ChunkRef* partner_ = nullptr;   // while emitting an overlapped pair: the other chunk
  uint8_t half_ = 0;                           // which half the ops belong to (0 = whole microbatch)
  double share_ = 1;                           // share of the microbatch the ops cover (halves: 0.5)
};

}  // namespace stepsim
