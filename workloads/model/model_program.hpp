// One GPU's program under the model workload: expands each chunk op of its pipeline rank's
// schedule into layer-by-layer stream ops. F&B pairs interleave the two chunks' layers as
// DeepSeek's trace shows (attn F | mlp B | mlp W | mlp F | attn B | attn W on the compute stream,
// with combine B, dispatch F, dispatch B, combine F on the communication stream), so each chunk's
// compute hides the other's all-to-all.
#pragma once

#include <map>
#include <optional>
#include <unordered_map>
#include <utility>
#include <vector>

#include "schedules/scheduled_program.hpp"
#include "workloads/memory/activation_offload.hpp"
#include "workloads/traffic/dp_collectives.hpp"
#include "workloads/model/model_workload.hpp"

namespace stepsim {

// Which share of a TP block's part an op computes (parallel.tp_comm_overlap splits it around its
// collectives): of the column-parallel GEMMs, of the row-parallel one (which may be stretched by
// userbuffers' SM margin), and of the rest; `piece` labels it (ops::Tag::piece). Piece 0 = all.
// Under CP the attention core is a share of its own (`core`), since the CP exchanges run beside or
// around it; `middle` is then the rest. Pieces 4 to 7: before the core, the core beside p2p's ring
// (or all of it), p2p's last step, after the core.
struct TpBlockSlice {
  double column = 1, middle = 1, row = 1, core = 1;
  uint8_t piece = 0;
};

class ModelGpuProgram : public sched::ScheduledGpuProgram {
 public:
  ModelGpuProgram(const ModelWorkload& workload, int64_t gpu);

 protected:
  void begin(ops::OpSink& sink) override;
  void expand(const sched::ChunkOp& op, size_t index, ops::OpSink& sink) override;
  void finish(ops::OpSink& sink) override;

 private:
  // The running state of one chunk's forward or backward: the op its next step must wait for.
  struct Pass {
    sched::ChunkRef ref;
    int64_t stage = 0;
    std::vector<int64_t> items;       // layer indices in execution order; kHead for the LM head
    std::optional<ops::OpRef> last;  // last op of the pass so far (data dependency)
    bool zero_bubble = false;
  };
  static constexpr int64_t kHead = -1;

  Pass forward_pass(sched::ChunkRef ref) const;
  Pass backward_pass(sched::ChunkRef ref, bool zero_bubble) const;

  void receive(Pass& pass, bool backward, ops::OpSink& sink);
  void send(const Pass& pass, bool backward, ops::OpSink& sink);

  // One item of a forward / backward pass, not overlapped with anything.
  void forward_item(Pass& f, int64_t item, ops::OpSink& sink);
  void backward_item(Pass& b, int64_t item, ops::OpSink& sink);
  // A forward MoE layer overlapped with a backward MoE layer (DualPipe's F&B).
  void overlapped_moe_layers(Pass& f, int64_t f_layer, Pass& b, int64_t b_layer, ops::OpSink& sink);
  void weight_pass(sched::ChunkRef ref, ops::OpSink& sink);
  // parallel.split_lone_chunks: a chunk without an F&B partner runs as two interleaved halves.
  bool split_lone(const Pass& p) const;
  void forward_halves(Pass& f, ops::OpSink& sink);
  void backward_halves(Pass& b, ops::OpSink& sink);

