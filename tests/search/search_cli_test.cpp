// `stepsim search` end to end through the binary, on Llama 3.1 8B over 16 H800 GPUs: the space and
// its pruning against a closed form, the winner against the shipped plan, the same bytes on every
// run (and at any -j), resuming from the points of an interrupted search, hostile --only / --fix.
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "tests/cli_runner.hpp"
#include "tests/text_files.hpp"

namespace {

using stepsim::test::slurp;
using stepsim::test::lines_of;
using stepsim::test::csv_cells;

namespace fs = std::filesystem;
using stepsim::test::run_stepsim;

const std::string kConfig = std::string(STEPSIM_SOURCE_DIR) + "/workloads/llama-3.1-8b.yaml";

std::string temp_dir(const std::string& name) {
  const std::string d = stepsim::test::process_scratch().file("search_" + name);
  fs::remove_all(d);
  return d;
}

struct Csv {
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;
  std::string at(size_t row, const std::string& column) const {
    for (size_t i = 0; i < header.size(); ++i)
      if (header[i] == column) return rows[row][i];
    ADD_FAILURE() << "no column " << column;
    return "";
  }
};

Csv read_csv(const std::string& path) {
  Csv c;
  const auto lines = lines_of(slurp(path));
  if (lines.empty()) return c;
  c.header = csv_cells(lines[0]);
  for (size_t i = 1; i < lines.size(); ++i) c.rows.push_back(csv_cells(lines[i]));
  return c;
}

// How many rows of `csv` `holds(row)` is true for.
size_t rows_where(const Csv& csv, const std::function<bool(size_t)>& holds) {
  size_t n = 0;
  for (size_t i = 0; i < csv.rows.size(); ++i) n += holds(i) ? 1 : 0;
  return n;
}

// The shipped config on 16 GPUs (2 nodes of 8).
const std::string kSmall = "'" + kConfig + "' --gpus 16";

// The closed form of the space below (--only schedule=1f1b,interleaved,fsdp, recompute none, CP 1),
// from the rules docs/search.md states: Llama 3.1 8B has 32 layers, 32 heads and 8 KV heads, so
// TP is each divisor of the 8-GPU node; PP each divisor of 16 / TP (all at most 32 layers); each
// schedule of the list at every (TP, PP) -- --only sets a key everywhere; interleaved with v of
// 2..8 where PP x v divides 32; ZeRO 1 and 2 beside 1f1b and interleaved, 3 beside fsdp with the
// whole group or HSDP groups of 8 x 2^k GPUs dividing (and below) the 16 / (TP x PP) replicas; the
// micro-batch size each divisor up to 16 of the 512 x TP x PP / 16 sequences per replica (all 32 x
// TP x PP, so 1, 2, 4, 8, 16). Invalid: fsdp with a pipeline (it needs PP 1); 1f1b runs any count of
// microbatches, interleaved any multiple of PP (512 TP PP / (16 mbs) is one), fsdp at PP 1 any.
struct Counts {
  int total = 0, invalid = 0;
};
Counts closed_form() {
  Counts c;
  const int gpus = 16, layers = 32;
  for (const int tp : {1, 2, 4, 8})
    for (int pp = 1; pp <= gpus / tp; ++pp) {
      if ((gpus / tp) % pp != 0) continue;
      const int replicas = gpus / (tp * pp);
      for (const std::string schedule : {"1f1b", "interleaved", "fsdp"}) {
        int vs = 1;
        if (schedule == "interleaved") {
          vs = 0;
          for (int v = 2; v <= 8; ++v) vs += layers % (pp * v) == 0 ? 1 : 0;
        }
        int zero_settings = 2;  // ZeRO 1 and 2
        if (schedule == "fsdp") {
          zero_settings = 1;  // the whole group
          for (int s = 8; s < replicas; s *= 2) zero_settings += replicas % s == 0 ? 1 : 0;
        }
        const int plans = vs * zero_settings * 5;
        c.total += plans;
        if (schedule == "fsdp" && pp > 1) c.invalid += plans;
      }
    }
  return c;
}

const std::string kCounted = kSmall + " --only schedule=1f1b,interleaved,fsdp --fix parallel.recompute=none --fix parallel.cp=1";

TEST(SearchCli, TheSpaceAndItsPruningMatchTheClosedForm) {
  const Counts want = closed_form();
  ASSERT_EQ(want.total, 595);  // the closed form itself, worked by hand: (1f1b 10 + interleaved 18 + fsdp 6) x 5 at TP 1, ...
  const std::string dir = temp_dir("counts");
  // Memory that holds every plan: only validation prunes.
  const auto r = run_stepsim("search " + kCounted + " --set hardware.memory_GiB=100000 --max-replays 2 -q -o '" + dir + "'");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("space:             " + std::to_string(want.total) + " plans (the whole space)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("1 validation:      " + std::to_string(want.invalid) + " invalid (by the key refused: parallel.pp " +
                       std::to_string(want.invalid) + ")"),
            std::string::npos)
      << r.out;
  const Csv ranked = read_csv(dir + "/search.csv"), pruned = read_csv(dir + "/pruned.csv");
  EXPECT_EQ(int(ranked.rows.size()), want.total - want.invalid);
  ASSERT_EQ(int(pruned.rows.size()), want.invalid);
  for (size_t i = 0; i < pruned.rows.size(); ++i) {
    EXPECT_EQ(pruned.at(i, "schedule"), "fsdp");
    EXPECT_NE(pruned.at(i, "parallel.pp"), "1");
    EXPECT_EQ(pruned.at(i, "key"), "parallel.pp");
  }
  // Two replays (the cap), the best first; every other row estimated.
  EXPECT_EQ(ranked.at(0, "status"), "replayed");
  EXPECT_EQ(ranked.at(1, "status"), "replayed");
  EXPECT_EQ(ranked.at(2, "status"), "estimated");
  EXPECT_LE(std::stod(ranked.at(0, "step_time_s")), std::stod(ranked.at(1, "step_time_s")));
}

// parallel.cp_comm_type: the config's own type (p2p) on the plans with CP; --only types apply to
// those plans alone. FSDP at PP 1 and TP 1, micro-batch 1: at CP 1 the whole group or HSDP groups
// of 8 (16 holders), at CP 2 the same 2 (8 replicas x 2 CP ranks), so 2 + 2 plans by default and
// 2 + 2 x 2 with both types; none invalid (32 query and 8 K/V heads divide by 2, as a2a needs).
TEST(SearchCli, TheCpCommTypeVariesOnlyWhereThereIsCp) {
  const std::string base = kSmall + " --only schedule=fsdp --fix parallel.tp=1 --fix parallel.pp=1 --only parallel.cp=1,2 "
                                    "--fix parallel.recompute=none --fix parallel.micro_batch_size=1 "
                                    "--set hardware.memory_GiB=100000 --max-replays 1 -q ";
  for (const bool both : {false, true}) {
    const std::string dir = temp_dir(both ? "cp_both" : "cp_own");
    const auto r = run_stepsim("search " + base + (both ? "--only parallel.cp_comm_type=p2p,a2a " : "") + "-o '" + dir + "'");
    ASSERT_EQ(r.code, 0) << r.err;
    const Csv c = read_csv(dir + "/search.csv");
    ASSERT_EQ(c.rows.size(), both ? 6u : 4u) << r.out;
    const auto type = [&](size_t i) { return c.at(i, "parallel.cp_comm_type"); };
    EXPECT_EQ(rows_where(c, [&](size_t i) { return c.at(i, "parallel.cp") == "1" && type(i) != ""; }), 0u);
    EXPECT_EQ(rows_where(c, [&](size_t i) { return type(i) == "p2p"; }), 2u);
    EXPECT_EQ(rows_where(c, [&](size_t i) { return type(i) == "a2a"; }), both ? 2u : 0u);
  }
}

TEST(SearchCli, MemoryPruningIsTheRooflinesStaticEstimate) {
  const std::string dir = temp_dir("memory");
  const auto r = run_stepsim("search " + kCounted + " --max-replays 1 -q -o '" + dir + "'");
  ASSERT_EQ(r.code, 0) << r.err;
  const Csv ranked = read_csv(dir + "/search.csv"), pruned = read_csv(dir + "/pruned.csv");
  // The first plan pruned for memory and the best: `stepsim roofline` (the static estimate it
  // prints) says the first does not fit in 80 GiB and the second does.
  const auto roofline_fits = [&](const Csv& csv, size_t row) {
    std::string sets;
    for (const std::string key : {"parallel.tp", "parallel.cp", "parallel.pp", "schedule", "parallel.virtual_stages",
                                  "parallel.zero", "parallel.fsdp_shard_size", "parallel.micro_batch_size", "parallel.recompute",
                                  "parallel.cpu_offload_layers"})
      if (!csv.at(row, key).empty()) sets += " --set " + key + "=" + csv.at(row, key);
    const auto out = run_stepsim("roofline '" + kConfig + "' --set cluster.nodes=2" + sets + " --json");
    EXPECT_EQ(out.code, 0) << out.err;
    return nlohmann::json::parse(out.out)["memory"]["fits"].get<bool>();
  };
  size_t oom = pruned.rows.size();
  for (size_t i = 0; i < pruned.rows.size() && oom == pruned.rows.size(); ++i)
    if (pruned.at(i, "stage") == "2 memory") oom = i;
  ASSERT_LT(oom, pruned.rows.size()) << "no plan pruned for memory";
  EXPECT_FALSE(roofline_fits(pruned, oom));
  EXPECT_TRUE(roofline_fits(ranked, 0));
}

TEST(SearchCli, TheWinnerBeatsTheShippedPlanAndItsConfigReplaysIt) {
  const std::string dir = temp_dir("winner");
  const auto r = run_stepsim("search " + kSmall + " --fix parallel.recompute=none --fix parallel.cp=1 --max-replays 6 -q -o '" + dir + "'");
  ASSERT_EQ(r.code, 0) << r.err;
  // The shipped file's plan at 16 GPUs keeps its 32 microbatches: 4 sequences each, beyond 80 GiB.
  EXPECT_NE(r.out.find("config's own plan: out of memory (estimate)"), std::string::npos) << r.out;
  // The shipped plan with its one-sequence microbatches (PP 4, 1F1B, ZeRO-1), replayed on its own.
  const auto shipped = run_stepsim("simulate '" + kConfig + "' --set cluster.nodes=2 --set parallel.micro_batch_size=1 "
                                   "--set sim.mode=reduced --json -q");
  ASSERT_EQ(shipped.code, 0) << shipped.err;
  const double shipped_s = nlohmann::json::parse(shipped.out)["step_time_s"].get<double>();
  const Csv ranked = read_csv(dir + "/search.csv");
  ASSERT_EQ(ranked.at(0, "status"), "replayed");
  const double best_s = std::stod(ranked.at(0, "step_time_s"));
  EXPECT_LT(best_s, shipped_s);
  // best.yaml is a config: simulate loads it from any folder and replays the same step.
  const auto again = run_stepsim("simulate '" + dir + "/best.yaml' --json -q", "/");
  ASSERT_EQ(again.code, 0) << again.err;
  const auto j = nlohmann::json::parse(again.out);
  EXPECT_NEAR(j["step_time_s"].get<double>(), best_s, 1e-5 * best_s);  // the CSV's 6 significant digits
  EXPECT_TRUE(j["memory"]["fits"].get<bool>());
  EXPECT_TRUE(fs::exists(dir + "/pareto.png"));
}

const std::vector<std::string> kOutputs = {"search.csv", "pruned.csv", "summary.txt", "best.yaml", "pareto.png"};

TEST(SearchCli, TheSameSearchGivesTheSameBytesAtAnyJobs) {
  const std::string a = temp_dir("same_a"), b = temp_dir("same_b");
  const std::string args = kCounted + " --max-replays 5 -q";
  const auto ra = run_stepsim("search " + args + " -j 1 -o '" + a + "'");
  const auto rb = run_stepsim("search " + args + " -j 2 -o '" + b + "'");
  ASSERT_EQ(ra.code, 0) << ra.err;
  ASSERT_EQ(rb.code, 0) << rb.err;
  EXPECT_EQ(ra.out, rb.out);
  for (const auto& f : kOutputs) {
    EXPECT_FALSE(slurp(a + "/" + f).empty()) << f;
    EXPECT_EQ(slurp(a + "/" + f), slurp(b + "/" + f)) << f;
  }
}

TEST(SearchCli, AnInterruptedSearchResumesFromItsPoints) {
  const std::string dir = temp_dir("resume"), fresh = temp_dir("resume_fresh");
  const std::string args = kCounted + " --max-replays 4 -j 1";
  const auto whole = run_stepsim("search " + args + " -q -o '" + fresh + "'");
  ASSERT_EQ(whole.code, 0) << whole.err;
  // Interrupted: SIGINT once the first replay's report is written.
  const std::string cmd = std::string(STEPSIM_BINARY) + " search " + args + " -q -o '" + dir + "'";
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    execl("/bin/sh", "sh", "-c", ("exec " + cmd + " > /dev/null 2>&1").c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  const auto reports = [&] {
    int n = 0;
    std::error_code ec;
    if (fs::exists(dir + "/points"))
      for (const auto& e : fs::directory_iterator(dir + "/points", ec))
        if (e.path().extension() == ".json" && fs::file_size(e.path(), ec) > 0) ++n;
    return n;
  };
  for (int i = 0; i < 600 && reports() < 1; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  ::kill(pid, SIGINT);
  int status = 0;
  ::waitpid(pid, &status, 0);
  const int kept = reports();
  ASSERT_GE(kept, 1);
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) GTEST_SKIP() << "the search finished before the signal";
  // Stopped between replays (128 + SIGINT) or, between two batches, by the signal itself.
  EXPECT_TRUE((WIFEXITED(status) && WEXITSTATUS(status) == 128 + SIGINT) || (WIFSIGNALED(status) && WTERMSIG(status) == SIGINT))
      << status;
  EXPECT_FALSE(fs::exists(dir + "/search.csv"));
  // The same command again: the kept replays are read back, the rest run, the outputs are a fresh run's.
  const auto resumed = run_stepsim("search " + args + " -o '" + dir + "'");
  ASSERT_EQ(resumed.code, 0) << resumed.err;
  // The cap's 4 replays (the config's own plan does not fit: not replayed), less those kept.
  EXPECT_NE(resumed.err.find("(" + std::to_string(4 - kept) + " run now"), std::string::npos) << resumed.err;
  EXPECT_EQ(resumed.out, whole.out);
  for (const auto& f : kOutputs) EXPECT_EQ(slurp(dir + "/" + f), slurp(fresh + "/" + f)) << f;
  // A search directory belongs to one search.
  const auto other = run_stepsim("search " + kSmall + " --fix parallel.recompute=full -q -o '" + dir + "'");
  EXPECT_EQ(other.code, 2);
  EXPECT_NE(other.err.find("holds another search"), std::string::npos) << other.err;
}

TEST(SearchCli, HostileSpacesGetOneErrorLine) {
  const std::string dir = temp_dir("hostile");
  // --quiet: a refusal found only after checking the space (e.g. no plan valid) may come after
  // progress lines when checking takes seconds (a loaded or sanitized run); the promise of one
  // line is the error's.
  const std::string o = " -q -o '" + dir + "'";
  using stepsim::test::expect_rejected;
  // Empty after --only / --fix: every plan refused, one line naming the key.
  expect_rejected("search " + kSmall + " --only parallel.tp=3" + o, {"--only/--fix", "empty", "parallel.cp", "parallel.tp=3"});
  expect_rejected("search " + kSmall + " --only parallel.micro_batch_size=3 --fix parallel.cp=1" + o, {"--only/--fix", "none of the", "parallel.micro_batch_size"});
  expect_rejected("search " + kSmall + " --fix schedule=fsdp --fix parallel.pp=2" + o, {"none of the", "parallel.pp"});
  // Contradictory.
  expect_rejected("search " + kSmall + " --fix parallel.tp=2 --only parallel.tp=4,8" + o, {"--fix parallel.tp=2", "contradicts", "--only"});
  expect_rejected("search " + kSmall + " --fix parallel.tp=2 --fix parallel.tp=4" + o, {"contradicts"});
  expect_rejected("search " + kSmall + " --set parallel.tp=2 --only parallel.tp=4,8" + o, {"contradicts"});
  expect_rejected("search " + kSmall + " --fix parallel.moe_dispatcher=deepep --fix parallel.moe_dispatcher=alltoall" + o, {"contradicts"});
  // Not a searched key, unknown, empty, of the wrong type.
  expect_rejected("search " + kSmall + " --only parallel.moe_dispatcher=alltoall,deepep" + o, {"--only parallel.moe_dispatcher", "--fix"});
  expect_rejected("search " + kSmall + " --only parallel.tpp=1,2" + o, {"--only parallel.tpp", "unknown key"});
  expect_rejected("search " + kSmall + " --only parallel.tp=" + o, {"--only", "empty value"});
  expect_rejected("search " + kSmall + " --only parallel.tp=two" + o, {"--only", "parallel.tp", "integer"});
  expect_rejected("search " + kSmall + " --fix schedule=pipedream" + o, {"--fix", "schedule", "use one of"});
  // Scale and batch.
  expect_rejected("search '" + kConfig + "' --gpus 12" + o, {"--gpus 12", "multiple of 8"});
  expect_rejected("search '" + kConfig + "' --gpus 0" + o, {"--gpus 0"});
  expect_rejected("search " + kSmall + " --tokens-per-step 4194304 --global-batch 512" + o, {"--tokens-per-step", "--global-batch"});
  expect_rejected("search " + kSmall, {"-o", "missing"});
  expect_rejected("search " + kSmall + " --max-replays 0" + o, {"--max-replays"});
  // Nothing was written for any of them.
  EXPECT_FALSE(fs::exists(dir));
}

TEST(SearchCli, ALargeSpaceIsCutAndSaysSo) {
  const std::string dir = temp_dir("cut");
  const auto r = run_stepsim("search " + kCounted + " --max-plans 40 --max-replays 1 -q -o '" + dir + "'");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("40 plans searched, the first of 595 in enumeration order"), std::string::npos) << r.out;
  const Csv ranked = read_csv(dir + "/search.csv"), pruned = read_csv(dir + "/pruned.csv");
  // search.csv: every plan past validation (those out of memory last); pruned.csv: the rest too.
  size_t invalid = 0;
  for (size_t i = 0; i < pruned.rows.size(); ++i) invalid += pruned.at(i, "stage") == "1 validation" ? 1 : 0;
  EXPECT_EQ(ranked.rows.size() + invalid, 40u);
  // The first 40 in enumeration order: TP 1, PP 1, 1f1b (2 ZeRO x 5 sizes) and interleaved (v 2, 4, 8 x 2 x 5).
  for (size_t i = 0; i < ranked.rows.size(); ++i) {
    EXPECT_EQ(ranked.at(i, "parallel.tp"), "1");
    EXPECT_EQ(ranked.at(i, "parallel.pp"), "1");
  }
}

// A Llama 3.1 8B config on 16 H800s (512 sequences of 8192 tokens) with the `parallel` lines and
// the schedule given, written as `name` in the process's scratch folder; returns its path.
std::string llama8b_config(const std::string& name, const std::string& parallel, const std::string& schedule) {
  const std::string config = stepsim::test::process_scratch().file(name);
  std::ofstream(config) << "model:\n  config_json: " << STEPSIM_SOURCE_DIR
                        << "/workloads/models/llama-3.1-8b.config.json\n"
                           "train:\n  global_batch: 512\n  seq_len: 8192\n"
                           "parallel:\n" << parallel << "schedule: " << schedule
                        << "\nhardware:\n  preset: h800\ncluster:\n  nodes: 2\n  gpus_per_node: 8\n";
  return config;
}

// A config's parallel.stage_layers lists one count per stage of its own pipeline: plans with as
// many stages keep it, the others split their layers by the profile's rule (parallel.stage_layers
// []) instead of being refused for it. Here the config runs interleaved, PP 4 x 2 virtual stages
// (8 stages of 4 layers) on 16 GPUs; FSDP (PP 1) must be searched, and its best.yaml must load: the
// schedule switch brings virtual_stages 1 there as it does for the --set.
TEST(SearchCli, AConfigsStageLayersFitOnlyItsOwnPipeline) {
  const std::string dir = temp_dir("stage_layers"), fsdp = temp_dir("stage_layers_fsdp");
  const std::string config = llama8b_config(
      "search_stage_layers.yaml",
      "  pp: 4\n  virtual_stages: 2\n  stage_layers: [4, 4, 4, 4, 4, 4, 4, 4]\n  micro_batch_size: 1\n  zero: 1\n", "interleaved");
  const std::string pinned = "'" + config + "' --fix parallel.recompute=none --fix parallel.cp=1 --fix parallel.tp=1 --max-replays 1 -q";
  const auto r = run_stepsim("search " + pinned + " --only schedule=interleaved,fsdp -o '" + dir + "'");
  ASSERT_EQ(r.code, 0) << r.err;
  const Csv ranked = read_csv(dir + "/search.csv"), pruned = read_csv(dir + "/pruned.csv");
  EXPECT_GT(rows_where(ranked, [&](size_t i) { return ranked.at(i, "schedule") == "fsdp"; }), 0u);
  EXPECT_GT(rows_where(ranked, [&](size_t i) {
              return ranked.at(i, "parallel.pp") == "4" && ranked.at(i, "parallel.virtual_stages") == "2";
            }),
            0u);
  for (size_t i = 0; i < pruned.rows.size(); ++i)
    EXPECT_NE(pruned.at(i, "key"), "parallel.stage_layers") << pruned.at(i, "reason");

  const auto f = run_stepsim("search " + pinned + " --fix schedule=fsdp -o '" + fsdp + "'");
  ASSERT_EQ(f.code, 0) << f.err;
  const std::string best = slurp(fsdp + "/best.yaml");
  EXPECT_NE(best.find("stage_layers: []"), std::string::npos) << best;
  EXPECT_NE(best.find("virtual_stages: 1"), std::string::npos) << best;
  const auto again = run_stepsim("simulate '" + fsdp + "/best.yaml' --json -q", "/");
  ASSERT_EQ(again.code, 0) << again.err;
  const double best_s = std::stod(read_csv(fsdp + "/search.csv").at(0, "step_time_s"));
  EXPECT_NEAR(nlohmann::json::parse(again.out)["step_time_s"].get<double>(), best_s, 1e-5 * best_s);
  fs::remove(config);
}

// A config that offloads activations (parallel.cpu_offload_layers) keeps doing so in the plans
// Megatron-LM offloads in (no pipeline, no recompute) and drops it in the others, instead of every
// pipelined or recomputing plan being refused.
TEST(SearchCli, AConfigsActivationOffloadStaysWhereMegatronAllowsIt) {
  const std::string dir = temp_dir("cpu_offload"), piped = temp_dir("cpu_offload_pp");
  const std::string config = llama8b_config(
      "search_cpu_offload.yaml", "  pp: 1\n  cpu_offload_layers: 8\n  micro_batch_size: 1\n  zero: 3\n", "fsdp");
  const std::string pinned = "'" + config + "' --fix parallel.cp=1 --fix parallel.tp=1 --max-replays 1 -q";
  const auto r = run_stepsim("search " + pinned + " --only schedule=1f1b,fsdp -o '" + dir + "'");
  ASSERT_EQ(r.code, 0) << r.err;
  const Csv ranked = read_csv(dir + "/search.csv"), pruned = read_csv(dir + "/pruned.csv");
  EXPECT_GT(rows_where(ranked, [&](size_t i) { return ranked.at(i, "parallel.pp") != "1"; }), 0u);
  EXPECT_GT(rows_where(ranked, [&](size_t i) { return ranked.at(i, "parallel.recompute") != "none"; }), 0u);
  for (size_t i = 0; i < pruned.rows.size(); ++i)
    EXPECT_NE(pruned.at(i, "key"), "parallel.cpu_offload_layers") << pruned.at(i, "reason");
  // The best pipelined plan's config runs without offloading; the FSDP one's keeps it.
  const auto p = run_stepsim("search " + pinned + " --fix parallel.pp=2 --fix schedule=1f1b -o '" + piped + "'");
  ASSERT_EQ(p.code, 0) << p.err;
  EXPECT_NE(slurp(piped + "/best.yaml").find("cpu_offload_layers: 0"), std::string::npos);
  EXPECT_EQ(run_stepsim("simulate '" + piped + "/best.yaml' -q", "/").code, 0);
  fs::remove(config);
}

// A plan Megatron could run by offloading activations (FSDP, no recompute) that does not fit as it
// is gets the fewest offloaded layers that make it fit by the static estimate, as NVIDIA's GB200
// recipes offload: one layer fewer does not fit, and the replayed plan fits.
TEST(SearchCli, APlanThatFitsOnlyWhenOffloadingOffloadsTheFewestLayers) {
  const std::string dir = temp_dir("offload_to_fit");
  const std::string config =
      llama8b_config("search_offload_to_fit.yaml", "  pp: 1\n  micro_batch_size: 4\n  zero: 3\n", "fsdp");
  const auto r = run_stepsim("search '" + config + "' --fix parallel.cp=1 --fix parallel.tp=1 --fix schedule=fsdp "
                             "--fix parallel.micro_batch_size=4 --fix parallel.recompute=none --fix parallel.fsdp_shard_size=0 "
                             "--max-replays 1 -q -o '" + dir + "'");
  ASSERT_EQ(r.code, 0) << r.err;
  const Csv ranked = read_csv(dir + "/search.csv");
  ASSERT_FALSE(ranked.rows.empty());
  const int64_t k = std::stoll(ranked.at(0, "parallel.cpu_offload_layers"));
  EXPECT_GT(k, 0);
  EXPECT_LT(k, 32);
  const auto fits = [&](int64_t layers) {
    const auto x = run_stepsim("roofline '" + dir + "/best.yaml' --json -q --set parallel.cpu_offload_layers=" +
                               std::to_string(layers), "/");
    EXPECT_EQ(x.code, 0) << x.err;
    return nlohmann::json::parse(x.out)["memory"]["fits"].get<bool>();
  };
  EXPECT_TRUE(fits(k));
  EXPECT_FALSE(fits(k - 1));
  const auto again = run_stepsim("simulate '" + dir + "/best.yaml' --json -q", "/");
  ASSERT_EQ(again.code, 0) << again.err;
  EXPECT_TRUE(nlohmann::json::parse(again.out)["memory"]["fits"].get<bool>());
  fs::remove(config);
}

TEST(SearchCli, ASetOfASearchedKeyFixesIt) {
  const std::string dir = temp_dir("set");
  const auto r = run_stepsim("search " + kCounted + " --set parallel.tp=2 --max-replays 1 -q -o '" + dir + "'");
  ASSERT_EQ(r.code, 0) << r.err;
  const Csv ranked = read_csv(dir + "/search.csv");
  ASSERT_FALSE(ranked.rows.empty());
  for (size_t i = 0; i < ranked.rows.size(); ++i) EXPECT_EQ(ranked.at(i, "parallel.tp"), "2");
}

}  // namespace
