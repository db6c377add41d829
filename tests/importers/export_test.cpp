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
  o.preset = preset.empty() ? "h100-sxm" : preset;  // the machine is not compared (plan_fields.hpp)
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

// The Megatron-LM launches of tests/data (MoE with flex dispatch and the EP overlap, PP 8 x VP 4
// with NeMo's embedding and loss counted, DeepSeek-V3's layout string with MLA): each imports,
// exports and imports back to the same plan.
TEST(Export, TheMegatronTestLaunchesRoundTrip) {
  struct Case {
    const char* file;
    int64_t gpus;
  };
  for (const Case c : {Case{"megatron-qwen3-30b-a3b.sh", 0}, Case{"megatron-qwen3-235b-a22b.sh", 0},
                       Case{"megatron-deepseek-v3-layout.sh", 0}}) {
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

// Megatron-LM's NullTokenizer holds --vocab-size ids and its end-of-document token (tokenizer.py
// _NullTokenizer: vocab_size + 1), padded as any vocabulary: 32000 + 1 to a multiple of 128 is
// 251 x 128 = 32128; 32767 + 1 = 32768 needs no padding.
TEST(Export, NullTokenizerCountsItsEndOfDocumentToken) {
  const std::string launch = "--num-layers 2 --hidden-size 256 --num-attention-heads 4 --seq-length 128 "
                             "--micro-batch-size 1 --bf16 --tokenizer-type NullTokenizer --vocab-size ";
  EXPECT_EQ(megatron(launch + "32000", 1).plan.model.vocab_size, 32128);
  EXPECT_EQ(megatron(launch + "32767", 1).plan.model.vocab_size, 32768);
  // Another tokenizer with --vocab-size: the size as given.
  EXPECT_EQ(megatron("--num-layers 2 --hidden-size 256 --num-attention-heads 4 --seq-length 128 --micro-batch-size 1 "
                     "--bf16 --tokenizer-type HuggingFaceTokenizer --vocab-size 32768", 1).plan.model.vocab_size, 32768);
}

// What the shipped files leave out: GELU with bias vectors, tied embeddings, an uneven first and
// last stage, full recompute, FP8, BF16 gradient reduction, CUDA graphs, the fused cross-entropy, a
// release newer than r0.8.
TEST(Export, AGeluLaunchWithUnevenStagesRoundTrips) {
  const std::string launch = R"(torchrun --nnodes 4 --nproc-per-node 8 pretrain_gpt.py \
    --num-layers 30 --hidden-size 4096 --num-attention-heads 32 --seq-length 4096 \
    --vocab-size 50257 --tensor-model-parallel-size 2 --sequence-parallel --pipeline-model-parallel-size 4 \
    --decoder-first-pipeline-num-layers 6 --decoder-last-pipeline-num-layers 6 \
    --micro-batch-size 2 --global-batch-size 128 --bf16 --fp8-format hybrid --grad-reduce-in-bf16 \
    --recompute-granularity full --recompute-method uniform --recompute-num-layers 1 \
    --use-distributed-optimizer --overlap-grad-reduce --enable-cuda-graph --cross-entropy-loss-fusion
)";
  const Loaded first = megatron(launch);
  ASSERT_EQ(first.plan.parallel.stage_layers, (std::vector<int64_t>{6, 9, 9, 6}));
  const std::string text = importers::export_plan("megatron", first.plan);
  for (const char* line : {"--decoder-first-pipeline-num-layers 6", "--decoder-last-pipeline-num-layers 6",
                           "--fp8-format hybrid", "--grad-reduce-in-bf16", "--recompute-granularity full",
                           "--enable-cuda-graph", "--cross-entropy-loss-fusion", "--ffn-hidden-size 16384"})
    EXPECT_TRUE(has_line(text, line)) << line << " missing from\n" << text;
  // GELU and the biases are Megatron-LM's defaults: no --swiglu, no --disable-bias-linear.
  EXPECT_EQ(text.find("--swiglu"), std::string::npos);
  EXPECT_EQ(text.find("--disable-bias-linear"), std::string::npos);
  // 50257 padded to a multiple of 128 x TP 2 = 256: 197 x 256 = 50432.
  EXPECT_TRUE(has_line(text, "--vocab-size 50431")) << text;
  EXPECT_EQ(differences(first.plan, import_back("megatron", text, 0, "h100-sxm")), "");
}

// A sliding window on every other layer (GPT-OSS's pattern) leaves as --window-size W-1,0 and a
// quoted 0/1 list, and comes back as it was.
TEST(Export, ASlidingWindowLaunchRoundTrips) {
  const Loaded first = megatron(R"(torchrun --nnodes 1 --nproc-per-node 8 pretrain_gpt.py \
    --num-layers 6 --hidden-size 2048 --num-attention-heads 16 --seq-length 4096 --vocab-size 32000 \
    --swiglu --disable-bias-linear --micro-batch-size 1 --global-batch-size 64 --bf16 --use-distributed-optimizer \
    --window-size 127,0 --window-attn-skip-freq 3
)");
  ASSERT_EQ(first.plan.model.sliding_layers, (std::vector<int64_t>{0, 1, 3, 4}));
  const std::string text = importers::export_plan("megatron", first.plan);
  EXPECT_TRUE(has_line(text, "--window-size 127,0")) << text;
  EXPECT_TRUE(has_line(text, "--window-attn-skip-freq \"[1,1,0,1,1,0]\"")) << text;
  EXPECT_EQ(differences(first.plan, import_back("megatron", text, 0, "h100-sxm")), "");
}

// Megatron FSDP (ZeRO-3 and ZeRO-2 with its gradient overlap) and a list of recompute modules.
TEST(Export, MegatronFsdpLaunchesRoundTrip) {
  const std::string base = "torchrun --nnodes 2 --nproc-per-node 8 pretrain_gpt.py --num-layers 16 --hidden-size 2048 "
                           "--num-attention-heads 16 --seq-length 4096 --vocab-size 32000 --swiglu --disable-bias-linear "
                           "--untie-embeddings-and-output-weights --micro-batch-size 1 --global-batch-size 64 --bf16 "
                           "--recompute-granularity selective --recompute-modules core_attn mlp --use-megatron-fsdp ";
  for (const std::string sharding : {"--data-parallel-sharding-strategy optim_grads_params",
                                     "--data-parallel-sharding-strategy optim_grads --overlap-grad-reduce"}) {
    SCOPED_TRACE(sharding);
    const Loaded first = megatron(base + sharding);
    const std::string text = importers::export_plan("megatron", first.plan);
    EXPECT_TRUE(has_line(text, "--use-megatron-fsdp")) << text;
    EXPECT_TRUE(has_line(text, sharding.substr(0, sharding.find(" --")))) << text;
    EXPECT_TRUE(has_line(text, "--recompute-modules core_attn mlp")) << text;
    EXPECT_EQ(text.find("--use-distributed-optimizer"), std::string::npos) << text;
    EXPECT_EQ(differences(first.plan, import_back("megatron", text, 0, "h100-sxm")), "");
  }
}

// Activation offloading: Megatron's two flags written back and read again; torchtitan has no
// such option, so its export refuses the plan by the key.
TEST(Export, ActivationOffloadingRoundTripsThroughMegatronOnly) {
  const Loaded first = megatron(
      "torchrun --nnodes 2 --nproc-per-node 8 pretrain_gpt.py --num-layers 16 --hidden-size 2048 "
      "--num-attention-heads 16 --seq-length 4096 --vocab-size 32000 --swiglu --disable-bias-linear "
      "--untie-embeddings-and-output-weights --micro-batch-size 1 --global-batch-size 64 --bf16 --use-megatron-fsdp "
      "--data-parallel-sharding-strategy optim_grads_params --cpu-offloading --cpu-offloading-num-layers 6");
  ASSERT_EQ(first.plan.parallel.cpu_offload_layers, 6);
  const std::string text = importers::export_plan("megatron", first.plan);
  EXPECT_TRUE(has_line(text, "--cpu-offloading")) << text;
  EXPECT_TRUE(has_line(text, "--cpu-offloading-num-layers 6")) << text;
  EXPECT_EQ(differences(first.plan, import_back("megatron", text, 0, "h100-sxm")), "");
  Plan titan = first.plan;
  titan.software.profile = "torchtitan";
  titan.software.attention_kernel = AttentionKernel::Flash2;  // what a torchtitan job runs
  expect_message(config_error_of([&] { importers::export_plan("torchtitan", titan); }),
                 {"parallel.cpu_offload_layers", "torchtitan", "parallel.cpu_offload_layers=0"});
}

// parallel.cp_comm_type in both frameworks' spelling: Megatron-LM's --cp-comm-type, torchtitan's
// context_parallel_rotate_method (alltoall is its ring; it has no a2a).
TEST(Export, ContextParallelCommTypeRoundTrips) {
  const Loaded first = megatron(
      "torchrun --nnodes 1 --nproc-per-node 8 pretrain_gpt.py --num-layers 4 --hidden-size 1024 --num-attention-heads 8 "
      "--seq-length 4096 --vocab-size 32000 --swiglu --disable-bias-linear --micro-batch-size 1 --global-batch-size 16 "
      "--bf16 --use-distributed-optimizer --context-parallel-size 2 --cp-comm-type a2a");
  ASSERT_EQ(first.plan.parallel.cp_comm_type, CpCommType::A2a);
  const std::string text = importers::export_plan("megatron", first.plan);
  EXPECT_TRUE(has_line(text, "--cp-comm-type a2a")) << text;
  EXPECT_EQ(differences(first.plan, import_back("megatron", text, 0, "h100-sxm")), "");
  // torchtitan: its Llama 3 8B test job at CP 2, passing K/V around the ring.
  std::string job = read(kSource + "/tests/data/torchtitan-llama3-8b.toml");
  job.replace(job.find("context_parallel_degree = 1"), 27,
              "context_parallel_degree = 2\ncontext_parallel_rotate_method = \"alltoall\"");
  Plan titan = torchtitan(job, 8).plan;
  ASSERT_EQ(titan.parallel.cp_comm_type, CpCommType::P2p);
  const std::string toml = importers::export_plan("torchtitan", titan);
  EXPECT_TRUE(has_line(toml, "context_parallel_rotate_method = \"alltoall\"")) << toml;
  EXPECT_EQ(differences(titan, import_back("torchtitan", toml, 8, "h100-sxm")), "");
  titan.parallel.cp_comm_type = CpCommType::A2a;
  expect_message(config_error_of([&] { importers::export_plan("torchtitan", titan); }),
                 {"parallel.cp_comm_type", "a2a", "allgather or p2p"});
}

TEST(Export, TheTorchtitanTestJobRoundTrips) {
  const Loaded first = torchtitan(read(kSource + "/tests/data/torchtitan-llama3-8b.toml"), 8);
  const std::string text = importers::export_plan("torchtitan", first.plan);
  EXPECT_TRUE(has_line(text, "flavor = \"8B\"")) << text;
  EXPECT_TRUE(has_line(text, "selective_ac_option = \"op\"")) << text;
  EXPECT_EQ(differences(first.plan, import_back("torchtitan", text, 8, "h100-sxm")), "");
}

// The FP8 parameter all-gather in both frameworks' spelling: Megatron-LM's --fp8-param-gather,
// torchao's enable_fsdp_float8_all_gather (tensorwise scaling, FSDP).
TEST(Export, Fp8ParameterGathersRoundTrip) {
  const Loaded launch = megatron(
      "torchrun --nnodes 1 --nproc-per-node 8 pretrain_gpt.py --num-layers 4 --hidden-size 1024 --num-attention-heads 8 "
      "--seq-length 2048 --micro-batch-size 1 --global-batch-size 16 --vocab-size 32000 --swiglu --disable-bias-linear "
      "--bf16 --use-distributed-optimizer --fp8-format hybrid --fp8-recipe tensorwise --fp8-param-gather\n",
      0);
  ASSERT_TRUE(launch.plan.parallel.fp8_param_gather);
  const std::string script = importers::export_plan("megatron", launch.plan);
  EXPECT_NE(script.find("--fp8-param-gather"), std::string::npos) << script;
  EXPECT_EQ(differences(launch.plan, import_back("megatron", script, 0, "h100-sxm")), "");

  const Loaded job = torchtitan(
      "[model]\nname = \"llama3\"\nflavor = \"8B\"\nconverters = [\"float8\"]\n[training]\nlocal_batch_size = 2\n"
      "seq_len = 4096\n[activation_checkpoint]\nmode = \"none\"\n[float8]\nenable_fsdp_float8_all_gather = true\n",
      16);
  ASSERT_TRUE(job.plan.parallel.fp8_param_gather);
  const std::string toml = importers::export_plan("torchtitan", job.plan);
  EXPECT_TRUE(has_line(toml, "enable_fsdp_float8_all_gather = true")) << toml;
  EXPECT_EQ(differences(job.plan, import_back("torchtitan", toml, 16, "h100-sxm")), "");
}

// FP8 attention in Megatron-LM's spelling (--fp8-dot-product-attention), on a preset with a
// published FP8 attention rate; torchtitan has no FP8 attention, so its export refuses the key.
TEST(Export, Fp8AttentionRoundTripsThroughMegatronOnly) {
  importers::ImportOptions o;
  o.preset = "gb200";
  o.gpus_per_node = 4;
  const Loaded launch = load_imported(importers::import_megatron(
      "torchrun --nnodes 2 --nproc-per-node 4 pretrain_gpt.py --num-layers 4 --hidden-size 1024 --num-attention-heads 8 "
      "--seq-length 2048 --micro-batch-size 1 --global-batch-size 16 --vocab-size 32000 --swiglu --disable-bias-linear "
      "--bf16 --use-distributed-optimizer --fp8-format e4m3 --fp8-recipe mxfp8 --fp8-dot-product-attention\n",
      "launch.sh", o));
  ASSERT_TRUE(launch.plan.train.fp8_attention);
  const std::string script = importers::export_plan("megatron", launch.plan);
  EXPECT_NE(script.find("--fp8-dot-product-attention"), std::string::npos) << script;
  EXPECT_EQ(differences(launch.plan, import_back("megatron", script, 0, "gb200", 4)), "");
  // torchtitan's profile runs FlashAttention-2, which has no FP8 kernel: refused as a plan. With
  // cuDNN's kernel asked for, the plan loads, and torchtitan's job has no FP8 attention to write.
  expect_message(config_error_of([&] { load_plan_from_string(launch.yaml, "launch.yaml", {"software.profile=torchtitan"}); }),
                 {"software.attention_kernel", "no FP8 kernel", "train.fp8_attention=false"});
  const Plan titan = load_plan_from_string(launch.yaml, "launch.yaml",
                                           {"software.profile=torchtitan", "software.attention_kernel=fused"});
  expect_message(config_error_of([&] { importers::export_plan("torchtitan", titan); }),
                 {"train.fp8_attention", "BF16", "train.fp8_attention=false"});
}

// torchtitan's other schedules and sharding: ZB-V with its split backward, HSDP, async TP with
// torch.compile, an MoE flavour with DeepEP and FP8 grouped GEMMs.
TEST(Export, TorchtitanSchedulesShardingAndExpertsRoundTrip) {
  const std::string base = R"([model]
name = "llama3"
flavor = "8B"
[training]
local_batch_size = 8
seq_len = 4096
[activation_checkpoint]
mode = "full"
)";
  struct Case {
    std::string toml;
    int64_t gpus;
    std::vector<std::string> lines;  // expected in the export
  };
  const std::vector<Case> cases = {
      {base + "[parallelism]\npipeline_parallel_degree = 4\npipeline_parallel_schedule = \"ZBVZeroBubble\"\n", 16,
       {"pipeline_parallel_schedule = \"ZBVZeroBubble\"", "pipeline_parallel_degree = 4", "data_parallel_shard_degree = 4"}},
      {base + "[parallelism]\ndata_parallel_replicate_degree = 2\ndata_parallel_shard_degree = 4\ntensor_parallel_degree = 2\n"
              "enable_async_tensor_parallel = true\n[compile]\nenable = true\n",
       16, {"data_parallel_replicate_degree = 2", "data_parallel_shard_degree = 4", "enable_async_tensor_parallel = true",
            "enable = true"}},
      {"[model]\nname = \"qwen3\"\nflavor = \"30B-A3B\"\nconverters = [\"float8\", \"quantize.grouped_mm.float8\"]\n"
       "[training]\nlocal_batch_size = 2\nseq_len = 4096\n[activation_checkpoint]\nmode = \"none\"\n"
       "[parallelism]\nexpert_parallel_degree = 8\nexpert_parallel_comm_backend = \"deepep\"\n",
       16, {"flavor = \"30B-A3B\"", "expert_parallel_degree = 8", "expert_parallel_comm_backend = \"deepep\"",
            "converters = [\"quantize.linear.float8\", \"quantize.grouped_mm.float8\"]"}},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.toml);
    const Loaded first = torchtitan(c.toml, c.gpus);
    const std::string text = importers::export_plan("torchtitan", first.plan);
    for (const auto& line : c.lines) EXPECT_TRUE(has_line(text, line)) << line << " missing from\n" << text;
    EXPECT_EQ(differences(first.plan, import_back("torchtitan", text, c.gpus, "h100-sxm")), "");
  }
}

