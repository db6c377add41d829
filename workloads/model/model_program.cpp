#include "workloads/model/model_program.hpp"

#include <algorithm>
#include <limits>
#include <string>

#include "schedules/pipeline_flow.hpp"
#include "workloads/traffic/model_parallel_comm.hpp"
#include "workloads/memory/state_bytes.hpp"
#include "vocabulary/model_params.hpp"
#include "vocabulary/dtype_bytes.hpp"

namespace stepsim {

using ops::OpKind;
using ops::OpRef;
using ops::Phase;

namespace {


Phase phase_of(LayerPart p) {
  switch (p) {
    case LayerPart::AttnF:
    case LayerPart::MlpF: return Phase::Forward;
    case LayerPart::AttnB:
    case LayerPart::MlpB: return Phase::Backward;
    case LayerPart::AttnW:
    case LayerPart::MlpW: return Phase::Weight;
  }
  return Phase::None;
}

ops::Tag tag(OpKind kind, Phase phase, const sched::ChunkRef& ref, int64_t layer,
                const sched::ChunkRef* partner = nullptr, uint8_t half = 0) {
  ops::Tag t;
  if (partner) {
    t.microbatch2 = uint16_t(partner->mb);
    t.chunk2 = uint8_t(partner->chunk);
  }
  t.kind = kind;
  t.phase = phase;
  t.chunk = uint8_t(ref.chunk);
  t.microbatch = uint16_t(ref.mb);
  t.layer = layer < 0 ? ops::kNoIndex : uint16_t(layer);
  t.half = half;
  return t;
}

template <class... Refs>
std::vector<OpRef> present(Refs... refs) {
  std::vector<OpRef> out;
  (
      [&](const std::optional<OpRef>& r) {
        if (r) out.push_back(*r);
      }(refs),
      ...);
  return out;
}

// The compute op emitted last on this GPU (the producer of whatever the next step consumes).
OpRef last_compute(const ops::OpSink& sink) {
  const OpRef next = sink.next_ref(ops::kComputeStream);
  return OpRef(next.gpu(), ops::kComputeStream, next.seq > 0 ? next.seq - 1 : 0);
}

}  // namespace

ModelGpuProgram::ModelGpuProgram(const ModelWorkload& workload, int64_t gpu)
    : sched::ScheduledGpuProgram(workload.schedule().program(workload.layout().pipeline_rank(gpu))),
      w_(workload),
      st_(workload.streams()),
      plan_(workload.plan()),
      gpu_(gpu) {
  fsdp_ = w_.schedule().shards_parameters();
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
  // ZeRO-1/2: the data-parallel buckets of each chunk (one per chunk unless overlap_grad_reduce cuts
  // the model's first stage) and, under overlap_param_gather, the order of their all-gathers.
  if (fsdp_ || !w_.schedule().optimizer_step()) return;
  const int32_t chunks = w_.schedule().chunks_per_rank();
  buckets_.resize(size_t(chunks));
  forwarded_.resize(size_t(chunks));
  for (int32_t c = 0; c < chunks; ++c) {
    ChunkBuckets& cb = buckets_[size_t(c)];
    cb.items = backward_pass(sched::ChunkRef{0, c}, false).items;
    std::vector<std::pair<double, double>> params;
    for (const int64_t item : cb.items) params.push_back(item_params(item));
    const bool first_stage = w_.schedule().layer_slot(w_.schedule().stage_of(rank_, c)) == 0;
    const double size = plan_.parallel.overlap_grad_reduce && first_stage ? ddp_bucket_params(plan_)
                                                                         : std::numeric_limits<double>::infinity();
    cb.cut = dp_buckets(params, size);
    forwarded_[size_t(c)].assign(cb.items.size(), false);
    if (!plan_.parallel.overlap_param_gather) continue;
    cb.first_gather = gathers_.size();
    for (size_t b = cb.cut.buckets.size(); b-- > 0;) gathers_.push_back({c, b});
  }
}

void ModelGpuProgram::begin(ops::OpSink& sink) {
  // overlap_param_gather: the first bucket's all-gather starts the step (Megatron dispatches it
  // before the forward, in the optimizer's zero_grad).
  if (!gathers_.empty()) dispatch_gather(sink, 0);
}

size_t ModelGpuProgram::backward_position(int32_t chunk, int64_t item) const {
  const std::vector<int64_t>& items = buckets_[size_t(chunk)].items;
  return size_t(std::find(items.begin(), items.end(), item) - items.begin());
}

void ModelGpuProgram::dispatch_gather(ops::OpSink& sink, size_t index) {
  const Gather& g = gathers_[index];
  const DpBucket& b = buckets_[size_t(g.chunk)].cut.buckets[g.bucket];
  const RingFlows flows = dp_ring_flows(plan_, dp_group_, gpu_, b.non_expert, b.expert, kBf16Bytes);
  // Dispatched when the forward reaches the previous bucket: after the compute before it.
  std::vector<OpRef> deps;
  if (index > 0 && sink.next_ref(st_.compute).seq > 0) deps.push_back(last_compute(sink));
  const std::vector<int64_t>& items = buckets_[size_t(g.chunk)].items;
  const int64_t first_item = items[b.last_item];  // the bucket's first item in forward order
  gather_ops_.push_back(collective(sink, st_.dp_gather, OpKind::DpAllGather, st_.dp_gather_channel, flows, deps,
                                   Phase::Forward, first_item < 0 ? -1 : first_item));
}

std::optional<OpRef> ModelGpuProgram::params_for(ops::OpSink& sink, int32_t chunk, int64_t item) {
  if (fsdp_) return fsdp_gather(sink, item);
  if (gathers_.empty()) return std::nullopt;
  const size_t pos = backward_position(chunk, item);
  if (forwarded_[size_t(chunk)][pos]) return std::nullopt;  // gathered for an earlier microbatch
  forwarded_[size_t(chunk)][pos] = true;
  const ChunkBuckets& cb = buckets_[size_t(chunk)];
  // Gathers run in forward order: bucket b of the chunk is gather first_gather + (K - 1 - b).
  const size_t need = cb.first_gather + (cb.cut.buckets.size() - 1 - cb.cut.needed_by_item[pos]);
  while (gather_ops_.size() <= need) dispatch_gather(sink, gather_ops_.size());
  if (int64_t(need) > first_used_) {
    first_used_ = int64_t(need);
    if (need + 1 < gathers_.size() && gather_ops_.size() == need + 1) dispatch_gather(sink, need + 1);
  }
  return gather_ops_[need];
}

void ModelGpuProgram::reduce_bucket(ops::OpSink& sink, int32_t chunk, size_t bucket) {
  const ChunkBuckets& cb = buckets_[size_t(chunk)];
  double non_expert = 0, expert = 0;
  int64_t layer = -1;
  Phase phase = Phase::None;
  if (bucket == std::string::npos) {  // the whole chunk
    const int64_t stage = w_.schedule().layer_slot(w_.schedule().stage_of(rank_, chunk));
    non_expert = w_.stage_non_expert_params(stage);
    expert = w_.stage_expert_params_per_gpu(stage);
  } else {
    non_expert = cb.cut.buckets[bucket].non_expert;
    expert = cb.cut.buckets[bucket].expert;
    layer = cb.items[cb.cut.buckets[bucket].last_item];  // the item whose backward completed it
    phase = Phase::Backward;
  }
  const RingFlows flows = dp_ring_flows(plan_, dp_group_, gpu_, non_expert, expert, kFp32Bytes);
  reduce_scatters_.push_back(collective(sink, st_.dp_reduce, OpKind::DpReduceScatter, st_.dp_reduce_channel, flows,
                                        {last_compute(sink)}, phase, layer < 0 ? -1 : layer));
}

void ModelGpuProgram::grads_done(ops::OpSink& sink, int32_t chunk, int64_t item) {
  if (chunk != reducing_chunk_) return;
  ChunkBuckets& cb = buckets_[size_t(chunk)];
  if (cb.cut.buckets.size() == 1) return;  // one bucket: reduced after the op (expand)
  const size_t pos = backward_position(chunk, item);
  while (cb.next < cb.cut.buckets.size() && cb.cut.buckets[cb.next].last_item <= pos) reduce_bucket(sink, chunk, cb.next++);
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

OpRef ModelGpuProgram::compute(ops::OpSink& sink, int64_t layer, LayerPart part, const sched::ChunkRef& ref,
                               const std::vector<OpRef>& deps, MlpShare share, const Slice& slice) {
  const PartCost& c = w_.cost(layer, part);
  const double seqs = w_.sequences(gpu_, ref.mb) * share_;
  // This GPU's experts' rows: k per token of its EP group on average, more if they are popular.
  const double rows = w_.routed_rows(gpu_, layer, ref.mb) * share_;
  const double fp8_rate = plan_.hardware.fp8_tflops * 1e12, bf16_rate = plan_.hardware.bf16_tflops * 1e12;
  const double shared = (c.shared_fp8_flops_per_seq + c.shared_bf16_flops_per_seq * (fp8_rate / bf16_rate)) * seqs;
  double flops = c.fp8_flops_per_seq * seqs + c.routed_flops_per_row * rows +
                 c.bf16_flops_per_seq * seqs * (fp8_rate / bf16_rate) + c.nonmatmul_s_per_seq * seqs * fp8_rate;
  if (c.fixed_s > 0) flops += c.fixed_s * fp8_rate;  // kernel launches (predicted model), per op
  if (share == MlpShare::SharedExperts) flops = shared + c.shared_fixed_s * fp8_rate;
  if (share == MlpShare::Rest) flops -= shared + c.shared_fixed_s * fp8_rate;
  if (slice.piece != 0) {  // a piece of a TP block under parallel.tp_comm_overlap
    const double column = c.column_flops_per_seq * seqs, row = c.row_flops_per_seq * seqs;
    flops = slice.column * column + slice.middle * (flops - column - row) + slice.row * row;
  }
  const bool attention = part == LayerPart::AttnF || part == LayerPart::AttnB || part == LayerPart::AttnW;
  const OpKind kind = attention ? OpKind::Attention : w_.layer_is_moe(layer) ? OpKind::MoeGemm : OpKind::DenseMlp;
  ops::Tag t = tag(kind, phase_of(part), ref, layer, partner_, half_);
  t.piece = slice.piece;
  // A TP block's weight gradient needs the input its backward gathered again (block()).
  if (phase_of(part) == Phase::Weight && !wgrad_inputs_.empty()) {
    const auto it = wgrad_inputs_.find(wgrad_key(ref.mb, layer, attention));
    if (it != wgrad_inputs_.end()) {
      std::vector<OpRef> with_input = deps;
      with_input.push_back(it->second);
      wgrad_inputs_.erase(it);
      return sink.compute(t, ops::Work::fp8(flops), std::span<const OpRef>(with_input));
    }
  }
  return sink.compute(t, ops::Work::fp8(flops), std::span<const OpRef>(deps));
}

OpRef ModelGpuProgram::ring_collective(ops::OpSink& sink, int stream, OpKind kind, Phase phase, int64_t layer,
                                       const sched::ChunkRef& ref, uint8_t channel, const Ring& ring, double bytes,
                                       const std::vector<OpRef>& deps) {
  const ops::FlowSpec out{bytes, uint32_t(ring.next), channel}, in{bytes, uint32_t(ring.prev), channel};
  return sink.comm(stream, tag(kind, phase, ref, layer, partner_, half_), std::span(&out, 1), std::span(&in, 1),
                   std::span<const OpRef>(deps));
}

OpRef ModelGpuProgram::block(ops::OpSink& sink, int64_t layer, LayerPart part, const sched::ChunkRef& ref,
                             std::vector<OpRef> deps, std::optional<LayerPart> weight) {
  const bool attention = part == LayerPart::AttnF || part == LayerPart::AttnB;
  const bool tp = tp_ && (attention || !w_.layer_is_moe(layer));  // experts, shared experts, router: TP 1
  const bool cp = cp_ && attention;
  if (!tp && !cp) {
    const OpRef input_grad = compute(sink, layer, part, ref, deps);
    return weight ? compute(sink, layer, *weight, ref, {}) : input_grad;
  }
  // The input is what this GPU computed last (nothing before its first compute op).
  if (deps.empty() && sink.next_ref(st_.compute).seq > 0) deps.push_back(last_compute(sink));
  const Phase phase = phase_of(part);
  const bool forward = phase == Phase::Forward;
  // Tokens of this CP rank's share of the microbatch, gathered over TP; the whole microbatch for CP.
  const double seqs = w_.sequences(gpu_, ref.mb) * share_, seq_len = double(plan_.train.seq_len);
  const double tp_bytes = tp_collective_bytes(plan_, seqs * seq_len / double(w_.layout().cp()));
  const double cp_bytes = cp_collective_bytes(plan_, seqs * seq_len);
  const auto tp_op = [&](OpKind kind, double share, const std::vector<OpRef>& d) {
    return ring_collective(sink, st_.tp, kind, phase, layer, ref, st_.tp_channel, tp_ring_, tp_bytes * share, d);
  };
  const auto cp_gather = [&](std::vector<OpRef> d) {
    if (!cp || part != LayerPart::AttnF) return d;
    return std::vector<OpRef>{ring_collective(sink, st_.cp, OpKind::CpAllGather, phase, layer, ref, st_.cp_channel,
                                              cp_ring_, cp_bytes, d)};
  };
  // The block's input-side GEMM: forward, the column-parallel projections the all-gather feeds;
  // backward, the row-parallel projection's input gradient, fed by the output gradient's all-gather.
  // parallel.tp_comm_overlap runs it as userbuffers' ring exchange: the GEMM's first tp - 1 chunks
  // (the local one first) beside the all-gather, the last chunk once it has arrived
  // (model_parallel_comm.hpp: g/tp + (tp-1) max(g/tp, c/(tp-1)) from start to end).
  const bool ub = tp && ub_;
  const double n = double(w_.layout().tp());
  Slice rest;  // what of the part runs once the input is gathered
  if (ub) {
    Slice ahead;
    ahead.middle = ahead.row = ahead.column = 0;
    (forward ? ahead.column : ahead.row) = (n - 1.0) / n;
    ahead.piece = 1;
    compute(sink, layer, part, ref, deps, MlpShare::All, ahead);
    (forward ? rest.column : rest.row) = 1.0 / n;
    rest.piece = 2;
  }
  if (tp) deps = {tp_op(ub ? OpKind::TpAllGatherRing : OpKind::TpAllGather, 1.0, deps)};
  // Replicated KV heads: the QKV projection's output is all-gathered over TP before the attention
  // core (its gradient reduce-scattered in the backward). Inside the block in the real kernel
  // sequence; serialised with it here just the same.
  if (tp && attention && qkv_gather_)
    deps = {ring_collective(sink, st_.tp, forward ? OpKind::TpAllGather : OpKind::TpReduceScatter, phase, layer, ref,
                            st_.tp_channel, tp_ring_,
                            tp_qkv_collective_bytes(plan_, seqs * seq_len / double(w_.layout().cp())), deps)};
  deps = cp_gather(deps);
  if (forward) {
    if (!ub) {
      OpRef out = compute(sink, layer, part, ref, deps);
      return tp ? tp_op(OpKind::TpReduceScatter, 1.0, {out}) : out;
    }
    // userbuffers' split pipeline: the row-parallel GEMM in kUbReduceScatterSplits splits on the SMs
    // the reduce-scatter leaves it, each split reduce-scattered while the next one computes; the
    // first split runs with the middle of the block, the others after it, and the last split's
    // reduce-scatter is what the next block waits for.
    const double splits = double(kUbReduceScatterSplits), stretch = ub_gemm_stretch(plan_.hardware);
    rest.row = stretch / splits;
    const OpRef first = compute(sink, layer, part, ref, deps, MlpShare::All, rest);
    Slice tail;
    tail.column = tail.middle = 0;
    tail.row = stretch * (splits - 1.0) / splits;
    tail.piece = 3;
    const OpRef last = compute(sink, layer, part, ref, {}, MlpShare::All, tail);
    tp_op(OpKind::TpReduceScatterSplit, (splits - 1.0) / splits, {first});
    return tp_op(OpKind::TpReduceScatterSplit, 1.0 / splits, {last});
  }
  // Backward: the block's input, kept as its sequence shard, is gathered again for the column-
  // parallel weight gradient while the input gradient computes (both settings: TE's bulk overlap
  // with the option, an asynchronous NCCL all-gather without); the weight gradient waits for it.
  if (tp) {
    const OpRef regathered = tp_op(OpKind::TpAllGatherWgrad, 1.0, {});
    wgrad_inputs_[wgrad_key(ref.mb, layer, attention)] = regathered;
  }
  OpRef out = compute(sink, layer, part, ref, deps, MlpShare::All, rest);
  if (weight) out = compute(sink, layer, *weight, ref, {});  // one autograd op: what follows waits for W
  if (cp) out = ring_collective(sink, st_.cp, OpKind::CpReduceScatter, phase, layer, ref, st_.cp_channel, cp_ring_,
                                cp_bytes, {out});
  // The input gradient's reduce-scatter, beside the weight gradient when that is its own op.
  return tp ? tp_op(OpKind::TpReduceScatter, 1.0, {out}) : out;
}

std::vector<OpRef> ModelGpuProgram::after(OpRef prev) const {
  if (tp_ || cp_) return {prev};
  return {};
}

OpRef ModelGpuProgram::head(ops::OpSink& sink, Phase phase, const sched::ChunkRef& ref, std::optional<OpRef> dep,
                            std::optional<OpRef> params) {
  double flops = w_.head_flops_per_seq(phase) * w_.sequences(gpu_, ref.mb) * share_;
  if (w_.head_fixed_s(phase) > 0) flops += w_.head_fixed_s(phase) * plan_.hardware.bf16_tflops * 1e12;
  const auto deps = present(dep, params);
  return sink.compute(tag(OpKind::Head, phase, ref, -1, nullptr, half_), ops::Work::bf16(flops), std::span<const OpRef>(deps));
}

OpRef ModelGpuProgram::all_to_all(ops::OpSink& sink, OpKind kind, Phase phase, int64_t layer,
                                  const sched::ChunkRef& ref, bool fp8_payload, OpRef dep) {
  // The flows depend only on the payload and, when GPUs hold different batches, the microbatch:
  // build them once per such key (this runs millions of times in a full replay).
  int64_t key = ((w_.uniform_batch() ? 0 : int64_t(ref.mb) + 1) * 2 + (fp8_payload ? 1 : 0)) * 2 +
                (share_ < 1 ? 1 : 0);
  if (!w_.loads().balanced()) {
    // Uneven expert loads: the flows also depend on the layer and microbatch (every one differs).
    key = ((int64_t(ref.mb) * plan_.model.num_hidden_layers + layer) * 2 + (fp8_payload ? 1 : 0)) * 2 +
          (share_ < 1 ? 1 : 0);
    if (a2a_cache_.size() > 64) a2a_cache_.clear();  // each key recurs once (forward, backward): stay small
  }
  auto it = a2a_cache_.find(key);
  if (it == a2a_cache_.end()) {
    const double bytes_per_copy =
        (fp8_payload ? dispatch_bytes_per_token(plan_) : combine_bytes_per_token(plan_.model)) /
        plan_.hardware.a2a_efficiency;  // a kernel reaching a share of the links moves more "wire bytes"
    // FP8 payloads travel towards the experts (dispatch, combine's gradient), BF16 ones back.
    const AllToAll a = w_.ep_flows(gpu_, layer, ref.mb, share_, fp8_payload, bytes_per_copy);
    CachedFlows c;
    for (const auto& f : a.out) c.out.push_back({f.bytes, uint32_t(f.peer), st_.ep_channel});
    for (const auto& f : a.in) c.in.push_back({f.bytes, uint32_t(f.peer), st_.ep_channel});
    it = a2a_cache_.emplace(key, std::move(c)).first;
  }
  // Handshake first (DeepEP's notify); a forward dispatch also builds the layout the rest reuse.
  const double setup_s = plan_.hardware.a2a_latency_s +
                         (kind == OpKind::EpDispatch && phase == Phase::Forward ? plan_.hardware.a2a_layout_latency_s : 0.0);
  return sink.comm(st_.ep, tag(kind, phase, ref, layer, partner_, half_), it->second.out, it->second.in, {dep}, setup_s);
}

void ModelGpuProgram::forward_item(Pass& f, int64_t item, ops::OpSink& sink) {
  const auto gathered = params_for(sink, f.ref.chunk, item);
  if (item == kHead) {
    // FSDP prefetched the head's parameters; a ZeRO bucket gathered ahead is waited for.
    f.last = head(sink, Phase::Forward, f.ref, f.last ? f.last : gathered, fsdp_ ? std::nullopt : gathered);
    return;
  }
  const OpRef attn = block(sink, item, LayerPart::AttnF, f.ref, present(f.last, gathered));
  if (!w_.layer_is_moe(item)) {
    f.last = block(sink, item, LayerPart::MlpF, f.ref, after(attn));
    return;
  }
  const OpRef d = all_to_all(sink, OpKind::EpDispatch, Phase::Forward, item, f.ref, true, attn);
  const MlpShare rest = shared_experts_ahead(sink, item, f.ref, attn);
  const OpRef m = compute(sink, item, LayerPart::MlpF, f.ref, {d}, rest);
  f.last = all_to_all(sink, OpKind::EpCombine, Phase::Forward, item, f.ref, false, m);
}

ModelGpuProgram::MlpShare ModelGpuProgram::shared_experts_ahead(ops::OpSink& sink, int64_t layer,
                                                               const sched::ChunkRef& ref, OpRef attn) {
  const PartCost& c = w_.cost(layer, LayerPart::MlpF);
  if (!plan_.parallel.overlap_shared_expert || c.shared_fp8_flops_per_seq + c.shared_bf16_flops_per_seq <= 0)
    return MlpShare::All;
  compute(sink, layer, LayerPart::MlpF, ref, after(attn), MlpShare::SharedExperts);
  return MlpShare::Rest;
}

OpRef ModelGpuProgram::recomputed_all_to_all(ops::OpSink& sink, int64_t layer, const sched::ChunkRef& ref, OpRef dep) {
  if (plan_.parallel.recompute != Recompute::Full) return dep;
  // Full recompute reruns the layer's forward, its dispatch and combine included, before the
  // backward can start (the recomputed compute itself is charged inside the backward parts).
  const OpRef d = all_to_all(sink, OpKind::EpDispatch, Phase::Backward, layer, ref, true, dep);
  return all_to_all(sink, OpKind::EpCombine, Phase::Backward, layer, ref, false, d);
}

void ModelGpuProgram::backward_item(Pass& b, int64_t item, ops::OpSink& sink) {
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
    // Combine's gradient goes to the experts (FP8), dispatch's gradient comes back (BF16).
    const OpRef cb = all_to_all(sink, OpKind::EpCombine, Phase::Backward, item, b.ref, true,
                                recomputed_all_to_all(sink, item, b.ref, deps.empty() ? last_compute(sink) : deps.back()));
    const OpRef mb = expert_backward(sink, item, b, b.ref, cb);
    if (separate_weight(b)) compute(sink, item, LayerPart::MlpW, b.ref, {});
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

OpRef ModelGpuProgram::expert_backward(ops::OpSink& sink, int64_t layer, const Pass& b, const sched::ChunkRef& ref,
                                       OpRef combine_grad) {
  const OpRef input_grad = compute(sink, layer, LayerPart::MlpB, ref, {combine_grad});
  if (!fused_weight(b, LayerPart::MlpW)) return input_grad;
  return compute(sink, layer, LayerPart::MlpW, ref, {});
}

void ModelGpuProgram::overlapped_moe_layers(Pass& f, int64_t fl, Pass& b, int64_t bl, ops::OpSink& sink) {
  // Tags name the partner chunk, so reports can tell overlapped waits from lone ones.
  struct Partner {
    const sched::ChunkRef*& slot;
    ~Partner() { slot = nullptr; }
  } reset{partner_};
  partner_ = &b.ref;
  const auto as_f = [&] { partner_ = &b.ref; };
  const auto as_b = [&] { partner_ = &f.ref; };
  as_b();
  const OpRef cb = all_to_all(sink, OpKind::EpCombine, Phase::Backward, bl, b.ref, true,
                              recomputed_all_to_all(sink, bl, b.ref, b.last ? *b.last : last_compute(sink)));
  as_f();
  const OpRef attn_f = block(sink, fl, LayerPart::AttnF, f.ref, present(f.last, params_for(sink, f.ref.chunk, fl)));
  as_b();
  const OpRef mlp_b = expert_backward(sink, bl, b, b.ref, cb);
  as_f();
  const OpRef df = all_to_all(sink, OpKind::EpDispatch, Phase::Forward, fl, f.ref, true, attn_f);
  as_b();
  if (separate_weight(b)) compute(sink, bl, LayerPart::MlpW, b.ref, {});
  as_f();
  const MlpShare rest = shared_experts_ahead(sink, fl, f.ref, attn_f);
  const OpRef mlp_f = compute(sink, fl, LayerPart::MlpF, f.ref, {df}, rest);
  as_b();
  const OpRef db = all_to_all(sink, OpKind::EpDispatch, Phase::Backward, bl, b.ref, false, mlp_b);
  b.last = block(sink, bl, LayerPart::AttnB, b.ref, {db}, fused_weight(b, LayerPart::AttnW));
  as_f();
  f.last = all_to_all(sink, OpKind::EpCombine, Phase::Forward, fl, f.ref, false, mlp_f);
  as_b();
  if (separate_weight(b)) compute(sink, bl, LayerPart::AttnW, b.ref, {});
  if (!b.zero_bubble) grads_done(sink, b.ref.chunk, bl);
}

// A lone forward chunk as two half-microbatches (parallel.split_lone_chunks): per MoE layer the
// halves alternate on the compute stream, so one half's attention or experts run while the other
// half's dispatch or combine moves (the two-micro-batch overlap DeepSeek uses where no F&B
// partner exists). Both halves start from the received input; the chunk ends with the second.
void ModelGpuProgram::forward_halves(Pass& f, ops::OpSink& sink) {
  Pass a = f, b = f;
  share_ = 0.5;
  const auto half = [&](uint8_t h) { half_ = h; };  // labels the ops for reports and traces
  for (const int64_t item : f.items) {
    if (item == kHead || !w_.layer_is_moe(item)) {
      half(1), forward_item(a, item, sink);
      half(2), forward_item(b, item, sink);
      continue;
    }
    half(1);
    const OpRef attn_a = block(sink, item, LayerPart::AttnF, a.ref, present(a.last, params_for(sink, f.ref.chunk, item)));
    const OpRef d_a = all_to_all(sink, OpKind::EpDispatch, Phase::Forward, item, a.ref, true, attn_a);
    half(2);
    const OpRef attn_b = block(sink, item, LayerPart::AttnF, b.ref, present(b.last));
    half(1);
    const MlpShare rest_a = shared_experts_ahead(sink, item, a.ref, attn_a);
    const OpRef m_a = compute(sink, item, LayerPart::MlpF, a.ref, {d_a}, rest_a);
    half(2);
    const OpRef d_b = all_to_all(sink, OpKind::EpDispatch, Phase::Forward, item, b.ref, true, attn_b);
    half(1);
    a.last = all_to_all(sink, OpKind::EpCombine, Phase::Forward, item, a.ref, false, m_a);
    half(2);
    const MlpShare rest_b = shared_experts_ahead(sink, item, b.ref, attn_b);
    const OpRef m_b = compute(sink, item, LayerPart::MlpF, b.ref, {d_b}, rest_b);
    b.last = all_to_all(sink, OpKind::EpCombine, Phase::Forward, item, b.ref, false, m_b);
  }
  share_ = 1;
  half_ = 0;
  // Ops of one stream complete in order and both halves' last ops share a stream, so the second
  // half's last op implies the first's.
  f.last = b.last;
}

// The same for a lone backward chunk: combine-gradient, MLP B (and W), dispatch-gradient,
// attention B (and W), each half in turn.
void ModelGpuProgram::backward_halves(Pass& bp, ops::OpSink& sink) {
  Pass a = bp, b = bp;
  share_ = 0.5;
  const auto half = [&](uint8_t h) { half_ = h; };
  for (const int64_t item : bp.items) {
    if (item == kHead || !w_.layer_is_moe(item)) {
      half(1), backward_item(a, item, sink);
      half(2), backward_item(b, item, sink);
      continue;
    }
    half(1);
    const OpRef cb_a = all_to_all(sink, OpKind::EpCombine, Phase::Backward, item, a.ref, true,
                                  a.last ? *a.last : last_compute(sink));
    half(2);
    const OpRef cb_b = all_to_all(sink, OpKind::EpCombine, Phase::Backward, item, b.ref, true,
                                  b.last ? *b.last : last_compute(sink));
    half(1);
    const OpRef mb_a = expert_backward(sink, item, bp, a.ref, cb_a);
    if (separate_weight(bp)) compute(sink, item, LayerPart::MlpW, a.ref, {});
    const OpRef db_a = all_to_all(sink, OpKind::EpDispatch, Phase::Backward, item, a.ref, false, mb_a);
    half(2);
    const OpRef mb_b = expert_backward(sink, item, bp, b.ref, cb_b);
    if (separate_weight(bp)) compute(sink, item, LayerPart::MlpW, b.ref, {});
    const OpRef db_b = all_to_all(sink, OpKind::EpDispatch, Phase::Backward, item, b.ref, false, mb_b);
    half(1);
    a.last = block(sink, item, LayerPart::AttnB, a.ref, {db_a}, fused_weight(bp, LayerPart::AttnW));
    if (separate_weight(bp)) compute(sink, item, LayerPart::AttnW, a.ref, {});
    half(2);
    b.last = block(sink, item, LayerPart::AttnB, b.ref, {db_b}, fused_weight(bp, LayerPart::AttnW));
    if (separate_weight(bp)) compute(sink, item, LayerPart::AttnW, b.ref, {});
    if (!bp.zero_bubble) grads_done(sink, bp.ref.chunk, item);
  }
  share_ = 1;
  half_ = 0;
  bp.last = b.last;
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

void ModelGpuProgram::finish(ops::OpSink& sink) {
  if (fsdp_ && replicas_.members.size() + replicas_.expert_members.size() > 2) {
    // HSDP: after the last reduce-scatter (same stream), all-reduce each gradient shard across the
    // replicas of the shard group: a ring all-reduce moves 2 (R-1)/R of the shard (FP32).
    const HeldParams held = model_held_params(plan_, w_.params());
    const double shard = held.non_expert / double(dp_group_.members.size());
    const double expert_shard = held.expert / double(dp_group_.expert_members.size());
    const auto all_reduce = [&](const std::vector<int64_t>& ring, double params, RingFlows& flows) {
      const size_t n = ring.size();
      if (n < 2 || params <= 0) return;
      const size_t i = size_t(std::find(ring.begin(), ring.end(), gpu_) - ring.begin());
      const double bytes = 2.0 * double(n - 1) / double(n) * params * kFp32Bytes;
      flows.out.push_back({ring[(i + 1) % n], bytes});
      flows.in.push_back({ring[(i + n - 1) % n], bytes});
    };
    RingFlows flows;
    all_reduce(replicas_.members, shard, flows);
    all_reduce(replicas_.expert_members, expert_shard, flows);
    std::vector<OpRef> reduced;
    if (!flows.out.empty())
      reduced.push_back(collective(sink, st_.dp_reduce, OpKind::DpAllReduce, st_.dp_allreduce_channel, flows, {}));
    optimizer_step(sink, held.non_expert, held.expert, reduced);
    return;
  }
  if (fsdp_ && w_.schedule().optimizer_step()) {
    // FSDP: the shards are final once the last reduce-scatter (same stream, in order) is done.
    const HeldParams held = model_held_params(plan_, w_.params());
    const OpRef last_reduce = sink.next_ref(st_.dp_reduce);
    std::vector<OpRef> after;
    if (last_reduce.seq > 0) after.push_back(OpRef(last_reduce.gpu(), st_.dp_reduce, last_reduce.seq - 1));
    optimizer_step(sink, held.non_expert, held.expert, after);
    return;
  }
  if (buckets_.empty()) return;
  // ZeRO-1 without overlap_grad_reduce: every chunk's gradients after the rank's last backward (as
  // Megatron's finalize_model_grads does once the schedule is over), one collective per chunk.
  if (plan_.parallel.zero == 1 && !plan_.parallel.overlap_grad_reduce)
    for (int32_t c = 0; c < int32_t(buckets_.size()); ++c) reduce_bucket(sink, c, std::string::npos);
  double non_expert = 0, expert = 0;
  for (int32_t c = 0; c < w_.schedule().chunks_per_rank(); ++c) {
    const int64_t stage = w_.schedule().layer_slot(w_.schedule().stage_of(rank_, c));
    non_expert += w_.stage_non_expert_params(stage);
    expert += w_.stage_expert_params_per_gpu(stage);
  }
  // The (sharded) optimizer step once the gradients are reduced. overlap_param_gather: the gathers
  // of the updated parameters ran ahead of the forward (params_for). Otherwise, after the step,
  // every GPU gathers the updated BF16 parameters.
  // The reduce-scatters share one stream, which runs them in order: the last one ends after the
  // others (a dependency on each would pass the op's limit with thousands of buckets).
  std::vector<OpRef> reduced;
  if (!reduce_scatters_.empty()) reduced.push_back(reduce_scatters_.back());
  const std::vector<OpRef> stepped = optimizer_step(sink, non_expert, expert, reduced);
  if (plan_.parallel.overlap_param_gather) return;
  const RingFlows flows = dp_ring_flows(plan_, dp_group_, gpu_, non_expert, expert, kBf16Bytes);
  collective(sink, st_.dp_gather, OpKind::DpAllGather, st_.dp_gather_channel, flows, stepped);
}

std::vector<OpRef> ModelGpuProgram::optimizer_step(ops::OpSink& sink, double non_expert, double expert,
                                                   const std::vector<OpRef>& after) {
  // The optimizer updates this GPU's shard once its gradients are reduced (predicted model only:
  // the speed-of-light step, like the roofline, has none).
  const double shard = zero_shard_params(plan_, HeldParams{non_expert, expert});
  const double seconds = w_.optimizer_seconds(non_expert + expert, shard);
  if (seconds <= 0) return after;
  return {sink.compute(tag(OpKind::Optimizer, Phase::None, {}, -1), ops::Work::fp8(seconds * plan_.hardware.fp8_tflops * 1e12),
                       std::span<const OpRef>(after))};
}

OpRef ModelGpuProgram::collective(ops::OpSink& sink, int stream, OpKind kind, uint8_t channel,
                                  const RingFlows& flows, const std::vector<OpRef>& deps, Phase phase, int64_t layer) {
  out_.clear();
  in_.clear();
  for (const auto& f : flows.out) out_.push_back({f.bytes, uint32_t(f.peer), channel});
  for (const auto& f : flows.in) in_.push_back({f.bytes, uint32_t(f.peer), channel});
  return sink.comm(stream, tag(kind, phase, {}, layer), out_, in_, std::span<const OpRef>(deps));
}

std::pair<double, double> ModelGpuProgram::item_params(int64_t item) const {
  // The head's stage also holds the final norm; layer 0's FSDP unit also holds the embedding.
  const ModelParams& p = w_.params();
  // Embedding and head are vocabulary-parallel over TP (as stage_held_params counts them).
  const double tp = double(w_.layout().tp());
  if (item == kHead) return {double(p.lm_head) / tp + double(p.final_norm), 0.0};
  return {w_.layer_non_expert_params(item) + (item == 0 ? double(p.embedding) / tp : 0.0),
          w_.layer_expert_params_per_gpu(item)};
}

std::optional<OpRef> ModelGpuProgram::fsdp_gather(ops::OpSink& sink, int64_t item) {
  if (!fsdp_) return std::nullopt;
  const auto [non_expert, expert] = item_params(item);
  // Prefetch: the gather waits only for the gather stream's previous op, so it runs while the
  // previous item computes and each layer's parameters arrive one layer ahead.
  return collective(sink, st_.dp_gather, OpKind::FsdpAllGather, st_.dp_gather_channel,
                    dp_ring_flows(plan_, dp_group_, gpu_, non_expert, expert, kBf16Bytes), {});
}

void ModelGpuProgram::fsdp_reduce(ops::OpSink& sink, int64_t item, OpRef after) {
  const auto [non_expert, expert] = item_params(item);
  collective(sink, st_.dp_reduce, OpKind::FsdpReduceScatter, st_.dp_reduce_channel,
             dp_ring_flows(plan_, dp_group_, gpu_, non_expert, expert, kFp32Bytes), {after});
}

}  // namespace stepsim
