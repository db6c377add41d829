// Hostile and careless input to `stepsim export` (and the import of what it writes): outputs named
// through odd symbolic links, plans whose job the target tool would refuse at start, numbers that
// load but end the replay in an internal error, user text that must stay inert in the written bash,
// and the same bytes each time. Each refusal is one line naming the file or flag, the key and the
// fix, exit 2, nothing written.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "tests/cli_runner.hpp"

namespace stepsim::test {
namespace {

namespace fs = std::filesystem;

const std::string kExamples = std::string(STEPSIM_SOURCE_DIR) + "/workloads/examples/";

std::string read(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// A plan from the shipped Megatron-LM example (TP 8, PP 4 interleaved, 8 x 8 GPUs).
std::string megatron_plan(const ScratchDir& d) {
  const std::string plan = d.file("plan.yaml");
  EXPECT_EQ(run_stepsim("import megatron " + kExamples + "megatron-llama3-70b.sh -q -o " + plan).code, 0);
  return plan;
}

// -o through a symbolic link: the link is followed to the file it names, link by link. A link into
// a folder that is not there was replaced by a plain file (weakly_canonical stops at a dangling
// link and returned the link itself); a loop failed only at the rename, as "No such file or
// directory", after the temporary file was made.
TEST(HostileExport, OutputsThroughSymbolicLinks) {
  ScratchDir d;
  const std::string plan = megatron_plan(d);
  const std::string into_missing = d.file("into-missing.sh");
  fs::create_symlink("no/such/dir/job.sh", into_missing);
  expect_rejected("export megatron " + plan + " -o " + into_missing, {"into-missing.sh", "-o", "folder exists"});
  EXPECT_TRUE(fs::is_symlink(fs::symlink_status(into_missing))) << "the link was replaced";
  EXPECT_FALSE(fs::exists(d.file("no")));

  // A link to a file not written yet, in a folder that is there: written through, the link kept.
  const std::string ahead = d.file("ahead.sh");
  fs::create_symlink("job.sh", ahead);
  const CliResult r = run_stepsim("export megatron " + plan + " -o " + ahead);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(fs::is_symlink(fs::symlink_status(ahead))) << "the link was replaced by a plain file";
  EXPECT_EQ(read(d.file("job.sh")).rfind("#!/bin/bash\n", 0), 0u);

  const std::string loop_a = d.file("loop-a.sh"), loop_b = d.file("loop-b.sh");
  fs::create_symlink("loop-b.sh", loop_a);
  fs::create_symlink("loop-a.sh", loop_b);
  const size_t before = std::distance(fs::directory_iterator(d.path()), fs::directory_iterator());
  expect_rejected("export megatron " + plan + " -o " + loop_a, {"loop-a.sh", "loop of symbolic links", "-o"});
  EXPECT_EQ(size_t(std::distance(fs::directory_iterator(d.path()), fs::directory_iterator())), before)
      << "a temporary file was left";
}

// Megatron-LM's validate_args turns sequence parallelism off at TP 1 and then refuses
// --tp-comm-overlap without it: the export wrote the flag at TP 1 (exit 0, a launch that stops
// before training).
TEST(HostileExport, MegatronTpCommOverlapAtTp1IsRefusedByName) {
  ScratchDir d;
  const std::string plan = megatron_plan(d), out = d.file("job.sh");
  expect_rejected("export megatron " + plan + " --set parallel.tp=1 --set cluster.nodes=1 --set parallel.tp_comm_overlap=true -o " + out,
                  {"parallel.tp_comm_overlap = true", "TP 1", "set parallel.tp_comm_overlap=false"});
  EXPECT_FALSE(fs::exists(out));
  // Without the overlap the same plan exports, and --tp-comm-overlap is not in it.
  const CliResult r = run_stepsim("export megatron " + plan + " --set parallel.tp=1 --set cluster.nodes=1 --set parallel.tp_comm_overlap=false");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out.find("--tp-comm-overlap"), std::string::npos);
}

// torchtitan runs async TP only under torch.compile: the refusal named the TOML key of a job never
// written ("the exported torchtitan job:21: parallelism.enable_async_tensor_parallel ... set
// [compile] enable = true"); now it names the plan's key and the plan's fix.
TEST(HostileExport, TorchtitanAsyncTpWithoutCompileIsRefusedInThePlansTerms) {
  ScratchDir d;
  const std::string plan = d.file("tt.yaml"), out = d.file("job.toml");
  ASSERT_EQ(run_stepsim("import torchtitan " + kExamples + "torchtitan-llama3-70b.toml --gpus 64 -q -o " + plan).code, 0);
  expect_rejected("export torchtitan " + plan + " --set parallel.tp_comm_overlap=true -o " + out,
                  {"--set parallel.tp_comm_overlap=true", "parallel.tp_comm_overlap = true",
                   "set software.profile=torchtitan-compile, or parallel.tp_comm_overlap=false"});
  EXPECT_FALSE(fs::exists(out));
  const CliResult r = run_stepsim("export torchtitan " + plan + " --set parallel.tp_comm_overlap=true --set software.profile=torchtitan-compile");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("enable_async_tensor_parallel = true"), std::string::npos);
}

// SDPA's kernel is PyTorch's choice at run time (an environment variable, the bundled cuDNN), not a
// TOML key: a torchtitan plan that runs cuDNN's fused kernel cannot be written as a job and read back.
TEST(HostileExport, TorchtitanWithCudnnAttentionIsRefusedInThePlansTerms) {
  ScratchDir d;
  const std::string plan = d.file("tt.yaml"), out = d.file("job.toml");
  ASSERT_EQ(run_stepsim("import torchtitan " + kExamples + "torchtitan-llama3-70b.toml --gpus 64 -q -o " + plan).code, 0);
  expect_rejected("export torchtitan " + plan + " --set software.attention_kernel=fused -o " + out,
                  {"--set software.attention_kernel=fused", "software.attention_kernel", "TORCH_CUDNN_SDPA_PREFERRED",
                   "set software.attention_kernel=flash2"});
  EXPECT_FALSE(fs::exists(out));
}

// A capacity factor near DBL_MIN (1e-320, denormal) loaded, imported and exported, and the replay
// ended in "internal error: the programs deadlocked" (exit 1). Below 1 % of the mean load is now
// refused where it is written; 0 (dropless) and 0.01 still load.
TEST(HostileExport, CapacityFactorsNearZeroAreRefusedWhereWritten) {
  ScratchDir d;
  const std::string moe =
      "torchrun --nnodes 1 --nproc-per-node 8 pretrain_gpt.py --num-layers 4 --hidden-size 1024 --num-attention-heads 8 "
      "--seq-length 2048 --micro-batch-size 1 --global-batch-size 16 --vocab-size 32000 --swiglu --disable-bias-linear "
      "--bf16 --use-distributed-optimizer --num-experts 8 --moe-router-topk 2";
  const std::string tiny = d.write("tiny.sh", moe + " --moe-expert-capacity-factor 1e-320\n");
  expect_rejected("import megatron " + tiny, {"tiny.sh:1:", "--moe-expert-capacity-factor 1e-320", "at least 0.01",
                                              "parallel.moe_capacity_factor"});
  const std::string plan = d.file("moe.yaml");
  ASSERT_EQ(run_stepsim("import megatron " + d.write("moe.sh", moe + " --moe-expert-capacity-factor 1.0\n") + " -q -o " + plan).code, 0);
  expect_rejected("simulate --quiet " + plan + " --set parallel.moe_capacity_factor=1e-307",
                  {"parallel.moe_capacity_factor", "at least 0.01", "0 is dropless"});
  expect_rejected("export megatron " + plan + " --set parallel.moe_capacity_factor=5e-324",
                  {"parallel.moe_capacity_factor", "at least 0.01"});
  for (const char* ok : {"0", "0.01"}) {
    const CliResult r = run_stepsim(std::string("roofline --quiet ") + plan + " --set parallel.moe_capacity_factor=" + ok);
    EXPECT_EQ(r.code, 0) << ok << ": " << r.err;
  }
}

// User text (the model's name, the plan's path, --set values) reaches only comment lines of the
// bash (one line each: no newline can end the comment) and, for torchtitan, a TOML basic string:
// never an argument bash would expand. Read, never run.
TEST(HostileExport, UserTextStaysInertInTheWrittenJob) {
  ScratchDir d;
  const std::string hostile = "$(touch PWNED) `touch PWNED` \"q\" 'q' \\ ${HOME} ; | &";
  const std::string plan = d.file("p $(touch PWNED) `id`.yaml");
  ASSERT_EQ(run_stepsim("import megatron " + kExamples + "megatron-llama3-70b.sh -q -o '" + plan + "'").code, 0);
  // The name goes through --set as YAML: a single-quoted YAML scalar inside a single-quoted shell word.
  std::string yaml_name = "'";
  for (const char c : hostile) yaml_name += c == '\'' ? std::string("''") : std::string(1, c);
  yaml_name += "'";
  std::string set = "model.name=" + yaml_name, shell_set = "'";
  for (const char c : set) shell_set += c == '\'' ? std::string("'\\''") : std::string(1, c);
  shell_set += "'";
  const CliResult r = run_stepsim("export megatron '" + plan + "' --set " + shell_set + " --set 'train.seq_len=4096'");
  ASSERT_EQ(r.code, 0) << r.err;
  std::istringstream lines(r.out);
  int comment_lines = 0;
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("#", 0) == 0) {
      ++comment_lines;
      continue;
    }
    EXPECT_EQ(line.find("PWNED"), std::string::npos) << "user text outside a comment: " << line;
    EXPECT_EQ(line.find('`'), std::string::npos) << line;
    EXPECT_EQ(line.find("$("), std::string::npos) << line;
  }
  EXPECT_GE(comment_lines, 5);
  EXPECT_NE(r.out.find("# Megatron-LM launch of the stepsim plan " + plan), std::string::npos) << r.out;
  EXPECT_FALSE(fs::exists(d.file("PWNED")));
}

// Same plan, same bytes: the export and the import of that export, twice each.
TEST(HostileExport, ExportAndReimportAreByteIdenticalAcrossRuns) {
  ScratchDir d;
  const std::string plan = megatron_plan(d);
  const std::string a = d.file("a.sh"), b = d.file("b.sh"), ya = d.file("a.yaml"), yb = d.file("b.yaml");
  ASSERT_EQ(run_stepsim("export megatron " + plan + " -o " + a).code, 0);
  ASSERT_EQ(run_stepsim("export megatron " + plan + " -o " + b).code, 0);
  EXPECT_EQ(read(a), read(b));
  fs::copy_file(a, d.file("job.sh"));
  ASSERT_EQ(run_stepsim("import megatron " + d.file("job.sh") + " -q -o " + ya).code, 0);
  ASSERT_EQ(run_stepsim("import megatron " + d.file("job.sh") + " -q -o " + yb).code, 0);
  EXPECT_FALSE(read(ya).empty());
  EXPECT_EQ(read(ya), read(yb));
}

}  // namespace
}  // namespace stepsim::test
