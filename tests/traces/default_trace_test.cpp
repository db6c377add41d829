// The default config's trace (reduced replay, the default GPU selection) as Perfetto and
// chrome://tracing need it: valid JSON, the required fields on every event, no overlapping
// complete events on one track, every flow bound to events at both ends; and its idle marks are
// the report's own split: compute + bubble + exposed fill each GPU's compute track exactly.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "tests/simulator/sim_test_util.hpp"
#include "traces/chrome_trace.hpp"
#include "traces/trace_selection.hpp"

namespace stepsim::test {
namespace {

struct DefaultTrace {
  SimResult result;
  nlohmann::json json;
};

const DefaultTrace& default_trace() {
  static const DefaultTrace t = [] {
    const Plan plan = load_plan(default_config_path());
    const TraceOptions o = trace_options(plan, "", "");
    DefaultTrace d;
    d.result = in_child([&] {
      SimOptions opt;
      opt.quiet = true;
      opt.record_spans = true;
      opt.span_ranks = o.ranks;
      return simulate(plan, opt);
    });
    std::stringstream out;
    write_chrome_trace(d.result, o, out);
    d.json = nlohmann::json::parse(out.str());  // throws (fails the test) if not valid JSON
    return d;
  }();
  return t;
}

using TrackKey = std::pair<int64_t, int64_t>;
struct XEvent {
  double ts, dur;
};

std::map<TrackKey, std::vector<XEvent>> x_events_by_track(const nlohmann::json& events) {
  std::map<TrackKey, std::vector<XEvent>> tracks;
  for (const auto& e : events)
    if (e["ph"] == "X") tracks[{e["pid"], e["tid"]}].push_back({e["ts"].get<double>(), e["dur"].get<double>()});
  for (auto& [k, v] : tracks) std::sort(v.begin(), v.end(), [](const XEvent& a, const XEvent& b) { return a.ts < b.ts; });
  return tracks;
}

TEST(DefaultTrace, EveryEventHasTheRequiredFields) {
  const auto& events = default_trace().json.at("traceEvents");
  ASSERT_GT(events.size(), 1000u);
  for (const auto& e : events) {
    ASSERT_TRUE(e.contains("name") && e["name"].is_string()) << e.dump();
    ASSERT_TRUE(e.contains("ph") && e["ph"].is_string()) << e.dump();
    ASSERT_TRUE(e.contains("ts") && e["ts"].is_number()) << e.dump();
    ASSERT_TRUE(e.contains("pid") && e["pid"].is_number_integer()) << e.dump();
    ASSERT_TRUE(e.contains("tid") && e["tid"].is_number_integer()) << e.dump();
    if (e["ph"] == "X") {
      ASSERT_TRUE(e.contains("dur") && e["dur"].is_number() && e["dur"].get<double>() >= 0) << e.dump();
    }
  }
}

TEST(DefaultTrace, OpsCarryTheirArguments) {
  std::set<std::string> kinds;
  for (const auto& e : default_trace().json.at("traceEvents")) {
    if (e["ph"] != "X" || e["cat"] == "idle") continue;
    const auto& a = e.at("args");
    for (const char* k : {"kind", "phase", "layer", "microbatch", "chunk"}) ASSERT_TRUE(a.contains(k)) << e.dump();
    const std::string kind = a["kind"];
    kinds.insert(kind);
    if (e["cat"] == "compute") {
      ASSERT_TRUE(a.contains("flops_fp8")) << e.dump();
      if (kind == "gemm" || kind == "attention") {
        EXPECT_GT(a["flops_fp8"].get<double>(), 0) << e.dump();
        EXPECT_TRUE(a["phase"] == "F" || a["phase"] == "B" || a["phase"] == "W") << e.dump();
      }
    } else {
      ASSERT_TRUE(a.contains("bytes_out") && a.contains("bytes_in")) << e.dump();
      if (kind == "dispatch" || kind == "combine") {
        EXPECT_GT(a["bytes_out"].get<double>(), 0) << e.dump();
        EXPECT_FALSE(a["layer"].is_null()) << e.dump();
      }
    }
  }
  for (const char* k : {"gemm", "attention", "dispatch", "combine", "pp-send", "pp-recv", "zero-reducescatter",
                        "zero-allgather"})
    EXPECT_EQ(kinds.count(k), 1u) << k;
}

TEST(DefaultTrace, NoOverlapOnATrack) {
  for (const auto& [track, xs] : x_events_by_track(default_trace().json.at("traceEvents")))
    for (size_t i = 1; i < xs.size(); ++i)
      ASSERT_GE(xs[i].ts, xs[i - 1].ts + xs[i - 1].dur - 1e-6)
          << "pid " << track.first << " tid " << track.second << " at ts " << xs[i].ts;
}

TEST(DefaultTrace, EveryFlowJoinsTwoEvents) {
  const auto& events = default_trace().json.at("traceEvents");
  const auto tracks = x_events_by_track(events);
  const auto enclosed = [&](const nlohmann::json& f) {
    const auto it = tracks.find({f["pid"], f["tid"]});
    if (it == tracks.end()) return false;
    const double ts = f["ts"].get<double>();
    return std::any_of(it->second.begin(), it->second.end(),
                       [&](const XEvent& x) { return x.ts <= ts && ts <= x.ts + x.dur; });
  };
  std::map<int64_t, int> starts, finishes;
  for (const auto& e : events) {
    if (e["ph"] != "s" && e["ph"] != "f") continue;
    ASSERT_TRUE(e.contains("id")) << e.dump();
    EXPECT_TRUE(enclosed(e)) << e.dump();
    if (e["ph"] == "s") {
      ++starts[e["id"]];
    } else {
      EXPECT_EQ(e.value("bp", ""), "e") << e.dump();
      ++finishes[e["id"]];
    }
  }
  EXPECT_GT(starts.size(), 100u);
  EXPECT_EQ(starts.size(), finishes.size());
  for (const auto& [id, n] : starts) {
    EXPECT_EQ(n, 1) << id;
    EXPECT_EQ(finishes.count(id), 1u) << id;
  }
}

// The marks on the compute track are the report's split: per GPU, compute + bubble + exposed
// events cover the whole step, and each sum equals the RankResult figure.
TEST(DefaultTrace, IdleMarksAreTheReportedSplit) {
  const DefaultTrace& t = default_trace();
  std::map<int32_t, double> compute_s, bubble_s, exposed_s;
  for (const Span& s : t.result.spans)
    if (s.stream == 0) compute_s[s.rank] += s.end_s - s.start_s;
  for (const IdleSpan& s : t.result.idle_spans) (s.exposed_classes == 0 ? bubble_s : exposed_s)[s.rank] += s.end_s - s.start_s;
  ASSERT_EQ(t.result.ranks.size(), 8u);
  for (const RankResult& r : t.result.ranks) {
    const auto g = int32_t(r.rank);
    const double tol = 1e-9 * r.step_time_s * 1e3;
    EXPECT_NEAR(compute_s[g], r.compute_s, tol) << g;
    EXPECT_NEAR(bubble_s[g], r.bubble_s, tol) << g;
    EXPECT_NEAR(exposed_s[g], r.exposed_comm_s, tol) << g;
    EXPECT_NEAR(compute_s[g] + bubble_s[g] + exposed_s[g], t.result.step_time_s, tol) << g;
  }
  // In the JSON too: the compute tracks are filled end to end (microseconds, ns resolution).
  for (const auto& [track, xs] : x_events_by_track(t.json.at("traceEvents"))) {
    if (track.second % 256 != 0) continue;
    double covered = 0;
    for (const XEvent& x : xs) covered += x.dur;
    EXPECT_NEAR(covered, t.result.step_time_s * 1e6, 1e-3 * double(xs.size())) << track.first;
  }
}

TEST(DefaultTrace, ProcessPerNodeThreadPerStream) {
  std::set<int64_t> pids;
  std::map<TrackKey, std::string> thread_names;
  for (const auto& e : default_trace().json.at("traceEvents")) {
    if (e["ph"] == "M" && e["name"] == "thread_name") thread_names[{e["pid"], e["tid"]}] = e["args"]["name"];
    if (e["ph"] == "X") pids.insert(e["pid"].get<int64_t>());
  }
  // GPUs 0, 256, ..., 1792 sit on nodes 0, 32, ..., 224.
  EXPECT_EQ(pids, (std::set<int64_t>{0, 32, 64, 96, 128, 160, 192, 224}));
  EXPECT_EQ(thread_names.at({0, 0}), "GPU 0 compute");
  EXPECT_EQ(thread_names.at({0, 1}), "GPU 0 s1 ep all-to-all");
  std::set<std::string> labels;
  for (const auto& [k, name] : thread_names) labels.insert(name.substr(name.find(' ', 4) + 1));
  for (const char* l : {"compute", "s1 ep all-to-all", "s10 dp all-gather", "s11 dp reduce"})
    EXPECT_EQ(labels.count(l), 1u) << l;
}

}  // namespace
}  // namespace stepsim::test
