#include "vocabulary/rank_layout.hpp"

#include <algorithm>

namespace stepsim {

RankLayout::RankLayout(const Plan& plan)
    : gpus_(std::max<int64_t>(1, plan.gpus())),
      gpus_per_node_(std::max<int64_t>(1, plan.cluster.gpus_per_node)),
      pp_(std::max<int64_t>(1, plan.parallel.pp)),
      cp_(std::max<int64_t>(1, plan.parallel.cp)),
      tp_(std::max<int64_t>(1, plan.parallel.tp)),
      ep_(std::max<int64_t>(1, plan.parallel.ep)),
      etp_(std::max<int64_t>(1, plan.parallel.expert_tp)) {
  shard_ = plan.parallel.fsdp_shard_size;
  stage_gpus_ = std::max<int64_t>(1, gpus_ / pp_);
  dp_ = std::max<int64_t>(1, stage_gpus_ / (cp_ * tp_));
}

RankCoords RankLayout::coords(int64_t gpu) const {
  RankCoords c;
  const int64_t local = gpu % stage_gpus_;
  c.pp = gpu / stage_gpus_;
  c.tp = local % tp_;
  c.cp = local / tp_ % cp_;
  c.dp = local / (tp_ * cp_);
  c.ep = local / etp_ % ep_;
  c.expert_dp = local / (ep_ * etp_);
  return c;
}

int64_t RankLayout::gpu(int64_t pp, int64_t dp, int64_t cp, int64_t tp) const {
  return pp * stage_gpus_ + (dp * cp_ + cp) * tp_ + tp;
}

std::vector<int64_t> RankLayout::strided(int64_t first, int64_t count, int64_t stride) const {
  std::vector<int64_t> out(static_cast<size_t>(count));
  for (int64_t i = 0; i < count; ++i) out[size_t(i)] = first + i * stride;
  return out;
}

std::vector<int64_t> RankLayout::tp_group(int64_t gpu) const { return strided(gpu - gpu % tp_, tp_, 1); }

std::vector<int64_t> RankLayout::cp_group(int64_t gpu) const {
  const RankCoords c = coords(gpu);
  return strided(this->gpu(c.pp, c.dp, 0, c.tp), cp_, tp_);
}

std::vector<int64_t> RankLayout::dp_group(int64_t gpu) const {
  const RankCoords c = coords(gpu);
  return strided(this->gpu(c.pp, 0, c.cp, c.tp), dp_, cp_ * tp_);
}

std::vector<int64_t> RankLayout::grad_group(int64_t gpu) const {
  const RankCoords c = coords(gpu);
  return strided(this->gpu(c.pp, 0, 0, c.tp), dp_ * cp_, tp_);
}

std::vector<int64_t> RankLayout::pp_group(int64_t gpu) const { return strided(gpu % stage_gpus_, pp_, stage_gpus_); }

std::vector<int64_t> RankLayout::ep_group(int64_t gpu) const { return strided(first_of_ep_group(gpu), ep_, etp_); }

std::vector<int64_t> RankLayout::expert_dp_group(int64_t gpu) const {
  return strided(first_gpu_of_rank(pipeline_rank(gpu)) + gpu % stage_gpus_ % (ep_ * etp_), expert_dp(), ep_ * etp_);
}

std::vector<int64_t> RankLayout::etp_group(int64_t gpu) const { return strided(gpu - gpu % etp_, etp_, 1); }

std::vector<int64_t> RankLayout::block_of(const std::vector<int64_t>& group, int64_t gpu, int64_t size) {
  const auto i = std::find(group.begin(), group.end(), gpu) - group.begin();
  const auto first = group.begin() + i / size * size;
  return {first, first + size};
}

std::vector<int64_t> RankLayout::across_blocks(const std::vector<int64_t>& group, int64_t gpu, int64_t size) {
  const int64_t i = std::find(group.begin(), group.end(), gpu) - group.begin();
  std::vector<int64_t> out;
  for (int64_t j = i % size; j < int64_t(group.size()); j += size) out.push_back(group[size_t(j)]);
  return out;
}

std::vector<int64_t> RankLayout::shard_group(int64_t gpu) const {
  const auto g = grad_group(gpu);
  return shard_ > 0 ? block_of(g, gpu, shard_) : g;
}

std::vector<int64_t> RankLayout::shard_replicas(int64_t gpu) const {
  return shard_ > 0 ? across_blocks(grad_group(gpu), gpu, shard_) : std::vector<int64_t>{gpu};
}

std::vector<int64_t> RankLayout::expert_shard_group(int64_t gpu) const {
  const auto e = expert_dp_group(gpu);
  return shard_ > 0 ? block_of(e, gpu, std::max<int64_t>(1, shard_ * tp_ / (ep_ * etp_))) : e;
}

std::vector<int64_t> RankLayout::expert_shard_replicas(int64_t gpu) const {
  return shard_ > 0 ? across_blocks(expert_dp_group(gpu), gpu, std::max<int64_t>(1, shard_ * tp_ / (ep_ * etp_)))
                    : std::vector<int64_t>{gpu};
}

}  // namespace stepsim
