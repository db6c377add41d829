#include "workloads/deepseek/model_program.hpp"

#include <algorithm>

#include "schedules/pipeline_flow.hpp"
#include "workloads/model/model_params.hpp"

namespace stepsim {

using engine::OpKind;
using engine::OpRef;
using engine::Phase;

namespace {

constexpr double kBf16Bytes = 2, kFp32Bytes = 4;

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

engine::Tag tag(OpKind kind, Phase phase, const sched::ChunkRef& ref, int64_t layer,
                const sched::ChunkRef* partner = nullptr, uint8_t half = 0) {
  engine::Tag t;
  if (partner) {
    t.microbatch2 = uint16_t(partner->mb);
    t.chunk2 = uint8_t(partner->chunk);
  }
  t.kind = kind;
  t.phase = phase;
  t.chunk = uint8_t(ref.chunk);
  t.microbatch = uint16_t(ref.mb);
  t.layer = layer < 0 ? engine::kNoIndex : uint16_t(layer);
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
OpRef last_compute(const engine::OpSink& sink) {
  const OpRef next = sink.next_ref(kStreamCompute);
  return OpRef(next.gpu(), kStreamCompute, next.seq > 0 ? next.seq - 1 : 0);
}

}  // namespace

ModelGpuProgram::ModelGpuProgram(const ModelWorkload& workload, int64_t gpu)
    : engine::ScheduledGpuProgram(workload.schedule().program(workload.plan().parallel.schedule == Schedule::Fsdp
                                                                   ? 0
                                                                   : workload.layout().pipeline_rank(gpu))),
      w_(workload),
      plan_(workload.plan()),
      gpu_(gpu) {
  fsdp_ = plan_.parallel.zero == 3;
  const RankLayout& layout = w_.layout();
  rank_ = fsdp_ ? 0 : layout.pipeline_rank(gpu);
  dp_group_ = {layout.grad_group(gpu), layout.expert_dp_group(gpu)};
  // ZeRO-1: a chunk's gradients are final after the last op that runs its weight gradients.
  final_grad_op_.assign(size_t(w_.schedule().chunks_per_rank()), -1);
  for (size_t i = 0; i < items().size(); ++i) {
    const auto& op = items()[i];
    const bool grads = op.pass == sched::Pass::W || (op.has_backward() && !op.zero_bubble);
    if (grads) final_grad_op_[size_t(op.bwd.chunk)] = int64_t(i);
  }
}

ModelGpuProgram::Pass ModelGpuProgram::forward_pass(sched::ChunkRef ref) const {
  Pass p;
  p.ref = ref;
  p.stage = w_.schedule().stage_of(rank_, ref.chunk);
  const StageLayers& s = w_.stages()[size_t(p.stage)];
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

void ModelGpuProgram::receive(Pass& pass, bool backward, engine::OpSink& sink) {
  const auto& s = w_.schedule();
  const auto t = backward ? sched::backward_input(s, rank_, pass.ref) : sched::forward_input(s, rank_, pass.ref);
  if (!t) return;  // first stage, or the gradient starts from the local loss
  if (t->peer_rank == rank_) {
    // The V's turn on the last rank: the input was produced by this rank's other chunk.
    const auto it = handoff_.find({backward, pass.ref.mb});
    if (it != handoff_.end()) pass.last = it->second;
    return;
  }
  const double bytes = w_.sequences(gpu_, pass.ref.mb) * double(plan_.train.seq_len) *
                       double(plan_.model.hidden_size) * kBf16Bytes;
  const engine::FlowSpec in{bytes, uint32_t(w_.layout().on_pipeline_rank(gpu_, t->peer_rank)), t->channel};
  pass.last = sink.comm(kStreamPpRecv + t->channel, tag(OpKind::PpRecv, backward ? Phase::Backward : Phase::Forward, pass.ref, -1),
                        {}, std::span(&in, 1), std::span<const OpRef>{});
}

void ModelGpuProgram::send(const Pass& pass, bool backward, engine::OpSink& sink) {
  // Ops on the compute stream are ordered anyway; only a comm op needs an explicit dependency.
  const auto& s = w_.schedule();
  const auto t = backward ? sched::backward_output(s, rank_, pass.ref) : sched::forward_output(s, rank_, pass.ref);
  if (!t) return;
  if (t->peer_rank == rank_) {
    if (pass.last) handoff_[{backward, pass.ref.mb}] = *pass.last;
    return;
  }
  const double bytes = w_.sequences(gpu_, pass.ref.mb) * double(plan_.train.seq_len) *
                       double(plan_.model.hidden_size) * kBf16Bytes;
  const engine::FlowSpec out{bytes, uint32_t(w_.layout().on_pipeline_rank(gpu_, t->peer_rank)), t->channel};
  const auto deps = present(pass.last);
  sink.comm(kStreamPpSend + t->channel, tag(OpKind::PpSend, backward ? Phase::Backward : Phase::Forward, pass.ref, -1),
            std::span(&out, 1), {}, std::span<const OpRef>(deps));
}

OpRef ModelGpuProgram::compute(engine::OpSink& sink, int64_t layer, LayerPart part, const sched::ChunkRef& ref,
                               const std::vector<OpRef>& deps) {
  const PartCost& c = w_.cost(layer, part);
  const double seqs = w_.sequences(gpu_, ref.mb) * share_;
  // This GPU's experts' rows: k per token of its EP group on average, more if they are popular.
  const double rows = w_.routed_rows(gpu_, layer, ref.mb) * share_;
  const double fp8_rate = plan_.hardware.fp8_tflops * 1e12, bf16_rate = plan_.hardware.bf16_tflops * 1e12;
  const double flops = c.fp8_flops_per_seq * seqs + c.routed_flops_per_row * rows +
                       c.bf16_flops_per_seq * seqs * (fp8_rate / bf16_rate) + c.nonmatmul_s_per_seq * seqs * fp8_rate;
  const bool attention = part == LayerPart::AttnF || part == LayerPart::AttnB || part == LayerPart::AttnW;
  const OpKind kind = attention ? OpKind::Attention : w_.layer_is_moe(layer) ? OpKind::MoeGemm : OpKind::DenseMlp;
  return sink.compute(tag(kind, phase_of(part), ref, layer, partner_, half_), engine::Work::fp8(flops),
                      std::span<const OpRef>(deps));
}

OpRef ModelGpuProgram::head(engine::OpSink& sink, Phase phase, const sched::ChunkRef& ref, std::optional<OpRef> dep) {
  const double flops = w_.head_flops_per_seq() * w_.sequences(gpu_, ref.mb) * share_;
  const auto deps = present(dep);
  return sink.compute(tag(OpKind::Head, phase, ref, -1, nullptr, half_), engine::Work::bf16(flops), std::span<const OpRef>(deps));
}

OpRef ModelGpuProgram::all_to_all(engine::OpSink& sink, OpKind kind, Phase phase, int64_t layer,
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
    for (const auto& f : a.out) c.out.push_back({f.bytes, uint32_t(f.peer), kChannelEp});
    for (const auto& f : a.in) c.in.push_back({f.bytes, uint32_t(f.peer), kChannelEp});
    it = a2a_cache_.emplace(key, std::move(c)).first;
  }
  // Handshake first (DeepEP's notify); a forward dispatch also builds the layout the rest reuse.
  const double setup_s = plan_.hardware.a2a_latency_s +
                         (kind == OpKind::EpDispatch && phase == Phase::Forward ? plan_.hardware.a2a_layout_latency_s : 0.0);
  return sink.comm(kStreamEp, tag(kind, phase, ref, layer, partner_, half_), it->second.out, it->second.in, {dep}, setup_s);
}

void ModelGpuProgram::forward_item(Pass& f, int64_t item, engine::OpSink& sink) {
  const auto gathered = fsdp_gather(sink, item);
  if (item == kHead) {
    f.last = head(sink, Phase::Forward, f.ref, f.last ? f.last : gathered);
    return;
  }
  const OpRef attn = compute(sink, item, LayerPart::AttnF, f.ref, present(f.last, gathered));
  if (!w_.layer_is_moe(item)) {
    f.last = compute(sink, item, LayerPart::MlpF, f.ref, {});
    return;
  }
  const OpRef d = all_to_all(sink, OpKind::EpDispatch, Phase::Forward, item, f.ref, true, attn);
  const OpRef m = compute(sink, item, LayerPart::MlpF, f.ref, {d});
  f.last = all_to_all(sink, OpKind::EpCombine, Phase::Forward, item, f.ref, false, m);
}

OpRef ModelGpuProgram::recomputed_all_to_all(engine::OpSink& sink, int64_t layer, const sched::ChunkRef& ref, OpRef dep) {
  if (plan_.parallel.recompute != Recompute::Full) return dep;
  // Full recompute reruns the layer's forward, its dispatch and combine included, before the
  // backward can start (the recomputed compute itself is charged inside the backward parts).
  const OpRef d = all_to_all(sink, OpKind::EpDispatch, Phase::Backward, layer, ref, true, dep);
  return all_to_all(sink, OpKind::EpCombine, Phase::Backward, layer, ref, false, d);
}

void ModelGpuProgram::backward_item(Pass& b, int64_t item, engine::OpSink& sink) {
  const auto gathered = fsdp_gather(sink, item);
  if (item == kHead) {
    b.last = head(sink, Phase::Backward, b.ref, b.last ? b.last : gathered);
    if (!b.zero_bubble) head(sink, Phase::Weight, b.ref, std::nullopt);
    if (fsdp_) fsdp_reduce(sink, item, *b.last);
    return;
  }
  const auto deps = present(b.last, gathered);
  if (!w_.layer_is_moe(item)) {
    compute(sink, item, LayerPart::MlpB, b.ref, deps);
    if (!b.zero_bubble) compute(sink, item, LayerPart::MlpW, b.ref, {});
  } else {
    // Combine's gradient goes to the experts (FP8), dispatch's gradient comes back (BF16).
    const OpRef cb = all_to_all(sink, OpKind::EpCombine, Phase::Backward, item, b.ref, true,
                                recomputed_all_to_all(sink, item, b.ref, deps.empty() ? last_compute(sink) : deps.back()));
    const OpRef mb = compute(sink, item, LayerPart::MlpB, b.ref, {cb});
    if (!b.zero_bubble) compute(sink, item, LayerPart::MlpW, b.ref, {});
    const OpRef db = all_to_all(sink, OpKind::EpDispatch, Phase::Backward, item, b.ref, false, mb);
    b.last = compute(sink, item, LayerPart::AttnB, b.ref, {db});
    if (!b.zero_bubble) {
      const OpRef aw = compute(sink, item, LayerPart::AttnW, b.ref, {});
      if (fsdp_) fsdp_reduce(sink, item, aw);
    }
    return;
  }
  b.last = compute(sink, item, LayerPart::AttnB, b.ref, {});
  if (!b.zero_bubble) {
    const OpRef aw = compute(sink, item, LayerPart::AttnW, b.ref, {});
    if (fsdp_) fsdp_reduce(sink, item, aw);
  }
}

void ModelGpuProgram::overlapped_moe_layers(Pass& f, int64_t fl, Pass& b, int64_t bl, engine::OpSink& sink) {
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
  const OpRef attn_f = compute(sink, fl, LayerPart::AttnF, f.ref, present(f.last));
  as_b();
  const OpRef mlp_b = compute(sink, bl, LayerPart::MlpB, b.ref, {cb});
  as_f();
  const OpRef df = all_to_all(sink, OpKind::EpDispatch, Phase::Forward, fl, f.ref, true, attn_f);
  as_b();
  if (!b.zero_bubble) compute(sink, bl, LayerPart::MlpW, b.ref, {});
  as_f();
  const OpRef mlp_f = compute(sink, fl, LayerPart::MlpF, f.ref, {df});
  as_b();
  const OpRef db = all_to_all(sink, OpKind::EpDispatch, Phase::Backward, bl, b.ref, false, mlp_b);
  b.last = compute(sink, bl, LayerPart::AttnB, b.ref, {db});
  as_f();
  f.last = all_to_all(sink, OpKind::EpCombine, Phase::Forward, fl, f.ref, false, mlp_f);
  as_b();
  if (!b.zero_bubble) compute(sink, bl, LayerPart::AttnW, b.ref, {});
}

// A lone forward chunk as two half-microbatches (parallel.split_lone_chunks): per MoE layer the
// halves alternate on the compute stream, so one half's attention or experts run while the other
// half's dispatch or combine moves (the two-micro-batch overlap DeepSeek uses where no F&B
// partner exists). Both halves start from the received input; the chunk ends with the second.
void ModelGpuProgram::forward_halves(Pass& f, engine::OpSink& sink) {
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
    const OpRef attn_a = compute(sink, item, LayerPart::AttnF, a.ref, present(a.last));
    const OpRef d_a = all_to_all(sink, OpKind::EpDispatch, Phase::Forward, item, a.ref, true, attn_a);
    half(2);
    const OpRef attn_b = compute(sink, item, LayerPart::AttnF, b.ref, present(b.last));
    half(1);
    const OpRef m_a = compute(sink, item, LayerPart::MlpF, a.ref, {d_a});
    half(2);
    const OpRef d_b = all_to_all(sink, OpKind::EpDispatch, Phase::Forward, item, b.ref, true, attn_b);
    half(1);
    a.last = all_to_all(sink, OpKind::EpCombine, Phase::Forward, item, a.ref, false, m_a);
    half(2);
    const OpRef m_b = compute(sink, item, LayerPart::MlpF, b.ref, {d_b});
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
void ModelGpuProgram::backward_halves(Pass& bp, engine::OpSink& sink) {
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
    const OpRef mb_a = compute(sink, item, LayerPart::MlpB, a.ref, {cb_a});
    if (!bp.zero_bubble) compute(sink, item, LayerPart::MlpW, a.ref, {});
    const OpRef db_a = all_to_all(sink, OpKind::EpDispatch, Phase::Backward, item, a.ref, false, mb_a);
    half(2);
    const OpRef mb_b = compute(sink, item, LayerPart::MlpB, b.ref, {cb_b});
    if (!bp.zero_bubble) compute(sink, item, LayerPart::MlpW, b.ref, {});
    const OpRef db_b = all_to_all(sink, OpKind::EpDispatch, Phase::Backward, item, b.ref, false, mb_b);
    half(1);
    a.last = compute(sink, item, LayerPart::AttnB, a.ref, {db_a});
    if (!bp.zero_bubble) compute(sink, item, LayerPart::AttnW, a.ref, {});
    half(2);
    b.last = compute(sink, item, LayerPart::AttnB, b.ref, {db_b});
    if (!bp.zero_bubble) compute(sink, item, LayerPart::AttnW, b.ref, {});
  }
  share_ = 1;
  half_ = 0;
  bp.last = b.last;
}

bool ModelGpuProgram::split_lone(const Pass& p) const {
  if (!plan_.parallel.split_lone_chunks || fsdp_) return false;
  return std::any_of(p.items.begin(), p.items.end(), [&](int64_t i) { return i >= 0 && w_.layer_is_moe(i); });
}

void ModelGpuProgram::weight_pass(sched::ChunkRef ref, engine::OpSink& sink) {
  Pass b = backward_pass(ref, false);
  for (const int64_t item : b.items) {
    if (item == kHead) {
      head(sink, Phase::Weight, ref, std::nullopt);
      continue;
    }
    compute(sink, item, LayerPart::MlpW, ref, {});
    compute(sink, item, LayerPart::AttnW, ref, {});
  }
}

void ModelGpuProgram::expand(const sched::ChunkOp& op, size_t index, engine::OpSink& sink) {
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
  // ZeRO-1: reduce-scatter a chunk's gradients as soon as they are final.
  if (fsdp_ || plan_.parallel.schedule == Schedule::Capture) return;  // capture: no ZeRO collectives
  for (size_t c = 0; c < final_grad_op_.size(); ++c) {
    if (final_grad_op_[c] != int64_t(index)) continue;
    const int64_t stage = w_.schedule().stage_of(rank_, int32_t(c));
    const RingFlows flows = dp_ring_flows(plan_, dp_group_, gpu_, w_.stage_non_expert_params(stage),
                                          w_.stage_expert_params_per_gpu(stage), kFp32Bytes);
    reduce_scatters_.push_back(collective(sink, kStreamDpReduce, OpKind::DpReduceScatter, kChannelDpReduce, flows,
                                          {last_compute(sink)}));
  }
}

void ModelGpuProgram::finish(engine::OpSink& sink) {
  if (fsdp_ || plan_.parallel.schedule == Schedule::Capture) return;  // capture: no ZeRO collectives
  // After the (sharded) optimizer step, every GPU gathers the updated BF16 parameters.
  double non_expert = 0, expert = 0;
  for (int32_t c = 0; c < w_.schedule().chunks_per_rank(); ++c) {
    const int64_t stage = w_.schedule().stage_of(rank_, c);
    non_expert += w_.stage_non_expert_params(stage);
    expert += w_.stage_expert_params_per_gpu(stage);
  }
  const RingFlows flows = dp_ring_flows(plan_, dp_group_, gpu_, non_expert, expert, kBf16Bytes);
  collective(sink, kStreamDpGather, OpKind::DpAllGather, kChannelDpGather, flows, reduce_scatters_);
}

OpRef ModelGpuProgram::collective(engine::OpSink& sink, int stream, OpKind kind, uint8_t channel,
                                  const RingFlows& flows, const std::vector<OpRef>& deps) {
  out_.clear();
  in_.clear();
  for (const auto& f : flows.out) out_.push_back({f.bytes, uint32_t(f.peer), channel});
  for (const auto& f : flows.in) in_.push_back({f.bytes, uint32_t(f.peer), channel});
  return sink.comm(stream, tag(kind, Phase::None, {}, -1), out_, in_, std::span<const OpRef>(deps));
}

std::pair<double, double> ModelGpuProgram::item_params(int64_t item) const {
  // The head's stage also holds the final norm; layer 0's FSDP unit also holds the embedding.
  const ModelParams& p = w_.params();
  if (item == kHead) return {double(p.lm_head + p.final_norm), 0.0};
  return {w_.layer_non_expert_params(item) + (item == 0 ? double(p.embedding) : 0.0),
          w_.layer_expert_params_per_gpu(item)};
}

std::optional<OpRef> ModelGpuProgram::fsdp_gather(engine::OpSink& sink, int64_t item) {
  if (!fsdp_) return std::nullopt;
  const auto [non_expert, expert] = item_params(item);
  // Prefetch: the gather waits only for the gather stream's previous op, so it runs while the
  // previous item computes and each layer's parameters arrive one layer ahead.
  return collective(sink, kStreamDpGather, OpKind::FsdpAllGather, kChannelDpGather,
                    dp_ring_flows(plan_, dp_group_, gpu_, non_expert, expert, kBf16Bytes), {});
}

void ModelGpuProgram::fsdp_reduce(engine::OpSink& sink, int64_t item, OpRef after) {
  const auto [non_expert, expert] = item_params(item);
  collective(sink, kStreamDpReduce, OpKind::FsdpReduceScatter, kChannelDpReduce,
             dp_ring_flows(plan_, dp_group_, gpu_, non_expert, expert, kFp32Bytes), {after});
}

}  // namespace stepsim
