// ModelGpuProgram, one layer part as compute ops: its cost, and the tensor- and context-parallel
// collectives around it (userbuffers' pipelined pieces under parallel.tp_comm_overlap); the LM head.
#include "workloads/model/model_program.hpp"

#include "workloads/model/model_program_ops.hpp"
#include "workloads/traffic/model_parallel_comm.hpp"
#include "vocabulary/dtype_bytes.hpp"

namespace stepsim {

using ops::OpKind;
using ops::OpRef;
using ops::Phase;
using namespace model_program_ops;

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
  if (slice.piece != 0) {  // a piece of a TP block (parallel.tp_comm_overlap) or of the attention around CP's exchanges
    const double column = c.column_flops_per_seq * seqs, row = c.row_flops_per_seq * seqs;
    const double core = c.core_flops_per_seq * seqs;
    flops = slice.column * column + slice.middle * (flops - column - row - core) + slice.row * row + slice.core * core;
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
  const auto tp_op = [&](OpKind kind, double share, const std::vector<OpRef>& d) {
    return ring_collective(sink, st_.tp, kind, phase, layer, ref, st_.tp_channel, tp_ring_, tp_bytes * share, d);
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
    ahead.middle = ahead.row = ahead.column = ahead.core = 0;
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
  // Context parallelism: the part up to the attention core (forward: the column-parallel projections
  // and the rest of the block but the output projection; backward: the output projection's input
  // gradient and the rest but the q/k/v projections'), the core with CP's exchanges (cp_core), then
  // what is left, which is what `rest` computes from here on.
  if (cp) {
    Slice before = rest;
    before.core = 0;
    (forward ? before.row : before.column) = 0;
    before.piece = 4;
    const OpRef pre = compute(sink, layer, part, ref, deps, MlpShare::All, before);
    deps = cp_core(sink, layer, part, ref, {pre}, seqs * seq_len);
    rest.middle = rest.core = 0;
    (forward ? rest.column : rest.row) = 0;
    rest.piece = 7;
  }
  if (forward) {
    if (!ub) {
      OpRef out = compute(sink, layer, part, ref, deps, MlpShare::All, rest);
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
    tail.column = tail.middle = tail.core = 0;
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
  // The input gradient's reduce-scatter, beside the weight gradient when that is its own op.
  return tp ? tp_op(OpKind::TpReduceScatter, 1.0, {out}) : out;
}

OpRef ModelGpuProgram::cp_all_to_all(ops::OpSink& sink, Phase phase, int64_t layer, const sched::ChunkRef& ref,
                                     double bytes, const std::vector<OpRef>& deps) {
  const double each = bytes / double(cp_peers_.size());
  std::vector<ops::FlowSpec> out, in;
  for (const int64_t g : cp_peers_) {
    out.push_back({each, uint32_t(g), st_.cp_channel});
    in.push_back({each, uint32_t(g), st_.cp_channel});
  }
  return sink.comm(st_.cp, tag(OpKind::CpAllToAll, phase, ref, layer, partner_, half_), std::span<const ops::FlowSpec>(out),
                   std::span<const ops::FlowSpec>(in), std::span<const OpRef>(deps));
}

// The attention core with CP's exchanges, as model_parallel_comm.hpp lays them out per
// parallel.cp_comm_type.
std::vector<OpRef> ModelGpuProgram::cp_core(ops::OpSink& sink, int64_t layer, LayerPart part, const sched::ChunkRef& ref,
                                            const std::vector<OpRef>& deps, double tokens) {
  const Phase phase = phase_of(part);
  const bool forward = phase == Phase::Forward;
  const int64_t cp = w_.layout().cp();
  Slice core;
  core.column = core.middle = core.row = 0;
  core.piece = 5;
  const auto ring = [&](OpKind kind, double bytes, const std::vector<OpRef>& d) {
    return ring_collective(sink, st_.cp, kind, phase, layer, ref, st_.cp_channel, cp_ring_, bytes, d);
  };
  const std::vector<CpExchangeBytes> exchanges = cp_exchanges(plan_, tokens, !forward);
  switch (plan_.parallel.cp_comm_type) {
    case CpCommType::P2p: {
      // Transformer Engine's loop, an op per ring step: step i's attention kernel (1/cp of the core)
      // beside the exchange that brings the next step's K/V, each exchange forwarding what the one
      // before brought (so a slow hop paces every rank of the ring, step by step). Backward, the
      // exchange also carries the dK/dV accumulated so far, which waits for the step's kernel, and
      // what follows waits for the last exchange (dK/dV home).
      core.core = 1.0 / double(cp);
      std::vector<OpRef> brought = deps;  // what step i's kernel waits for
      OpRef kernel{}, exchange{};
      for (int64_t i = 0; i < cp; ++i) {
        const bool sends = size_t(i) < exchanges.size();
        std::vector<OpRef> before = brought;
        if (!forward && i > 0) before.push_back(kernel);
        if (sends) exchange = ring(OpKind::CpRing, exchanges[size_t(i)].bytes, before);
        core.piece = i == cp - 1 ? 6 : 5;
        kernel = compute(sink, layer, part, ref, brought, MlpShare::All, core);
        if (sends) brought = {exchange};
      }
      return forward ? std::vector<OpRef>{kernel} : std::vector<OpRef>{kernel, exchange};
    }
    case CpCommType::AllGather: {
      const OpRef gathered = ring(OpKind::CpAllGather, exchanges.front().bytes, deps);
      const OpRef out = compute(sink, layer, part, ref, {gathered}, MlpShare::All, core);
      return {forward ? out : ring(OpKind::CpReduceScatter, exchanges.back().bytes, {out})};
    }
    case CpCommType::A2a: {
      // Forward: Q, K, V in, the output back; backward: the output's gradient in, dQ, dK, dV back.
      const OpRef in = cp_all_to_all(sink, phase, layer, ref, exchanges.front().bytes, deps);
      const OpRef out = compute(sink, layer, part, ref, {in}, MlpShare::All, core);
      return {cp_all_to_all(sink, phase, layer, ref, exchanges.back().bytes, {out})};
    }
  }
  return {compute(sink, layer, part, ref, deps, MlpShare::All, core)};
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

}  // namespace stepsim
