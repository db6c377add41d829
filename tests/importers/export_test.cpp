// `stepsim export` (simulator/importers/exporters.hpp): a plan written as a Megatron-LM launch or a
// torchtitan job, read back by the importer, gives the same plan key by key; what the target cannot
// express is refused by name. Expected arguments are read off the source files by hand.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "simulator/config/config_loader.hpp"
#include "simulator/importers/exporters.hpp"
#include "simulator/importers/importers.hpp"
#include "simulator/importers/plan_fields.hpp"
#include "tests/importers/importer_test_util.hpp"

namespace stepsim::test {
namespace {

const std::string kSource = STEPSIM_SOURCE_DIR;

std::string read(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// The import of `text` (a Megatron launch or a torchtitan TOML for `gpus`), loaded as a plan on the
// GPU preset `preset`.
Plan import_back(const std::string& tool, const std::string& text, int64_t gpus, const std::string& preset,
                 int64_t gpus_per_node = 0, const std::vector<std::string>& sets = {}) {
  importers::ImportOptions o;
  o.preset = preset;
  o.gpus = tool == "torchtitan" ? gpus : 0;
  o.gpus_per_node = gpus_per_node;
  const auto imported = tool == "megatron" ? importers::import_megatron(text, "exported", o)
                                           : importers::import_torchtitan(text, "exported", o);
  return load_plan_from_string(importers::plan_yaml(imported, ""), "exported.yaml", sets);
}

std::string differences(const Plan& a, const Plan& b) {
  std::string s;
  for (const auto& d : importers::plan_differences(a, b)) s += d.key + ": " + d.ours.dump() + " vs " + d.theirs.dump() + "\n";
  return s;
}

bool has_line(const std::string& text, const std::string& line) {
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);)
    if (l.find_first_not_of(' ') != std::string::npos && l.substr(l.find_first_not_of(' ')) == line) return true;
  return false;
}

// import -> export -> import: the shipped Megatron-LM example, the arguments its file holds.
TEST(Export, TheShippedMegatronExampleRoundTrips) {
  const Loaded first = megatron(read(kSource + "/workloads/examples/megatron-llama3-70b.sh"));
  const std::string text = importers::export_plan("megatron", first.plan);
  // The example's own arguments (workloads/examples/megatron-llama3-70b.sh), read off by hand.
  for (const char* line : {"--num-layers 80", "--hidden-size 8192", "--ffn-hidden-size 28672", "--num-attention-heads 64",
                           "--group-query-attention", "--num-query-groups 8", "--kv-channels 128", "--seq-length 8192",
                           "--swiglu", "--untie-embeddings-and-output-weights", "--disable-bias-linear",
                           "--tensor-model-parallel-size 8", "--pipeline-model-parallel-size 4", "--sequence-parallel",
                           "--num-layers-per-virtual-pipeline-stage 5", "--use-distributed-optimizer",
                           "--overlap-grad-reduce", "--overlap-param-gather", "--tp-comm-overlap",
                           "--micro-batch-size 1", "--global-batch-size 64", "--bf16",
                           "--recompute-granularity selective", "--nproc-per-node $GPUS_PER_NODE"})
    EXPECT_TRUE(has_line(text, line)) << line << " missing from\n" << text;
  EXPECT_TRUE(has_line(text, "NNODES=8")) << text;
  // The launch's 128256 tokens padded as Megatron-LM pads them, to a multiple of 128 x TP 8: 126 x
  // 1024 = 129024, which NullTokenizer holds as 129023 ids and its end-of-document token.
  EXPECT_TRUE(has_line(text, "--vocab-size 129023")) << text;
  EXPECT_EQ(text.find("--make-vocab-size-divisible-by"), std::string::npos) << text;
  const Plan again = import_back("megatron", text, 0, "h100-sxm");
  EXPECT_EQ(differences(first.plan, again), "");
  EXPECT_EQ(again.parallel.virtual_stages, 4);
  EXPECT_EQ(again.model.vocab_size, 129024);
  EXPECT_EQ(again.gpus(), 64);
  // Same input, same bytes.
  EXPECT_EQ(importers::export_plan("megatron", first.plan), text);
}

TEST(Export, TheShippedTorchtitanExampleRoundTrips) {
  const Loaded first = torchtitan(read(kSource + "/workloads/examples/torchtitan-llama3-70b.toml"), 64);
  const std::string text = importers::export_plan("torchtitan", first.plan);
  for (const char* line : {"name = \"llama3\"", "flavor = \"70B\"", "tensor_parallel_degree = 8",
                           "pipeline_parallel_degree = 4", "data_parallel_shard_degree = 2",
                           "pipeline_parallel_schedule = \"Interleaved1F1B\"", "pipeline_parallel_microbatch_size = 1",
                           "local_batch_size = 16", "seq_len = 8192", "mode = \"full\""})
    EXPECT_TRUE(has_line(text, line)) << line << " missing from\n" << text;
  const Plan again = import_back("torchtitan", text, 64, "h100-sxm");
  EXPECT_EQ(differences(first.plan, again), "");
}

// The Megatron-LM launches of tests/data (MoE, GPT-3 with GELU and biases, a layout string): each
// imports, exports and imports back to the same plan.
TEST(Export, TheMegatronTestLaunchesRoundTrip) {
  struct Case {
    const char* file;
    int64_t gpus;
  };
  for (const Case c : {Case{"megatron-qwen3-30b-a3b.sh", 0}, Case{"megatron-gpt3-175b.sh", 128},
                       Case{"megatron-qwen3-235b-a22b.sh", 0}, Case{"megatron-deepseek-v3-layout.sh", 0}}) {
    SCOPED_TRACE(c.file);
    Loaded first;
    try {
      first = megatron(read(kSource + "/tests/data/" + c.file), c.gpus);
    } catch (const ConfigError& e) {
      ADD_FAILURE() << e.what();
      continue;
    }
    std::string text;
    try {
      text = importers::export_plan("megatron", first.plan);
    } catch (const ConfigError& e) {
      ADD_FAILURE() << e.what();
      continue;
    }
    const Plan again = import_back("megatron", text, 0, "h100-sxm");
    EXPECT_EQ(differences(first.plan, again), "");
  }
}

TEST(Export, TheTorchtitanTestJobRoundTrips) {
  const Loaded first = torchtitan(read(kSource + "/tests/data/torchtitan-llama3-8b.toml"), 8);
  const std::string text = importers::export_plan("torchtitan", first.plan);
  EXPECT_TRUE(has_line(text, "flavor = \"8B\"")) << text;
  EXPECT_TRUE(has_line(text, "selective_ac_option = \"op\"")) << text;
  EXPECT_EQ(differences(first.plan, import_back("torchtitan", text, 8, "h100-sxm")), "");
}

}  // namespace
}  // namespace stepsim::test
