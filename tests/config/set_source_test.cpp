// What a --set owns: an error it causes names that --set, not the YAML file (even when the message
// is about another key the file holds), and a relative path it gives means the working directory,
// while a relative path written in the YAML still means the YAML's folder.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "simulator/config/config_loader.hpp"
#include "simulator/runs/simulate.hpp"
#include "tests/config/config_test_util.hpp"

namespace stepsim::test {
namespace {

bool starts_with(const std::string& s, const std::string& prefix) { return s.rfind(prefix, 0) == 0; }

// The default file runs dualpipev with 60 microbatches on 8 pipeline ranks; interleaved runs them in
// groups of 8, so the message is about the file's key, but the --set made the plan invalid.
TEST(SetSource, AnErrorASetCausesNamesTheSet) {
  const std::string msg = expect_default_rejects({"schedule=interleaved"}, {"parallel.microbatches", "got 60"});
  EXPECT_TRUE(starts_with(msg, "--set schedule=interleaved (with " + default_yaml() + "): ")) << msg;
  // FSDP needs pp 1 and ZeRO-3 (a --set schedule=fsdp brings them); given otherwise with --set,
  // one message says both, and names the --set.
  const std::string fsdp =
      expect_default_rejects({"schedule=fsdp", "parallel.pp=8", "parallel.zero=1"}, {"parallel.pp=1", "parallel.zero=3"});
  EXPECT_TRUE(starts_with(fsdp, "--set parallel.pp=8 ")) << fsdp;
  // Of several, the one after which the plan stopped being valid.
  const std::string second = expect_default_rejects({"hardware.ib_GBps=40", "schedule=interleaved"}, {});
  EXPECT_TRUE(starts_with(second, "--set schedule=interleaved ")) << second;
}

// A key the file spells with dots inside its section (`software: {fused.cross_entropy: ...}`, as
// the imported configs write them) is still overridden by a --set of it; and a file that spells one
// key both ways is refused, not read as whichever spelling sorts last.
TEST(SetSource, ASetWinsOverTheFilesDottedSpellingOfItsKey) {
  const std::string dotted = replaced(default_text(), "software:\n", "software:\n  fused.cross_entropy: false\n");
  TempFile f("dotted.yaml", dotted);
  EXPECT_FALSE(load_plan(f.path()).software.fused_cross_entropy);
  EXPECT_TRUE(load_plan(f.path(), {"software.fused.cross_entropy=true"}).software.fused_cross_entropy);
  EXPECT_TRUE(load_plan(f.path(), {"software={fused: {cross_entropy: true}}"}).software.fused_cross_entropy);
  // The same the other way round: a nested key in the file, a --set written whole.
  const std::string nested =
      replaced(default_text(), "software:\n", "software:\n  fused:\n    cross_entropy: false\n");
  TempFile g("nested.yaml", nested);
  EXPECT_TRUE(load_plan(g.path(), {"software.fused.cross_entropy=true"}).software.fused_cross_entropy);
  const std::string both =
      replaced(default_text(), "software:\n", "software:\n  fused.cross_entropy: false\n  fused:\n    cross_entropy: true\n");
  expect_text_rejects(both, "both.yaml", {"both.yaml", "software.fused.cross_entropy", "given twice", "keep one"});
  // A dotted key past a leaf is unknown, not a second spelling of the leaf.
  expect_text_rejects(default_text() + "\nparallel.pp.x: 1\n", "past.yaml", {"past.yaml", "parallel.pp.x", "unknown key"});
}

TEST(SetSource, AnErrorTheFileCausesStillNamesTheFile) {
  std::string text = default_text();
  const auto at = text.find("schedule: dualpipev");
  ASSERT_NE(at, std::string::npos);
  text.replace(at, std::string("schedule: dualpipev").size(), "schedule: interleaved");
  // An unrelated --set does not take the blame for the file's own mistake.
  const std::string msg = expect_text_rejects(text, "mine.yaml", {"parallel.microbatches"}, {"train.seq_len=4096"});
  EXPECT_TRUE(starts_with(msg, "mine.yaml: ")) << msg;
}

// The replay-size check runs after loading (simulate, compare, calibrate) and names the --set that
// bears on the count. Asked about 1e6 activities: the default step replays 59,153 in its reduced
// mode, every one of its 2048 GPUs under sim.mode=full (about 15 M).
TEST(SetSource, TheReplaySizeCheckNamesTheSet) {
  constexpr double kLimit = 1e6;
  const Plan full = load_plan(default_yaml(), {"sim.mode=full"});
  const std::string msg = config_error_of([&] { check_replay_size(full, kLimit); });
  EXPECT_TRUE(starts_with(msg, "--set sim.mode=full (with " + default_yaml() + "): sim.mode: ")) << msg;
  // Jitter replays every GPU too; no --set gave sim.mode, the layers' --set is the one that bears on it.
  const Plan jitter = load_plan(default_yaml(), {"model.num_hidden_layers=64", "scenario.jitter_sigma=0.01"});
  const std::string why = config_error_of([&] { check_replay_size(jitter, kLimit); });
  EXPECT_TRUE(starts_with(why, "--set model.num_hidden_layers=64 (with ")) << why;
  // The reduced replay is within it: no error.
  EXPECT_NO_THROW(check_replay_size(load_plan(default_yaml(), {}), kLimit));
}

TEST(SetSource, RelativeSetPathMeansTheWorkingDirectory) {
  // The default config lives in workloads/; the path typed on the command line is the shell's.
  const Plan p = load_plan(default_yaml(), {"scenario.routing=file", "scenario.load_file=loads.csv"});
  EXPECT_EQ(p.scenario.load_file, (std::filesystem::current_path() / "loads.csv").lexically_normal().string());
  const Plan up = load_plan(default_yaml(), {"scenario.routing=file", "scenario.load_file=../x/loads.json"});
  EXPECT_EQ(up.scenario.load_file, (std::filesystem::current_path() / "../x/loads.json").lexically_normal().string());
}

TEST(SetSource, RelativeYamlPathMeansTheYamlsFolder) {
  ScratchDir dir;
  std::string text = default_text();
  const auto at = text.find("routing: balanced");
  ASSERT_NE(at, std::string::npos);
  text.replace(at, std::string("routing: balanced").size(), "routing: file\n  load_file: loads.csv");
  const std::string yaml = dir.write("plan.yaml", text);
  EXPECT_EQ(load_plan(yaml).scenario.load_file, (dir.path() / "loads.csv").string());
}

}  // namespace
}  // namespace stepsim::test
