// Helpers for the engine tests: a synthetic-pipeline plan from the default config plus overrides,
// and simulations run in a forked child (SimGrid allows one Engine per process, and the test
// binary may run every test in one process when started by hand).
#pragma once

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <functional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "simulator/config/config_loader.hpp"
#include "simulator/runs/child_run.hpp"
#include "simulator/runs/simulate.hpp"

namespace stepsim::test {

struct Synthetic {
  std::string schedule = "1f1b";
  int pp = 4;
  int microbatches = 8;
  double f_s = 1, b_s = 2, w_s = 1, fb_s = 0;
  double send_bytes = 0;
  std::vector<std::string> extra;  // more key=value overrides
};

// Full precision (std::to_string keeps only 6 decimals).
inline std::string num(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

inline Plan synthetic_plan(const Synthetic& s) {
  std::vector<std::string> o = {"workload.kind=synthetic",
                                "schedule=" + s.schedule,
                                "parallel.pp=" + std::to_string(s.pp),
                                "parallel.microbatches=" + std::to_string(s.microbatches),
                                "workload.f_s=" + num(s.f_s),
                                "workload.b_s=" + num(s.b_s),
                                "workload.w_s=" + num(s.w_s),
                                "workload.fb_s=" + num(s.fb_s),
                                "workload.send_bytes=" + num(s.send_bytes)};
  o.insert(o.end(), s.extra.begin(), s.extra.end());
  return load_plan(default_config_path(), o);
}

namespace detail {

// A SimResult crosses from the simulation child as bytes: every field below, in this order,
// written by Writer and read back by Reader (strings and vectors with their length first).
template <class Result, class Visit>
void each_field(Result& r, Visit&& v) {
  v(r.workload), v(r.schedule), v(r.mode), v(r.step_time_s), v(r.ranks), v(r.critical_rank), v(r.comm_s);
  v(r.activities), v(r.ops), v(r.wall_s), v(r.has_spans), v(r.spans);
  v(r.stragglers.rank_waits), v(r.stragglers.waited_for), v(r.stragglers.root_causes), v(r.stragglers.detours);
  v(r.stragglers.rerouted_bytes), v(r.stragglers.baseline_step_s), v(r.span_edges), v(r.idle_spans);
}

struct Writer {
  std::string buf;
  void bytes(const void* p, size_t n) { buf.append(static_cast<const char*>(p), n); }
  template <class T>
  void operator()(const T& v) {
    static_assert(std::is_trivially_copyable_v<T>);
    bytes(&v, sizeof v);
  }
  void operator()(const std::string& s) {
    (*this)(s.size());
    bytes(s.data(), s.size());
  }
  template <class T>
  void operator()(const std::vector<T>& v) {
    (*this)(v.size());
    bytes(v.data(), v.size() * sizeof(T));
  }
};

struct Reader {
  const std::string& buf;
  size_t at = 0;
  void bytes(void* p, size_t n) {
    if (at + n > buf.size()) throw std::runtime_error("short result from the simulation child");
    if (n > 0) std::memcpy(p, buf.data() + at, n);  // an empty vector's data() may be null (UB for memcpy)
    at += n;
  }
  template <class T>
  void operator()(T& v) {
    static_assert(std::is_trivially_copyable_v<T>);
    bytes(&v, sizeof v);
  }
  void operator()(std::string& s) {
    size_t n = 0;
    (*this)(n);
    s.assign(n, '\0');
    bytes(s.data(), n);
  }
  template <class T>
  void operator()(std::vector<T>& v) {
    size_t n = 0;
    (*this)(n);
    v.resize(n);
    bytes(v.data(), n * sizeof(T));
  }
};

inline std::string encode(const SimResult& r) {
  Writer w;
  each_field(r, w);
  return std::move(w.buf);
}

inline SimResult decode(const std::string& b) {
  Reader in{b};
  SimResult r;
  each_field(r, in);
  return r;
}

}  // namespace detail

// Runs `sim` in a forked child and returns its result; rethrows its error message as
// std::runtime_error.
inline SimResult in_child(const std::function<SimResult()>& sim) {
  return detail::decode(run_in_child([&] { return detail::encode(sim()); }));
}

// simulate(plan) in a forked child, quietly, recording every op's span when asked.
inline SimResult simulate_in_child(const Plan& plan, bool spans = false) {
  return in_child([&] {
    SimOptions opt;
    opt.quiet = true;
    opt.record_spans = spans;
    return simulate(plan, opt);
  });
}

// Four MoE layers of the default model on two nodes, EP 16, one microbatch, over 1 GB/s IB and
// 5 GB/s NVLink (every all-to-all long enough to see what hides it), replayed in full with spans.
inline SimResult slow_ep16_moe_run(const std::vector<std::string>& sets) {
  std::vector<std::string> all = {"model.num_hidden_layers=4", "model.first_k_dense_replace=0", "cluster.nodes=2",
                                  "parallel.pp=1", "parallel.ep=16", "schedule=1f1b", "train.global_batch=16",
                                  "parallel.microbatches=1", "parallel.split_lone_chunks=false",
                                  "hardware.ib_GBps=1", "hardware.nvlink_GBps=5", "sim.mode=full"};
  all.insert(all.end(), sets.begin(), sets.end());
  return simulate_in_child(load_plan(default_config_path(), all), /*spans=*/true);
}

inline SimResult run_synthetic(const Synthetic& s, bool spans = false) { return simulate_in_child(synthetic_plan(s), spans); }

// compute + exposed + bubble must add up to the step on every rank.
inline void expect_exact_split(const SimResult& r) {
  for (const RankResult& rr : r.ranks) {
    const double sum = rr.compute_s + rr.exposed_comm_s + rr.bubble_s;
    EXPECT_NEAR(sum, r.step_time_s, 1e-9 * r.step_time_s) << "rank " << rr.rank;
    EXPECT_GE(rr.bubble_s, -1e-9 * r.step_time_s) << "rank " << rr.rank;
    EXPECT_GE(rr.exposed_comm_s, 0) << "rank " << rr.rank;
  }
}

}  // namespace stepsim::test