// The shipped published runs (workloads/published/): each Megatron-LM or torchtitan run exports to
// its framework and reads back as the same plan. Their configs keep stepsim's default split backward
// (weight gradients apart), which Megatron-LM and torchtitan's 1F1B do not run (Megatron-LM only with
// its EP overlap, as QW-H-008 does): refused by name as they are, exported with
// --set parallel.split_backward=false. Most Grok-1 rows run a GeGLU MLP no Megatron-LM argument names.
TEST(Export, ThePublishedRunsExportToTheirFramework) {
  int exported = 0, files = 0, geglu = 0, nvfp4 = 0, no_sync = 0;
  for (const auto& entry : std::filesystem::directory_iterator(kSource + "/workloads/published")) {
    const std::string path = entry.path().string(), id = entry.path().stem().string();
    if (entry.path().extension() != ".yaml") continue;
    ++files;
    SCOPED_TRACE(id);
    const Plan plan = load_plan(path);
    const bool titan = plan.software.profile.rfind("torchtitan", 0) == 0;
    const std::string tool = titan ? "torchtitan" : "megatron";
    if (plan.model.hidden_act == HiddenAct::GeGlu) {
      expect_message(config_error_of([&] { importers::export_plan("megatron", plan); }),
                     {path, "model.hidden_act = geglu", "--swiglu", "set model.hidden_act="});
      ++geglu;
      continue;
    }
    // NVFP4 has no Megatron-LM argument stepsim imports (--fp4-format): refused by name.
    if (plan.train.low_precision == LowPrecision::Nvfp4) {
      expect_message(config_error_of([&] { importers::export_plan(tool, plan); }),
                     {path, "train.precision = nvfp4", "use fp8, mxfp8 or bf16"});
      ++nvfp4;
      continue;
    }
    const bool overlapped = plan.parallel.moe_overlap_ep_comm;
    if (!overlapped)
      expect_message(config_error_of([&] { importers::export_plan(tool, plan); }),
                     {path, "parallel.split_backward = true", "set parallel.split_backward=false"});
    std::vector<std::string> sets;
    if (!overlapped) sets.push_back("parallel.split_backward=false");
    // A recipe with no host sync per MoE layer (Megatron-Bridge's paged stash under a full-iteration
    // CUDA graph) is a stepsim-only setting: refused by name, exported with the profile's one sync.
    if (plan.model.n_routed_experts > 0 && plan.software.host_syncs_per_moe_layer == 0 && !titan) {
      const Plan no_split = load_plan(path, sets);
      expect_message(config_error_of([&] { importers::export_plan(tool, no_split); }),
                     {path, "software.host_syncs_per_moe_layer = 0", "set software.host_syncs_per_moe_layer=1"});
      sets.push_back("software.host_syncs_per_moe_layer=1");
      ++no_sync;
    }
    const Plan as_run = sets.empty() ? plan : load_plan(path, sets);
    std::string text;
    try {
      text = importers::export_plan(tool, as_run);
    } catch (const ConfigError& e) {
      ADD_FAILURE() << e.what();
      continue;
    }
    // Read back on the plan's own Blackwell preset: MXFP8 and NVFP4 plans load only on a GPU with those
    // tensor cores (any other machine stands in, as the machine is not compared).
    std::string preset;
    for (const auto& [name, blackwell] : {std::pair<const char*, const char*>{"B200", "b200"}, {"GB200", "gb200"},
                                          {"B300", "b300"}, {"GB300", "gb300"}})
      if (as_run.hardware.name == name) preset = blackwell;
    const Plan again = import_back(tool, text, as_run.gpus(), preset, as_run.cluster.gpus_per_node,
                                   importers::machine_overrides(as_run));
    EXPECT_EQ(differences(as_run, again), "");
    EXPECT_EQ(again.parallel.tp, as_run.parallel.tp);
    EXPECT_EQ(again.train.global_batch, as_run.train.global_batch);
    ++exported;
  }
  // Every published run but the 36 Grok-1 rows of the D1 / D2 recipes, which write hidden_act: geglu,
  // and the 18 NVFP4 Llama rows on GB200 and GB300 (L3-X-034 to 056, 073 to 095); the 13 Qwen3 MXFP8
  // rows under a full-iteration graph (GB200 QW-X-012 to 017, B300 QW-X-030, GB300 QW-X-039 to 044)
  // run without host syncs.
  EXPECT_EQ(geglu, 36);
  EXPECT_EQ(nvfp4, 18);
  EXPECT_EQ(no_sync, 13);
  EXPECT_EQ(exported, files - geglu - nvfp4);
  EXPECT_GE(files, 90);
}

