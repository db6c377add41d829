// ModelGpuProgram, mixture-of-experts layers: the expert-parallel all-to-alls, shared experts ahead
// of the dispatch, DualPipe's overlapped F&B pair and the half-microbatch split of lone chunks.
#include "workloads/model/model_program.hpp"

#include "workloads/cost/part_cost.hpp"
#include "workloads/model/model_program_ops.hpp"
#include "workloads/traffic/model_parallel_comm.hpp"

namespace stepsim {

using ops::OpKind;
using ops::OpRef;
using ops::Phase;
using namespace model_program_ops;

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
  // Handshake first (DeepEP's notify, as calibrated from DeepSeek's trace); a forward dispatch also
  // builds the layout the rest reuse.
  const bool deepep = plan_.parallel.moe_dispatcher == MoeDispatcher::DeepEP;
  const bool forward_dispatch = kind == OpKind::EpDispatch && phase == Phase::Forward;
  const double setup_s = (!deepep ? 0.0
                                  : plan_.hardware.a2a_latency_s + (forward_dispatch ? plan_.hardware.a2a_layout_latency_s : 0.0)) +
                         (forward_dispatch ? cost::moe_host_sync_s(plan_) : 0.0);
  if (!etp_) return sink.comm(st_.ep, tag(kind, phase, ref, layer, partner_, half_), it->second.out, it->second.in, {dep}, setup_s);
  // Expert TP: the rows arriving for the experts are all-gathered over the expert-TP group (each GPU
  // runs all of them on its slice of the matrices); what leaves them is first reduce-scattered over
  // it. A ring: each GPU passes on (etp - 1) x its own rows, BF16.
  const double own_rows = w_.routed_rows(gpu_, layer, ref.mb) * share_ / double(w_.layout().etp());
  const double ring_bytes = double(w_.layout().etp() - 1) * own_rows * combine_bytes_per_token(plan_.model);
  const auto etp_op = [&](OpKind k, OpRef d) {
    return ring_collective(sink, st_.ep, k, phase, layer, ref, st_.ep_channel, etp_ring_, ring_bytes, {d});
  };
  if (fp8_payload) {  // towards the experts: all-to-all, then gather
    const OpRef a = sink.comm(st_.ep, tag(kind, phase, ref, layer, partner_, half_), it->second.out, it->second.in, {dep}, setup_s);
    return etp_op(OpKind::EtpAllGather, a);
  }
  const OpRef scattered = etp_op(OpKind::EtpReduceScatter, dep);
  return sink.comm(st_.ep, tag(kind, phase, ref, layer, partner_, half_), it->second.out, it->second.in, {scattered}, setup_s);
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
  if (!plan_.parallel.recompute.full() && !plan_.parallel.recompute.has(Recompute::Moe)) return dep;
  // Full recompute (or the moe module) reruns the layer's forward, its dispatch and combine
  // included, before the backward can start (the recomputed compute is charged inside the backward parts).
  const OpRef d = all_to_all(sink, OpKind::EpDispatch, Phase::Backward, layer, ref, true, dep);
  return all_to_all(sink, OpKind::EpCombine, Phase::Backward, layer, ref, false, d);
}

OpRef ModelGpuProgram::expert_backward(ops::OpSink& sink, int64_t layer, const Pass& b, const sched::ChunkRef& ref,
                                       OpRef combine_grad) {
  const OpRef input_grad = compute(sink, layer, LayerPart::MlpB, ref, {combine_grad});
  if (!fused_weight(b, LayerPart::MlpW) && !experts_weight_first(b)) return input_grad;
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
  if (experts_weight_after(b)) compute(sink, bl, LayerPart::MlpW, b.ref, {});
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
    if (experts_weight_after(bp)) compute(sink, item, LayerPart::MlpW, a.ref, {});
    const OpRef db_a = all_to_all(sink, OpKind::EpDispatch, Phase::Backward, item, a.ref, false, mb_a);
    half(2);
    const OpRef mb_b = expert_backward(sink, item, bp, b.ref, cb_b);
    if (experts_weight_after(bp)) compute(sink, item, LayerPart::MlpW, b.ref, {});
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

}  // namespace stepsim