  // Which share of a forward MoE MLP an op computes (parallel.overlap_shared_expert splits it).
  enum class MlpShare { All, SharedExperts, Rest };
  using Slice = TpBlockSlice;
  ops::OpRef compute(ops::OpSink& sink, int64_t layer, LayerPart part, const sched::ChunkRef& ref,
                        const std::vector<ops::OpRef>& deps, MlpShare share = MlpShare::All,
                        const Slice& slice = Slice{});
  // parallel.overlap_shared_expert: a forward MoE layer's shared experts, emitted right after its
  // dispatch is posted (from the same attention output `attn`), so they compute while the dispatch
  // moves. Returns the share of the MLP still to run once the dispatch has arrived.
  MlpShare shared_experts_ahead(ops::OpSink& sink, int64_t layer, const sched::ChunkRef& ref, ops::OpRef attn);
  // A forward or input-gradient block with its tensor- and context-parallel collectives around it
  // (workloads/traffic/model_parallel_comm.hpp): TP all-gather, compute up to the attention core,
  // [the core with CP's exchanges: cp_core], the rest, TP reduce-scatter. Without TP or CP: the
  // compute op alone. Returns the op whose completion makes the block's output available.
  // `weight`: the part's weight gradient computed with it as one autograd op (see fused_weight);
  // the collectives after the block then wait for it too.
  ops::OpRef block(ops::OpSink& sink, int64_t layer, LayerPart part, const sched::ChunkRef& ref,
                      std::vector<ops::OpRef> deps, std::optional<LayerPart> weight = std::nullopt);
  // parallel.split_backward (the default): a backward part's weight gradient is its own op after
  // the input gradient on the compute stream, so the transfer the input gradient starts runs while
  // it computes. false: a plain autograd backward computes both as one op (fused_weight names the
  // W part to compute inside the block), so that transfer waits for it. Zero bubble: W comes later.
  bool separate_weight(const Pass& b) const { return !b.zero_bubble && plan_.parallel.split_backward; }
  std::optional<LayerPart> fused_weight(const Pass& b, LayerPart weight) const {
    if (b.zero_bubble || plan_.parallel.split_backward) return std::nullopt;
    return weight;
  }
  // A MoE layer's expert backward after its combine-gradient arrives (with its W when fused, or
  // when the dispatcher makes W come first: experts_weight_first). Returns what the
  // dispatch-gradient waits for.
  ops::OpRef expert_backward(ops::OpSink& sink, int64_t layer, const Pass& b, const sched::ChunkRef& ref,
                                ops::OpRef combine_grad);
  // Megatron's dispatchers are autograd nodes of their own: the backward reaches one only once the
  // node before it (Transformer Engine's linear layers compute input and weight gradients in one
  // backward call) is done, W included; so does its flex dispatcher with DeepEP or HybridEP
  // (software.moe_wgrad_before_dispatch). DeepEP as DeepSeek runs it posts its transfers once the
  // input gradient is done, and W computes while they move; Megatron's all-to-all overlap does the
  // same by delaying W (--delay-wgrad-compute).
  bool autograd_order() const {
    return (plan_.parallel.moe_dispatcher != MoeDispatcher::DeepEP || plan_.software.moe_wgrad_before_dispatch) &&
           !plan_.parallel.moe_overlap_ep_comm;
  }
  bool experts_weight_first(const Pass& b) const { return separate_weight(b) && autograd_order(); }
  // The experts' W as its own op after the dispatch-gradient is posted.
  bool experts_weight_after(const Pass& b) const { return separate_weight(b) && !experts_weight_first(b); }
  // One ring collective over `ring` (this GPU's group, with its ring neighbours).
  struct Ring {
    int64_t next = 0, prev = 0;
  };
  // The attention core of a forward or input-gradient part with context parallelism's exchanges
  // (parallel.cp_comm_type), after `deps` (the part up to the core); returns what the rest waits for.
  std::vector<ops::OpRef> cp_core(ops::OpSink& sink, int64_t layer, LayerPart part, const sched::ChunkRef& ref,
                     const std::vector<ops::OpRef>& deps, double tokens);
  // a2a: an all-to-all over the CP group, `bytes` sent by this GPU in all.
  ops::OpRef cp_all_to_all(ops::OpSink& sink, ops::Phase phase, int64_t layer, const sched::ChunkRef& ref,
                           double bytes, const std::vector<ops::OpRef>& deps);
  ops::OpRef ring_collective(ops::OpSink& sink, int stream, ops::OpKind kind, ops::Phase phase,
                                int64_t layer, const sched::ChunkRef& ref, uint8_t channel, const Ring& ring,
                                double bytes, const std::vector<ops::OpRef>& deps);
  // Data-dependency list for the next block: the previous block's output when TP or CP put
  // collectives between them, else nothing (the compute stream's order is enough).
  std::vector<ops::OpRef> after(ops::OpRef prev) const;
  ops::OpRef head(ops::OpSink& sink, ops::Phase phase, const sched::ChunkRef& ref,
                     std::optional<ops::OpRef> dep, std::optional<ops::OpRef> params = std::nullopt);
  // dispatch-direction (to experts) or combine-direction all-to-all of one layer.
  // Under full recompute or the moe module: the layer's dispatch and combine sent again before its backward; else `dep`.
  ops::OpRef recomputed_all_to_all(ops::OpSink& sink, int64_t layer, const sched::ChunkRef& ref, ops::OpRef dep);
  ops::OpRef all_to_all(ops::OpSink& sink, ops::OpKind kind, ops::Phase phase, int64_t layer,
                           const sched::ChunkRef& ref, bool fp8_payload, ops::OpRef dep);

