// ModelGpuProgram, data parallelism: ZeRO buckets and their reduce-scatters and all-gathers, FSDP's
// per-layer gathers and reduces, HSDP's replica all-reduce, and the optimizer step that ends the step.
#include "workloads/model/model_program.hpp"

#include <algorithm>
#include <limits>
#include <string>

#include "workloads/memory/state_bytes.hpp"
#include "workloads/model/model_program_ops.hpp"
#include "vocabulary/dtype_bytes.hpp"
#include "vocabulary/model_params.hpp"

namespace stepsim {

using ops::OpKind;
using ops::OpRef;
using ops::Phase;
using namespace model_program_ops;

void ModelGpuProgram::init_buckets() {
  // ZeRO-1/2: the data-parallel buckets of each chunk (one per chunk unless overlap_grad_reduce cuts
  // the model's first stage) and, under overlap_param_gather, the order of their all-gathers.
  if (fsdp_ || !w_.schedule().optimizer_step()) return;
  const int32_t chunks = w_.schedule().chunks_per_rank();
  buckets_.resize(size_t(chunks));
  forwarded_.resize(size_t(chunks));
  for (int32_t c = 0; c < chunks; ++c) {
    ChunkBuckets& cb = buckets_[size_t(c)];
    cb.items = backward_pass(sched::ChunkRef{0, c}, false).items;
    std::vector<std::pair<double, double>> params, gathered;
    for (const int64_t item : cb.items) {
      params.push_back(item_params(item));
      gathered.push_back(item_gathered_bytes(item));
    }
    const bool first_stage = w_.schedule().layer_slot(w_.schedule().stage_of(rank_, c)) == 0;
    const double size = plan_.parallel.overlap_grad_reduce && first_stage ? ddp_bucket_params(plan_)
                                                                         : std::numeric_limits<double>::infinity();
    cb.cut = dp_buckets(params, size, gathered);
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
  const RingFlows flows = dp_ring_flows(plan_, dp_group_, gpu_, b.gathered_non_expert_bytes, b.gathered_expert_bytes, 1.0);
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
  const RingFlows flows = dp_ring_flows(plan_, dp_group_, gpu_, non_expert, expert, plan_.parallel.grad_reduce_bytes());
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

void ModelGpuProgram::finish(ops::OpSink& sink) {
  if (fsdp_ && replicas_.members.size() + replicas_.expert_members.size() > 2) {
    // HSDP: after the last reduce-scatter (same stream), all-reduce each gradient shard across the
    // replicas of the shard group: a ring all-reduce moves 2 (R-1)/R of the shard (in
    // parallel.grad_reduce_dtype).
    const HeldParams held = model_held_params(plan_, w_.params());
    const double shard = held.non_expert / double(dp_group_.members.size());
    const double expert_shard = held.expert / double(dp_group_.expert_members.size());
    const auto all_reduce = [&](const std::vector<int64_t>& ring, double params, RingFlows& flows) {
      const size_t n = ring.size();
      if (n < 2 || params <= 0) return;
      const size_t i = size_t(std::find(ring.begin(), ring.end(), gpu_) - ring.begin());
      const double bytes = 2.0 * double(n - 1) / double(n) * params * plan_.parallel.grad_reduce_bytes();
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
  // every GPU gathers the updated parameters (BF16, or the FP8 GEMMs' weights in their format).
  // The reduce-scatters share one stream, which runs them in order: the last one ends after the
  // others (a dependency on each would pass the op's limit with thousands of buckets).
  std::vector<OpRef> reduced;
  if (!reduce_scatters_.empty()) reduced.push_back(reduce_scatters_.back());
  const std::vector<OpRef> stepped = optimizer_step(sink, non_expert, expert, reduced);
  if (plan_.parallel.overlap_param_gather) return;
  double non_expert_bytes = kBf16Bytes * non_expert, expert_bytes = kBf16Bytes * expert;
  if (plan_.parallel.fp8_param_gather) {  // every chunk's buckets: the rank's parameters
    non_expert_bytes = expert_bytes = 0;
    for (const ChunkBuckets& cb : buckets_)
      for (const DpBucket& b : cb.cut.buckets) {
        non_expert_bytes += b.gathered_non_expert_bytes;
        expert_bytes += b.gathered_expert_bytes;
      }
  }
  const RingFlows flows = dp_ring_flows(plan_, dp_group_, gpu_, non_expert_bytes, expert_bytes, 1.0);
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
  const auto [non_expert_bytes, expert_bytes] = item_gathered_bytes(item);
  // Prefetch: the gather waits only for the gather stream's previous op, so it runs while the
  // previous item computes and each layer's parameters arrive one layer ahead.
  return collective(sink, st_.dp_gather, OpKind::FsdpAllGather, st_.dp_gather_channel,
                    dp_ring_flows(plan_, dp_group_, gpu_, non_expert_bytes, expert_bytes, 1.0), {});
}

std::pair<double, double> ModelGpuProgram::item_gathered_bytes(int64_t item) const {
  const auto [non_expert, expert] = item_params(item);
  // The embedding, the head and the final norm stay BF16.
  if (!plan_.parallel.fp8_param_gather || item == kHead) return {kBf16Bytes * non_expert, kBf16Bytes * expert};
  const HeldParams b = gathered_bytes(plan_, {non_expert, expert}, layer_quantised_params(plan_, w_.params(), item));
  return {b.non_expert, b.expert};
}

void ModelGpuProgram::fsdp_reduce(ops::OpSink& sink, int64_t item, OpRef after) {
  const auto [non_expert, expert] = item_params(item);
  collective(sink, st_.dp_reduce, OpKind::FsdpReduceScatter, st_.dp_reduce_channel,
             dp_ring_flows(plan_, dp_group_, gpu_, non_expert, expert, plan_.parallel.grad_reduce_bytes()), {after});
}

}  // namespace stepsim
