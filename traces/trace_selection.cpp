#include "traces/trace_selection.hpp"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <sstream>

#include "vocabulary/config_error.hpp"
#include "vocabulary/rank_layout.hpp"

namespace stepsim {
namespace {

int64_t trace_gpus(const Plan& plan) {
  return plan.workload.kind == WorkloadKind::Synthetic ? RankLayout(plan).pp() : plan.gpus();
}

int64_t parse_int(const std::string& text, const std::string& whole, int64_t gpus) {
  const std::string fix = "--trace-ranks: '" + whole + "' is not a list of GPU ids like 0-7,64 (ids 0.." +
                          std::to_string(gpus - 1) + ")";
  if (text.empty() || text.find_first_not_of("0123456789") != std::string::npos) throw ConfigError(fix);
  errno = 0;
  const long long v = std::strtoll(text.c_str(), nullptr, 10);
  if (errno != 0 || v >= gpus) throw ConfigError(fix);
  return v;
}

double parse_seconds(const std::string& text, const std::string& whole) {
  char* end = nullptr;
  errno = 0;
  const double v = std::strtod(text.c_str(), &end);
  if (errno != 0 || end != text.c_str() + text.size() || !std::isfinite(v) || v < 0)
    throw ConfigError("--trace-window: '" + whole +
                      "' is not a window like 1.0:2.5 (seconds into the step, begin <= end, both >= 0)");
  return v;
}

}  // namespace

TraceOptions default_trace_options(const Plan& plan, const std::vector<bool>& simulated) {
  TraceOptions o;
  if (plan.workload.kind == WorkloadKind::Synthetic) {
    o.gpus_per_node = 1;  // the synthetic platform: one GPU per node
    return o;
  }
  o.gpus_per_node = plan.cluster.gpus_per_node;
  if (plan.parallel.zero == 3) {
    for (int64_t g = 0; g < std::min(plan.gpus(), plan.cluster.gpus_per_node); ++g) o.ranks.push_back(int32_t(g));
  } else {
    // Data-parallel replica 0: its first GPU on every pipeline rank (the GPUs a reduced replay
    // simulates), and with TP or CP its whole TP x CP group on pipeline rank 0.
    const RankLayout layout(plan);
    for (int64_t c = 0; c < layout.cp(); ++c)
      for (const int64_t g : layout.tp_group(layout.gpu(0, 0, c, 0))) o.ranks.push_back(int32_t(g));
    for (int64_t p = 1; p < layout.pp(); ++p) o.ranks.push_back(int32_t(layout.gpu(p, 0)));
    const auto runs = [&](int64_t g) { return simulated.empty() || (size_t(g) < simulated.size() && simulated[size_t(g)]); };
    for (int32_t& g : o.ranks) {
      const int64_t p = layout.pipeline_rank(g), place = g - layout.gpu(p, layout.dp_rank(g));
      for (int64_t d = 0; d < layout.dp() && !runs(g); ++d)
        if (runs(layout.gpu(p, d) + place)) g = int32_t(layout.gpu(p, d) + place);
    }
    std::sort(o.ranks.begin(), o.ranks.end());
  }
  return o;
}

TraceOptions trace_options(const Plan& plan, const std::string& ranks, const std::string& window) {
  TraceOptions o = default_trace_options(plan);
  if (!ranks.empty()) {
    const int64_t gpus = trace_gpus(plan);
    o.ranks.clear();
    // One flag per GPU, so overlapping ranges repeated many times cost no memory.
    std::vector<bool> chosen(size_t(gpus), false);
    std::stringstream in(ranks);
    for (std::string item; std::getline(in, item, ',');) {
      const size_t dash = item.find('-');
      const int64_t lo = parse_int(item.substr(0, dash), ranks, gpus);
      const int64_t hi = dash == std::string::npos ? lo : parse_int(item.substr(dash + 1), ranks, gpus);
      if (hi < lo)
        throw ConfigError("--trace-ranks: '" + ranks + "' has a range going down (" + item + "); write it low-high");
      std::fill(chosen.begin() + lo, chosen.begin() + hi + 1, true);
    }
    for (int64_t g = 0; g < gpus; ++g)
      if (chosen[size_t(g)]) o.ranks.push_back(int32_t(g));
    if (o.ranks.empty() || ranks.back() == ',')
      throw ConfigError("--trace-ranks: '" + ranks + "' is not a list of GPU ids like 0-7,64");
  }
  if (!window.empty()) {
    const size_t colon = window.find(':');
    if (colon == std::string::npos || window.find(':', colon + 1) != std::string::npos)
      throw ConfigError("--trace-window: '" + window + "' is not a window like 1.0:2.5 (seconds into the step)");
    const std::string a = window.substr(0, colon), b = window.substr(colon + 1);
    o.window_begin_s = a.empty() ? 0.0 : parse_seconds(a, window);
    o.window_end_s = b.empty() ? std::numeric_limits<double>::infinity() : parse_seconds(b, window);
    if (o.window_end_s < o.window_begin_s)
      throw ConfigError("--trace-window: '" + window + "' ends before it begins; write begin:end in seconds");
  }
  return o;
}

}  // namespace stepsim
