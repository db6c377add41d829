#include "workloads/layers/layer_partition.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>
#include <vector>

#include "workloads/layers/framework_split.hpp"
#include "workloads/layers/layer_work.hpp"
#include "schedules/registry.hpp"
#include "vocabulary/model_params.hpp"

namespace stepsim {

double layer_cost_s_per_token(const Plan& plan, int64_t layer) {
  // One token's share of a whole sequence's layer work (F, B, W; balanced routing: k rows per
  // token), at the stated rates; the non-matmul knob is the same for every layer.
  const double seq = double(plan.train.seq_len);
  const LayerWork w = layer_work(plan, layer, 1.0 / seq, double(plan.model.num_experts_per_tok));
  const double fp8 = plan.hardware.fp8_tflops * 1e12, bf16 = plan.hardware.bf16_tflops * 1e12;
  double s = 0;
  for (const PartWork& part : w.parts) s += part.flops(Precision::FP8) / fp8 + part.flops(Precision::BF16) / bf16;
  return s;
}

double lm_head_cost_s_per_token(const Plan& plan) {
  return 6.0 * double(plan.model.vocab_size * plan.model.hidden_size) / (plan.hardware.bf16_tflops * 1e12);
}

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// Linear pipelines (1F1B, interleaved, FSDP's single stage): classic min-max contiguous partition.
std::vector<int64_t> linear_cuts(int64_t stages, int64_t layers, const std::vector<double>& cum, double head) {
  const auto cost = [&](int64_t a, int64_t b) { return cum[size_t(b)] - cum[size_t(a)] + (b == layers ? head : 0.0); };
  // best[s][i]: least max stage cost of stages 0..s-1 covering layers [0, i).
  std::vector<std::vector<double>> best(size_t(stages + 1), std::vector<double>(size_t(layers + 1), kInf));
  std::vector<std::vector<int64_t>> from(size_t(stages + 1), std::vector<int64_t>(size_t(layers + 1), -1));
  best[0][0] = 0;
  for (int64_t s = 0; s < stages; ++s)
    for (int64_t i = s; i <= layers; ++i) {
      if (best[size_t(s)][size_t(i)] == kInf) continue;
      for (int64_t e = i + 1; e <= layers - (stages - s - 1); ++e) {
        const double m = std::max(best[size_t(s)][size_t(i)], cost(i, e));
        if (m < best[size_t(s + 1)][size_t(e)]) {
          best[size_t(s + 1)][size_t(e)] = m;
          from[size_t(s + 1)][size_t(e)] = i;
        }
      }
    }
  std::vector<int64_t> cut(size_t(stages + 1), layers);
  for (int64_t s = stages; s > 0; --s) cut[size_t(s - 1)] = from[size_t(s)][size_t(cut[size_t(s)])];
  return cut;
}

// V shapes (DualPipeV, ZB-V): rank r holds stage r (from the front) and stage 2P-1-r (from the back), so fill both
// ends at once; state = layers taken from the front and from the back after ranks 0..r-1. A first
// pass finds the least possible busiest rank; a second keeps every rank within 0.5 % of it and
// minimises the costliest stage, so the V's chunks stay even (the schedule assumes equal chunks).
std::vector<int64_t> v_shape_cuts(int64_t ranks, int64_t layers, const std::vector<double>& cum, double head,
                                  double rank_cap) {
  const auto cost = [&](int64_t a, int64_t b) { return cum[size_t(b)] - cum[size_t(a)] + (b == layers ? head : 0.0); };
  struct Cell {
    double rank = kInf, stage = kInf;
    int64_t from_i = 0, from_j = 0;
  };
  // Under a cap, rank costs only have to fit; the stage cost decides.
  const bool capped = rank_cap < kInf;
  const auto better = [&](double r1, double s1, const Cell& c) {
    if (capped) return s1 < c.stage || (s1 == c.stage && r1 < c.rank);
    return r1 < c.rank || (r1 == c.rank && s1 < c.stage);
  };
  const size_t n = size_t(layers + 1);
  std::vector<std::vector<Cell>> grid(size_t(ranks + 1), std::vector<Cell>(n * n));
  grid[0][0].rank = grid[0][0].stage = 0;
  // A stage rarely needs more than a few times its fair share of layers.
  const int64_t widest = std::min(layers, 3 * layers / (2 * ranks) + 3);
  for (int64_t r = 0; r < ranks; ++r)
    for (int64_t i = 0; i <= layers; ++i)
      for (int64_t j = 0; i + j <= layers; ++j) {
        const Cell& prev = grid[size_t(r)][size_t(i) * n + size_t(j)];
        if (prev.rank == kInf) continue;
        for (int64_t a = 1; a <= widest; ++a)
          for (int64_t b = 1; b <= widest; ++b) {
            const int64_t left = layers - i - j - a - b;
            const bool last = r + 1 == ranks;
            if (left < 0 || (last && left != 0) || (!last && left < 2 * (ranks - r - 1))) continue;
            const double front = cost(i, i + a), back = cost(layers - j - b, layers - j);
            if (front + back > rank_cap) continue;
            const double rank = std::max(prev.rank, front + back);
            const double stage = std::max({prev.stage, front, back});
            Cell& slot = grid[size_t(r + 1)][size_t(i + a) * n + size_t(j + b)];
            if (better(rank, stage, slot)) slot = {rank, stage, i, j};
          }
      }
  // Recover the front and back cuts, then list all 2P stage boundaries in layer order.
  Cell end;
  int64_t fi = 0, fj = 0;
  for (int64_t i = 0; i <= layers; ++i) {
    const Cell& c = grid[size_t(ranks)][size_t(i) * n + size_t(layers - i)];
    if (c.rank != kInf && better(c.rank, c.stage, end)) {
      end = c;
      fi = i;
      fj = layers - i;
    }
  }
  std::vector<int64_t> cut(size_t(2 * ranks + 1), 0);
  cut[size_t(2 * ranks)] = layers;
  for (int64_t r = ranks; r > 0; --r) {
    cut[size_t(r)] = fi;                       // stage r starts where the front had reached
    cut[size_t(2 * ranks - r)] = layers - fj;  // stage 2P-r starts where the back had reached
    const Cell& c = grid[size_t(r)][size_t(fi) * n + size_t(fj)];
    const int64_t pi = c.from_i, pj = c.from_j;
    fi = pi;
    fj = pj;
  }
  return cut;
}

// The V-shape search above is a dynamic programme over ranks x layers^2 x widths^2; every stage that
// asks for a plan's partition (memory, compute breakdown, workload) would run it again. Its result
// depends only on its arguments: the last few are kept, per thread, and compared exactly.
std::vector<int64_t> v_shape_cuts_kept(int64_t ranks, int64_t layers, const std::vector<double>& cum, double head,
                                       double rank_cap) {
  struct Kept {
    int64_t ranks, layers;
    std::vector<double> cum;
    double head, rank_cap;
    std::vector<int64_t> cut;
  };
  thread_local std::vector<Kept> kept;
  for (const Kept& k : kept)
    if (k.ranks == ranks && k.layers == layers && k.head == head && k.rank_cap == rank_cap && k.cum == cum) return k.cut;
  std::vector<int64_t> cut = v_shape_cuts(ranks, layers, cum, head, rank_cap);
  if (kept.size() >= 16) kept.erase(kept.begin());
  kept.push_back({ranks, layers, cum, head, rank_cap, cut});
  return cut;
}

// Which split a plan runs over its `stages` slots in layer order, and the counts when they are
// not stepsim's to balance: parallel.stage_layers as given, else the release's framework's
// (software.pipeline_split). Megatron-Core divides the layers evenly over pp x vp stages and stops
// when they do not divide (embedding and loss counted only under NeMo's flags, which a plan states
// with stage_layers); torchtitan counts the embedding and the head as one layer each (its first /
// last_stage_less_layers defaults). Empty counts: balanced, with the framework's refusal if any.
struct ChosenSplit {
  SplitOrigin origin;
  std::vector<int64_t> counts;
};

ChosenSplit choose_split(const Plan& plan, int64_t stages) {
  const int64_t layers = plan.model.num_hidden_layers;
  if (int64_t(plan.parallel.stage_layers.size()) == stages)
    return {{SplitOrigin::Given, ""}, plan.parallel.stage_layers};
  if (stages <= 1) return {};
  try {
    switch (plan.software.pipeline_split) {
      case PipelineSplit::Balanced: return {};
      case PipelineSplit::Megatron:
        if (layers % stages == 0)
          return {{SplitOrigin::Framework, ""}, std::vector<int64_t>(size_t(stages), layers / stages)};
        return {{SplitOrigin::Balanced, "Megatron-Core would stop here: " + std::to_string(layers) +
                                            " layers do not divide evenly over " + std::to_string(stages) +
                                            " stages; give the recipe's split as parallel.stage_layers"},
                {}};
      case PipelineSplit::Torchtitan: return {{SplitOrigin::Framework, ""}, torchtitan_split(stages, layers, 1, 1)};
    }
  } catch (const SplitError& e) {
    return {{SplitOrigin::Balanced, std::string("torchtitan refuses its own split: ") + e.what()}, {}};
  }
  return {};
}

}  // namespace

