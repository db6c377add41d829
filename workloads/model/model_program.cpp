// ModelGpuProgram: a pipeline rank's schedule expanded chunk op by chunk op into layer items
// (receive, the layers forward or backward, send). The ops of one layer part and their TP/CP
// collectives: model_program_blocks.cpp; MoE layers and overlapped pairs: model_program_moe.cpp;
// data parallelism and the optimizer step: model_program_data_parallel.cpp.
#include "workloads/model/model_program.hpp"

#include <algorithm>
#include <string>

#include "schedules/pipeline_flow.hpp"
#include "workloads/model/model_program_ops.hpp"
#include "workloads/traffic/model_parallel_comm.hpp"
#include "vocabulary/dtype_bytes.hpp"

namespace stepsim {

using ops::OpKind;
using ops::OpRef;
using ops::Phase;
using namespace model_program_ops;

ModelGpuProgram::ModelGpuProgram(const ModelWorkload& workload, int64_t gpu)
    : sched::ScheduledGpuProgram(workload.rank_program(workload.layout().pipeline_rank(gpu))),
      w_(workload),
      st_(workload.streams()),
      plan_(workload.plan()),
      gpu_(gpu),
      offload_(workload.plan()) {
  fsdp_ = w_.schedule().shards_parameters();
  if (offload_.on()) {
    offloads_.resize(size_t(plan_.model.num_hidden_layers));
    reloads_.resize(size_t(plan_.model.num_hidden_layers));
  }
  const RankLayout& layout = w_.layout();
  rank_ = fsdp_ ? 0 : layout.pipeline_rank(gpu);
  // FSDP shards over its shard group (HSDP) or every GPU holding the same weights.
  dp_group_ = fsdp_ ? DpGroup{layout.shard_group(gpu), layout.expert_shard_group(gpu)}
                    : DpGroup{layout.grad_group(gpu), layout.expert_dp_group(gpu)};
  if (fsdp_ && plan_.parallel.fsdp_shard_size > 0)
    replicas_ = DpGroup{layout.shard_replicas(gpu), layout.expert_shard_replicas(gpu)};
  const auto ring_of = [&](const std::vector<int64_t>& g) {
    const size_t n = g.size(), i = size_t(std::find(g.begin(), g.end(), gpu) - g.begin());
    return Ring{g[(i + 1) % n], g[(i + n - 1) % n]};
  };
  tp_ = layout.tp() > 1;
  cp_ = layout.cp() > 1;
  ub_ = tp_ && plan_.parallel.tp_comm_overlap;
  qkv_gather_ = tp_ && tp_qkv_collectives_per_layer(plan_) > 0;
  if (tp_) tp_ring_ = ring_of(layout.tp_group(gpu));
  if (cp_) cp_ring_ = ring_of(layout.cp_group(gpu));
  if (cp_)
    for (const int64_t g : layout.cp_group(gpu))
      if (g != gpu) cp_peers_.push_back(g);
  etp_ = w_.plan().model.is_moe() && layout.etp() > 1;
  if (etp_) etp_ring_ = ring_of(layout.etp_group(gpu));
  // ZeRO-1: a chunk's gradients are final after the last op that runs its weight gradients.
  // ZeRO-2 keeps only its gradient shard, so every op that adds to a chunk's gradients is
  // followed by their reduce-scatter (one per chunk and microbatch).
  final_grad_op_.assign(size_t(w_.schedule().chunks_per_rank()), -1);
  grad_chunk_of_op_.assign(items().size(), -1);
  for (size_t i = 0; i < items().size(); ++i) {
    const auto& op = items()[i];
    const bool grads = op.pass == sched::Pass::W || (op.has_backward() && !op.zero_bubble);
    if (!grads) continue;
    final_grad_op_[size_t(op.bwd.chunk)] = int64_t(i);
    grad_chunk_of_op_[i] = op.bwd.chunk;
  }
  init_buckets();
}

ModelGpuProgram::Pass ModelGpuProgram::forward_pass(sched::ChunkRef ref) const {
  Pass p;
  p.ref = ref;
  p.stage = w_.schedule().stage_of(rank_, ref.chunk);
  const StageLayers& s = w_.stages()[size_t(w_.schedule().layer_slot(p.stage))];
  for (int64_t l = s.first; l < s.first + s.count; ++l) p.items.push_back(l);
  if (s.has_lm_head) p.items.push_back(kHead);
  return p;
}

ModelGpuProgram::Pass ModelGpuProgram::backward_pass(sched::ChunkRef ref, bool zero_bubble) const {
  Pass p = forward_pass(ref);
  std::reverse(p.items.begin(), p.items.end());
  p.zero_bubble = zero_bubble;
  return p;
}

void ModelGpuProgram::receive(Pass& pass, bool backward, ops::OpSink& sink) {
  const auto& s = w_.schedule();
  const auto t = backward ? sched::backward_input(s, rank_, pass.ref) : sched::forward_input(s, rank_, pass.ref);
  if (!t) return;  // first stage, or the gradient starts from the local loss
  if (t->peer_rank == rank_) {
    // The V's turn on the last rank: the input was produced by this rank's other chunk.
    const auto it = handoff_.find({backward, pass.ref.mb});
    if (it != handoff_.end()) pass.last = it->second;
    return;
  }
  // With sequence (and context) parallelism each GPU sends its shard of the sequence.
  const double bytes = w_.sequences(gpu_, pass.ref.mb) * double(plan_.train.seq_len) * w_.token_share() *
                       double(plan_.model.hidden_size) * kBf16Bytes;
  const ops::FlowSpec in{bytes, uint32_t(w_.layout().on_pipeline_rank(gpu_, t->peer_rank)), st_.pp_channel[size_t(t->channel)]};
  pass.last = sink.comm(st_.pp_recv[size_t(t->channel)], tag(OpKind::PpRecv, backward ? Phase::Backward : Phase::Forward, pass.ref, -1),
                        {}, std::span(&in, 1), std::span<const OpRef>{});
}

void ModelGpuProgram::send(const Pass& pass, bool backward, ops::OpSink& sink) {
  // Ops on the compute stream are ordered anyway; only a comm op needs an explicit dependency.
  const auto& s = w_.schedule();
  const auto t = backward ? sched::backward_output(s, rank_, pass.ref) : sched::forward_output(s, rank_, pass.ref);
  if (!t) return;
  if (t->peer_rank == rank_) {
    if (pass.last) handoff_[{backward, pass.ref.mb}] = *pass.last;
    return;
  }
  // With sequence (and context) parallelism each GPU sends its shard of the sequence.
  const double bytes = w_.sequences(gpu_, pass.ref.mb) * double(plan_.train.seq_len) * w_.token_share() *
                       double(plan_.model.hidden_size) * kBf16Bytes;
  const ops::FlowSpec out{bytes, uint32_t(w_.layout().on_pipeline_rank(gpu_, t->peer_rank)), st_.pp_channel[size_t(t->channel)]};
  const auto deps = present(pass.last);
  sink.comm(st_.pp_send[size_t(t->channel)], tag(OpKind::PpSend, backward ? Phase::Backward : Phase::Forward, pass.ref, -1),
            std::span(&out, 1), {}, std::span<const OpRef>(deps));
}
void ModelGpuProgram::forward_item(Pass& f, int64_t item, ops::OpSink& sink) {
  const auto gathered = params_for(sink, f.ref.chunk, item);
  if (item == kHead) {
    // FSDP prefetched the head's parameters; a ZeRO bucket gathered ahead is waited for.
    f.last = head(sink, Phase::Forward, f.ref, f.last ? f.last : gathered, fsdp_ ? std::nullopt : gathered);
    return;
  }
  if (offload_.on()) {
    if (const int64_t gone = offload_.released_before_forward_of(item); gone >= 0) wait_for_copy(sink, offloads_[size_t(gone)]);
  }
  const OpRef attn = block(sink, item, LayerPart::AttnF, f.ref, present(f.last, gathered));
  if (!w_.layer_is_moe(item)) {
    f.last = block(sink, item, LayerPart::MlpF, f.ref, after(attn));
  } else {
    const OpRef d = all_to_all(sink, OpKind::EpDispatch, Phase::Forward, item, f.ref, true, attn);
    const MlpShare rest = shared_experts_ahead(sink, item, f.ref, attn);
    const OpRef m = compute(sink, item, LayerPart::MlpF, f.ref, {d}, rest);
    f.last = all_to_all(sink, OpKind::EpCombine, Phase::Forward, item, f.ref, false, m);
  }
  if (offload_.offloaded(item)) offloads_[size_t(item)] = host_copy(sink, OpKind::HostOffload, Phase::Forward, item, f.ref);
}

OpRef ModelGpuProgram::host_copy(ops::OpSink& sink, OpKind kind, Phase phase, int64_t layer, const sched::ChunkRef& ref) {
  const double seconds = w_.memory().saved_bytes(gpu_, ref.mb, layer) / (plan_.hardware.host_link_GBps * 1e9);
  return sink.comm(st_.host_copy, tag(kind, phase, ref, layer), {}, {}, {last_compute(sink)}, seconds);
}

void ModelGpuProgram::wait_for_copy(ops::OpSink& sink, const std::optional<OpRef>& copy) {
  if (copy) sink.compute(ops::Tag{}, ops::Work::seconds(0), {*copy});
}
void ModelGpuProgram::backward_item(Pass& b, int64_t item, ops::OpSink& sink) {
  if (offload_.on() && item != kHead) {
    if (const int64_t back = offload_.reloaded_before_backward_of(item); back >= 0)
      reloads_[size_t(back)] = host_copy(sink, OpKind::HostReload, Phase::Backward, back, b.ref);
    if (offload_.offloaded(item)) wait_for_copy(sink, reloads_[size_t(item)]);
  }
  const auto gathered = fsdp_gather(sink, item);
  if (item == kHead) {
    b.last = head(sink, Phase::Backward, b.ref, b.last ? b.last : gathered);
    if (!b.zero_bubble) {
      const OpRef w = head(sink, Phase::Weight, b.ref, std::nullopt);
      if (!plan_.parallel.split_backward) b.last = w;  // one autograd op: what follows waits for W
      if (half_ != 1) grads_done(sink, b.ref.chunk, item);
    }
    if (fsdp_) fsdp_reduce(sink, item, *b.last);
    return;
  }
  const auto deps = present(b.last, gathered);
  std::vector<OpRef> attn_deps;
  if (!w_.layer_is_moe(item)) {
    const OpRef mlp = block(sink, item, LayerPart::MlpB, b.ref, deps, fused_weight(b, LayerPart::MlpW));
    attn_deps = after(mlp);
    if (separate_weight(b)) compute(sink, item, LayerPart::MlpW, b.ref, {});
  } else {
    // Combine's gradient goes to the experts (FP8), dispatch's gradient comes back (BF16). In
    // Megatron's autograd order it waits for the whole backward before it on this GPU, W included.
    OpRef grad = deps.empty() ? last_compute(sink) : deps.back();
    if (autograd_order() && !gathered && b.last && int(b.last->stream()) == int(st_.compute)) grad = last_compute(sink);
    const OpRef cb = all_to_all(sink, OpKind::EpCombine, Phase::Backward, item, b.ref, true,
                                recomputed_all_to_all(sink, item, b.ref, grad));
    const OpRef mb = expert_backward(sink, item, b, b.ref, cb);
    if (experts_weight_after(b)) compute(sink, item, LayerPart::MlpW, b.ref, {});
    const OpRef db = all_to_all(sink, OpKind::EpDispatch, Phase::Backward, item, b.ref, false, mb);
    attn_deps = {db};
  }
  b.last = block(sink, item, LayerPart::AttnB, b.ref, attn_deps, fused_weight(b, LayerPart::AttnW));
  std::optional<OpRef> aw;
  if (separate_weight(b)) aw = compute(sink, item, LayerPart::AttnW, b.ref, {});
  else if (!b.zero_bubble) aw = b.last;
  if (fsdp_ && aw) fsdp_reduce(sink, item, *aw);
  if (aw && half_ != 1) grads_done(sink, b.ref.chunk, item);  // a halved layer: after the second half
}
bool ModelGpuProgram::split_lone(const Pass& p) const {
  if (!plan_.parallel.split_lone_chunks || fsdp_) return false;
  return std::any_of(p.items.begin(), p.items.end(), [&](int64_t i) { return i >= 0 && w_.layer_is_moe(i); });
}

void ModelGpuProgram::weight_pass(sched::ChunkRef ref, ops::OpSink& sink) {
  Pass b = backward_pass(ref, false);
  for (const int64_t item : b.items) {
    if (item == kHead) {
      head(sink, Phase::Weight, ref, std::nullopt);
    } else {
      compute(sink, item, LayerPart::MlpW, ref, {});
      compute(sink, item, LayerPart::AttnW, ref, {});
    }
    grads_done(sink, ref.chunk, item);
  }
}

void ModelGpuProgram::expand(const sched::ChunkOp& op, size_t index, ops::OpSink& sink) {
  // ZeRO: which chunk's gradients this op reduce-scatters. ZeRO-1 once they are final (with
  // overlap_grad_reduce: the last microbatch's backward; without: nothing here, all after the rank's
  // last backward, in finish()); ZeRO-2 keeps only its gradient shard, so every op that adds to a
  // chunk's gradients reduce-scatters them.
  reducing_chunk_ = -1;
  if (!buckets_.empty() && grad_chunk_of_op_[index] >= 0) {
    const int32_t c = grad_chunk_of_op_[index];
    if (plan_.parallel.zero == 2 || (plan_.parallel.overlap_grad_reduce && final_grad_op_[size_t(c)] == int64_t(index)))
      reducing_chunk_ = c;
    buckets_[size_t(c)].next = 0;
  }
  switch (op.pass) {
    case sched::Pass::F: {
      Pass f = forward_pass(op.fwd);
      receive(f, false, sink);
      if (split_lone(f)) forward_halves(f, sink);
      else
        for (const int64_t item : f.items) forward_item(f, item, sink);
      send(f, false, sink);
      break;
    }
    case sched::Pass::B: {
      Pass b = backward_pass(op.bwd, op.zero_bubble);
      receive(b, true, sink);
      if (split_lone(b)) backward_halves(b, sink);
      else
        for (const int64_t item : b.items) backward_item(b, item, sink);
      send(b, true, sink);
      break;
    }
    case sched::Pass::W: weight_pass(op.bwd, sink); break;
    case sched::Pass::FB: {
      Pass f = forward_pass(op.fwd);
      Pass b = backward_pass(op.bwd, op.zero_bubble);
      receive(f, false, sink);
      receive(b, true, sink);
      // Pair MoE layers of the two chunks, whose all-to-alls need hiding; dense layers and the
      // head have none and run on their own, in their chunk's order.
      const auto moe = [&](int64_t item) { return item >= 0 && w_.layer_is_moe(item) && !fsdp_; };
      size_t i = 0, j = 0;
      while (i < f.items.size() || j < b.items.size()) {
        const bool f_left = i < f.items.size(), b_left = j < b.items.size();
        if (f_left && !moe(f.items[i])) {
          forward_item(f, f.items[i++], sink);
        } else if (b_left && !moe(b.items[j])) {
          backward_item(b, b.items[j++], sink);
        } else if (f_left && b_left) {
          overlapped_moe_layers(f, f.items[i++], b, b.items[j++], sink);
        } else if (f_left) {
          forward_item(f, f.items[i++], sink);
        } else {
          backward_item(b, b.items[j++], sink);
        }
      }
      send(f, false, sink);
      send(b, true, sink);
      break;
    }
  }
  if (reducing_chunk_ < 0) return;
  ChunkBuckets& cb = buckets_[size_t(reducing_chunk_)];
  if (cb.cut.buckets.size() == 1) {  // one bucket: after the op, as one collective
    reduce_bucket(sink, reducing_chunk_, std::string::npos);
    return;
  }
  // Buckets the op's items completed were reduce-scattered as they completed (grads_done); any
  // left (an item that reported none) go now.
  while (cb.next < cb.cut.buckets.size()) reduce_bucket(sink, reducing_chunk_, cb.next++);
  reducing_chunk_ = -1;
}

}  // namespace stepsim
