#include "simulator/search/search.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <csignal>
#include <limits>
#include <cerrno>
#include <filesystem>
#include <functional>
#include <nlohmann/json.hpp>
#include <set>
#include <unistd.h>

#include "simulator/config/config_loader.hpp"
#include "simulator/io/command_files.hpp"
#include "simulator/io/input_file.hpp"
#include "simulator/io/json_text.hpp"
#include "simulator/io/output_file.hpp"
#include "simulator/io/tied_child.hpp"
#include "simulator/search/search_dir.hpp"
#include "simulator/sweep/collect.hpp"
#include "simulator/sweep/manifest.hpp"
#include "simulator/sweep/process_pool.hpp"
#include "vocabulary/config_error.hpp"
#include "workloads/memory/memory_estimate.hpp"

namespace stepsim::search {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

// The config key an error names: the first ": "-separated part of it that is one.
std::string key_named(const std::string& error) {
  size_t at = 0;
  while (at < error.size()) {
    const size_t end = error.find(": ", at);
    const std::string part = error.substr(at, end == std::string::npos ? std::string::npos : end - at);
    if (is_config_key(part)) return part;
    if (end == std::string::npos) break;
    at = end + 2;
  }
  return "other";
}

// Loads the config's own plan; when it is no valid plan at this scale (--gpus), a neutral one of
// the same model, cluster and batch, for the space's rules. Throws the config's own error when
// neither loads.
Plan load_base(const std::string& text, const SearchOptions& o, const Plan*& config_plan, Plan& config_storage) {
  try {
    config_storage = load_plan_text(text, o.config, o.sets);
    config_plan = &config_storage;
    return config_storage;
  } catch (const ConfigError& first) {
    config_plan = nullptr;
    std::vector<std::string> neutral = o.sets;
    for (const char* s : {"schedule=1f1b", "parallel.pp=1", "parallel.tp=1", "parallel.cp=1", "parallel.zero=1",
                          "parallel.microbatches=1", "parallel.virtual_stages=1"})
      neutral.push_back(s);
    try {
      return load_plan_text(text, o.config, neutral);
    } catch (const ConfigError&) {
      try {
        neutral.push_back("parallel.ep=1");  // and what DeepEP in pipeline chunks needed
        neutral.push_back("parallel.split_lone_chunks=false");
        return load_plan_text(text, o.config, neutral);
      } catch (const ConfigError&) {
        throw first;
      }
    }
  }
}

// The fewest layers whose activations, offloaded to host memory (parallel.cpu_offload_layers), let
// a plan that does not fit fit by the static estimate, as Megatron-Bridge's recipes offload on
// GB200; 0 when the plan cannot offload (validate_plan refuses it: a pipeline, recompute, several
// microbatches in flight, no host link rate), runs CUDA graphs (NVIDIA's offloading recipes run
// none), was told the count, or does not fit even with L - 1 layers offloaded. The fewest, since
// every copy is one more chance to outlast the compute. `with(k)` loads the plan offloading k.
int64_t layers_to_offload(const Plan& plan, const std::vector<std::string>& sets,
                          const std::function<Plan(int64_t)>& with) {
  for (const auto& s : sets)
    if (s.rfind("parallel.cpu_offload_layers=", 0) == 0) return 0;  // given (--fix, --only, --set)
  const int64_t layers = plan.model.num_hidden_layers;
  if (plan.parallel.cpu_offload_layers > 0 || plan.software.cuda_graphs != CudaGraphs::None || layers < 2) return 0;
  try {
    if (!estimate_memory(with(layers - 1)).fits) return 0;
  } catch (const ConfigError&) {
    return 0;
  }
  const auto fits_with = [&](int64_t k) {
    Plan p = plan;
    p.parallel.cpu_offload_layers = k;
    return estimate_memory(p).fits;
  };
  int64_t lo = 1, hi = layers - 1;  // the peak falls as k grows
  while (lo < hi) {
    const int64_t mid = lo + (hi - lo) / 2;
    if (fits_with(mid)) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}

Evaluated evaluate(const std::string& text, const std::string& config, const std::vector<std::string>& shared,
                   const Candidate& c) {
  Evaluated e;
  e.candidate = c;
  std::vector<std::string> sets = shared;
  for (const auto& s : c.overrides()) sets.push_back(s);
  try {
    Plan plan;
    try {
      plan = load_plan_text(text, config, sets);
    } catch (const ConfigError& err) {
      // The config's own offloading in a plan Megatron-LM would not offload in (validate_plan: a
      // pipeline, recompute): that plan goes without it.
      if (key_named(err.what()) != "parallel.cpu_offload_layers" || !c.value("parallel.cpu_offload_layers").empty()) throw;
      e.candidate.set("parallel.cpu_offload_layers", "0");
      sets.push_back("parallel.cpu_offload_layers=0");
      plan = load_plan_text(text, config, sets);
    }
    // The config's own count, where the plan keeps it, is shown with the plan.
    if (plan.parallel.cpu_offload_layers > 0 && e.candidate.value("parallel.cpu_offload_layers").empty())
      e.candidate.set("parallel.cpu_offload_layers", std::to_string(plan.parallel.cpu_offload_layers));
    e.estimate = estimate_plan(plan);
    if (!e.estimate.fits) {
      const auto with = [&](int64_t k) {
        std::vector<std::string> more = sets;
        more.push_back("parallel.cpu_offload_layers=" + std::to_string(k));
        return load_plan_text(text, config, more);
      };
      if (const int64_t k = layers_to_offload(plan, sets, with); k > 0) {
        e.candidate.set("parallel.cpu_offload_layers", std::to_string(k));
        plan = with(k);
        e.estimate = estimate_plan(plan);
      }
    }
    e.status = e.estimate.fits ? Status::Estimated : Status::OutOfMemory;
  } catch (const ConfigError& err) {
    e.status = Status::Invalid;
    e.error = err.what();
    e.reason_key = key_named(e.error);
  }
  return e;
}

// Stages 1-3 over `candidates`, split over `jobs` forked workers (candidate i to worker i mod jobs),
// each sending its results back as JSON lines; the parent evaluates any a worker did not send (it
// died). The results are the same as one process's, in candidate order.
std::vector<Evaluated> evaluate_all(const std::string& text, const std::string& config, const std::vector<std::string>& shared,
                                    const std::vector<Candidate>& candidates, int jobs, bool quiet, Clock::time_point start) {
  const size_t n = candidates.size();
  std::vector<Evaluated> all(n);
  std::vector<bool> done(n, false);
  const int workers = int(std::min<size_t>(size_t(std::max(1, jobs)), std::max<size_t>(1, n / 64)));
  const auto progress = [&](size_t checked, size_t total) {
    const double elapsed = seconds_since(start);
    std::fprintf(stderr, "stepsim search: stages 1-3: %zu/%zu plans checked, %.0f s, ETA %.0f s\n", checked, total,
                 elapsed, elapsed / double(checked) * double(total - checked));
  };
  if (workers > 1) {
    std::vector<std::pair<pid_t, int>> children;
    for (int w = 0; w < workers; ++w) {
      int fds[2];
      if (::pipe(fds) != 0) break;
      const pid_t pid = io::fork_tied_child();
      if (pid < 0) {
        ::close(fds[0]);
        ::close(fds[1]);
        break;
      }
      if (pid == 0) {
        ::close(fds[0]);
        std::string out;
        auto last = Clock::now();
        for (size_t i = size_t(w); i < n; i += size_t(workers)) {
          const Evaluated e = evaluate(text, config, shared, candidates[i]);
          const Estimate& x = e.estimate;
          // The layers evaluate offloads to make the plan fit, if any.
          out += nlohmann::json{{"i", i}, {"s", int(e.status)}, {"k", e.reason_key}, {"e", e.error},
                                {"o", e.candidate.value("parallel.cpu_offload_layers")},
                                {"x", {x.compute_s, x.bubble_s, x.exposed_comm_s, x.step_s, x.memory_bytes, x.capacity_bytes,
                                       x.fits, x.tokens_per_s_per_gpu, x.mfu}}}.dump() + "\n";
          if (w == 0 && !quiet && seconds_since(last) >= 2.0) {  // the first worker speaks for all
            last = Clock::now();
            progress(i + 1, n);
          }
        }
        for (size_t at = 0; at < out.size();) {
          const ssize_t k = ::write(fds[1], out.data() + at, out.size() - at);
          if (k > 0) at += size_t(k);
          else if (k == 0 || errno != EINTR) break;
        }
        ::_exit(0);
      }
      ::close(fds[1]);
      children.emplace_back(pid, fds[0]);
    }
    for (const auto& [pid, fd] : children) {
      std::string in;
      char buf[65536];
      for (;;) {
        const ssize_t k = ::read(fd, buf, sizeof buf);
        if (k > 0) in.append(buf, size_t(k));
        else if (k == 0 || errno != EINTR) break;
      }
      ::close(fd);
      io::wait_for_child(pid);
      size_t at = 0;
      for (size_t end = in.find('\n'); end != std::string::npos; at = end + 1, end = in.find('\n', at)) {
        try {
          const auto j = nlohmann::json::parse(in.substr(at, end - at));
          const size_t i = j.at("i").get<size_t>();
          if (i >= n) continue;
          Evaluated& e = all[i];
          e.candidate = candidates[i];
          if (const std::string o = j.at("o").get<std::string>(); !o.empty()) e.candidate.set("parallel.cpu_offload_layers", o);
          e.status = Status(j.at("s").get<int>());
          e.reason_key = j.at("k").get<std::string>();
          e.error = j.at("e").get<std::string>();
          const auto& x = j.at("x");
          e.estimate = {x[0].get<double>(), x[1].get<double>(), x[2].get<double>(), x[3].get<double>(), x[4].get<double>(),
                        x[5].get<double>(), x[6].get<bool>(), x[7].get<double>(), x[8].get<double>()};
          done[i] = true;
        } catch (const std::exception&) {
          // a line cut short by a dying worker: its plan is evaluated below
        }
      }
    }
  }
  auto last = Clock::now();
  for (size_t i = 0; i < n; ++i) {
    if (done[i]) continue;
    all[i] = evaluate(text, config, shared, candidates[i]);
    if (!quiet && workers <= 1 && seconds_since(last) >= 2.0) {
      last = Clock::now();
      progress(i + 1, n);
    }
  }
  return all;
}

std::string fmt_s(double s) {
  char b[32];
  std::snprintf(b, sizeof b, "%.3f s", s);
  return b;
}

// Replays' stderr progress: replays done of at most `cap`, and an ETA at the mean replay's time.
void replay_progress(bool quiet, int done, int cap, double elapsed, int jobs) {
  if (quiet) return;
  const double eta = done > 0 ? elapsed / done * std::max(0, cap - done) / 1.0 : 0;
  std::fprintf(stderr, "stepsim search: stage 4: %d replays done (at most %d, %d at a time), %.0f s, ETA under %.0f s\n",
               done, cap, jobs, elapsed, eta);
}

}  // namespace

const char* to_string(Status s) {
  switch (s) {
    case Status::Invalid: return "invalid";
    case Status::OutOfMemory: return "out of memory (estimate)";
    case Status::Estimated: return "estimated";
    case Status::Replayed: return "replayed";
    case Status::ReplayOutOfMemory: return "out of memory (replay)";
    case Status::ReplayFailed: return "replay failed";
  }
  return "";
}

double Evaluated::replay_number(const std::string& field) const {
  const auto it = replay.find(field);
  if (it == replay.end() || it->second.empty()) return std::numeric_limits<double>::quiet_NaN();
  char* end = nullptr;
  const double v = std::strtod(it->second.c_str(), &end);
  return end && *end == '\0' ? v : std::numeric_limits<double>::quiet_NaN();
}

std::vector<std::string> replay_sets(const SearchOptions& o, const Restrictions& r) {
  std::vector<std::string> sets = o.sets;
  sets.insert(sets.end(), r.shared_sets.begin(), r.shared_sets.end());
  sets.push_back("sim.mode=reduced");
  return sets;
}

SearchResult run_search(const SearchOptions& o) {
  SearchResult res;
  const auto start = Clock::now();
  const std::string text = io::read_input_file(o.config, "config", io::kMiB);
  const Restrictions r = parse_restrictions(o.only, o.fix, o.sets);
  Plan config_storage;
  const Plan* config_plan = nullptr;
  const Plan base = load_base(text, o, config_plan, config_storage);
  res.space = enumerate_space(base, r, size_t(o.max_plans));
  res.margin = o.margin;
  res.max_replays = o.max_replays;
  res.capacity_GiB = base.hardware.memory_GiB;
  {
    char d[512];
    std::snprintf(d, sizeof d, "%s, %lld %s GPUs (%lld %s of %lld), %lld sequences of %lld tokens per step, %g GiB per GPU",
                  base.model.name.c_str(), static_cast<long long>(base.gpus()), base.hardware.name.c_str(),
                  static_cast<long long>(base.cluster.nodes), base.cluster.nodes == 1 ? "node" : "nodes",
                  static_cast<long long>(base.cluster.gpus_per_node),
                  static_cast<long long>(base.train.global_batch), static_cast<long long>(base.train.seq_len),
                  base.hardware.memory_GiB);
    res.description = d;
  }
  if (res.space.total == 0)
    throw ConfigError("--only/--fix: the search space is empty: " + res.space.empty_key +
                      " takes no value this model and cluster admit beside " +
                      (res.space.empty_after.empty() ? std::string("the config") : res.space.empty_after) +
                      "; widen --only or drop a --fix");
  const int64_t n = int64_t(res.space.candidates.size());

  // Stages 1-3: validate, memory, estimate.
  std::vector<std::string> shared = o.sets;
  shared.insert(shared.end(), r.shared_sets.begin(), r.shared_sets.end());
  std::vector<Evaluated> all = evaluate_all(text, o.config, shared, res.space.candidates, o.jobs, o.quiet, start);
  int valid = 0, fit = 0;
  std::map<std::string, int> by_key;
  std::map<std::string, std::string> example;
  for (const auto& e : all) {
    if (e.status == Status::Invalid) {
      if (!by_key[e.reason_key]++) example[e.reason_key] = e.error;
    } else {
      ++valid;
      fit += e.status == Status::Estimated ? 1 : 0;
    }
  }
  if (valid == 0) {
    std::string key;
    int most = 0;
    for (const auto& [k, count] : by_key)
      if (count > most) key = k, most = count;
    throw ConfigError("--only/--fix: none of the " + std::to_string(n) + " plans searched" +
                      (res.space.truncated() ? " (the first of " + std::to_string(res.space.total) + ", --max-plans)" : "") +
                      " is valid; " +
                      std::to_string(most) + " fail on " + key + ", e.g. " + io::shortened(example[key], 300) +
                      "; widen --only or drop a --fix");
  }
  if (!o.quiet)
    std::fprintf(stderr, "stepsim search: stages 1-3: %lld plans%s, %lld invalid, %d out of memory (estimate), %d ranked, %.1f s\n",
                 static_cast<long long>(n), res.space.truncated() ? " (the space's first: see the summary)" : "", static_cast<long long>(n - valid), valid - fit, fit, seconds_since(start));

  // The config's own plan, for reference.
  if (config_plan != nullptr) {
    res.config_plan = evaluate(text, o.config, o.sets, Candidate{n, {}});
  } else {
    try {
      load_plan_text(text, o.config, o.sets);
    } catch (const ConfigError& e) {
      res.config_plan.error = e.what();
      res.config_plan.reason_key = key_named(e.what());
    }
    res.config_plan.candidate.index = n;
  }

  // Stage 4: replays in rank order.
  claim_search_dir(o.out_dir, SearchManifest{o.config, o.sets, o.only, o.fix});
  for (int64_t i = 0; i <= n; ++i) {
    io::claim_output(sweep::point_json_path(o.out_dir, int(i), int(n + 1)), "-o");
    io::claim_output(sweep::point_err_path(o.out_dir, int(i), int(n + 1)), "-o");
  }
  if (o.emit_jobs.empty()) write_search_manifest(o.out_dir, SearchManifest{o.config, o.sets, o.only, o.fix});
  std::vector<size_t> order;
  for (size_t i = 0; i < all.size(); ++i)
    if (all[i].status == Status::Estimated) order.push_back(i);
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return all[a].estimate.step_s < all[b].estimate.step_s; });
  sweep::Manifest m;
  m.binary = o.binary;
  m.config = o.config;
  m.sets = replay_sets(o, r);
  sweep::Manifest m_config = m;
  m_config.sets = o.sets;
  m_config.sets.push_back("sim.mode=reduced");
  const int points = int(n + 1);
  const auto grid_point = [&](const Candidate& c) {
    sweep::GridPoint p;
    p.index = int(c.index);
    for (const auto& [k, v] : c.values)
      if (!v.empty()) p.values.emplace_back(k, v);
    return p;
  };
  if (!o.emit_jobs.empty()) {
    // No replay runs here, so the stopping rule has no step to stop at: every candidate it could
    // accept is written, the first max_replays in rank order, then the config's own plan as the
    // search replays it beside them. Each line runs in this folder (a --set may name a relative
    // path) and stores its report where stage 4 reads it back; the lines are built (and checked)
    // before anything is written, the job list first (a full disk leaves no half search).
    const std::string folder = sweep::job_folder();
    std::error_code ec;
    const std::string dir = std::filesystem::absolute(o.out_dir, ec).lexically_normal().string();
    if (dir.find_first_of("\n\r") != std::string::npos)
      throw ConfigError("-o: the search directory's name holds a line break, which a job line cannot hold; name "
                        "another directory for --emit-jobs");
    std::string lines;
    int count = 0;
    for (size_t p = 0; p < order.size() && count < o.max_replays; ++p, ++count)
      lines += sweep::point_shell_line(m, grid_point(all[order[p]].candidate), folder, dir, points) + "\n";
    if (res.config_plan.status == Status::Estimated) {
      lines += sweep::point_shell_line(m_config, grid_point(res.config_plan.candidate), folder, dir, points) + "\n";
      ++count;
    }
    io::write_output_file(o.emit_jobs, "--emit-jobs", io::kDashIsStdout, lines);
    write_search_manifest(o.out_dir, SearchManifest{o.config, o.sets, o.only, o.fix});
    res.jobs_emitted = count;
    return res;
  }
  // Runs (or reads back) the replays of `which` (indices into `all`; SIZE_MAX: the config's plan).
  const size_t kConfig = size_t(-1);
  const auto replay = [&](const std::vector<size_t>& which) {
    std::vector<sweep::Job> jobs;
    std::vector<size_t> job_of;
    for (const size_t w : which) {
      Evaluated& e = w == kConfig ? res.config_plan : all[w];
      const sweep::Manifest& mm = w == kConfig ? m_config : m;
      const sweep::GridPoint p = grid_point(e.candidate);
      io::output_written(sweep::point_json_path(o.out_dir, p.index, points));  // a kept replay is read back
      io::output_written(sweep::point_err_path(o.out_dir, p.index, points));
      const sweep::PointOutcome kept = sweep::read_point(o.out_dir, mm, p, points);
      if (kept.error.empty() && !kept.fields.empty()) {
        e.replay = kept.fields;
        continue;
      }
      jobs.push_back({sweep::point_argv(mm, p), sweep::point_json_path(o.out_dir, p.index, points),
                      sweep::point_err_path(o.out_dir, p.index, points)});
      job_of.push_back(w);
    }
    if (jobs.empty()) return;
    const auto statuses = sweep::run_jobs(jobs, o.jobs);
    res.replays_run += int(jobs.size());
    for (size_t j = 0; j < jobs.size(); ++j) {
      io::output_written(jobs[j].stdout_path);
      io::output_written(jobs[j].stderr_path);
      Evaluated& e = job_of[j] == kConfig ? res.config_plan : all[job_of[j]];
      const sweep::Manifest& mm = job_of[j] == kConfig ? m_config : m;
      const sweep::PointOutcome got = sweep::read_point(o.out_dir, mm, grid_point(e.candidate), points, &statuses[j]);
      if (got.error.empty()) e.replay = got.fields;
      else e.error = got.error;
    }
  };
  const auto settle = [](Evaluated& e) {
    if (!e.replay.empty()) {
      const auto fits = e.replay.find("memory.fits");
      e.status = fits != e.replay.end() && fits->second == "false" ? Status::ReplayOutOfMemory : Status::Replayed;
    } else {
      e.status = Status::ReplayFailed;
      if (e.error.empty()) e.error = "no report";
    }
  };
  double best = std::numeric_limits<double>::infinity();
  const double keep = 1.0 - o.margin;  // a candidate is replayed while estimate x keep < best
  int accepted = 0;
  size_t next = 0;
  const auto replay_start = Clock::now();
  bool first = true;
  const int cap = o.max_replays;
  if (!o.quiet)
    std::fprintf(stderr, "stepsim search: stage 4: replaying the best of %zu candidates (at most %d, while the next "
                 "estimate less %.0f %% is below the best replayed step)\n", order.size(), cap, o.margin * 100);
  res.stop_reason = order.empty() ? "no plan was left to replay" : "every ranked candidate was replayed";
  for (;;) {
    std::vector<size_t> batch;
    for (size_t p = next; p < order.size() && int(batch.size()) < std::max(1, o.jobs) && accepted + int(batch.size()) < cap; ++p) {
      if (!(all[order[p]].estimate.step_s * keep < best)) break;
      batch.push_back(order[p]);
    }
    if (batch.empty()) break;
    std::vector<size_t> run = batch;
    if (first && res.config_plan.status == Status::Estimated) run.push_back(kConfig);
    replay(run);
    if (first && res.config_plan.status == Status::Estimated) settle(res.config_plan);
    first = false;
    if (sweep::stop_signal()) {
      res.stopped_by_signal = true;
      res.signal = sweep::stop_signal();
      return res;
    }
    bool stopped = false;
    for (const size_t w : batch) {
      if (!(all[w].estimate.step_s * keep < best)) {
        stopped = true;
        break;
      }
      settle(all[w]);
      ++accepted;
      ++next;
      if (all[w].status == Status::Replayed) best = std::min(best, all[w].replay_number("step_time_s"));
    }
    replay_progress(o.quiet, accepted, std::min<int>(cap, int(order.size())), seconds_since(replay_start), o.jobs);
    if (stopped) break;
  }
  if (next < order.size()) {
    if (accepted >= cap)
      res.stop_reason = "the cap of " + std::to_string(cap) + " replays (--max-replays) was reached";
    else
      res.stop_reason = "the next candidate's estimate, " + fmt_s(all[order[next]].estimate.step_s) + ", less the " +
                        std::to_string(int(std::lround(o.margin * 100))) + " % margin is no faster than the best replayed step, " +
                        fmt_s(best);
  }
  if (first && res.config_plan.status == Status::Estimated) {  // nothing ranked was replayed
    replay({kConfig});
    settle(res.config_plan);
  }

  // The table's order: replayed by step, failed replays, estimated, out of memory, invalid.
  const auto group = [](Status s) {
    switch (s) {
      case Status::Replayed: return 0;
      case Status::ReplayOutOfMemory: return 1;
      case Status::ReplayFailed: return 2;
      case Status::Estimated: return 3;
      case Status::OutOfMemory: return 4;
      case Status::Invalid: return 5;
    }
    return 6;
  };
  const auto key_of = [&](const Evaluated& e) {
    switch (e.status) {
      case Status::Replayed:
      case Status::ReplayOutOfMemory: return e.replay_number("step_time_s");
      case Status::Invalid: return 0.0;
      default: return e.estimate.step_s;
    }
  };
  std::stable_sort(all.begin(), all.end(), [&](const Evaluated& a, const Evaluated& b) {
    if (group(a.status) != group(b.status)) return group(a.status) < group(b.status);
    const double ka = key_of(a), kb = key_of(b);
    if (ka != kb) return ka < kb;
    return a.candidate.index < b.candidate.index;
  });
  res.ranked = std::move(all);
  if (!res.ranked.empty() && res.ranked.front().status == Status::Replayed) res.best = 0;
  if (!o.quiet)
    std::fprintf(stderr, "stepsim search: stage 4: %d replayed (%d run now, the rest read back from %s/points), %.1f s in all\n",
                 accepted, res.replays_run, o.out_dir.c_str(), seconds_since(start));
  return res;
}

}  // namespace stepsim::search