// What the target cannot express: one line naming the key, why, and the fix.
TEST(Export, WhatTheTargetCannotExpressIsRefusedByName) {
  const std::string seed = default_config_path();
  expect_message(config_error_of([&] { importers::export_plan("megatron", load_plan(seed)); }),
                 {"schedule = dualpipev", "Megatron-LM runs 1F1B and interleaved", "use schedule=1f1b"});
  expect_message(config_error_of([&] { importers::export_plan("torchtitan", load_plan(seed)); }),
                 {"software.profile = deepseek-v3", "not a torchtitan release", "use torchtitan or torchtitan-compile"});
  const Loaded example = megatron(read(kSource + "/workloads/examples/megatron-llama3-70b.sh"));
  const std::string plan_text = example.yaml;
  // stepsim-only knobs with a non-default value, named by the --set that gave them.
  for (const auto& [set, key] : {std::pair<std::string, std::string>{"scenario.jitter_sigma=0.05", "scenario.jitter_sigma = 0.05"},
                                 {"software.kernel_launch_s=1e-5", "software.kernel_launch_s = 1e-05"}}) {
    SCOPED_TRACE(set);
    const Plan p = load_plan_from_string(plan_text, "plan.yaml", {set});
    expect_message(config_error_of([&] { importers::export_plan("megatron", p); }),
                   {"--set " + set, key, "Megatron-LM has no setting for it", "set " + key.substr(0, key.find(' ')) + "="});
  }
  const std::string qwen = kSource + "/workloads/published/QW-H-008.yaml";  // MoE, DeepEP, PP 2: exports as it is
  for (const auto& [set, key] : {std::pair<std::string, std::string>{"scenario.routing=zipf", "scenario.routing = zipf"},
                                 {"parallel.split_lone_chunks=true", "parallel.split_lone_chunks = true"}}) {
    SCOPED_TRACE(set);
    expect_message(config_error_of([&] { importers::export_plan("megatron", load_plan(qwen, {set})); }),
                   {"--set " + set, key, "Megatron-LM has no setting for it", "set " + key.substr(0, key.find(' ')) + "="});
  }
  // The parameter gather's overlap without the gradient reduce's: Megatron-Core's DDP runs it,
  // Megatron-LM's arguments refuse it.
  expect_message(config_error_of([&] {
                   importers::export_plan("megatron", load_plan_from_string(plan_text, "plan.yaml",
                                                                          {"parallel.overlap_grad_reduce=false",
                                                                           "parallel.overlap_param_gather=true"}));
                 }),
                 {"parallel.overlap_param_gather", "without --overlap-grad-reduce", "parallel.overlap_grad_reduce=true"});
  // A vocabulary Megatron-LM's padding cannot give: no multiple of TP 8.
  expect_message(config_error_of([&] {
                   importers::export_plan("megatron", load_plan_from_string(plan_text, "plan.yaml", {"model.vocab_size=128260"}));
                 }),
                 {"--set model.vocab_size=128260", "model.vocab_size = 128260", "tensor-parallel size 8",
                  "set model.vocab_size=128264"});
  // torchtitan: a model no flavour names, recompute it does not run, Megatron's release.
  const Loaded job = torchtitan(read(kSource + "/workloads/examples/torchtitan-llama3-70b.toml"), 64);
  expect_message(config_error_of([&] {
                   importers::export_plan("torchtitan", load_plan_from_string(job.yaml, "job.yaml", {"model.intermediate_size=20480"}));
                 }),
                 {"model.intermediate_size = 20480", "no torchtitan flavour has this model's shape",
                  "the nearest, llama3 70B, has model.intermediate_size = 28672", "export megatron"});
  expect_message(config_error_of([&] {
                   importers::export_plan("torchtitan", load_plan_from_string(job.yaml, "job.yaml", {"parallel.recompute=selective"}));
                 }),
                 {"parallel.recompute = selective", "use none, full or torchtitan-op"});
  expect_message(config_error_of([&] { importers::export_plan("torchtitan", example.plan); }),
                 {"software.profile = megatron-core-r0.8", "not a torchtitan release"});
  expect_message(config_error_of([&] { importers::export_plan("slurm", example.plan); }),
                 {"export slurm", "unknown target", "stepsim export megatron PLAN.yaml"});
}

}  // namespace
}  // namespace stepsim::test
