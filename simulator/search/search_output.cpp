#include "simulator/search/search_output.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <sstream>

#include "simulator/config/config_tree.hpp"
#include "simulator/io/input_file.hpp"
#include "simulator/io/json_text.hpp"
#include "simulator/io/output_file.hpp"
#include "simulator/plot/chart.hpp"

namespace stepsim::search {
namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

std::string num(double v, const char* format = "%.6g") {
  if (!std::isfinite(v)) return "";
  char b[64];
  std::snprintf(b, sizeof b, format, v);
  return b;
}

std::string grouped(long long n) {
  std::string digits = std::to_string(n), out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

bool replayed(const Evaluated& e) { return e.status == Status::Replayed || e.status == Status::ReplayOutOfMemory; }

// The figures a row shows: the replay's where it ran, else the estimate's.
struct Figures {
  double step_s, compute_s, bubble_s, exposed_s, peak_GiB, tokens_per_s_per_gpu, mfu;
};

Figures figures(const Evaluated& e) {
  if (replayed(e))
    return {e.replay_number("step_time_s"), e.replay_number("compute_s"), e.replay_number("bubble_s"),
            e.replay_number("exposed_comm_s"), e.replay_number("memory.peak_bytes") / kGiB,
            e.replay_number("tokens_per_s_per_gpu"), e.replay_number("mfu")};
  const Estimate& x = e.estimate;
  return {x.step_s, x.compute_s, x.bubble_s, x.exposed_comm_s, x.memory_bytes / kGiB, x.tokens_per_s_per_gpu, x.mfu};
}

// "tp 2, pp 4, interleaved x2, zero 1, mbs 1, recompute none" (CP, EP, HSDP where set; overlap
// options where off).
std::string plan_text(const Candidate& c) {
  std::string s;
  const auto add = [&](const std::string& part) { s += (s.empty() ? "" : ", ") + part; };
  const auto v = [&](const char* key) { return c.value(key); };
  if (c.values.empty()) return "the config's own plan";
  add("tp " + (v("parallel.tp").empty() ? "-" : v("parallel.tp")));
  if (!v("parallel.cp").empty() && v("parallel.cp") != "1")
    add("cp " + v("parallel.cp") + (v("parallel.cp_comm_type").empty() ? "" : " (" + v("parallel.cp_comm_type") + ")"));
  add("pp " + (v("parallel.pp").empty() ? "-" : v("parallel.pp")));
  if (!v("parallel.ep").empty()) add("ep " + v("parallel.ep"));
  add(v("schedule") + (v("parallel.virtual_stages").empty() ? "" : " x" + v("parallel.virtual_stages")));
  add("zero " + v("parallel.zero") +
      (v("parallel.fsdp_shard_size").empty() || v("parallel.fsdp_shard_size") == "0" ? "" : " (hsdp " + v("parallel.fsdp_shard_size") + ")"));
  if (!v("parallel.micro_batch_size").empty()) add("mbs " + v("parallel.micro_batch_size"));
  if (!v("parallel.microbatches").empty()) add(v("parallel.microbatches") + " microbatches");
  add("recompute " + v("parallel.recompute"));
  if (!v("parallel.cpu_offload_layers").empty() && v("parallel.cpu_offload_layers") != "0")
    add("offload " + v("parallel.cpu_offload_layers") + " layers");
  for (const char* k : {"parallel.tp_comm_overlap", "parallel.overlap_grad_reduce", "parallel.overlap_param_gather"})
    if (v(k) == "false") add(std::string(k).substr(9) + " off");
  return s;
}

std::string csv_cell(const std::string& s) {
  if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
  std::string q = "\"";
  for (const char ch : s) q += ch == '"' ? std::string("\"\"") : std::string(1, ch);
  return q + "\"";
}

std::string csv_line(const std::vector<std::string>& cells) {
  std::string line;
  for (size_t i = 0; i < cells.size(); ++i) {
    if (i) line += ',';
    line += csv_cell(cells[i]);
  }
  return line + "\n";
}

// A JSON tree as block YAML: maps indented, strings double-quoted (JSON's escapes are YAML's),
// lists in flow style.
void yaml_block(const nlohmann::json& node, int indent, std::string& out) {
  for (const auto& [k, v] : node.items()) {
    out += std::string(size_t(indent), ' ') + k + ":";
    if (v.is_object() && !v.empty()) {
      out += "\n";
      yaml_block(v, indent + 2, out);
    } else {
      out += " " + v.dump() + "\n";
    }
  }
}

// The Pareto front of the replayed plans that fit: no other is both faster and lighter.
std::vector<const Evaluated*> pareto_front(const std::vector<const Evaluated*>& points) {
  std::vector<const Evaluated*> sorted = points;
  std::stable_sort(sorted.begin(), sorted.end(), [](const Evaluated* a, const Evaluated* b) {
    const Figures fa = figures(*a), fb = figures(*b);
    return fa.peak_GiB != fb.peak_GiB ? fa.peak_GiB < fb.peak_GiB : fa.step_s < fb.step_s;
  });
  std::vector<const Evaluated*> front;
  double best = INFINITY;
  for (const Evaluated* e : sorted)
    if (figures(*e).step_s < best) front.push_back(e), best = figures(*e).step_s;
  return front;
}

void write_chart(const std::string& path, const SearchResult& r) {
  plot::ScatterChart chart;
  chart.title = "stepsim search: " + r.description.substr(0, r.description.find(", ", r.description.find(" GPUs")));
  chart.x_label = "peak memory per GPU (GiB; static estimate where not replayed); plans that fit the estimate";
  chart.y_label = "step time (s; estimate where not replayed; up to 3x the fastest)";
  chart.x_marker = r.capacity_GiB;
  chart.x_marker_label = "hardware.memory_GiB " + num(r.capacity_GiB, "%g");
  plot::ScatterSeries estimated{"estimated, not replayed", {}, {}, -1, true, false, 3};
  plot::ScatterSeries replays{"replayed", {}, {}, 0, false, false, 4};
  std::vector<const Evaluated*> fitting;
  // Plans up to 3x the fastest step: slower ones would flatten the front the chart is for.
  double fastest = INFINITY;
  for (const Evaluated& e : r.ranked)
    if (e.status == Status::Estimated || e.status == Status::Replayed) fastest = std::min(fastest, figures(e).step_s);
  for (const Evaluated& e : r.ranked) {
    if (e.status == Status::Invalid || e.status == Status::ReplayFailed || e.status == Status::OutOfMemory) continue;
    const Figures f = figures(e);
    if (!std::isfinite(f.step_s) || !std::isfinite(f.peak_GiB) || f.step_s > 3 * fastest) continue;
    plot::ScatterSeries& s = replayed(e) ? replays : estimated;
    s.x.push_back(f.peak_GiB);
    s.y.push_back(f.step_s);
    if (e.status == Status::Replayed) fitting.push_back(&e);
  }
  plot::ScatterSeries front{"Pareto front of the replayed plans", {}, {}, 2, false, true, 4};
  for (const Evaluated* e : pareto_front(fitting)) front.x.push_back(figures(*e).peak_GiB), front.y.push_back(figures(*e).step_s);
  chart.series = {estimated, replays, front};
  if (replayed(r.config_plan)) {
    const Figures f = figures(r.config_plan);
    chart.series.push_back({"the config's own plan", {f.peak_GiB}, {f.step_s}, 1, false, false, 6});
  }
  if (r.best >= 0) {
    const Figures f = figures(r.ranked[size_t(r.best)]);
    chart.series.push_back({"best", {f.peak_GiB}, {f.step_s}, 5, false, false, 6});
  }
  plot::write_scatter_png(chart, path);
}

}  // namespace

std::vector<std::pair<std::string, std::string>> output_files(const std::string& dir) {
  return {{dir + "/search.csv", "-o"}, {dir + "/pruned.csv", "-o"},   {dir + "/summary.txt", "-o"},
          {dir + "/pareto.png", "--png"}, {dir + "/best.yaml", "-o"}};
}

std::string why_vs_best(const Evaluated& e, const Evaluated& best) {
  if (&e == &best) return "best";
  if (e.status == Status::Invalid) return "";
  const bool both_replayed = replayed(e) && replayed(best);
  const Figures a = both_replayed ? figures(e) : Figures{e.estimate.step_s, e.estimate.compute_s, e.estimate.bubble_s,
                                                         e.estimate.exposed_comm_s, 0, 0, 0};
  const Figures b = both_replayed ? figures(best) : Figures{best.estimate.step_s, best.estimate.compute_s,
                                                            best.estimate.bubble_s, best.estimate.exposed_comm_s, 0, 0, 0};
  std::vector<std::pair<double, std::string>> terms = {
      {(a.compute_s - b.compute_s) / b.step_s, "compute"},
      {(a.bubble_s - b.bubble_s) / b.step_s, "bubble"},
      {(a.exposed_s - b.exposed_s) / b.step_s, "exposed comm"}};
  std::stable_sort(terms.begin(), terms.end(), [](const auto& x, const auto& y) { return std::abs(x.first) > std::abs(y.first); });
  std::string s;
  for (const auto& [share, name] : terms) {
    if (!std::isfinite(share) || std::abs(share) < 0.005) continue;
    char buf[64];
    std::snprintf(buf, sizeof buf, "%+.0f %% %s", share * 100, name.c_str());
    s += (s.empty() ? "" : ", ") + std::string(buf);
  }
  if (s.empty()) s = "within 0.5 % of the best on every term";
  if (!both_replayed) s = "estimates: " + s;
  if (e.status == Status::OutOfMemory || e.status == Status::ReplayOutOfMemory)
    s = "does not fit (" + num(figures(e).peak_GiB, "%.1f") + " GiB); " + s;
  return s;
}

std::string write_search_outputs(const SearchOptions& o, const SearchResult& r, int top) {
  const auto& keys = search_keys();
  const Evaluated* best = r.best >= 0 ? &r.ranked[size_t(r.best)] : nullptr;
  // A reference for "why" when nothing was replayed: the first ranked estimate.
  const Evaluated* reference = best;
  for (const Evaluated& e : r.ranked)
    if (reference == nullptr && e.status == Status::Estimated) reference = &e;

  // search.csv: every plan past validation, ranked.
  std::string csv;
  {
    std::vector<std::string> header = {"rank", "candidate"};
    header.insert(header.end(), keys.begin(), keys.end());
    for (const char* c : {"status", "step_time_s", "estimate_step_s", "tokens_per_s_per_gpu", "mfu", "peak_memory_GiB",
                          "capacity_GiB", "compute_s", "bubble_s", "exposed_comm_s", "why", "error"})
      header.push_back(c);
    csv += csv_line(header);
    int rank = 0;
    for (const Evaluated& e : r.ranked) {
      if (e.status == Status::Invalid) continue;
      const Figures f = figures(e);
      std::vector<std::string> row = {std::to_string(++rank), std::to_string(e.candidate.index)};
      for (const auto& k : keys) row.push_back(e.candidate.value(k));
      row.insert(row.end(), {to_string(e.status), replayed(e) ? num(f.step_s) : "", num(e.estimate.step_s),
                             num(f.tokens_per_s_per_gpu), num(f.mfu), num(f.peak_GiB, "%.3f"), num(r.capacity_GiB, "%g"),
                             num(f.compute_s), num(f.bubble_s), num(f.exposed_s),
                             reference != nullptr ? why_vs_best(e, *reference) : "", e.error});
      csv += csv_line(row);
    }
  }
  // pruned.csv: every plan pruned before a replay.
  std::string pruned;
  std::map<std::string, int> invalid_by_key;
  int invalid = 0, oom = 0, estimated = 0, replays = 0, replay_oom = 0, failed = 0;
  {
    std::vector<std::string> header = {"candidate"};
    header.insert(header.end(), keys.begin(), keys.end());
    for (const char* c : {"stage", "key", "reason"}) header.push_back(c);
    pruned += csv_line(header);
    std::vector<const Evaluated*> rows;
    for (const Evaluated& e : r.ranked) {
      switch (e.status) {
        case Status::Invalid: ++invalid, ++invalid_by_key[e.reason_key], rows.push_back(&e); break;
        case Status::OutOfMemory: ++oom, rows.push_back(&e); break;
        case Status::Estimated: ++estimated; break;
        case Status::Replayed: ++replays; break;
        case Status::ReplayOutOfMemory: ++replay_oom; break;
        case Status::ReplayFailed: ++failed; break;
      }
    }
    std::stable_sort(rows.begin(), rows.end(), [](const Evaluated* a, const Evaluated* b) { return a->candidate.index < b->candidate.index; });
    for (const Evaluated* e : rows) {
      std::vector<std::string> row = {std::to_string(e->candidate.index)};
      for (const auto& k : keys) row.push_back(e->candidate.value(k));
      if (e->status == Status::Invalid) {
        row.insert(row.end(), {"1 validation", e->reason_key, e->error});
      } else {
        row.insert(row.end(), {"2 memory", "hardware.memory_GiB",
                               "static estimate " + num(e->estimate.memory_bytes / kGiB, "%.2f") + " GiB of " +
                                   num(r.capacity_GiB, "%g") + " GiB"});
      }
      pruned += csv_line(row);
    }
  }

  // The summary.
  std::string sum;
  const auto line = [&](const std::string& s) { sum += s + "\n"; };
  line("stepsim search: " + r.description);
  const long long searched = static_cast<long long>(r.space.candidates.size());
  line("space:             " + grouped(searched) + " plans" +
       (r.space.truncated() ? " searched, the first of " + std::string(r.space.total >= 100'000'000 ? "more than " : "") +
                                  grouped(static_cast<long long>(r.space.total)) +
                                  " in enumeration order (narrow the space with --only or --fix)"
                            : " (the whole space)"));
  std::string reasons;
  std::vector<std::pair<int, std::string>> counted;
  for (const auto& [k, count] : invalid_by_key) counted.emplace_back(-count, k);
  std::sort(counted.begin(), counted.end());
  for (const auto& [count, k] : counted) reasons += (reasons.empty() ? "" : ", ") + k + " " + grouped(-count);
  line("1 validation:      " + grouped(invalid) + " invalid" + (reasons.empty() ? "" : " (by the key refused: " + reasons + ")"));
  line("2 memory:          " + grouped(oom) + " do not fit in " + num(r.capacity_GiB, "%g") + " GiB (static estimate)");
  line("3 estimate:        " + grouped(estimated + replays + replay_oom + failed) +
       " ranked by the fast estimate (per-op compute, closed-form bubble, roofline communication)");
  line("4 replay:          " + grouped(replays + replay_oom + failed) + " replayed with sim.mode reduced (" + grouped(replay_oom) +
       " out of memory in the replay, " + grouped(failed) + " failed); margin " + num(r.margin * 100, "%g") + " %, at most " +
       std::to_string(r.max_replays) + "; stopped: " + r.stop_reason);
  const Evaluated& cp = r.config_plan;
  if (replayed(cp)) {
    const Figures f = figures(cp);
    line("config's own plan: " + num(f.step_s, "%.3f") + " s replayed (estimate " + num(cp.estimate.step_s, "%.3f") +
         " s), peak " + num(f.peak_GiB, "%.1f") + " of " + num(r.capacity_GiB, "%g") + " GiB");
  } else if (cp.status == Status::Invalid) {
    line("config's own plan: not a valid plan here (" + io::shortened(cp.error, 200) + ")");
  } else {
    line("config's own plan: " + std::string(to_string(cp.status)) + ", estimate " + num(cp.estimate.step_s, "%.3f") + " s");
  }
  if (best != nullptr) {
    const Figures f = figures(*best);
    std::string vs;
    if (replayed(cp)) vs = ", " + num(figures(cp).step_s / f.step_s, "%.2f") + "x the config's own plan's speed";
    line("best plan:         " + plan_text(best->candidate) + ": " + num(f.step_s, "%.3f") + " s" + vs + " (best.yaml)");
  } else {
    line("best plan:         none: no replayed plan fits in memory");
  }
  line("");
  char head[256];
  std::snprintf(head, sizeof head, "%4s %9s %9s %7s %7s %15s %11s %9s  %s", "rank", "step_s", "est_s", "tok/s/GPU", "MFU",
                "peak/cap GiB", "exposed_s", "bubble_s", "plan: why");
  line(head);
  int shown = 0;
  for (const Evaluated& e : r.ranked) {
    if (e.status == Status::Invalid || shown >= top) continue;
    ++shown;
    const Figures f = figures(e);
    char row[512];
    std::snprintf(row, sizeof row, "%4d %9s %9s %9s %6s%% %15s %11s %9s  ", shown, replayed(e) ? num(f.step_s, "%.3f").c_str() : "-",
                  num(e.estimate.step_s, "%.3f").c_str(), num(f.tokens_per_s_per_gpu, "%.0f").c_str(),
                  num(f.mfu * 100, "%.1f").c_str(), (num(f.peak_GiB, "%.1f") + "/" + num(r.capacity_GiB, "%g")).c_str(),
                  num(f.exposed_s, "%.3f").c_str(), num(f.bubble_s, "%.3f").c_str());
    line(std::string(row) + plan_text(e.candidate) + ": " +
         (e.status == Status::ReplayFailed ? "replay failed: " + io::shortened(e.error, 120)
                                           : reference != nullptr ? why_vs_best(e, *reference) : ""));
  }

  io::write_output_file(o.out_dir + "/search.csv", "-o", io::kDashIsStdout, csv);
  io::write_output_file(o.out_dir + "/pruned.csv", "-o", io::kDashIsStdout, pruned);
  io::write_output_file(o.out_dir + "/summary.txt", "-o", io::kDashIsStdout, sum);
  write_chart(o.out_dir + "/pareto.png", r);
  const std::string best_path = o.out_dir + "/best.yaml";
  if (best != nullptr) {
    std::vector<std::string> sets = o.sets;
    const Restrictions rs = parse_restrictions(o.only, o.fix, o.sets);
    sets.insert(sets.end(), rs.shared_sets.begin(), rs.shared_sets.end());
    for (const auto& s : best->candidate.overrides()) sets.push_back(s);
    const std::string text = io::read_input_file(o.config, "config", io::kMiB);
    std::string yaml = "# The fastest plan `stepsim search` replayed: " + num(figures(*best).step_s, "%.6f") + " s per step, " +
                       num(figures(*best).peak_GiB, "%.1f") + " GiB peak.\n# " + r.description + ".\n# From " + o.config +
                       " with:";
    for (const auto& s : sets) yaml += " --set " + s;
    yaml += "\n# Simulate it with: stepsim simulate best.yaml\n";
    yaml_block(config_tree(o.config, text, sets), 0, yaml);
    io::write_output_file(best_path, "-o", io::kDashIsStdout, yaml);
  } else {
    std::error_code ec;
    std::filesystem::remove(best_path, ec);  // no stale winner from an earlier run
  }
  return sum;
}

}  // namespace stepsim::search