  // The optimizer step over this GPU's shard of `non_expert` + `expert` held parameters, after
  // `after` (the gradient reductions); returns what the parameter all-gather waits for.
  std::vector<ops::OpRef> optimizer_step(ops::OpSink& sink, double non_expert, double expert,
                                            const std::vector<ops::OpRef>& after);
  // parallel.cpu_offload_layers (workloads/memory/activation_offload.hpp): layer `layer`'s saved
  // activations copied to host memory after its forward, or back before its backward, on the copy
  // engine once the compute stream has reached this point; and the compute stream's wait for such a
  // copy (an empty compute op that waits, as TE makes the current stream wait on the copy's event).
  ops::OpRef host_copy(ops::OpSink& sink, ops::OpKind kind, ops::Phase phase, int64_t layer, const sched::ChunkRef& ref);
  void wait_for_copy(ops::OpSink& sink, const std::optional<ops::OpRef>& copy);
  // FSDP: all-gather a layer's parameters one layer ahead, reduce-scatter its gradients after.
  std::optional<ops::OpRef> fsdp_gather(ops::OpSink& sink, int64_t item);
  void fsdp_reduce(ops::OpSink& sink, int64_t item, ops::OpRef after);
  std::pair<double, double> item_params(int64_t item) const;  // (non-expert, expert per GPU)
  std::pair<double, double> item_gathered_bytes(int64_t item) const;  // their parameter all-gather's bytes
  // `phase` and `layer` label the op (a bucket: the backward that completed it, the forward it feeds).
  ops::OpRef collective(ops::OpSink& sink, int stream, ops::OpKind kind, uint8_t channel,
                           const RingFlows& flows, const std::vector<ops::OpRef>& deps,
                           ops::Phase phase = ops::Phase::None, int64_t layer = -1);

  const ModelWorkload& w_;
  const ModelStreams& st_;  // w_.streams()
  const Plan& plan_;
  int64_t gpu_ = 0, rank_ = 0;
  bool tp_ = false, cp_ = false;  // the plan has tensor / context parallelism
  bool etp_ = false;              // experts split over expert tensor parallelism
  bool ub_ = false;               // parallel.tp_comm_overlap with TP: userbuffers' pipelined collectives
  bool qkv_gather_ = false;       // TP with replicated KV heads: the QKV output is all-gathered
  // A TP block's input gathered again in its backward, awaited by its weight gradient: by
  // (microbatch, layer, attention or MLP, half).
  std::unordered_map<uint64_t, ops::OpRef> wgrad_inputs_;
  uint64_t wgrad_key(int32_t mb, int64_t layer, bool attention) const {
    return ((uint64_t(uint32_t(mb)) << 20 | uint64_t(layer)) << 1 | (attention ? 1 : 0)) << 2 | half_;
  }
  Ring tp_ring_, cp_ring_, etp_ring_;
  std::vector<int64_t> cp_peers_;  // the other GPUs of its CP group (a2a's all-to-alls)
  bool fsdp_ = false;
  ActivationOffload offload_;
  // The current microbatch's copies by layer (one microbatch is in flight when offloading).
  std::vector<std::optional<ops::OpRef>> offloads_, reloads_;
  DpGroup dp_group_;
  DpGroup replicas_;  // HSDP: the copies of this GPU's shards in the other shard groups
  std::vector<int64_t> final_grad_op_;         // per chunk: program index after which its grads are final
  std::vector<int32_t> grad_chunk_of_op_;      // per program index: the chunk whose grads it adds to, or -1
  std::vector<ops::OpRef> reduce_scatters_;  // ZeRO-1, one per chunk (or bucket)

