// `stepsim import megatron`: every expected value is read off the launch script by hand and
// multiplied out here with Megatron-LM's own rules (megatron/training/arguments.py: the SwiGLU
// width, vocabulary padding, --global-batch-size default, virtual stages from layers per stage).
#include <gtest/gtest.h>

#include "simulator/config/config_loader.hpp"
#include "tests/importers/importer_test_util.hpp"

namespace stepsim::test {
namespace {

// A small valid launch: 8 GPUs, TP 1, PP 1, so 8 data-parallel replicas of 16 / 8 = 2 sequences.
std::string launch(const std::string& extra = "", const std::string& launcher = "torchrun --nnodes 1 --nproc-per-node 8") {
  return launcher +
         " pretrain_gpt.py --num-layers 4 --hidden-size 1024 --num-attention-heads 8 --seq-length 2048 "
         "--micro-batch-size 1 --global-batch-size 16 --vocab-size 32000 --swiglu --disable-bias-linear --bf16 "
         "--use-distributed-optimizer " +
         extra + "\n";
}

std::string example() { return read_text(source_path("workloads/examples/megatron-llama3-70b.sh")); }

TEST(MegatronImport, TheLlama3_70BExampleKeepsItsLayout) {
  const Loaded l = megatron(example());
  const Plan& p = l.plan;
  // torchrun --nnodes ${SLURM_NNODES:-8} --nproc_per_node 8; TP 8 x PP 4 leaves DP 2.
  EXPECT_EQ(p.cluster.nodes, 8);
  EXPECT_EQ(p.cluster.gpus_per_node, 8);
  EXPECT_EQ(p.parallel.tp, 8);
  EXPECT_EQ(p.parallel.pp, 4);
  EXPECT_EQ(p.dp(), 2);
  EXPECT_EQ(to_string(p.parallel.schedule), std::string("interleaved"));
  EXPECT_EQ(p.parallel.virtual_stages, 80 / 4 / 5);  // --num-layers-per-virtual-pipeline-stage 5
  EXPECT_EQ(p.train.global_batch, 64);
  EXPECT_EQ(p.train.seq_len, 8192);
  EXPECT_EQ(p.parallel.micro_batch_size, 1);
  EXPECT_EQ(p.parallel.microbatches, 64 / 2 / 1);  // Megatron: global / (DP x micro-batch)
  EXPECT_EQ(p.parallel.recompute, Recompute::Selective);
  EXPECT_EQ(p.parallel.zero, 1);
  EXPECT_EQ(p.train.precision, Precision::BF16);
  EXPECT_FALSE(p.parallel.split_backward);
  // The model: Llama 3 70B's published shape, the vocabulary padded to a multiple of 128 x TP 8.
  EXPECT_EQ(p.model.hidden_size, 8192);
  EXPECT_EQ(p.model.num_hidden_layers, 80);
  EXPECT_EQ(p.model.num_attention_heads, 64);
  EXPECT_EQ(p.model.num_key_value_heads, 8);
  EXPECT_EQ(p.model.head_dim, 128);
  EXPECT_EQ(p.model.intermediate_size, 28672);
  EXPECT_EQ(p.model.vocab_size, (128256 + 1023) / 1024 * 1024);
  EXPECT_FALSE(p.model.tie_word_embeddings);
  // The written plan says where each key came from.
  EXPECT_NE(l.yaml.find("virtual_stages: 4"), std::string::npos) << l.yaml;
  EXPECT_NE(l.yaml.find("# --num-layers-per-virtual-pipeline-stage $LAYERS_PER_VIRTUAL_STAGE = 5"), std::string::npos) << l.yaml;
  EXPECT_NE(l.yaml.find("# --tensor-model-parallel-size $TP = 8 (line 64)"), std::string::npos) << l.yaml;
  EXPECT_NE(l.yaml.find("nodes: 8"), std::string::npos);
  // Hyper-parameters, data and logging are listed, not imported; nothing is unknown.
  for (const char* arg : {"--lr", "--min-lr", "--data-path", "--save", "--log-interval", "--rotary-base", "--split"})
    EXPECT_TRUE(mentions(l.imported.not_imported, arg)) << arg;
  EXPECT_TRUE(l.imported.unknown.empty()) << l.imported.unknown.front();
}

TEST(MegatronImport, TheOverlapOptionsAreImportedAsWritten) {
  const Loaded with = megatron(example()), without = megatron(launch());
  for (const char* key : {"parallel.tp_comm_overlap", "parallel.overlap_grad_reduce", "parallel.overlap_param_gather"}) {
    ASSERT_NE(with.imported.find(key), nullptr) << key;
    EXPECT_EQ(with.imported.find(key)->value, true) << key;
    ASSERT_NE(without.imported.find(key), nullptr) << key;
    EXPECT_EQ(without.imported.find(key)->value, false) << key;
  }
}

TEST(MegatronImport, UnknownArgumentsAreListedAndNoCostOnesNoted) {
  const Loaded l = megatron(launch("--lr 3e-4 --my-new-option 3 --another-flag --seed 1234"));
  EXPECT_TRUE(mentions(l.imported.unknown, "--my-new-option"));
  EXPECT_TRUE(mentions(l.imported.unknown, "--another-flag"));
  EXPECT_TRUE(mentions(l.imported.not_imported, "--lr"));
  EXPECT_TRUE(mentions(l.imported.not_imported, "--seed"));
  const std::string note = importers::not_imported_note(l.imported);
  expect_message(note, {"not imported, no effect in stepsim's cost model: --lr", "--seed",
                        "unknown to stepsim, not imported (check them): --my-new-option, --another-flag"});
  EXPECT_EQ(l.plan.parallel.microbatches, 2);
}

TEST(MegatronImport, UnmodelledArgumentsAreRefusedNamingThem) {
  const auto refused = [](const std::string& extra, std::initializer_list<std::string> pieces) {
    expect_import_rejects([&] { importers::import_megatron(launch(extra), "launch.sh", {}); }, pieces);
  };
  refused("--grad-reduce-in-bf16", {"launch.sh:1: --grad-reduce-in-bf16:", "FP32", "remove it"});
  refused("--moe-expert-capacity-factor 1.25", {"--moe-expert-capacity-factor 1.25", "dropless"});
  refused("--decoder-first-pipeline-num-layers 3", {"--decoder-first-pipeline-num-layers 3", "splits the layers"});
  refused("--window-size 4096 0", {"--window-size 4096 0", "sliding-window"});
  refused("--fp8-param-gather", {"--fp8-param-gather", "BF16"});
  refused("--recompute-granularity full --recompute-method uniform --recompute-num-layers 2",
          {"--recompute-num-layers 2", "groups of 2 layers", "--recompute-num-layers 1"});
  refused("--recompute-granularity selective --recompute-modules mlp", {"--recompute-modules mlp", "core_attn"});
  refused("--attention-backend unfused", {"--attention-backend unfused", "FlashAttention"});
}

TEST(MegatronImport, ACostArgumentFromAVariableTheFileDoesNotSetIsRefused) {
  const std::string text = "torchrun --nnodes 1 --nproc-per-node 8 pretrain_gpt.py --num-layers $NUM_LAYERS " +
                           launch().substr(launch().find("--hidden-size"));
  expect_import_rejects([&] { importers::import_megatron(text, "launch.sh", {}); },
                        {"launch.sh:1: --num-layers $NUM_LAYERS", "NUM_LAYERS is not set in the file", "write the value"});
}

TEST(MegatronImport, TheWorldSizeComesFromTorchrunOrGpus) {
  // A bare argument list has no torchrun: --gpus gives the GPUs.
  const std::string args = launch().substr(launch().find("--num-layers"));
  expect_import_rejects([&] { importers::import_megatron(args, "args.txt", {}); },
                        {"args.txt", "number of GPUs is not in the file", "--gpus N"});
  const Plan p = megatron(args, 16).plan;
  EXPECT_EQ(p.gpus(), 16);
  EXPECT_EQ(p.cluster.nodes, 2);
  EXPECT_EQ(p.parallel.microbatches, 1);  // 16 sequences over 16 replicas
  // --gpus wins over the file's torchrun, with a note.
  const Loaded l = megatron(launch(), 16);
  EXPECT_EQ(l.plan.gpus(), 16);
  // (the other note names the software profile the import picked)
  ASSERT_EQ(l.imported.notes.size(), 2u);
  expect_message(l.imported.notes[0] + l.imported.notes[1], {"--gpus 16 wins", "1 x 8 = 8 GPUs", "software.profile"});
  // A torchrun whose size is an unknown variable says which.
  const std::string unknown = launch("", "torchrun --nnodes $NNODES --nproc-per-node 8");
  expect_import_rejects([&] { importers::import_megatron(unknown, "launch.sh", {}); },
                        {"--nnodes $NNODES", "NNODES is not set", "--gpus N"});
}

TEST(MegatronImport, MegatronDefaultsAreApplied) {
  // No --ffn-hidden-size with --swiglu: int(4 x 1024 x 2/3 / 64) x 64 = 2688.
  const Loaded l = megatron(launch());
  EXPECT_EQ(l.plan.model.intermediate_size, int64_t(4 * 1024 * 2 / 3) / 64 * 64);
  EXPECT_EQ(l.plan.model.intermediate_size, 2688);
  // Tied embeddings without --untie-embeddings-and-output-weights; no GQA flag: as many KV heads as heads.
  EXPECT_TRUE(l.plan.model.tie_word_embeddings);
  EXPECT_EQ(l.plan.model.num_key_value_heads, 0);
  // Vocabulary 32000 padded to a multiple of 128 (TP 1): 32000 already is.
  EXPECT_EQ(l.plan.model.vocab_size, 32000);
  EXPECT_EQ(l.plan.parallel.recompute, Recompute::None);
  // No --global-batch-size: micro-batch x data-parallel size.
  const std::string no_gbs = [] {
    std::string t = launch();
    t.erase(t.find("--global-batch-size 16 "), std::string("--global-batch-size 16 ").size());
    return t;
  }();
  EXPECT_EQ(megatron(no_gbs).plan.train.global_batch, 1 * 8);
  // --num-query-groups counts only with --group-query-attention.
  EXPECT_EQ(megatron(launch("--num-query-groups 2")).plan.model.num_key_value_heads, 0);
  EXPECT_EQ(megatron(launch("--group-query-attention --num-query-groups 2")).plan.model.num_key_value_heads, 2);
}

TEST(MegatronImport, VocabularyIsPaddedAsMegatronPadsIt) {
  // GPT2BPETokenizer: 50257 tokens; TP 2: a multiple of 128 x 2 = 256, so 197 x 256 = 50432.
  std::string t = launch("--tokenizer-type GPT2BPETokenizer --tensor-model-parallel-size 2 --sequence-parallel");
  t.erase(t.find("--vocab-size 32000 "), std::string("--vocab-size 32000 ").size());
  EXPECT_EQ(megatron(t).plan.model.vocab_size, 197 * 256);
  std::string hf = launch("--tokenizer-type HuggingFaceTokenizer --tokenizer-model meta-llama/Meta-Llama-3-8B");
  hf.erase(hf.find("--vocab-size 32000 "), std::string("--vocab-size 32000 ").size());
  expect_import_rejects([&] { importers::import_megatron(hf, "launch.sh", {}); },
                        {"--tokenizer-type HuggingFaceTokenizer", "add --vocab-size N"});
}

TEST(MegatronImport, TensorParallelismNeedsSequenceParallelismAndDataParallelismTheDistributedOptimizer) {
  expect_import_rejects([] { importers::import_megatron(launch("--tensor-model-parallel-size 2"), "launch.sh", {}); },
                        {"--tensor-model-parallel-size 2 without --sequence-parallel", "add --sequence-parallel"});
  std::string plain = launch();
  plain.erase(plain.find("--use-distributed-optimizer "), std::string("--use-distributed-optimizer ").size());
  expect_import_rejects([&] { importers::import_megatron(plain, "launch.sh", {}); },
                        {"no --use-distributed-optimizer with data-parallel size 8", "ZeRO-1"});
  // One data-parallel replica has nothing to shard.
  EXPECT_EQ(megatron(plain, 1).plan.parallel.zero, 1);
}

TEST(MegatronImport, MixtureOfExpertsMapsAndRefusesWhatIsNotModelled) {
  const std::string moe = "--num-experts 8 --moe-router-topk 2 --expert-model-parallel-size 8 --ffn-hidden-size 4096 ";
  const Plan p = megatron(launch(moe + "--moe-token-dispatcher-type alltoall")).plan;
  EXPECT_EQ(p.model.n_routed_experts, 8);
  EXPECT_EQ(p.model.num_experts_per_tok, 2);
  EXPECT_EQ(p.model.moe_intermediate_size, 4096);  // --moe-ffn-hidden-size defaults to --ffn-hidden-size
  EXPECT_EQ(p.parallel.ep, 8);
  // Megatron's default dispatcher is allgather; expert TP defaults to TP.
  expect_import_rejects([&] { importers::import_megatron(launch(moe), "launch.sh", {}); },
                        {"allgather token dispatcher (Megatron-LM's default)", "--moe-token-dispatcher-type alltoall"});
  expect_import_rejects(
      [&] {
        importers::import_megatron(launch(moe + "--moe-token-dispatcher-type alltoall --tensor-model-parallel-size 2 "
                                                "--sequence-parallel --expert-model-parallel-size 4"),
                                   "launch.sh", {});
      },
      {"--expert-tensor-parallel-size left out", "the TP size, 2", "--expert-tensor-parallel-size 1"});
  // A leading run of dense layers, as DeepSeek's "([0]*1+[1]*3)".
  const Plan d = megatron(launch(moe + "--moe-token-dispatcher-type flex --moe-layer-freq \"([0]*1+[1]*3)\"")).plan;
  EXPECT_EQ(d.model.first_k_dense_replace, 1);
  expect_import_rejects(
      [&] { importers::import_megatron(launch(moe + "--moe-token-dispatcher-type flex --moe-layer-freq 2"), "launch.sh", {}); },
      {"--moe-layer-freq 2", "dense layer (1) after an MoE layer", "leading run"});
}

TEST(MegatronImport, RecomputeGranularityMethodAndLayers) {
  EXPECT_EQ(megatron(launch("--recompute-activations")).plan.parallel.recompute, Recompute::Selective);
  EXPECT_EQ(megatron(launch("--recompute-granularity full --recompute-method uniform --recompute-num-layers 1"))
                .plan.parallel.recompute,
            Recompute::Full);
  // block: every one of the 4 layers of the (only) pipeline chunk.
  EXPECT_EQ(megatron(launch("--recompute-granularity full --recompute-method block --recompute-num-layers 4"))
                .plan.parallel.recompute,
            Recompute::Full);
  expect_import_rejects(
      [] {
        importers::import_megatron(launch("--recompute-granularity full --recompute-method block --recompute-num-layers 2"),
                                   "launch.sh", {});
      },
      {"recomputing 2 of the 4 layers", "--recompute-num-layers 4"});
  expect_import_rejects([] { importers::import_megatron(launch("--recompute-granularity full"), "launch.sh", {}); },
                        {"--recompute-granularity full", "needs --recompute-method"});
}

TEST(MegatronImport, PrecisionFlags) {
  std::string fp8 = launch("--fp8-format hybrid --fp8-recipe delayed --fp8-amax-history-len 1024");
  const Plan p = megatron(fp8).plan;
  EXPECT_EQ(p.train.precision, Precision::FP8);
  std::string none = launch();
  none.erase(none.find("--bf16 "), 7);
  expect_import_rejects([&] { importers::import_megatron(none, "launch.sh", {}); }, {"no --bf16", "FP32", "add --bf16"});
}

TEST(MegatronImport, AdamMomentsAreFp32UnlessThePrecisionAwareOptimizerSaysOtherwise) {
  // Megatron-LM keeps exp_avg and exp_avg_sq in FP32; --exp-avg-dtype and --exp-avg-sq-dtype only
  // apply with --use-precision-aware-optimizer (megatron/training/arguments.py).
  EXPECT_EQ(megatron(launch()).plan.train.adam_moments_dtype, MomentDtype::FP32);
  const Loaded ignored = megatron(launch("--exp-avg-dtype bf16 --exp-avg-sq-dtype bf16"));
  EXPECT_EQ(ignored.plan.train.adam_moments_dtype, MomentDtype::FP32);
  EXPECT_TRUE(mentions(ignored.imported.not_imported, "without --use-precision-aware-optimizer"));
  const Loaded bf16 = megatron(launch("--use-precision-aware-optimizer --exp-avg-dtype bf16 --exp-avg-sq-dtype bf16"));
  EXPECT_EQ(bf16.plan.train.adam_moments_dtype, MomentDtype::BF16);
  EXPECT_NE(bf16.yaml.find("adam_moments_dtype: bf16"), std::string::npos) << bf16.yaml;
  expect_import_rejects(
      [] { importers::import_megatron(launch("--use-precision-aware-optimizer --exp-avg-dtype bf16"), "launch.sh", {}); },
      {"--exp-avg-dtype bf16", "both Adam moments in one format"});
  expect_import_rejects(
      [] {
        importers::import_megatron(launch("--use-precision-aware-optimizer --exp-avg-dtype fp8 --exp-avg-sq-dtype fp8"),
                                   "launch.sh", {});
      },
      {"--exp-avg-dtype fp8", "not modelled", "fp32 or bf16"});
  expect_import_rejects(
      [] { importers::import_megatron(launch("--use-precision-aware-optimizer --main-params-dtype fp16"), "launch.sh", {}); },
      {"--main-params-dtype fp16", "FP32 gradients and master weights"});
}

TEST(MegatronImport, FilesWithoutOneLaunchAreOneLine) {
  expect_import_rejects([] { importers::import_megatron(launch() + launch(), "two.sh", {}); },
                        {"two.sh", "2 Megatron-LM launch lines (lines 1, 2)"});
  expect_import_rejects([] { importers::import_megatron("echo hello\n", "none.sh", {}); },
                        {"none.sh", "no Megatron-LM launch found"});
  std::string mamba = launch();
  mamba.replace(mamba.find("pretrain_gpt.py"), 15, "pretrain_mamba.py");
  expect_import_rejects([&] { importers::import_megatron(mamba, "m.sh", {}); }, {"m.sh:1: pretrain_mamba.py", "decoder-only"});
}

TEST(MegatronImport, ArgumentsKeptInArraysWithoutALaunchLine) {
  const std::string text =
      "MODEL=(--num-layers 4 --hidden-size 1024 --num-attention-heads 8 --swiglu --disable-bias-linear)\n"
      "TRAIN=\"--seq-length 2048 --micro-batch-size 1 --global-batch-size 16 --vocab-size 32000 --bf16\"\n"
      "PAR=(--use-distributed-optimizer)\n";
  const Plan p = megatron(text, 8).plan;
  EXPECT_EQ(p.model.num_hidden_layers, 4);
  EXPECT_EQ(p.train.seq_len, 2048);
  EXPECT_EQ(p.parallel.microbatches, 2);
}

TEST(MegatronImport, AnImportedPlanThatDoesNotHoldNamesTheArgument) {
  // 6 attention heads do not split over TP 4: the check of the plan names the launch's argument.
  std::string t = launch("--tensor-model-parallel-size 4 --sequence-parallel");
  t.replace(t.find("--num-attention-heads 8"), 23, "--num-attention-heads 6");
  t.replace(t.find("--hidden-size 1024"), 18, "--hidden-size 1020");
  expect_import_rejects([&] { megatron(t); }, {"launch.sh:1: --tensor-model-parallel-size 4", "6 attention heads",
                                               "imported as parallel.tp"});
}

}  // namespace
}  // namespace stepsim::test
