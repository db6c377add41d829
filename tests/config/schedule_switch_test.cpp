// `--set schedule=X` switches the plan to X's requirements: the settings X fixes come along (FSDP:
// no pipeline, ZeRO-3), each a note, in place of the config file's; a key the file sets that X does
// not read is a note; a key given with --set in the same command that X cannot use stays an error.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "simulator/config/config_loader.hpp"
#include "tests/config/config_test_util.hpp"

namespace stepsim::test {
namespace {

bool has_note(const Plan& p, const std::string& start) {
  return std::any_of(p.notes.begin(), p.notes.end(), [&](const std::string& n) { return n.rfind(start, 0) == 0; });
}

std::string notes_of(const Plan& p) {
  std::string all;
  for (const auto& n : p.notes) all += n + "\n";
  return all;
}

// The seed's question, pipeline or FSDP for DeepSeek-V3, in one --set on the default config.
TEST(ScheduleSwitch, FsdpOnTheDefaultConfigBringsWhatItNeeds) {
  const Plan p = load_plan(default_yaml(), {"schedule=fsdp"});
  EXPECT_EQ(p.parallel.schedule, Schedule{"fsdp"});
  EXPECT_EQ(p.parallel.pp, 1);
  EXPECT_EQ(p.parallel.zero, 3);
  // 15,360 sequences over 2,048 replicas = 7.5 each; the file's microbatch is 1 sequence (60 of them
  // on its 256 replicas), so ceil(7.5 / 1) = 8: the seed's "eight microbatches".
  EXPECT_EQ(p.parallel.microbatches, 8);
  for (const char* note : {"parallel.pp = 1", "parallel.zero = 3", "parallel.microbatches = 8",
                           "parallel.split_lone_chunks = true"})
    EXPECT_TRUE(has_note(p, note)) << note << " missing from:\n" << notes_of(p);
}

// A setting the user gives with the switch is theirs: the schedule's message, naming that --set.
TEST(ScheduleSwitch, ASettingGivenWithTheSwitchStaysAnError) {
  const std::string pp = expect_default_rejects({"schedule=fsdp", "parallel.pp=8"}, {"parallel.pp", "set parallel.pp=1"});
  EXPECT_EQ(pp.rfind("--set parallel.pp=8", 0), 0u) << pp;
  const std::string zero = expect_default_rejects({"schedule=fsdp", "parallel.zero=1"}, {"parallel.zero", "parallel.zero=3"});
  EXPECT_EQ(zero.rfind("--set parallel.zero=1", 0), 0u) << zero;
  const std::string split = expect_default_rejects({"schedule=fsdp", "parallel.split_lone_chunks=true"},
                                                   {"parallel.split_lone_chunks", "pipeline chunks"});
  EXPECT_EQ(split.rfind("--set parallel.split_lone_chunks=true", 0), 0u) << split;
  // And a count the user gives is kept (here one the replicas cannot run).
  expect_default_rejects({"schedule=fsdp", "parallel.microbatches=60"}, {"parallel.microbatches", "at most 8"});
  EXPECT_EQ(load_plan(default_yaml(), {"schedule=fsdp", "parallel.microbatches=4"}).parallel.microbatches, 4);
}

// Without a --set of the schedule nothing is brought: the file's own mistakes name the file.
TEST(ScheduleSwitch, AFileThatContradictsItselfStillFails) {
  const std::string fsdp_file = replaced(default_text(), "schedule: dualpipev", "schedule: fsdp");
  expect_text_rejects(fsdp_file, "mine.yaml", {"mine.yaml", "parallel.pp", "set parallel.pp=1"});
  // An unrelated --set does not turn the file's own unread key into a note.
  const std::string lone = replaced(replaced(replaced(fsdp_file, "pp: 8 ", "pp: 1 "), "zero: 1", "zero: 3"),
                                    "microbatches: 60", "microbatches: 8");
  const std::string msg =
      expect_text_rejects(lone, "mine.yaml", {"mine.yaml", "parallel.split_lone_chunks"}, {"hardware.ib_GBps=40"});
  EXPECT_EQ(msg.rfind("mine.yaml: ", 0), 0u) << msg;
}

// The way back: an FSDP file switched to a pipeline schedule leaves ZeRO-3 for ZeRO-1, and its
// HSDP shard size, which only ZeRO-3 reads, becomes a note.
TEST(ScheduleSwitch, AwayFromFsdpBringsZeroOneAndNotesTheShardSize) {
  std::string fsdp_file = replaced(default_text(), "schedule: dualpipev", "schedule: fsdp");
  // 16,384 sequences: 8 on each of the 2,048 replicas, which a pipeline schedule needs whole.
  fsdp_file = replaced(fsdp_file, "global_batch: 15360", "global_batch: 16384");
  fsdp_file = replaced(fsdp_file, "pp: 8 ", "pp: 1 ");
  fsdp_file = replaced(fsdp_file, "zero: 1", "zero: 3\n  fsdp_shard_size: 64");
  fsdp_file = replaced(fsdp_file, "microbatches: 60", "microbatches: 8");
  fsdp_file = replaced(fsdp_file, "split_lone_chunks: true", "split_lone_chunks: false");
  ASSERT_EQ(load_plan_from_string(fsdp_file, "fsdp.yaml", {}).parallel.zero, 3);  // the file alone is valid
  const Plan p = load_plan_from_string(fsdp_file, "fsdp.yaml", {"schedule=1f1b"});
  EXPECT_EQ(p.parallel.zero, 1);
  EXPECT_EQ(p.parallel.pp, 1);  // 1F1B runs on one rank: nothing to bring
  EXPECT_TRUE(has_note(p, "parallel.zero = 1")) << notes_of(p);
  EXPECT_TRUE(has_note(p, "parallel.fsdp_shard_size = 64 (fsdp.yaml) is not used")) << notes_of(p);
}

// Siblings: zero-bubble schedules bring the split backward; schedules without virtual stages
// bring one chunk per rank; interleaved brings two where the file says one.
TEST(ScheduleSwitch, OtherSchedulesBringTheirSettings) {
  const std::string no_split = replaced(replaced(default_text(), "schedule: dualpipev", "schedule: 1f1b"),
                                        "split_lone_chunks: true", "split_lone_chunks: true\n  split_backward: false");
  ASSERT_FALSE(load_plan_from_string(no_split, "mine.yaml", {}).parallel.split_backward);
  for (const char* zb : {"schedule=zb-h1", "schedule=zb-v"}) {
    const Plan p = load_plan_from_string(no_split, "mine.yaml", {zb});
    EXPECT_TRUE(p.parallel.split_backward) << zb;
    EXPECT_TRUE(has_note(p, "parallel.split_backward = true")) << zb << "\n" << notes_of(p);
  }
  // The 405B plan runs 1F1B; as interleaved with 4 chunks, then back to 1F1B.
  const std::string llama = read_text(source_path("workloads/llama-3.1-405b.yaml"));
  const std::string interleaved = replaced(replaced(llama, "schedule: 1f1b", "schedule: interleaved"),
                                           "zero: 1 ", "zero: 1\n  virtual_stages: 2 ");
  const std::string path = source_path("workloads/interleaved-test.yaml");  // relative config_json resolves
  ASSERT_EQ(load_plan_from_string(interleaved, path, {}, source_path("workloads")).parallel.virtual_stages, 2);
  const Plan back = load_plan_from_string(interleaved, path, {"schedule=1f1b"}, source_path("workloads"));
  EXPECT_EQ(back.parallel.virtual_stages, 1);
  EXPECT_TRUE(has_note(back, "parallel.virtual_stages = 1")) << notes_of(back);
  const std::string one_chunk = replaced(interleaved, "virtual_stages: 2", "virtual_stages: 1");
  const Plan again = load_plan_from_string(replaced(one_chunk, "schedule: interleaved", "schedule: 1f1b"), path,
                                           {"schedule=interleaved"}, source_path("workloads"));
  EXPECT_EQ(again.parallel.virtual_stages, 2);
}

}  // namespace
}  // namespace stepsim::test
