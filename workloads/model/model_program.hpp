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

#include "schedules/scheduled_program.hpp"
#include "workloads/traffic/dp_collectives.hpp"
#include "workloads/model/model_workload.hpp"

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

  // Which share of a forward MoE MLP an op computes (parallel.overlap_shared_expert splits it).
  enum class MlpShare { All, SharedExperts, Rest };
  engine::OpRef compute(engine::OpSink& sink, int64_t layer, LayerPart part, const sched::ChunkRef& ref,
                        const std::vector<engine::OpRef>& deps, MlpShare share = MlpShare::All);
  // parallel.overlap_shared_expert: a forward MoE layer's shared experts, emitted right after its
  // dispatch is posted (from the same attention output `attn`), so they compute while the dispatch
  // moves. Returns the share of the MLP still to run once the dispatch has arrived.
  MlpShare shared_experts_ahead(engine::OpSink& sink, int64_t layer, const sched::ChunkRef& ref, engine::OpRef attn);
  // A forward or input-gradient block with its tensor- and context-parallel collectives around it
  // (workloads/traffic/model_parallel_comm.hpp): TP all-gather, [CP K/V all-gather], compute,
  // [CP dK/dV reduce-scatter], TP reduce-scatter. Without TP or CP: the compute op alone. Returns
  // the op whose completion makes the block's output available.
  // `weight`: the part's weight gradient computed with it as one autograd op (see fused_weight);
  // the collectives after the block then wait for it too.
  engine::OpRef block(engine::OpSink& sink, int64_t layer, LayerPart part, const sched::ChunkRef& ref,
                      std::vector<engine::OpRef> deps, std::optional<LayerPart> weight = std::nullopt);
  // parallel.split_backward (the default): a backward part's weight gradient is its own op after
  // the input gradient on the compute stream, so the transfer the input gradient starts runs while
  // it computes. false: a plain autograd backward computes both as one op (fused_weight names the
  // W part to compute inside the block), so that transfer waits for it. Zero bubble: W comes later.
  bool separate_weight(const Pass& b) const { return !b.zero_bubble && plan_.parallel.split_backward; }
  std::optional<LayerPart> fused_weight(const Pass& b, LayerPart weight) const {
    if (b.zero_bubble || plan_.parallel.split_backward) return std::nullopt;
    return weight;
  }
  // A MoE layer's expert backward after its combine-gradient arrives (with its W when fused).
  engine::OpRef expert_backward(engine::OpSink& sink, int64_t layer, const Pass& b, const sched::ChunkRef& ref,
                                engine::OpRef combine_grad);
  // One ring collective over `ring` (this GPU's group, with its ring neighbours).
  struct Ring {
    int64_t next = 0, prev = 0;
  };
  engine::OpRef ring_collective(engine::OpSink& sink, int stream, engine::OpKind kind, engine::Phase phase,
                                int64_t layer, const sched::ChunkRef& ref, uint8_t channel, const Ring& ring,
                                double bytes, const std::vector<engine::OpRef>& deps);
  // Data-dependency list for the next block: the previous block's output when TP or CP put
  // collectives between them, else nothing (the compute stream's order is enough).
  std::vector<engine::OpRef> after(engine::OpRef prev) const;
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
  bool tp_ = false, cp_ = false;  // the plan has tensor / context parallelism
  Ring tp_ring_, cp_ring_;
  bool fsdp_ = false;
  DpGroup dp_group_;
  DpGroup replicas_;  // HSDP: the copies of this GPU's shards in the other shard groups
  std::vector<int64_t> final_grad_op_;         // per chunk: program index after which its grads are final
  std::vector<int32_t> grad_chunk_of_op_;      // per program index: the chunk whose grads it adds to, or -1
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
