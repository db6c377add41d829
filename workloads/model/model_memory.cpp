#include "workloads/model/model_memory.hpp"

#include "workloads/model/model_workload.hpp"
#include "workloads/memory/activation_bytes.hpp"
#include "workloads/memory/state_bytes.hpp"

namespace stepsim {

using ops::OpKind;
using ops::Phase;

ModelMemory::ModelMemory(const ModelWorkload& w) : w_(w), offload_(w.plan()) {
  const Plan& plan = w.plan();
  // Tokens of a sequence one GPU keeps: sequence parallelism shards every activation over TP (all of
  // them, Korthikanti et al.: 34 s b h / t), context parallelism the sequence over CP.
  const double seq_len = double(plan.train.seq_len) / double(w.layout().token_split());
  for (int64_t l = 0; l < plan.model.num_hidden_layers; ++l) {
    const LayerActivations a = layer_activations(plan, w.layer_is_moe(l));
    saved_per_seq_.push_back(a.saved_per_token * seq_len);
    recompute_per_seq_.push_back(a.recompute_per_token * seq_len);
  }
  head_per_seq_ = head_activation_bytes_per_token(plan.model) * seq_len;
  head_w_per_seq_ = head_weight_gradient_bytes_per_token(plan) * seq_len;
  const bool fsdp = plan.parallel.zero == 3;
  const int64_t ranks = fsdp ? 1 : w.layout().pp();
  for (int64_t rank = 0; rank < ranks; ++rank)
    per_rank_.push_back(stepsim::static_memory(plan, rank_held_params(plan, w.params(), w.schedule(), w.stages(), rank),
                                               rank_quantised_params(plan, w.params(), w.schedule(), w.stages(), rank)));
}

ops::StaticMemory ModelMemory::static_memory(int64_t gpu) const {
  return per_rank_[per_rank_.size() == 1 ? 0 : size_t(w_.layout().pipeline_rank(gpu))];
}

int ModelMemory::activation_events(int64_t gpu, const ops::Tag& t, ops::ActivationEvent* out) const {
  if (t.microbatch == ops::kNoIndex) return 0;
  const bool head = t.kind == OpKind::Head;
  if (!head && (t.layer == ops::kNoIndex || size_t(t.layer) >= saved_per_seq_.size())) return 0;
  // One key per (microbatch, layer or head, saved or recompute set).
  const uint64_t item = head ? saved_per_seq_.size() : t.layer;
  const uint64_t key = uint64_t(t.microbatch) << 32 | item << 1;
  const double seqs = w_.sequences(gpu, t.microbatch);
  int n = 0;
  if (t.phase == Phase::Forward && head) {
    // Two parts: what the weight gradient keeps (freed by W), the rest (freed by the input gradient).
    out[n++] = {true, false, key, seqs * head_w_per_seq_};
    out[n++] = {true, false, key | 1, seqs * (head_per_seq_ - head_w_per_seq_)};
  } else if (t.phase == Phase::Backward && head) {
    out[n++] = {false, false, key | 1, 0};
  } else if (t.phase == Phase::Forward && t.kind == OpKind::Attention) {
    out[n++] = {true, false, key, seqs * saved_per_seq_[t.layer]};
  } else if (t.phase == Phase::Forward && offload_.on()) {
    // The layer's MLP, after its attention allocated: the offloaded layer the next layer's forward
    // waits for leaves the GPU (the compute stream waits for its copy, so nothing allocates between).
    if (const int64_t gone = offload_.released_before_forward_of(t.layer + 1); gone >= 0)
      out[n++] = {false, false, uint64_t(t.microbatch) << 32 | uint64_t(gone) << 1, 0};
  } else if (t.phase == Phase::Backward && !head && t.kind != OpKind::Attention) {
    // The layer's backward starts with its MLP: rebuild the layer (full recompute), or bring an
    // offloaded layer back into a fresh buffer.
    if (recompute_per_seq_[t.layer] > 0) out[n++] = {true, true, key | 1, seqs * recompute_per_seq_[t.layer]};
    if (const int64_t back = offload_.reloaded_before_backward_of(t.layer); back >= 0)
      out[n++] = {true, false, uint64_t(t.microbatch) << 32 | uint64_t(back) << 1, seqs * saved_per_seq_[size_t(back)]};
  } else if (t.phase == Phase::Weight && (head || t.kind == OpKind::Attention)) {
    out[n++] = {false, false, key, 0};
    if (!head) out[n++] = {false, true, key | 1, 0};
  }
  return n;
}

double ModelMemory::saved_bytes(int64_t gpu, int64_t microbatch, int64_t layer) const {
  return w_.sequences(gpu, microbatch) * saved_per_seq_[size_t(layer)];
}

}  // namespace stepsim