  // ZeRO-1/2 under parallel.overlap_grad_reduce / overlap_param_gather: Megatron's buckets per chunk
  // (dp_collectives.hpp). Megatron cuts only the model's first stage (pipeline rank 0, model chunk 0:
  // the one whose data-parallel communication ends the step); every other chunk is one bucket.
  struct ChunkBuckets {
    DpBuckets cut;
    std::vector<int64_t> items;   // the chunk's items in backward order
    size_t next = 0;              // next bucket to reduce-scatter in the reducing op
    size_t first_gather = 0;      // index of the chunk's first bucket in gathers_
  };
  std::vector<ChunkBuckets> buckets_;  // per chunk of this rank
  int32_t reducing_chunk_ = -1;        // the chunk whose buckets the op being expanded reduce-scatters
  // overlap_param_gather: the rank's bucket all-gathers in the order the forward first needs them
  // (chunk by chunk, each chunk's buckets in forward order). Bucket 0 starts the step; bucket k + 1
  // is dispatched when the forward first reaches bucket k (Megatron's forward pre-hook waits on k,
  // then dispatches k + 1).
  struct Gather {
    int32_t chunk = 0;
    size_t bucket = 0;
  };
  std::vector<Gather> gathers_;
  std::vector<ops::OpRef> gather_ops_;  // dispatched so far
  int64_t first_used_ = -1;                // the last bucket the forward has reached
  std::vector<std::vector<bool>> forwarded_;  // per chunk, per item in backward order: first forward seen
  // The buckets of each chunk and the order of their all-gathers (in the constructor).
  void init_buckets();
  // Reduce-scatter of one bucket, or of a whole chunk (bucket == npos).
  void reduce_bucket(ops::OpSink& sink, int32_t chunk, size_t bucket);
  // A chunk's item has its gradients final in the op being expanded: reduce the buckets it completes.
  void grads_done(ops::OpSink& sink, int32_t chunk, int64_t item);
  // The parameter all-gather a forward item must wait for: FSDP's prefetched gather, or under
  // overlap_param_gather the bucket holding its first parameter the first time the step needs it.
  std::optional<ops::OpRef> params_for(ops::OpSink& sink, int32_t chunk, int64_t item);
  size_t backward_position(int32_t chunk, int64_t item) const;
  void dispatch_gather(ops::OpSink& sink, size_t index);
  std::map<std::pair<bool, int32_t>, ops::OpRef> handoff_;  // (backward, mb) -> last op, V's local turn
  std::vector<ops::FlowSpec> out_, in_;     // scratch
  struct CachedFlows {
    std::vector<ops::FlowSpec> out, in;
  };
  std::map<int64_t, CachedFlows> a2a_cache_;  // see all_to_all()
  const sched::ChunkRef* partner_ = nullptr;   // while emitting an overlapped pair: the other chunk
  uint8_t half_ = 0;                           // which half the ops belong to (0 = whole microbatch)
  double share_ = 1;                           // share of the microbatch the ops cover (halves: 0.5)
};

}  // namespace stepsim
