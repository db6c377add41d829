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

inline void put_bytes(std::string& buf, const void* p, size_t n) { buf.append(static_cast<const char*>(p), n); }
template <class T>
void put(std::string& buf, const T& v) {
  static_assert(std::is_trivially_copyable_v<T>);
  put_bytes(buf, &v, sizeof v);
}
inline void put_str(std::string& buf, const std::string& s) {
  put(buf, s.size());
  put_bytes(buf, s.data(), s.size());
}
template <class T>
void put_vec(std::string& buf, const std::vector<T>& v) {
  put(buf, v.size());
  put_bytes(buf, v.data(), v.size() * sizeof(T));
}

struct Reader {
  const std::string& buf;
  size_t at = 0;
  void get_bytes(void* p, size_t n) {
    if (at + n > buf.size()) throw std::runtime_error("short result from the simulation child");
    if (n > 0) std::memcpy(p, buf.data() + at, n);  // an empty vector's data() may be null (UB for memcpy)
    at += n;
  }
  template <class T>
  T get() {
    T v;
    get_bytes(&v, sizeof v);
    return v;
  }
  std::string get_str() {
    std::string s(get<size_t>(), '\0');
    get_bytes(s.data(), s.size());
    return s;
  }
  template <class T>
  std::vector<T> get_vec() {
    std::vector<T> v(get<size_t>());
    get_bytes(v.data(), v.size() * sizeof(T));
    return v;
  }
};

inline std::string encode(const SimResult& r) {
  std::string b;
  put_str(b, r.workload);
  put_str(b, r.schedule);
  put_str(b, r.mode);
  put(b, r.step_time_s);
  put_vec(b, r.ranks);
  put(b, r.critical_rank);
  put(b, r.comm_s);
  put(b, r.activities);
  put(b, r.ops);
  put(b, r.wall_s);
  put(b, r.has_spans);
  put_vec(b, r.spans);
  put_vec(b, r.stragglers.rank_waits);
  put_vec(b, r.stragglers.waited_for);
  put_vec(b, r.stragglers.root_causes);
  put_vec(b, r.stragglers.detours);
  put(b, r.stragglers.rerouted_bytes);
  put(b, r.stragglers.baseline_step_s);
  put_vec(b, r.span_edges);
  put_vec(b, r.idle_spans);
  return b;
}

inline SimResult decode(const std::string& b) {
  Reader in{b};
  SimResult r;
  r.workload = in.get_str();
  r.schedule = in.get_str();
  r.mode = in.get_str();
  r.step_time_s = in.get<double>();
  r.ranks = in.get_vec<RankResult>();
  r.critical_rank = in.get<int64_t>();
  r.comm_s = in.get<ops::PerCommClass>();
  r.activities = in.get<uint64_t>();
  r.ops = in.get<uint64_t>();
  r.wall_s = in.get<double>();
  r.has_spans = in.get<bool>();
  r.spans = in.get_vec<Span>();
  r.stragglers.rank_waits = in.get_vec<RankWait>();
  r.stragglers.waited_for = in.get_vec<WaitedFor>();
  r.stragglers.root_causes = in.get_vec<WaitedFor>();
  r.stragglers.detours = in.get_vec<NicDetour>();
  r.stragglers.rerouted_bytes = in.get<double>();
  r.stragglers.baseline_step_s = in.get<double>();
  r.span_edges = in.get_vec<SpanEdge>();
  r.idle_spans = in.get_vec<IdleSpan>();
  return r;
}

}  // namespace detail

// Runs `sim` in a forked child and returns its result; rethrows its error message as
// std::runtime_error.
inline SimResult in_child(const std::function<SimResult()>& sim) {
  return detail::decode(run_in_child([&] { return detail::encode(sim()); }));
}

inline SimResult run_synthetic(const Synthetic& s, bool spans = false) {
  const Plan plan = synthetic_plan(s);
  return in_child([&] {
    SimOptions opt;
    opt.quiet = true;
    opt.record_spans = spans;
    return simulate(plan, opt);
  });
}

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
