// `stepsim import torchtitan`: expected values are read off the TOML by hand and multiplied out with
// torchtitan's own rules (data_parallel_shard_degree -1 takes the rest of the GPUs; microbatches =
// local_batch_size / pipeline_parallel_microbatch_size; stages per rank from layers per stage).
#include <gtest/gtest.h>

#include "simulator/importers/exporters.hpp"
#include "tests/importers/importer_test_util.hpp"

namespace stepsim::test {
namespace {

std::string example() { return read_text(source_path("workloads/examples/torchtitan-llama3-70b.toml")); }

constexpr const char* kFullAc = "[activation_checkpoint]\nmode = \"full\"\n";

// A job config in torchtitan's layout; `parallelism`, `extra` tables and `training` keys vary.
std::string job(const std::string& parallelism, const std::string& extra = kFullAc, const std::string& flavour = "70B",
                const std::string& training = "") {
  return "[job]\ndump_folder = \"./outputs\"\n\n[model]\nname = \"llama3\"\nflavor = \"" + flavour +
         "\"\n\n[optimizer]\nname = \"AdamW\"\nlr = 1.5e-4\n\n[training]\nlocal_batch_size = 8\nseq_len = 8192\nsteps = 1000\n" +
         training + "\n[parallelism]\n" + parallelism + "\n" + extra;
}

TEST(TorchtitanImport, TheLlama3_70BExampleKeepsItsLayout) {
  const Loaded l = torchtitan(example(), 64);
  const Plan& p = l.plan;
  EXPECT_EQ(p.parallel.tp, 8);
  EXPECT_EQ(p.parallel.pp, 4);
  EXPECT_EQ(p.dp(), 64 / (8 * 4));  // data_parallel_shard_degree = -1: the rest
  EXPECT_EQ(to_string(p.parallel.schedule), std::string("interleaved"));
  EXPECT_EQ(p.parallel.virtual_stages, 2);  // torchtitan's default for a multi-stage schedule
  EXPECT_EQ(p.train.global_batch, 16 * 2);  // local_batch_size x data-parallel size
  EXPECT_EQ(p.parallel.micro_batch_size, 1);
  EXPECT_EQ(p.parallel.microbatches, 16);  // local_batch_size / pipeline_parallel_microbatch_size
  EXPECT_EQ(p.parallel.recompute, Recompute::Full);
  EXPECT_EQ(p.parallel.zero, 1);  // FSDP under a pipeline: gathered once, reduced once
  EXPECT_EQ(p.train.seq_len, 8192);
  EXPECT_EQ(p.train.precision, Precision::BF16);
  EXPECT_FALSE(p.parallel.split_backward);
  // 70B from the shipped config.json; torchtitan's FFN width: 4 x 8192 x 2/3 = 21845, x 1.3 = 28398,
  // rounded up to a multiple of 4096 = 28672.
  EXPECT_EQ(p.model.hidden_size, 8192);
  EXPECT_EQ(p.model.num_hidden_layers, 80);
  EXPECT_EQ(p.model.intermediate_size, (int64_t(1.3 * int64_t(2 * 4 * 8192 / 3)) + 4095) / 4096 * 4096);
  EXPECT_EQ(p.model.num_key_value_heads, 8);
  EXPECT_NE(l.yaml.find("# parallelism.tensor_parallel_degree = 8"), std::string::npos) << l.yaml;
  EXPECT_NE(l.yaml.find("schedule: interleaved"), std::string::npos);
  for (const char* key : {"job.dump_folder", "optimizer.lr", "training.steps", "checkpoint.interval", "metrics.log_freq"})
    EXPECT_TRUE(mentions(l.imported.not_imported, key)) << key;
  EXPECT_TRUE(l.imported.unknown.empty()) << l.imported.unknown.front();
}

TEST(TorchtitanImport, FsdpWithoutAPipelineIsZero3) {
  // torchtitan's own 70B layout: FSDP over what TP 8 leaves, 8 sequences per data-parallel rank.
  const Plan p = torchtitan(job("data_parallel_shard_degree = -1\ntensor_parallel_degree = 8"), 64).plan;
  EXPECT_EQ(to_string(p.parallel.schedule), std::string("fsdp"));
  EXPECT_EQ(p.parallel.zero, 3);
  EXPECT_EQ(p.parallel.fsdp_shard_size, 0);
  EXPECT_EQ(p.train.global_batch, 8 * 8);
  EXPECT_EQ(p.parallel.micro_batch_size, 8);
  EXPECT_EQ(p.parallel.microbatches, 1);
  // HSDP: shards of 4 replicated twice.
  const Plan h = torchtitan(job("data_parallel_replicate_degree = 2\ndata_parallel_shard_degree = 4\n"
                                "tensor_parallel_degree = 8"),
                            64)
                     .plan;
  EXPECT_EQ(h.parallel.fsdp_shard_size, 4);
  // Gradient accumulation without a pipeline: global 128 = 8 x 8 x 2 microbatches.
  const Plan a = torchtitan(job("tensor_parallel_degree = 8", kFullAc, "70B", "global_batch_size = 128\n"), 64).plan;
  EXPECT_EQ(a.parallel.microbatches, 2);
}

// PyTorch's ring attention: allgather (torchtitan's default rotate method) gathers K/V before the
// attention, alltoall passes them around the ring beside it, as Megatron's p2p does.
TEST(TorchtitanImport, ContextParallelRotateMethod) {
  const std::string cp = "tensor_parallel_degree = 8\ncontext_parallel_degree = 2\n";
  EXPECT_EQ(torchtitan(job(cp), 64).plan.parallel.cp_comm_type, CpCommType::AllGather);
  EXPECT_EQ(torchtitan(job(cp + "context_parallel_rotate_method = \"alltoall\""), 64).plan.parallel.cp_comm_type,
            CpCommType::P2p);
  expect_import_rejects([&] { torchtitan(job(cp + "context_parallel_rotate_method = \"ring\""), 64); },
                        {"parallelism.context_parallel_rotate_method", "allgather or alltoall"});
}

TEST(TorchtitanImport, PipelineSchedulesAndStagesPerRank) {
  const std::string pp = "tensor_parallel_degree = 8\npipeline_parallel_degree = 4\n";
  const Plan zbv = torchtitan(job(pp + "pipeline_parallel_schedule = \"ZBVZeroBubble\""), 64).plan;
  EXPECT_EQ(to_string(zbv.parallel.schedule), std::string("zb-v"));
  EXPECT_TRUE(zbv.parallel.split_backward);
  EXPECT_EQ(to_string(torchtitan(job(pp + "pipeline_parallel_schedule = \"gpipe\""), 64).plan.parallel.schedule),
            std::string("gpipe"));
  // 80 layers, 10 per stage, no lighter first or last stage: 8 stages, 2 per rank.
  const Plan lps = torchtitan(job(pp + "pipeline_parallel_schedule = \"Interleaved1F1B\"\n"
                                       "pipeline_parallel_layers_per_stage = 10\n"
                                       "pipeline_parallel_first_stage_less_layers = 0\n"
                                       "pipeline_parallel_last_stage_less_layers = 0"),
                              64)
                          .plan;
  EXPECT_EQ(lps.parallel.virtual_stages, 80 / 10 / 4);
  EXPECT_EQ(lps.parallel.stage_layers, std::vector<int64_t>(8, 10));
  // torchtitan's default split counts the embedding and the head as a layer each: 80 + 2 over 8
  // stages is 10 rest 2, so 11 - 1, 11, 10 x 5, 10 - 1 (stepsim rebalanced them before).
  EXPECT_EQ(zbv.parallel.stage_layers, (std::vector<int64_t>{10, 11, 10, 10, 10, 10, 10, 9}));
  // 5 per stage with the default lighter ends: ceil((80 + 1 + 1) / 5) = 17 stages over 4 ranks.
  expect_import_rejects(
      [&] {
        torchtitan(job(pp + "pipeline_parallel_schedule = \"Interleaved1F1B\"\npipeline_parallel_layers_per_stage = 5"), 64);
      },
      {"job.toml:", "pipeline_parallel_layers_per_stage = 5", "gives 17 stages", "not a multiple of the 4"});
  expect_import_rejects([&] { torchtitan(job(pp + "pipeline_parallel_schedule = \"InterleavedZeroBubble\""), 64); },
                        {"pipeline_parallel_schedule = \"InterleavedZeroBubble\"", "not modelled", "ZBVZeroBubble"});
  // Gradient accumulation under a pipeline runs the schedule once per step.
  expect_import_rejects([&] { torchtitan(job(pp, kFullAc, "70B", "global_batch_size = 32\n"), 64); },
                        {"training.global_batch_size = 32", "2 gradient-accumulation steps", "fill and drain"});
}

TEST(TorchtitanImport, ActivationCheckpointing) {
  const std::string tp = "tensor_parallel_degree = 8";
  EXPECT_EQ(torchtitan(job(tp, "[activation_checkpoint]\nmode = \"none\"\n"), 64).plan.parallel.recompute, Recompute::None);
  EXPECT_EQ(torchtitan(job(tp, "[activation_checkpoint]\nmode = \"selective\"\nselective_ac_option = \"1\"\n"), 64)
                .plan.parallel.recompute,
            Recompute::Full);
  expect_import_rejects([&] { torchtitan(job(tp, ""), 64); },
                        {"mode = \"selective\" with selective_ac_option = \"2\" (torchtitan's default)", "mode = \"full\""});
}

// torchtitan's llama3_8b preset (its default per-op checkpointing) imports unedited: per-op SAC as
// torchtitan's save list runs it (refused before: "per-op selective checkpointing ... not modelled").
TEST(TorchtitanImport, PerOpSelectiveCheckpointingIsModelled) {
  const Loaded l = torchtitan(read_text(source_path("tests/data/torchtitan-llama3-8b.toml")), 64);
  EXPECT_EQ(l.plan.parallel.recompute, Recompute::TorchtitanOp);
  EXPECT_EQ(to_string(l.plan.parallel.schedule), std::string("fsdp"));
  const std::string op = "[activation_checkpoint]\nmode = \"selective\"\nselective_ac_option = \"op\"\n";
  // Where the save list does not describe the block: the model's check names the TOML key.
  expect_import_rejects([&] { torchtitan(job("tensor_parallel_degree = 8", op), 64); },
                        {"activation_checkpoint.mode", "not with tensor parallelism", "imported as parallel.recompute"});
  expect_import_rejects(
      [&] { torchtitan(job("data_parallel_shard_degree = -1", op + "per_op_sac_force_recompute_mm_shapes_by_fqns = [\"w1\"]\n", "8B"), 64); },
      {"per_op_sac_force_recompute_mm_shapes_by_fqns", "not modelled"});
}

// mixed_precision_reduce is FSDP2's reduction format: BF16 halves the gradient bytes (it was listed
// as having no effect and reduced in FP32).
TEST(TorchtitanImport, MixedPrecisionReduceIsTheGradientReduction) {
  const std::string fsdp = "data_parallel_shard_degree = -1\ntensor_parallel_degree = 8";
  EXPECT_EQ(torchtitan(job(fsdp), 64).plan.parallel.grad_reduce_dtype, ReduceDtype::FP32);
  const Loaded bf16 = torchtitan(job(fsdp, kFullAc, "70B", "mixed_precision_reduce = \"bfloat16\"\n"), 64);
  EXPECT_EQ(bf16.plan.parallel.grad_reduce_dtype, ReduceDtype::BF16);
  EXPECT_FALSE(mentions(bf16.imported.not_imported, "mixed_precision_reduce"));
  // TP over all 8 GPUs leaves no FSDP: torchtitan does not read it.
  const Loaded tp = torchtitan(job("tensor_parallel_degree = 8", kFullAc, "70B", "mixed_precision_reduce = \"bfloat16\"\n"), 8);
  EXPECT_EQ(tp.plan.parallel.grad_reduce_dtype, ReduceDtype::FP32);
  EXPECT_TRUE(mentions(tp.imported.not_imported, "mixed_precision_reduce"));
}

// Jobs torchtitan itself refuses.
TEST(TorchtitanImport, JobsTorchtitanRefusesAreRefused) {
  // Async TP needs torch.compile of the model.
  expect_import_rejects([&] { torchtitan(job("tensor_parallel_degree = 8\nenable_async_tensor_parallel = true"), 64); },
                        {"enable_async_tensor_parallel = true", "without torch.compile", "[compile]"});
  const Plan compiled = torchtitan(job("tensor_parallel_degree = 8\nenable_async_tensor_parallel = true",
                                       std::string(kFullAc) + "[compile]\nenable = true\ncomponents = [\"model\"]\n"),
                                   64)
                            .plan;
  EXPECT_TRUE(compiled.parallel.tp_comm_overlap);
  // Experts borrow data_parallel_shard x CP x TP GPUs: EP must divide them.
  std::string moe = job("data_parallel_replicate_degree = 4\ndata_parallel_shard_degree = 2\nexpert_parallel_degree = 4",
                        kFullAc, "16B");
  moe.replace(moe.find("\"llama3\""), 8, "\"deepseek_v3\"");
  expect_import_rejects(
      [&] { torchtitan(moe, 8); },
      {"expert_parallel_degree = 4", "does not divide data_parallel_shard_degree x CP x TP = 2"});
}

TEST(TorchtitanImport, TheWorldSizeAndDegreesMustAgree) {
  const std::string tp = "tensor_parallel_degree = 8";
  expect_import_rejects([&] { torchtitan(job(tp), 0); }, {"job.toml", "not in a torchtitan job config", "--gpus N"});
  expect_import_rejects([&] { torchtitan(job("data_parallel_shard_degree = 4\n" + tp), 64); },
                        {"replicate 1 x shard 4", "is not the 64 GPUs of --gpus"});
  expect_import_rejects([&] { torchtitan(job("data_parallel_replicate_degree = 8\ndata_parallel_shard_degree = 1\n" + tp), 64); },
                        {"without sharding is DDP", "optimizer states"});
}

TEST(TorchtitanImport, Float8AndOtherPrecisions) {
  const std::string tp = "tensor_parallel_degree = 8";
  std::string text = job(tp);
  text.replace(text.find("flavor = \"70B\""), 14, "flavor = \"70B\"\nconverters = [\"float8\"]");
  const Plan p = torchtitan(text, 64).plan;
  EXPECT_EQ(p.train.precision, Precision::FP8);
  EXPECT_FALSE(p.parallel.fp8_stash);
  EXPECT_FALSE(p.parallel.fp8_param_gather);
  // torchao's FSDP2 float8 all-gather: the weights gathered in per-tensor FP8, tensorwise scaling only.
  EXPECT_TRUE(torchtitan(text + "[float8]\nenable_fsdp_float8_all_gather = true\n", 64).plan.parallel.fp8_param_gather);
  expect_import_rejects(
      [&] { torchtitan(text + "[float8]\nenable_fsdp_float8_all_gather = true\nrecipe_name = \"rowwise\"\n", 64); },
      {"float8.enable_fsdp_float8_all_gather", "only with tensorwise scaling, not rowwise"});
  expect_import_rejects([&] { torchtitan(text + "[float8]\nfilter_fqns = [\"output\", \"attention.wq\"]\n", 64); },
                        {"keeps \"attention.wq\" in BF16", "filter only \"output\""});
  expect_import_rejects([&] { torchtitan(job(tp, kFullAc, "70B", "mixed_precision_param = \"float32\"\n"), 64); },
                        {"training.mixed_precision_param = \"float32\"", "bfloat16"});
}

TEST(TorchtitanImport, ModelsAndFlavours) {
  const std::string tp = "tensor_parallel_degree = 8";
  expect_import_rejects([&] { torchtitan(job(tp, kFullAc, "13B"), 64); },
                        {"model.flavor = \"13B\"", "debugmodel, debugmodel_flex_attn, 8B, 8B_flex, 8B_varlen, 70B, 405B"});
  std::string llama4 = job(tp);
  llama4.replace(llama4.find("name = \"llama3\""), 15, "name = \"llama4\"");
  expect_import_rejects([&] { torchtitan(llama4, 64); }, {"model.name = \"llama4\"", "not modelled"});
  // Qwen3 30B-A3B from torchtitan's model args: 128 experts, top 8, EP 8.
  std::string qwen = job("expert_parallel_degree = 8", kFullAc, "30B-A3B");
  qwen.replace(qwen.find("name = \"llama3\""), 15, "name = \"qwen3\"");
  const Plan q = torchtitan(qwen, 64).plan;
  EXPECT_EQ(q.model.n_routed_experts, 128);
  EXPECT_EQ(q.model.num_experts_per_tok, 8);
  EXPECT_EQ(q.model.moe_intermediate_size, 768);
  EXPECT_EQ(q.model.num_hidden_layers, 48);
  EXPECT_EQ(q.parallel.ep, 8);
}

// torchtitan's expert parallelism: its all-to-all (or DeepEP / HybridEP kernels) and its expert
// TP (1 or the TP degree); the expert TP degree was refused before, the backend ignored.
TEST(TorchtitanImport, ExpertParallelismMapsOntoThePlan) {
  const auto qwen = [](const std::string& parallelism) {
    std::string j = job(parallelism, kFullAc, "30B-A3B");
    j.replace(j.find("name = \"llama3\""), 15, "name = \"qwen3\"");
    return j;
  };
  const Plan standard = torchtitan(qwen("expert_parallel_degree = 8"), 64).plan;
  EXPECT_EQ(standard.parallel.moe_dispatcher, MoeDispatcher::AllToAll);
  EXPECT_EQ(standard.parallel.expert_tp, 1);
  EXPECT_EQ(torchtitan(qwen("expert_parallel_degree = 8\nexpert_parallel_comm_backend = \"deepep\""), 64)
                .plan.parallel.moe_dispatcher,
            MoeDispatcher::DeepEP);
  const Plan hybrid = torchtitan(qwen("expert_parallel_degree = 8\nexpert_parallel_comm_backend = \"hybridep\""), 64).plan;
  EXPECT_EQ(hybrid.parallel.moe_dispatcher, MoeDispatcher::DeepEP);
  EXPECT_EQ(hybrid.parallel.moe_flex_backend, FlexBackend::HybridEP);
  EXPECT_NE(importers::export_plan("torchtitan", hybrid).find("expert_parallel_comm_backend = \"hybridep\""), std::string::npos);
  // ETP = TP 2: the experts split like the dense layers, EP borrowing only the 32 FSDP GPUs.
  const Plan etp = torchtitan(qwen("tensor_parallel_degree = 2\nexpert_parallel_degree = 8\nexpert_tensor_parallel_degree = 2"), 64).plan;
  EXPECT_EQ(etp.parallel.expert_tp, 2);
  EXPECT_EQ(etp.parallel.ep, 8);
  expect_import_rejects(
      [&] { torchtitan(qwen("tensor_parallel_degree = 4\nexpert_parallel_degree = 8\nexpert_tensor_parallel_degree = 2"), 64); },
      {"expert_tensor_parallel_degree", "1 or the tensor-parallel degree (4)"});
  expect_import_rejects(
      [&] { torchtitan(qwen("expert_parallel_degree = 8\nexpert_parallel_comm_backend = \"nvshmem\""), 64); },
      {"expert_parallel_comm_backend", "\"standard\", \"deepep\" or \"hybridep\""});
}

TEST(TorchtitanImport, UnknownKeysAreListedAndOlderNamesRead) {
  const Loaded l = torchtitan(job("tensor_parallel_degree = 8\nbrand_new_knob = 3") + "[newsection]\nx = 1\n", 64);
  EXPECT_TRUE(mentions(l.imported.unknown, "parallelism.brand_new_knob"));
  EXPECT_TRUE(mentions(l.imported.unknown, "newsection.x"));
  // 2025 configs: [training] batch_size (before local_batch_size) counts the same.
  std::string old = job("tensor_parallel_degree = 8");
  old.replace(old.find("local_batch_size"), 16, "batch_size");
  EXPECT_EQ(torchtitan(old, 64).plan.parallel.micro_batch_size, 8);
}

TEST(TorchtitanImport, MalformedTomlIsOneLineWithItsLine) {
  expect_import_rejects([] { importers::import_torchtitan("[model]\nname = \n", "bad.toml", {}); },
                        {"bad.toml:2: not valid TOML"});
  expect_import_rejects([] { importers::import_torchtitan("[model\n", "bad.toml", {}); }, {"bad.toml:1: not valid TOML"});
  expect_import_rejects([] { importers::import_torchtitan("x = " + std::string(100, '[') + "\n", "deep.toml", {}); },
                        {"deep.toml:1", "nested over 64 deep"});
  importers::ImportOptions o;
  o.gpus = 64;
  expect_import_rejects([&] { importers::import_torchtitan(job("tensor_parallel_degree = \"8\""), "t.toml", o); },
                        {"t.toml:", "parallelism.tensor_parallel_degree = \"8\"", "expected an integer"});
  expect_import_rejects([&] { importers::import_torchtitan(job("tensor_parallel_degree = 99999999999"), "t.toml", o); },
                        {"parallelism.tensor_parallel_degree", "must be between 1 and 16777216"});
}

}  // namespace
}  // namespace stepsim::test