SplitOrigin split_origin(const Plan& plan) {
  return choose_split(plan, sched::make_unchecked_schedule(plan)->path_stages()).origin;
}

std::vector<StageLayers> partition_layers(const Plan& plan) {
  const auto schedule = sched::make_unchecked_schedule(plan);
  const int64_t stages = schedule->path_stages(), layers = plan.model.num_hidden_layers;
  // Placed as the plan or the release's framework gives them (validate_plan checked a given list:
  // one count per stage, summing to the layers), else balanced below.
  if (const ChosenSplit chosen = choose_split(plan, stages); !chosen.counts.empty()) {
    std::vector<StageLayers> out(static_cast<size_t>(stages));
    int64_t first = 0;
    for (int64_t s = 0; s < stages; ++s) {
      out[size_t(s)] = {first, chosen.counts[size_t(s)], s + 1 == stages && schedule->runs_lm_head()};
      first += chosen.counts[size_t(s)];
    }
    return out;
  }
  std::vector<double> cum(static_cast<size_t>(layers + 1), 0.0);
  for (int64_t i = 0; i < layers; ++i) cum[size_t(i + 1)] = cum[size_t(i)] + layer_cost_s_per_token(plan, i);
  const double head = lm_head_cost_s_per_token(plan);
  std::vector<int64_t> cut;
  if (schedule->v_shape()) {
    const int64_t ranks = stages / 2;
    cut = v_shape_cuts_kept(ranks, layers, cum, head, kInf);
    double busiest = 0;
    for (int64_t r = 0; r < ranks; ++r) {
      const int64_t back = 2 * ranks - 1 - r;
      busiest = std::max(busiest, cum[size_t(cut[size_t(r + 1)])] - cum[size_t(cut[size_t(r)])] +
                                      cum[size_t(cut[size_t(back + 1)])] - cum[size_t(cut[size_t(back)])] +
                                      (r == 0 ? head : 0.0));
    }
    cut = v_shape_cuts_kept(ranks, layers, cum, head, busiest * 1.005);
  } else {
    cut = linear_cuts(stages, layers, cum, head);
  }
  std::vector<StageLayers> out(static_cast<size_t>(stages));
  for (int64_t s = 0; s < stages; ++s)
    out[size_t(s)] = {cut[size_t(s)], cut[size_t(s + 1)] - cut[size_t(s)], s + 1 == stages && schedule->runs_lm_head()};
  return out;
}

}  // namespace stepsim
