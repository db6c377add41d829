// Bad inputs: each must throw exactly one ConfigError whose single-line message names the file (or
// --set), the key, and what would fix it. Never a crash, never a silent default.
#include <gtest/gtest.h>

#include <algorithm>

#include "vocabulary/config_error.hpp"
#include "simulator/config/config_loader.hpp"
#include "tests/config/config_test_util.hpp"

namespace stepsim::test {
namespace {

const char* kFile = "deepseek-v3.yaml";  // how the default config shows up in messages

// ---- YAML syntax and files ------------------------------------------------------------------

TEST(ConfigErrors, MalformedYamlUnbalancedBracketNamesLine) {
  const auto text = replaced(default_text(), "parallel:\n", "parallel: {pp: 8, ep: 64\n");
  const auto msg = expect_text_rejects(text, "bracket.yaml", {"bracket.yaml", "malformed YAML", "line ", "fix"});
  EXPECT_NE(msg.find("column"), std::string::npos) << msg;
}

TEST(ConfigErrors, MalformedYamlBadIndentationNamesLine) {
  // seq_len dedented by one space: neither in train nor at the top level.
  const std::string text = "train:\n  global_batch: 15360\n seq_len: 4096\n";
  const auto msg = expect_text_rejects(text, "indent.yaml", {"indent.yaml", "malformed YAML", "line 3", "fix"});
}

TEST(ConfigErrors, MalformedYamlInAFileNamesThePath) {
  TempFile f("broken.yaml", "model: [hidden_size: 1\n");
  const auto msg = config_error_of([&] { load_plan(f.path()); });
  expect_message(msg, {f.path(), "malformed YAML", "line ", "fix"});
}

TEST(ConfigErrors, UnreadableFile) {
  const std::string path = "/nonexistent-dir/no-such-config.yaml";
  const auto msg = config_error_of([&] { load_plan(path); });
  expect_message(msg, {path, "cannot read", "check the path"});
}

TEST(ConfigErrors, DirectoryInsteadOfFile) {
  const auto dir = source_path("workloads");
  const auto msg = config_error_of([&] { load_plan(dir); });
  expect_message(msg, {dir, "cannot read", "check the path"});
}

TEST(ConfigErrors, EmptyDocument) {
  expect_text_rejects("", "empty.yaml", {"empty.yaml", "expected a map of sections"});
}

TEST(ConfigErrors, TopLevelList) {
  expect_text_rejects("- 1\n- 2\n", "list.yaml", {"list.yaml", "expected a map of sections"});
}

TEST(ConfigErrors, DuplicateKeyInYaml) {
  const auto text = replaced(default_text(), "  pp: 8 ", "  pp: 8\n  pp: 4 ");
  expect_text_rejects(text, "dup.yaml", {"dup.yaml", "parallel.pp", "given twice", "line ", "keep one"});
}

TEST(ConfigErrors, DuplicateTopLevelSection) {
  const auto text = default_text() + "\ncluster:\n  nodes: 8\n  gpus_per_node: 8\n";
  expect_text_rejects(text, "dup.yaml", {"dup.yaml", "cluster", "given twice", "keep one"});
}

// ---- unknown and missing keys ---------------------------------------------------------------

TEST(ConfigErrors, UnknownTopLevelKey) {
  const auto text = default_text() + "\noptimiser:\n  lr: 0.1\n";
  expect_text_rejects(text, "extra.yaml", {"extra.yaml", "optimiser", "unknown key", "check its spelling"});
}

TEST(ConfigErrors, UnknownNestedKeyTypo) {
  const auto text = replaced(default_text(), "  pp: 8 ", "  ppp: 8 ");
  expect_text_rejects(text, "typo.yaml", {"typo.yaml", "parallel.ppp", "unknown key", "did you mean `parallel.pp`?"});
}

TEST(ConfigErrors, SetUnknownKey) {
  expect_default_rejects({"parallel.ppp=4"}, {"--set", "parallel.ppp", "unknown key", "did you mean `parallel.pp`?"});
}

TEST(ConfigErrors, SetUnknownSection) {
  expect_default_rejects({"paralel.pp=4"}, {"--set", "paralel", "unknown key", "did you mean `parallel`?"});
}

TEST(ConfigErrors, SetWithoutEquals) {
  expect_default_rejects({"parallel.pp"}, {"--set", "parallel.pp", "expected key=value", "--set parallel.pp=8"});
}

TEST(ConfigErrors, SetWithEmptyKey) {
  expect_default_rejects({"=4"}, {"--set", "=4", "expected key=value"});
}

TEST(ConfigErrors, SetWithEmptyKeyPart) {
  expect_default_rejects({"parallel..pp=4"}, {"--set", "parallel..pp", "use a key like"});
  expect_default_rejects({"parallel.pp.=4"}, {"--set", "parallel.pp.", "use a key like"});
}

TEST(ConfigErrors, SetInvalidYamlValue) {
  expect_default_rejects({"parallel={pp: 4"}, {"--set", "parallel", "not valid YAML", "quote it or fix it"});
}

TEST(ConfigErrors, SetThroughALeaf) {
  expect_default_rejects({"parallel.pp.x=1"}, {"--set", "parallel.pp.x", "not a section", "check the key"});
}

TEST(ConfigErrors, MissingRequiredKey) {
  const auto text = replaced(default_text(), "  seq_len: 4096\n", "");
  expect_text_rejects(text, "short.yaml", {"short.yaml", "train.seq_len", "missing", "add it"});
}

TEST(ConfigErrors, MissingRequiredSection) {
  const auto text = replaced(default_text(), "cluster:\n  nodes: 256\n  gpus_per_node: 8\n", "");
  expect_text_rejects(text, "short.yaml", {"short.yaml", "cluster.", "missing", "add it"});
}

// ---- wrong types ----------------------------------------------------------------------------

TEST(ConfigErrors, StringForIntInFile) {
  const auto text = replaced(default_text(), "  pp: 8 ", "  pp: eight ");
  expect_text_rejects(text, "type.yaml", {"type.yaml", "parallel.pp", "expected an integer", "\"eight\""});
}

TEST(ConfigErrors, StringForIntViaSet) {
  expect_default_rejects({"parallel.pp=eight"}, {"--set", "parallel.pp", "expected an integer", "\"eight\""});
}

TEST(ConfigErrors, QuotedNumberForInt) {
  // Quoted scalars stay strings: "8" is not 8.
  const auto text = replaced(default_text(), "  pp: 8 ", "  pp: \"8\" ");
  expect_text_rejects(text, "type.yaml", {"type.yaml", "parallel.pp", "expected an integer"});
}

TEST(ConfigErrors, FloatForInt) {
  expect_default_rejects({"train.global_batch=15360.5"},
                         {"--set", "train.global_batch", "expected an integer", "15360.5"});
  expect_default_rejects({"parallel.pp=8.0"}, {"--set", "parallel.pp", "expected an integer"});
}

TEST(ConfigErrors, MapWhereANumberGoes) {
  expect_default_rejects({"hardware.sms={count: 132}"}, {"--set", "hardware.sms", "expected an integer"});
  const auto text = replaced(default_text(), "  preset: h800\n", "  preset: h800\n  ib_GBps: {value: 50}\n");
  expect_text_rejects(text, "type.yaml", {"type.yaml", "hardware.ib_GBps", "expected a number"});
}

TEST(ConfigErrors, ListForASection) {
  expect_default_rejects({"parallel=[8, 64]"}, {"--set", "parallel", "expected a section"});
  const auto text = replaced(default_text(), "cluster:\n  nodes: 256\n  gpus_per_node: 8\n", "cluster: [256, 8]\n");
  expect_text_rejects(text, "type.yaml", {"type.yaml", "cluster", "expected a section"});
}

TEST(ConfigErrors, ScalarForASection) {
  const auto text = replaced(default_text(), "sim:\n  mode: auto\n  compute: speed-of-light", "sim: auto");
  expect_text_rejects(text, "type.yaml", {"type.yaml", "sim", "expected a section"});
}

TEST(ConfigErrors, EmptySection) {
  const auto text = replaced(default_text(), "sim:\n  mode: auto\n  compute: speed-of-light", "sim:");
  expect_text_rejects(text, "type.yaml", {"type.yaml", "sim", "expected a section", "null"});
}

TEST(ConfigErrors, EmptySetValue) {
  expect_default_rejects({"parallel.pp="}, {"--set", "parallel.pp", "expected an integer", "null"});
}

TEST(ConfigErrors, NumberForBool) {
  expect_default_rejects({"model.tie_word_embeddings=1"},
                         {"--set", "model.tie_word_embeddings", "expected true or false"});
}

TEST(ConfigErrors, NumberForText) {
  expect_default_rejects({"hardware.name=[H800]"}, {"--set", "hardware.name", "expected a string"});
}

// ---- ranges ---------------------------------------------------------------------------------

TEST(ConfigErrors, ZeroHiddenSize) {
  expect_default_rejects({"model.hidden_size=0"}, {"--set", "model.hidden_size", "must be a positive integer", "0"});
  const auto text = replaced(default_text(), "  hidden_size: 7168\n", "  hidden_size: 0\n");
  expect_text_rejects(text, "zero.yaml", {"zero.yaml", "model.hidden_size", "must be a positive integer"});
}

TEST(ConfigErrors, NegativeGlobalBatch) {
  expect_default_rejects({"train.global_batch=-1"}, {"--set", "train.global_batch", "must be a positive integer", "-1"});
}

TEST(ConfigErrors, NegativeCount) {
  expect_default_rejects({"model.n_shared_experts=-1"}, {"--set", "model.n_shared_experts", "must not be negative"});
}

TEST(ConfigErrors, NegativeBandwidth) {
  expect_default_rejects({"hardware.ib_GBps=-50"}, {"--set", "hardware.ib_GBps", "must be greater than zero", "-50"});
}

TEST(ConfigErrors, ZeroBandwidth) {
  expect_default_rejects({"hardware.nvlink_GBps=0"}, {"--set", "hardware.nvlink_GBps", "must be greater than zero"});
  const auto text = replaced(default_text(), "  preset: h800\n", "  preset: h800\n  nvlink_GBps: 0\n");
  expect_text_rejects(text, "zero.yaml", {"zero.yaml", "hardware.nvlink_GBps", "must be greater than zero"});
}

TEST(ConfigErrors, NegativeLatency) {
  expect_default_rejects({"hardware.ib_latency_s=-1e-6"}, {"--set", "hardware.ib_latency_s", "must not be negative"});
}

TEST(ConfigErrors, NanFromYaml) {
  const auto text = replaced(default_text(), "  preset: h800\n", "  preset: h800\n  ib_GBps: .nan\n");
  expect_text_rejects(text, "nan.yaml", {"nan.yaml", "hardware.ib_GBps", "must be finite", "nan"});
  expect_default_rejects({"hardware.ib_GBps=.nan"}, {"--set", "hardware.ib_GBps", "must be finite", "got nan"});
  expect_default_rejects({"hardware.fp8_tflops=nan"}, {"--set", "hardware.fp8_tflops", "must be finite", "got nan"});
}

TEST(ConfigErrors, InfinityFromYaml) {
  expect_default_rejects({"hardware.nvlink_GBps=.inf"}, {"--set", "hardware.nvlink_GBps", "must be finite", "got inf"});
  expect_default_rejects({"hardware.ib_latency_s=-.inf"}, {"--set", "hardware.ib_latency_s", "must be finite", "-inf"});
  expect_default_rejects({"model.hidden_size=.inf"}, {"--set", "model.hidden_size", "expected an integer", "inf"});
}

// ---- choices --------------------------------------------------------------------------------

TEST(ConfigErrors, UnknownScheduleName) {
  expect_default_rejects({"schedule=zb-h2"}, {"--set", "schedule", "unknown value", "\"zb-h2\"", "use one of", "1f1b"});
  const auto text = replaced(default_text(), "schedule: dualpipev", "schedule: DualPipe");
  expect_text_rejects(text, "sched.yaml", {"sched.yaml", "schedule", "use one of", "dualpipev"});
}

TEST(ConfigErrors, ZeroStageFour) {
  expect_default_rejects({"parallel.zero=4"}, {"--set", "parallel.zero", "unknown value 4", "use one of: 1, 2, 3"});
}

TEST(ConfigErrors, UnknownRoutingAndSimMode) {
  expect_default_rejects({"scenario.routing=random"}, {"--set", "scenario.routing", "use one of", "balanced"});
  expect_default_rejects({"sim.mode=fast"}, {"--set", "sim.mode", "use one of", "reduced"});
  expect_default_rejects({"sim.fidelity=approximate"}, {"--set", "sim.fidelity", "use one of", "exact"});
}

// ---- parallel layout (cross-key; named by the file the plan came from) ----------------------

TEST(ConfigErrors, GpusNotDivisibleByPp) {
  expect_default_rejects({"parallel.pp=7"}, {kFile, "parallel.pp", "does not divide the 2048 GPUs", "use a divisor"});
}

TEST(ConfigErrors, MoreStagesThanLayers) {
  // DualPipeV: 64 ranks hold 128 stages, more than 61 layers.
  expect_default_rejects({"parallel.pp=64"}, {kFile, "parallel.pp", "128 pipeline stages exceed the 61 layers", "use fewer"});
  expect_default_rejects({"schedule=1f1b", "parallel.pp=64"}, {kFile, "parallel.pp", "64 pipeline stages", "use fewer"});
}

TEST(ConfigErrors, EpNotDividingExperts) {
  expect_default_rejects({"parallel.ep=48"}, {kFile, "parallel.ep", "does not divide the 256 routed experts", "use a divisor"});
}

TEST(ConfigErrors, EpLargerThanExperts) {
  // pp 4 leaves 512 GPUs per stage, so only the expert count stops ep 512.
  expect_default_rejects({"parallel.pp=4", "parallel.ep=512"},
                         {kFile, "parallel.ep", "exceed the 256 routed experts", "use at most 256"});
}

TEST(ConfigErrors, EpNotDividingStageGpus) {
  // pp 16 leaves 128 GPUs per stage; ep 256 divides the 256 experts but not the stage.
  expect_default_rejects({"parallel.pp=16", "parallel.ep=256"},
                         {kFile, "parallel.ep", "GPUs of a pipeline stage", "use a divisor"});
}

TEST(ConfigErrors, EpNotAlignedToNodes) {
  // 96 experts and 24 nodes (24 GPUs per stage): ep 12 divides both, but spans 1.5 nodes.
  const std::vector<std::string> base = {"model.n_routed_experts=96", "cluster.nodes=24"};
  auto sets = base;
  sets.push_back("parallel.ep=12");
  expect_default_rejects(sets, {kFile, "parallel.ep", "multiple of cluster.gpus_per_node (8)"});
  sets = base;
  sets.push_back("parallel.ep=3");
  expect_default_rejects(sets, {kFile, "parallel.ep", "must divide cluster.gpus_per_node (8)"});
}

TEST(ConfigErrors, EpOnDenseModel) {
  // Expert parallelism asked for on a dense model, in the same command: an error.
  const auto msg = config_error_of([] { load_plan(source_path("workloads/llama-3.1-8b.yaml"), {"parallel.ep=8"}); });
  expect_message(msg, {"--set parallel.ep=8", "parallel.ep", "no routed experts", "set parallel.ep=1"});
  // The file's EP 64, which a --set making the model dense leaves unread: a note
  // (tests/config/schedule_switch_test.cpp has the schedule's siblings).
  const Plan p = load_plan(default_yaml(), {"model.n_routed_experts=0"});
  EXPECT_EQ(std::count_if(p.notes.begin(), p.notes.end(),
                          [](const std::string& n) { return n.rfind("parallel.ep = 64 (", 0) == 0 && n.find("is not used") != std::string::npos; }),
            1);
}

TEST(ConfigErrors, GlobalBatchNotSplittingOverReplicas) {
  expect_default_rejects({"train.global_batch=15000"}, {kFile, "train.global_batch", "use a multiple of 256"});
  expect_default_rejects({"train.global_batch=128"}, {kFile, "train.global_batch", "idle", "use at least 256"});
}

TEST(ConfigErrors, MoreMicrobatchesThanSequences) {
  expect_default_rejects({"parallel.microbatches=120"},
                         {kFile, "parallel.microbatches", "exceeds the 60 sequences per replica", "use at most 60"});
}

TEST(ConfigErrors, MicrobatchesNotDividingSequences) {
  expect_default_rejects({"parallel.microbatches=50"},
                         {kFile, "parallel.microbatches", "does not divide the 60 sequences", "pick a divisor"});
}

TEST(ConfigErrors, DualPipeVTooFewMicrobatches) {
  expect_default_rejects({"parallel.microbatches=12"}, {kFile, "parallel.microbatches", "DualPipeV", "16"});
}

TEST(ConfigErrors, VirtualStagesOutsideInterleaved) {
  expect_default_rejects({"schedule=1f1b", "parallel.virtual_stages=2"},
                         {kFile, "parallel.virtual_stages", "only schedule interleaved", "set parallel.virtual_stages=1"});
  expect_default_rejects({"parallel.virtual_stages=0"}, {"--set", "parallel.virtual_stages"});
}

TEST(ConfigErrors, InterleavedNeedsVirtualStagesAndMicrobatchGroups) {
  expect_default_rejects({"schedule=interleaved", "parallel.virtual_stages=1"}, {kFile, "parallel.virtual_stages", "at least 2"});
  // Unset, interleaved runs 2 virtual stages; the default plan's 60 microbatches are no multiple of 8.
  expect_default_rejects({"schedule=interleaved"}, {kFile, "parallel.microbatches", "groups of parallel.pp = 8"});
  expect_default_rejects({"schedule=interleaved", "parallel.virtual_stages=2", "parallel.microbatches=12"},
                         {kFile, "parallel.microbatches", "groups of parallel.pp = 8", "multiple"});
}

TEST(ConfigErrors, DualPipeNeedsEvenRanksAndMicrobatches) {
  expect_default_rejects({"workload.kind=synthetic", "schedule=dualpipe", "parallel.pp=3", "parallel.microbatches=12"},
                         {kFile, "parallel.pp", "even parallel.pp", "dualpipev"});
  expect_default_rejects({"workload.kind=synthetic", "schedule=dualpipe", "parallel.pp=4", "parallel.microbatches=9"},
                         {kFile, "parallel.microbatches", "even", "8"});
}

TEST(ConfigErrors, ZbVTooFewMicrobatches) {
  expect_default_rejects({"schedule=zb-v", "parallel.microbatches=12"}, {kFile, "parallel.microbatches", "ZB-V", "16"});
}

TEST(ConfigErrors, SplitBackward) {
  expect_default_rejects({"parallel.split_backward=sometimes"}, {"--set", "parallel.split_backward"});
  // Zero-bubble schedules (the default DualPipeV among them) defer W: they need the split.
  for (const char* s : {"dualpipev", "dualpipe", "zb-h1", "zb-v"})
    expect_default_rejects({std::string("schedule=") + s, "parallel.split_backward=false"},
                           {kFile, "parallel.split_backward", s, "defers weight gradients", "set parallel.split_backward=true"});
}

// ---- Megatron's overlap options ---------------------------------------------------------------

TEST(ConfigErrors, MegatronOverlapKeysAreBoolsAndTheBucketAPositiveCount) {
  for (const char* k : {"parallel.tp_comm_overlap", "parallel.overlap_grad_reduce", "parallel.overlap_param_gather"})
    expect_default_rejects({std::string(k) + "=yes please"}, {"--set", k, "true or false"});
  expect_default_rejects({"parallel.ddp_bucket_size=0"}, {"--set", "parallel.ddp_bucket_size"});
  expect_default_rejects({"parallel.ddp_bucket_size=1e16"}, {"--set", "parallel.ddp_bucket_size", "2^50"});
}

TEST(ConfigErrors, MegatronOverlapDefaultsAreMegatronsOff) {
  const Plan p = load_plan(source_path("workloads/llama-3.1-405b.yaml"));
  EXPECT_FALSE(p.parallel.tp_comm_overlap);
  EXPECT_FALSE(p.parallel.overlap_grad_reduce);
  EXPECT_FALSE(p.parallel.overlap_param_gather);
  EXPECT_EQ(p.parallel.ddp_bucket_size, 0);  // Megatron's max(40M, 1M x DP)
}


// Without overlap_grad_reduce Megatron keeps one bucket and ignores --ddp-bucket-size (README):
// the default file sets a size, and one --set still switches the overlap off.
TEST(ConfigErrors, DdpBucketSizeIsMegatronsNoOpWithoutOverlapGradReduce) {
  const Plan p = load_plan(default_yaml(), {"parallel.overlap_grad_reduce=false"});
  EXPECT_FALSE(p.parallel.overlap_grad_reduce);
  EXPECT_GT(p.parallel.ddp_bucket_size, 0);
}

// ZeRO-3 always overlaps its per-layer collectives: `true` (the default file's) is what it does,
// an explicit `false` asks for an FSDP stepsim does not model.
TEST(ConfigErrors, FsdpRefusesOverlapOffButTakesOn) {
  // (The default file's split_lone_chunks: true has no pipeline chunks to split under fsdp.)
  const std::vector<std::string> fsdp = {"schedule=fsdp", "parallel.pp=1", "parallel.zero=3", "parallel.microbatches=8",
                                         "parallel.split_lone_chunks=false"};
  const Plan on = load_plan(default_yaml(), fsdp);
  // Taken as the no-op it is, and said so.
  ASSERT_FALSE(on.notes.empty());
  EXPECT_NE(std::find_if(on.notes.begin(), on.notes.end(),
                         [](const std::string& n) { return n.rfind("parallel.overlap_grad_reduce = true", 0) == 0; }),
            on.notes.end());
  auto off = fsdp;
  off.push_back("parallel.overlap_grad_reduce=false");
  expect_default_rejects(off, {"--set", "parallel.overlap_grad_reduce", "ZeRO-3", "set it true"});
}

// Userbuffers' reduce-scatter takes 16 SMs from its GEMM.
TEST(ConfigErrors, TpCommOverlapNeedsSmsLeftForTheGemm) {
  const auto msg = config_error_of([] {
    load_plan(source_path("workloads/llama-3.1-8b.yaml"),
              {"parallel.tp=2", "parallel.tp_comm_overlap=true", "hardware.sms=16"});
  });
  expect_message(msg, {"parallel.tp_comm_overlap", "16", "hardware.sms"});
}

// Activation offloading where Megatron-LM allows it (no pipeline, no recompute, fewer layers than
// the model) and only with a host link rate to copy over.
TEST(ConfigErrors, CpuOffloadLayersOnlyWhereMegatronOffloads) {
  const std::string llama = source_path("workloads/llama-3.1-8b.yaml");
  // One pipeline of 8 sequences per replica, one a microbatch.
  const auto rejects = [&](std::vector<std::string> sets, std::initializer_list<std::string> pieces) {
    sets.insert(sets.begin(), "parallel.microbatches=8");
    expect_message(config_error_of([&] { load_plan(llama, sets); }), pieces);
  };
  rejects({"parallel.pp=1", "parallel.cpu_offload_layers=32"}, {"parallel.cpu_offload_layers", "32", "at most 31"});
  rejects({"parallel.cpu_offload_layers=4"}, {"parallel.cpu_offload_layers", "pipeline", "parallel.pp=1"});
  rejects({"parallel.pp=1", "parallel.cpu_offload_layers=4", "parallel.recompute=full"},
          {"parallel.cpu_offload_layers", "recompute", "parallel.recompute=none"});
  rejects({"parallel.pp=1", "parallel.cpu_offload_layers=4", "schedule=gpipe"},
          {"parallel.cpu_offload_layers", "gpipe", "one microbatch"});
  rejects({"parallel.pp=1", "parallel.cpu_offload_layers=4", "software.cuda_graphs=layers"},
          {"parallel.cpu_offload_layers", "CUDA graphs", "software.cuda_graphs=none"});
  rejects({"parallel.pp=1", "parallel.cpu_offload_layers=4", "hardware.preset=mi300x"},
          {"hardware.host_link_GBps", "missing", "GB/s"});
  for (const char* bad : {"-1", "1.5", "nan", "1e999", "\"4\"", "[4]", "99999999"})
    rejects({"parallel.pp=1", std::string("parallel.cpu_offload_layers=") + bad}, {"--set", "parallel.cpu_offload_layers"});
  for (const char* bad : {"0", "-5", "nan", "1e9", "x"})
    rejects({"parallel.pp=1", "parallel.cpu_offload_layers=4", std::string("hardware.host_link_GBps=") + bad},
            {"--set", "hardware.host_link_GBps"});
  expect_default_rejects({"workload.kind=synthetic", "parallel.cpu_offload_layers=2"},
                         {"parallel.cpu_offload_layers", "synthetic"});
  // DeepSeek's config splits lone pipeline chunks; FSDP runs none, so offloading is no conflict there.
  const Plan fsdp = load_plan(default_config_path(), {"schedule=fsdp", "parallel.pp=1", "parallel.zero=3",
                                                      "parallel.microbatches=8", "parallel.recompute=none",
                                                      "parallel.cpu_offload_layers=40"});
  EXPECT_EQ(fsdp.parallel.cpu_offload_layers, 40);
}

TEST(ConfigErrors, OverlapSharedExpertIsABool) {
  expect_default_rejects({"parallel.overlap_shared_expert=2"}, {"--set", "parallel.overlap_shared_expert", "true or false"});
}

// The capture schedule owns its checks (schedules/capture_schedule.cpp), nobody tests its name.
TEST(ConfigErrors, CaptureRefusesTensorContextParallelismAndZero2) {
  const std::string capture = std::string(STEPSIM_SOURCE_DIR) + "/workloads/deepseek-profile-capture.yaml";
  for (const char* key : {"parallel.tp", "parallel.cp"}) {
    const auto msg = config_error_of([&] { load_plan(capture, {std::string(key) + "=2"}); });
    expect_message(msg, {"deepseek-profile-capture.yaml", key, "EP-only trace", std::string("set ") + key + "=1"});
  }
  const auto msg = config_error_of([&] { load_plan(capture, {"parallel.zero=2"}); });
  expect_message(msg, {"deepseek-profile-capture.yaml", "parallel.zero", "set parallel.zero=1"});
}

// A --set schedule=fsdp brings pp 1 and ZeRO-3 (tests/config/schedule_switch_test.cpp); given
// otherwise in the same command, they are refused.
TEST(ConfigErrors, FsdpWithPipeline) {
  expect_default_rejects({"schedule=fsdp", "parallel.pp=8"}, {kFile, "parallel.pp", "fsdp", "set parallel.pp=1"});
}

TEST(ConfigErrors, FsdpWithZeroOne) {
  expect_default_rejects({"schedule=fsdp", "parallel.zero=1"}, {kFile, "parallel.zero", "fsdp", "set parallel.zero=3"});
}

TEST(ConfigErrors, ZeroThreeWithOneFOneB) {
  expect_default_rejects({"schedule=1f1b", "parallel.zero=3"},
                         {kFile, "parallel.zero", "ZeRO-3", "set parallel.zero=1 or 2, or schedule=fsdp"});
}

TEST(ConfigErrors, CommSmsTakeEverySm) {
  expect_default_rejects({"hardware.comm_sms=132"}, {kFile, "hardware.comm_sms", "132 SMs", "use fewer"});
  expect_default_rejects({"hardware.comm_sms=200"}, {kFile, "hardware.comm_sms", "use fewer"});
}

TEST(ConfigErrors, GpuCountOverflow) {
  // 2^61 nodes x 8 GPUs would wrap to 0 GPUs in int64 (it once divided by zero): the per-key bound
  // stops it first, naming --set and the limit.
  expect_default_rejects({"cluster.nodes=2305843009213693952"}, {"--set", "cluster.nodes", "at most 16777216"});
  expect_default_rejects({"cluster.gpus_per_node=4611686018427387904"}, {"--set", "cluster.gpus_per_node", "at most 4096"});
  // Within each key's bound, the product is still checked: 2^24 nodes x 8 GPUs.
  expect_default_rejects({"cluster.nodes=16777216"}, {kFile, "--set cluster.nodes=16777216", "16777216 GPUs stepsim models"});
}

TEST(ConfigErrors, TokensPerStepOverflow) {
  expect_default_rejects({"train.seq_len=4611686018427387904"}, {"--set", "train.seq_len", "at most 16777216"});
}

TEST(ConfigErrors, EpLargerThanGpus) {
  // Huge ep used to count down from ep looking for a divisor of the expert count.
  expect_default_rejects({"model.n_routed_experts=16384", "parallel.ep=16384"},
                         {kFile, "parallel.ep", "exceed the 2048 GPUs", "use at most 2048"});
  expect_default_rejects({"model.n_routed_experts=4611686018427387904"}, {"--set", "model.n_routed_experts", "at most 16384"});
}

// ---- model consistency ----------------------------------------------------------------------

TEST(ConfigErrors, FirstKDenseBeyondLayers) {
  expect_default_rejects({"model.first_k_dense_replace=62"},
                         {kFile, "model.first_k_dense_replace", "exceeds num_hidden_layers 61", "lower it"});
}

TEST(ConfigErrors, ExpertsPerTokenBeyondExperts) {
  expect_default_rejects({"model.num_experts_per_tok=300"},
                         {kFile, "model.num_experts_per_tok", "between 1 and n_routed_experts (256)"});
}

TEST(ConfigErrors, TopkGroupBeyondGroups) {
  expect_default_rejects({"model.topk_group=9"}, {kFile, "model.topk_group", "exceeds n_group 8", "lower it"});
}

TEST(ConfigErrors, GroupsNotDividingExperts) {
  expect_default_rejects({"model.n_group=7"}, {kFile, "model.n_group", "does not divide n_routed_experts 256"});
}

TEST(ConfigErrors, TooFewGroupsForExpertsPerToken) {
  // 8 groups of 32 experts; with topk_group 1 a token sees 32 experts, fewer than 40.
  expect_default_rejects({"model.topk_group=1", "model.num_experts_per_tok=40"},
                         {kFile, "model.num_experts_per_tok", "raise topk_group"});
}

TEST(ConfigErrors, HeadsNotDividingHidden) {
  // Standard attention (no MLA) with 7168 / 96 not whole.
  expect_default_rejects({"model.kv_lora_rank=0", "model.num_attention_heads=96"},
                         {kFile, "model.num_attention_heads", "does not divide hidden_size", "set model.head_dim"});
}

TEST(ConfigErrors, MoeWithoutExpertWidth) {
  expect_default_rejects({"model.moe_intermediate_size=0"}, {kFile, "model.moe_intermediate_size", "> 0"});
}

TEST(ConfigErrors, DeepSeekRoutingOnDenseModel) {
  expect_default_rejects({"model.n_routed_experts=0", "parallel.ep=1", "parallel.split_lone_chunks=false",
                          "scenario.routing=deepseek"},
                         {kFile, "scenario.routing", "only read with an MoE model", "set scenario.routing=balanced"});
}

TEST(ConfigErrors, FlexBackendWithoutTheDeepEpDispatcher) {
  // parallel.moe_flex_backend names the deepep dispatcher's library; the alltoall dispatcher has none.
  expect_default_rejects({"parallel.moe_dispatcher=alltoall", "parallel.moe_flex_backend=hybridep"},
                         {kFile, "parallel.moe_flex_backend", "only read with parallel.moe_dispatcher deepep",
                          "set parallel.moe_flex_backend=deepep"});
  expect_default_rejects({"parallel.moe_flex_backend=nvshmem"}, {"parallel.moe_flex_backend", "deepep, hybridep"});
}

// ---- Hugging Face config.json ---------------------------------------------------------------

// The default config with its model section replaced by `config_json: json_path`.
std::string with_config_json(const std::string& json_path) {
  const auto text = default_text();
  return "model:\n  config_json: " + json_path + "\n" + text.substr(text.find("\ntrain:"));
}

TEST(ConfigErrors, ConfigJsonMissingFile) {
  const std::string path = "/nonexistent-dir/config.json";
  const auto msg = config_error_of([&] { load_plan_from_string(with_config_json(path), "hf.yaml"); });
  expect_message(msg, {path, "model.config_json", "cannot read", "check the path"});
}

TEST(ConfigErrors, ConfigJsonRelativeMissingFileResolvesAgainstTheYaml) {
  TempFile yaml("plan.yaml", with_config_json("models/absent.config.json"));
  const auto msg = config_error_of([&] { load_plan(yaml.path()); });
  const auto dir = std::filesystem::path(yaml.path()).parent_path().string();
  expect_message(msg, {dir + "/models/absent.config.json", "model.config_json", "check the path"});
}

TEST(ConfigErrors, ConfigJsonIsADirectory) {
  const auto dir = source_path("workloads/models");
  const auto msg = config_error_of([&] { load_plan_from_string(with_config_json(dir), "hf.yaml"); });
  expect_message(msg, {dir, "model.config_json", "cannot read", "check the path"});
}

TEST(ConfigErrors, ConfigJsonInvalidJson) {
  TempFile json("config.json", "{\"hidden_size\": 7168,\n \"num_hidden_layers\": }\n");
  const auto msg = config_error_of([&] { load_plan_from_string(with_config_json(json.path()), "hf.yaml"); });
  expect_message(msg, {json.path(), "not valid JSON", "fix the file"});
}

TEST(ConfigErrors, ConfigJsonNotAnObject) {
  TempFile json("config.json", "[1, 2, 3]\n");
  const auto msg = config_error_of([&] { load_plan_from_string(with_config_json(json.path()), "hf.yaml"); });
  expect_message(msg, {json.path(), "expected a JSON object"});
}

TEST(ConfigErrors, ConfigJsonNotAPath) {
  const auto text = replaced(with_config_json("x"), "config_json: x", "config_json: [a.json]");
  expect_text_rejects(text, "hf.yaml", {"hf.yaml", "model.config_json", "expected a path"});
}

TEST(ConfigErrors, ConfigJsonBadValueNamesTheJsonFile) {
  TempFile json("config.json",
                read_text(source_path("workloads/models/deepseek-v3.config.json")).replace(
                    read_text(source_path("workloads/models/deepseek-v3.config.json")).find("\"hidden_size\": 7168"),
                    std::string("\"hidden_size\": 7168").size(), "\"hidden_size\": \"7168\""));
  const auto msg = config_error_of([&] { load_plan_from_string(with_config_json(json.path()), "hf.yaml"); });
  expect_message(msg, {json.path(), "hidden_size", "expected an integer"});
}

TEST(ConfigErrors, ConfigJsonMissingRequiredModelKey) {
  TempFile json("config.json", "{\"hidden_size\": 4096, \"num_hidden_layers\": 32, \"num_attention_heads\": 32,"
                               " \"intermediate_size\": 14336}\n");
  auto text = with_config_json(json.path());
  text = replaced(text, "  ep: 64 ", "  ep: 1 ");
  expect_text_rejects(text, "hf.yaml", {"hf.yaml", "model.vocab_size", "missing", "add it"});
}

// A model replica bigger than the cluster: the fix fits TP x CP x PP (it said "use a divisor such as
// 8" for PP 16 with TP 8 on 8 GPUs, which needs 64).
TEST(ConfigErrors, APipelineThatDoesNotFitBesideTensorParallelism) {
  const std::string llama = source_path("workloads/llama-3.1-8b.yaml");
  const auto msg = config_error_of([&] {
    load_plan(llama, {"cluster.nodes=1", "parallel.tp=8", "parallel.pp=16", "train.global_batch=16"});
  });
  expect_message(msg, {"parallel.pp", "TP 8 x CP 1 x PP 16 = 128 GPUs hold one model replica", "cluster.nodes=16",
                       "parallel.pp=1 (TP x CP x PP = 8 GPUs)"});
  EXPECT_EQ(msg.find("such as 8"), std::string::npos) << msg;
}

// parallel.stage_layers: one whole count per stage of the schedule's path, adding up to the layers.
TEST(ConfigErrors, StageLayersMustMatchThePipeline) {
  const std::string llama = source_path("workloads/llama-3.1-8b.yaml");  // 32 layers, 1F1B over PP 4
  const auto rejects = [&](const std::string& set, std::initializer_list<std::string> pieces) {
    expect_message(config_error_of([&] { load_plan(llama, {set}); }), pieces);
  };
  rejects("parallel.stage_layers=[8, 8, 16]",
          {"parallel.stage_layers", "lists 3 stages, but the pipeline has 4 stages (schedule 1f1b, parallel.pp 4)",
           "one layer count per stage"});
  rejects("parallel.stage_layers=[8, 8, 8, 9]", {"parallel.stage_layers", "places 33 layers", "num_hidden_layers is 32"});
  rejects("parallel.stage_layers=[8, -1, 9, 16]", {"--set: parallel.stage_layers", "between 0 and 16777216", "-1"});
  rejects("parallel.stage_layers=[8, 8.5, 8, 7.5]", {"--set: parallel.stage_layers", "whole numbers"});
  rejects("parallel.stage_layers=8", {"--set: parallel.stage_layers", "expected a list of layer counts"});
  rejects("parallel.stage_layers={}", {"--set: parallel.stage_layers", "expected a list of layer counts", "or []"});
  // Changing the pipeline without the counts names the key to change.
  expect_message(config_error_of([&] { load_plan(llama, {"parallel.stage_layers=[5, 9, 9, 9]", "parallel.pp=8"}); }),
                 {"parallel.stage_layers", "lists 4 stages, but the pipeline has 8"});
  const Plan p = load_plan(llama, {"parallel.stage_layers=[5, 9, 9, 9]"});
  EXPECT_EQ(p.parallel.stage_layers, (std::vector<int64_t>{5, 9, 9, 9}));
  // [] gives no counts: a --set clears a config's list, and the pipeline it did not fit loads.
  const Plan cleared = load_plan(llama, {"parallel.stage_layers=[5, 9, 9, 9]", "parallel.pp=8", "parallel.stage_layers=[]"});
  EXPECT_TRUE(cleared.parallel.stage_layers.empty());
  EXPECT_EQ(cleared.parallel.pp, 8);
}

}  // namespace
}  // namespace stepsim::test
