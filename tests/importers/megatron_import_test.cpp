// `stepsim import megatron`: every expected value is read off the launch script by hand and
// multiplied out here with Megatron-LM's own rules (megatron/training/arguments.py: the SwiGLU
// width, vocabulary padding, --global-batch-size default, virtual stages from layers per stage).
#include <gtest/gtest.h>

#include "simulator/config/config_loader.hpp"
#include "simulator/importers/exporters.hpp"
#include "vocabulary/model_params.hpp"
#include "workloads/layers/layer_partition.hpp"
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

// --window-size L,0: each query's L earlier keys and its own; --window-attn-skip-freq N keeps every
// N-th layer (counted from 1) full, a list marks the windowed layers with 1 (Megatron-LM's
// is_layer_window_attention). GPT-OSS: (127, 0) and 2, so layers 0 and 2 of 4 are windowed.
TEST(MegatronImport, WindowSizeAndSkipFrequencyBecomeTheSlidingWindow) {
  Plan p = megatron(launch("--window-size 127,0 --window-attn-skip-freq 2")).plan;
  EXPECT_EQ(p.model.sliding_window, 128);
  EXPECT_EQ(p.model.sliding_layers, (std::vector<int64_t>{0, 2}));
  p = megatron(launch("--window-size \"(4095,0)\"")).plan;
  EXPECT_EQ(p.model.sliding_window, 4096);
  EXPECT_EQ(p.model.sliding_layers, (std::vector<int64_t>{0, 1, 2, 3}));
  p = megatron(launch("--window-size 63,0 --window-attn-skip-freq \"([1]*3+[0])\"")).plan;
  EXPECT_EQ(p.model.sliding_layers, (std::vector<int64_t>{0, 1, 2}));
  EXPECT_EQ(megatron(launch("--window-size -1,0")).plan.model.sliding_window, 0);  // no limit: causal
  EXPECT_EQ(megatron(launch()).plan.model.sliding_window, 0);
}

// --qk-layernorm (Qwen3's attention) becomes model.qk_norm; without it there is none.
TEST(MegatronImport, QkLayernormBecomesTheModelsQkNorm) {
  EXPECT_TRUE(megatron(launch("--qk-layernorm")).plan.model.qk_norm);
  EXPECT_FALSE(megatron(launch()).plan.model.qk_norm);
}

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

// --cuda-graph-impl transformer_engine graphs each layer; --cuda-graph-scope narrows it to the named
// parts (the rest eager), or widens it to the whole iteration; a scope stepsim does not model is
// refused naming it.
TEST(MegatronImport, CudaGraphScopesBecomeScopedLayerGraphs) {
  const Loaded scoped = megatron(launch("--cuda-graph-impl transformer_engine --cuda-graph-scope attn moe_router"));
  EXPECT_EQ(scoped.plan.software.cuda_graphs, CudaGraphs::Layers);
  EXPECT_EQ(scoped.plan.software.cuda_graph_scope, kGraphAttn | kGraphMoeRouter);
  const Loaded layers = megatron(launch("--cuda-graph-impl transformer_engine"));
  EXPECT_EQ(layers.plan.software.cuda_graphs, CudaGraphs::Layers);
  EXPECT_EQ(layers.plan.software.cuda_graph_scope, 0);
  const Loaded whole = megatron(launch("--cuda-graph-impl local --cuda-graph-scope full_iteration"));
  EXPECT_EQ(whole.plan.software.cuda_graphs, CudaGraphs::FullIteration);
  EXPECT_EQ(whole.plan.software.cuda_graph_scope, 0);
  expect_import_rejects(
      [] { importers::import_megatron(launch("--cuda-graph-impl transformer_engine --cuda-graph-scope attn mamba"), "launch.sh", {}); },
      {"--cuda-graph-scope", "mamba", "not modelled"});
  // And back out: the export names the same scopes.
  const std::string text = importers::export_plan("megatron", scoped.plan);
  EXPECT_NE(text.find("--cuda-graph-scope attn moe_router"), std::string::npos) << text;
  // Megatron-LM after core 0.17 spells them --cuda-graph-modules (a release newer than r0.14: the
  // megatron-bridge profile); "full" is the whole layer; the two spellings together are refused.
  const Loaded modules = megatron(launch("--cuda-graph-impl transformer_engine --cuda-graph-modules attn moe_router"));
  EXPECT_EQ(modules.plan.software.cuda_graphs, CudaGraphs::Layers);
  EXPECT_EQ(modules.plan.software.cuda_graph_scope, kGraphAttn | kGraphMoeRouter);
  EXPECT_FALSE(mentions(modules.imported.unknown, "--cuda-graph-modules"));
  EXPECT_EQ(megatron(launch("--enable-cuda-graph --cuda-graph-modules attn")).plan.software.profile, "megatron-bridge");
  EXPECT_EQ(megatron(launch("--enable-cuda-graph --cuda-graph-scope full")).plan.software.cuda_graph_scope, 0);
  EXPECT_EQ(megatron(launch("--cuda-graph-impl local --cuda-graph-modules full_iteration")).plan.software.cuda_graphs,
            CudaGraphs::FullIteration);
  expect_import_rejects(
      [] { megatron(launch("--cuda-graph-impl transformer_engine --cuda-graph-scope attn --cuda-graph-modules attn")); },
      {"--cuda-graph-modules attn", "--cuda-graph-scope attn", "keep one"});
  // argparse needs a value (nargs '+'): an empty list is refused, not read as whole layers.
  for (const std::string empty : {"--cuda-graph-scope", "--cuda-graph-modules"})
    expect_import_rejects([&] { megatron(launch("--enable-cuda-graph " + empty)); }, {empty, "no scope given", "leave it out"});
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
  refused("--grad-reduce-in-bf16 --ddp-reduce-scatter-with-fp32-accumulation",
          {"--ddp-reduce-scatter-with-fp32-accumulation", "scratch buffer"});
  refused("--window-size 4096", {"--window-size 4096", "two whole numbers", "127,0"});
  // A layer count past stepsim's bound is refused where it is read, before any per-layer pattern is
  // listed (it hung, listing a hundred billion layers).
  expect_import_rejects(
      [] {
        importers::import_megatron("torchrun --nnodes 1 --nproc-per-node 8 pretrain_gpt.py --num-layers 100000000000 --hidden-size 1024 --num-attention-heads 8 "
                                   "--seq-length 2048 --micro-batch-size 1 --global-batch-size 64 --vocab-size 32000 --bf16 "
                                   "--use-distributed-optimizer --window-size 127,0\n",
                                   "launch.sh", {});
      },
      {"--num-layers 100000000000", "at most 4096"});
  refused("--window-size 127,16", {"--window-size 127,16", "not causal"});
  refused("--window-attn-skip-freq 2", {"--window-attn-skip-freq 2", "without --window-size"});
  refused("--window-size 127,0 --window-attn-skip-freq \"[1,0]\"", {"--window-attn-skip-freq", "describes 2 layers", "4"});
  refused("--recompute-granularity full --recompute-method uniform --recompute-num-layers 2",
          {"--recompute-num-layers 2", "groups of 2 layers", "--recompute-num-layers 1"});
  refused("--recompute-granularity selective --recompute-modules core_attn mlps",
          {"--recompute-modules core_attn mlps", "unknown module \"mlps\"", "core_attn moe_act layernorm mla_up_proj mlp moe shared_experts"});
  refused("--attention-backend unfused", {"--attention-backend unfused", "FlashAttention"});
  // Megatron-Core up to 0.15 read an empty module list as none recomputed, later releases refuse it:
  // never its default (core_attn), which the importer took it for.
  refused("--recompute-granularity selective --recompute-modules",
          {"--recompute-modules", "no module given", "core_attn"});
  refused("--recompute-modules --recompute-granularity selective", {"--recompute-modules", "no module given"});
}

// The layers of each pipeline stage as Megatron-LM places them, kept exactly (stepsim rebalanced
// them before: the 70B example's critical rank held 21 layers instead of 20). Expected lists are
// counted by hand from the flags.
TEST(MegatronImport, ThePipelineKeepsMegatronsLayersPerStage) {
  const auto layers_of = [](const Loaded& l) {
    std::vector<int64_t> out;
    for (const StageLayers& s : partition_layers(l.plan)) out.push_back(s.count);
    return out;
  };
  const auto per_rank = [&](const Loaded& l) {
    const auto stages = layers_of(l);
    std::vector<int64_t> out(size_t(l.plan.parallel.pp), 0);
    for (size_t s = 0; s < stages.size(); ++s) out[s % out.size()] += stages[s];  // stage c x PP + r is rank r's
    return out;
  };
  // The 70B example: 80 layers, PP 4, 5 per virtual stage: 16 stages of 5, 20 on every rank.
  const Loaded ex = megatron(example());
  EXPECT_EQ(ex.plan.parallel.stage_layers, std::vector<int64_t>(16, 5));
  EXPECT_EQ(layers_of(ex), std::vector<int64_t>(16, 5));  // what the replay places
  EXPECT_EQ(per_rank(ex), std::vector<int64_t>(4, 20));
  // A launch of 14 layers on PP 4 (8 GPUs: DP 2).
  const auto pp4 = [](const std::string& flags) {
    std::string t = launch("--pipeline-model-parallel-size 4 " + flags);
    t.replace(t.find("--num-layers 4"), 14, "--num-layers 14");
    return megatron(t);
  };
  // Uneven first and last ranks: 2 and 6, the middle two (14 - 8) / 2 = 3 each.
  const Loaded uneven = pp4("--decoder-first-pipeline-num-layers 2 --decoder-last-pipeline-num-layers 6");
  EXPECT_EQ(layers_of(uneven), (std::vector<int64_t>{2, 3, 3, 6}));
  EXPECT_EQ(to_string(uneven.plan.parallel.schedule), std::string("1f1b"));
  // NeMo's embedding and loss counted as layers, 2 virtual stages: 16 / 4 = 4 per rank, 2 per
  // stage, the first and last stage one fewer; rank 0 holds stages 0 and 4: 1 + 2.
  const Loaded nemo = pp4("--num-virtual-stages-per-pipeline-rank 2 --account-for-embedding-in-pipeline-split "
                          "--account-for-loss-in-pipeline-split");
  EXPECT_EQ(layers_of(nemo), (std::vector<int64_t>{1, 2, 2, 2, 2, 2, 2, 1}));
  EXPECT_EQ(per_rank(nemo), (std::vector<int64_t>{3, 4, 4, 3}));
  EXPECT_EQ(nemo.plan.parallel.virtual_stages, 2);
  // A layout string: 8 stages over PP 4 (VP 2): E + 3 | 2 | 1 | 2 || 2 | 2 | 2 | L.
  const Loaded layout = pp4("--pipeline-model-parallel-layout \"Ettt|tt|t|tt|tt|tt|tt|L\"");
  EXPECT_EQ(layers_of(layout), (std::vector<int64_t>{3, 2, 1, 2, 2, 2, 2, 0}));
  EXPECT_EQ(per_rank(layout), (std::vector<int64_t>{5, 4, 3, 2}));
  EXPECT_EQ(to_string(layout.plan.parallel.schedule), std::string("interleaved"));
  EXPECT_NE(layout.yaml.find("stage_layers: [3,2,1,2,2,2,2,0]"), std::string::npos) << layout.yaml;
  // What Megatron-LM refuses: 9 layers over PP 2, and the split arguments it takes one of.
  std::string nine = launch("--pipeline-model-parallel-size 2");
  nine.replace(nine.find("--num-layers 4"), 14, "--num-layers 9");
  expect_import_rejects([&] { megatron(nine); },
                        {"launch.sh:1: --num-layers 9 with --pipeline-model-parallel-size 2", "do not split evenly"});
  expect_import_rejects([&] { pp4("--decoder-first-pipeline-num-layers 3"); },
                        {"--decoder-first-pipeline-num-layers 3", "11 layers left for the 3 middle pipeline ranks"});
  expect_import_rejects([&] { pp4("--pipeline-model-parallel-layout \"Ett|tt|tt|ttL\" --decoder-last-pipeline-num-layers 2"); },
                        {"--pipeline-model-parallel-layout", "keep the layout alone"});
  expect_import_rejects([&] { pp4("--decoder-first-pipeline-num-layers 2 --account-for-loss-in-pipeline-split"); },
                        {"--decoder-first-pipeline-num-layers 2 with --account-for-loss-in-pipeline-split", "keep one"});
  expect_import_rejects([&] { pp4("--pipeline-model-parallel-layout \"Ett|tt|tt|tttL\""); },
                        {"places 9 decoder layers (t), but --num-layers is 14"});
}

// The two published plans whose uneven stages could not be imported (tests/data), counted by hand.
TEST(MegatronImport, ThePublishedUnevenPipelinesImport) {
  const Plan qwen = megatron(read_text(source_path("tests/data/megatron-qwen3-235b-a22b.sh"))).plan;
  std::vector<int64_t> expect(32, 3);  // (94 + 2) / 32
  expect.front() = expect.back() = 2;  // the embedding and the loss count as a layer each
  EXPECT_EQ(qwen.parallel.stage_layers, expect);
  EXPECT_EQ(qwen.parallel.virtual_stages, 4);
  const Plan ds = megatron(read_text(source_path("tests/data/megatron-deepseek-v3-layout.sh"))).plan;
  std::vector<int64_t> ds_expect(32, 2);  // "Et|(tt|)*30mL": 1, 30 x 2, 0 (MTP and loss)
  ds_expect.front() = 1;
  ds_expect.back() = 0;
  EXPECT_EQ(ds.parallel.stage_layers, ds_expect);
  EXPECT_EQ(ds.parallel.virtual_stages, 32 / 8);
  EXPECT_EQ(ds.model.first_k_dense_replace, 3);
}

// Megatron-LM's defaults that stepsim models are imported, not refused: bias vectors (on unless
// --disable-bias-linear), GPT-2's BPE files without a tokenizer type.
TEST(MegatronImport, BiasVectorsAndGpt2FilesAreImported) {
  std::string biased = launch();
  biased.replace(biased.find("--disable-bias-linear "), 22, "");
  const Plan b = megatron(biased).plan;
  EXPECT_TRUE(b.model.attention_bias);
  EXPECT_TRUE(b.model.mlp_bias);
  const Plan none = megatron(launch()).plan;
  EXPECT_FALSE(none.model.attention_bias);
  EXPECT_FALSE(none.model.mlp_bias);
  const Plan qkv = megatron(launch("--add-qkv-bias")).plan;
  EXPECT_TRUE(qkv.model.attention_bias);
  EXPECT_FALSE(qkv.model.mlp_bias);
  // 1024 hidden, 8 heads x 128: QKV 3 x 1024 + output 1024 bias values, MLP 2 x 2816 + 1024, per layer.
  const int64_t ffn = (4 * 1024 * 2 / 3) / 64 * 64;
  EXPECT_EQ(count_params(b.model).total() - count_params(none.model).total(), 4 * (4 * 1024 + 2 * ffn + 1024));
  std::string bpe = launch("--vocab-file gpt2-vocab.json --merge-file gpt2-merges.txt");
  bpe.replace(bpe.find("--vocab-size 32000 "), 19, "");
  EXPECT_EQ(megatron(bpe).plan.model.vocab_size, (50257 + 127) / 128 * 128);
}

// NVIDIA's examples/gpt3 launch: every problem in one error (it took four edits, one error at a
// time), the world size's fix the one that fits TP 8 x PP 16 (stepsim suggested PP 8).
TEST(MegatronImport, AGpt3LaunchNamesEveryProblemOnce) {
  const std::string text = read_text(source_path("tests/data/megatron-gpt3-175b.sh"));
  const std::string msg = expect_import_rejects([&] { megatron(text); },
                                                {"TP 8 x PP 16 x CP 1 = 128 GPUs hold one model replica", "give --gpus 128",
                                                 "and 1 more", "without --sequence-parallel"});
  EXPECT_EQ(msg.find("bias"), std::string::npos) << msg;
  EXPECT_EQ(msg.find("vocab"), std::string::npos) << msg;
  EXPECT_EQ(msg.find("PP 8"), std::string::npos) << msg;
}

// Launches Megatron-LM itself refuses (arguments.py validate_args, TransformerConfig), each named
// with its flags and the fix; several at once in one error.
TEST(MegatronImport, LaunchesMegatronRefusesAreRefused) {
  const auto refused = [](const std::string& extra, std::initializer_list<std::string> pieces) {
    expect_import_rejects([&] { importers::import_megatron(launch(extra), "launch.sh", {}); }, pieces);
  };
  refused("--fp16", {"--fp16: Megatron-LM refuses it with --bf16", "keep one"});
  refused("--use-torch-fsdp2 --untie-embeddings-and-output-weights",
          {"--use-distributed-optimizer: Megatron-LM refuses it with --use-torch-fsdp2", "remove --use-distributed-optimizer"});
  refused("--recompute-activations --recompute-granularity full --recompute-method uniform",
          {"--recompute-activations: Megatron-LM makes it selective", "--recompute-method uniform"});
  refused("--checkpoint-activations", {"--checkpoint-activations", "old name", "--recompute-activations"});
  refused("--overlap-param-gather", {"--overlap-param-gather", "requires --overlap-grad-reduce"});
  refused("--delay-wgrad-compute", {"--delay-wgrad-compute", "without --overlap-moe-expert-parallel-comm"});
  refused("--expert-model-parallel-size 2", {"--expert-model-parallel-size 2", "without --num-experts"});
  refused("--max-position-embeddings 1024", {"--max-position-embeddings 1024", "less than --seq-length 2048"});
  refused("--num-layers-per-virtual-pipeline-stage 1 --num-virtual-stages-per-pipeline-rank 2",
          {"only one of --num-layers-per-virtual-pipeline-stage"});
  // Two at once: one error, both named.
  refused("--fp16 --grad-reduce-in-fp32-typo --delay-wgrad-compute", {"--fp16", "and 1 more", "--delay-wgrad-compute"});
}

TEST(MegatronImport, ACostArgumentFromAVariableTheFileDoesNotSetIsRefused) {
  const std::string text = "torchrun --nnodes 1 --nproc-per-node 8 pretrain_gpt.py --num-layers $NUM_LAYERS " +
                           launch().substr(launch().find("--hidden-size"));
  expect_import_rejects([&] { importers::import_megatron(text, "launch.sh", {}); },
                        {"launch.sh:1: --num-layers $NUM_LAYERS", "NUM_LAYERS is not set in the file", "write the value"});
}

// A value the script may change after setting it (here a sourced file) is unknown, as docs/import.md
// promises: refused on a cost argument naming the variable and the line, harmless on a no-cost one.
TEST(MegatronImport, AValueTheScriptMayChangeIsRefusedWhereItCosts) {
  const std::string tail = launch().substr(launch().find("--hidden-size"));
  const std::string cost = "NL=4\nsource ./cluster_env.sh\ntorchrun --nnodes 1 --nproc-per-node 8 pretrain_gpt.py --num-layers $NL " + tail;
  expect_import_rejects([&] { importers::import_megatron(cost, "launch.sh", {}); },
                        {"launch.sh:3: --num-layers $NL", "NL may be changed by the file sourced on line 2 (./cluster_env.sh)"});
  const std::string no_cost = "LR=3e-4\nread -r LR < lr.txt\n" + launch("--lr $LR");
  const Loaded l = megatron(no_cost);
  EXPECT_EQ(l.plan.model.num_hidden_layers, 4);
  EXPECT_TRUE(mentions(l.imported.not_imported, "--lr")) << importers::not_imported_note(l.imported);
  // With no launch line left to read, the message names what the file runs but stepsim does not.
  expect_import_rejects([] { importers::import_megatron("ARGS=\"--num-layers 4\"\n. ./launch_common.sh\n", "a.sh", {}); },
                        {"a.sh: no Megatron-LM launch found", "the file sourced on line 2 (./launch_common.sh)"});
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

TEST(MegatronImport, MixtureOfExpertsMapsMegatronsDefaults) {
  const std::string moe = "--num-experts 8 --moe-router-topk 2 --expert-model-parallel-size 8 --ffn-hidden-size 4096 ";
  const Plan p = megatron(launch(moe + "--moe-token-dispatcher-type alltoall")).plan;
  EXPECT_EQ(p.model.n_routed_experts, 8);
  EXPECT_EQ(p.model.num_experts_per_tok, 2);
  EXPECT_EQ(p.model.moe_intermediate_size, 4096);  // --moe-ffn-hidden-size defaults to --ffn-hidden-size
  EXPECT_EQ(p.parallel.ep, 8);
  EXPECT_EQ(p.parallel.moe_dispatcher, MoeDispatcher::AllToAll);
  // Megatron-LM's defaults (arguments.py, TransformerConfig): the allgather dispatcher, expert TP =
  // TP, SequentialMLP (no grouped GEMM), dropless, no all-to-all overlap (refused before).
  const Plan d = megatron(launch(moe)).plan;
  EXPECT_EQ(d.parallel.moe_dispatcher, MoeDispatcher::AllGather);
  EXPECT_EQ(d.parallel.expert_tp, 1);
  EXPECT_FALSE(d.parallel.moe_grouped_gemm);
  EXPECT_EQ(d.parallel.moe_capacity_factor, 0.0);
  EXPECT_FALSE(d.parallel.moe_overlap_ep_comm);
  const Plan etp = megatron(launch(moe + "--moe-token-dispatcher-type alltoall --tensor-model-parallel-size 2 "
                                         "--sequence-parallel --expert-model-parallel-size 4"))
                       .plan;
  EXPECT_EQ(etp.parallel.expert_tp, 2);  // left out: the TP size
  EXPECT_EQ(etp.parallel.ep, 4);
  // A leading run of dense layers, as DeepSeek's "([0]*1+[1]*3)"; flex runs DeepEP by default.
  const Plan f = megatron(launch(moe + "--moe-token-dispatcher-type flex --moe-layer-freq \"([0]*1+[1]*3)\"")).plan;
  EXPECT_EQ(f.model.first_k_dense_replace, 1);
  EXPECT_EQ(f.parallel.moe_dispatcher, MoeDispatcher::DeepEP);
  expect_import_rejects(
      [&] { importers::import_megatron(launch(moe + "--moe-token-dispatcher-type flex --moe-layer-freq 2"), "launch.sh", {}); },
      {"--moe-layer-freq 2", "dense layer (1) after an MoE layer", "leading run"});
}

// Megatron-LM's MoE flags onto the plan's keys, each as Megatron-Core runs it (all refused before).
TEST(MegatronImport, MixtureOfExpertsFlagsMapOntoThePlan) {
  const std::string moe = "--num-experts 8 --moe-router-topk 2 --expert-model-parallel-size 8 --ffn-hidden-size 4096 ";
  const Plan c = megatron(launch(moe + "--moe-token-dispatcher-type alltoall --moe-grouped-gemm "
                                       "--moe-expert-capacity-factor 1.25 --moe-pad-expert-input-to-capacity"))
                     .plan;
  EXPECT_TRUE(c.parallel.moe_grouped_gemm);
  EXPECT_DOUBLE_EQ(c.parallel.moe_capacity_factor, 1.25);
  EXPECT_TRUE(c.parallel.moe_pad_to_capacity);
  // A negative capacity factor is Megatron's dropless.
  EXPECT_EQ(megatron(launch(moe + "--moe-expert-capacity-factor -1")).plan.parallel.moe_capacity_factor, 0.0);
  for (const char* flex : {"--moe-enable-deepep", "--moe-flex-dispatcher-backend deepep",
                           "--moe-flex-dispatcher-backend hybridep"}) {
    const Loaded l = megatron(launch(moe + "--moe-token-dispatcher-type flex " + flex));
    EXPECT_EQ(l.plan.parallel.moe_dispatcher, MoeDispatcher::DeepEP) << flex;
    EXPECT_EQ(l.plan.parallel.moe_flex_backend,
              std::string(flex).ends_with("hybridep") ? FlexBackend::HybridEP : FlexBackend::DeepEP) << flex;
  }
  const Loaded hybrid = megatron(launch(moe + "--moe-token-dispatcher-type flex --moe-flex-dispatcher-backend hybridep"));
  expect_message(hybrid.imported.find("parallel.moe_dispatcher")->from, {"HybridEP's traffic modelled as DeepEP's"});
  EXPECT_EQ(hybrid.plan.software.profile, "megatron-bridge");  // the backend argument came with Megatron-Core 0.16
  EXPECT_NE(hybrid.yaml.find("moe_flex_backend: hybridep"), std::string::npos) << hybrid.yaml;
  EXPECT_NE(importers::export_plan("megatron", hybrid.plan).find("--moe-flex-dispatcher-backend hybridep"), std::string::npos);
  // The all-to-all overlap, with the weight gradients delayed or not.
  const std::string a2a = moe + "--moe-token-dispatcher-type alltoall --overlap-moe-expert-parallel-comm ";
  const Plan o = megatron(launch(a2a)).plan;
  EXPECT_TRUE(o.parallel.moe_overlap_ep_comm);
  EXPECT_FALSE(o.parallel.split_backward);
  EXPECT_TRUE(megatron(launch(a2a + "--delay-wgrad-compute")).plan.parallel.split_backward);
}

// What Megatron-LM refuses among the MoE flags, and what stepsim cannot run, in one error each.
TEST(MegatronImport, MixtureOfExpertsFlagsMegatronRefusesAreRefused) {
  const std::string moe = "--num-experts 8 --moe-router-topk 2 --expert-model-parallel-size 8 --ffn-hidden-size 4096 ";
  const auto refused = [&](const std::string& extra, std::initializer_list<std::string> pieces) {
    expect_import_rejects([&] { importers::import_megatron(launch(moe + extra), "launch.sh", {}); }, pieces);
  };
  refused("--moe-pad-expert-input-to-capacity", {"--moe-pad-expert-input-to-capacity", "without --moe-expert-capacity-factor"});
  refused("--moe-token-dispatcher-type flex --moe-expert-capacity-factor 1 --moe-pad-expert-input-to-capacity",
          {"--moe-pad-expert-input-to-capacity", "flex dispatcher with DeepEP"});
  refused("--moe-enable-deepep", {"--moe-enable-deepep", "only with the flex token dispatcher"});
  refused("--moe-token-dispatcher-type flex --expert-model-parallel-size 1", {"--moe-token-dispatcher-type flex", "TP x EP > 1"});
  refused("--moe-token-dispatcher-type flex --moe-flex-dispatcher-backend ncclep",
          {"--moe-flex-dispatcher-backend ncclep", "not modelled"});
  refused("--moe-token-dispatcher-type flex --tensor-model-parallel-size 2 --sequence-parallel --expert-model-parallel-size 4",
          {"flex token dispatcher with expert tensor parallelism 2", "the TP size", "--expert-tensor-parallel-size 1"});
  refused("--moe-token-dispatcher-type allgather --overlap-moe-expert-parallel-comm",
          {"--overlap-moe-expert-parallel-comm", "alltoall or flex"});
  refused("--moe-token-dispatcher-type alltoall --overlap-moe-expert-parallel-comm --pipeline-model-parallel-size 2 "
          "--expert-model-parallel-size 4",
          {"--overlap-moe-expert-parallel-comm", "virtual pipeline"});
  refused("--moe-token-dispatcher-type alltoall --moe-expert-capacity-factor 1.5 --moe-router-load-balancing-type sinkhorn",
          {"--moe-expert-capacity-factor 1.5", "sinkhorn"});
  refused("--moe-expert-capacity-factor x1", {"--moe-expert-capacity-factor x1", "expected a number"});
  expect_import_rejects([&] { importers::import_megatron(launch("--overlap-moe-expert-parallel-comm"), "launch.sh", {}); },
                        {"--overlap-moe-expert-parallel-comm", "only with expert parallelism"});
}

// Qwen3-30B-A3B as NeMo's H100 recipe launches it: the model is the published card's, the MoE
// flags land on their keys, and the plan runs.
TEST(MegatronImport, AQwen3MoeLaunchImports) {
  const Loaded l = megatron(read_text(source_path("tests/data/megatron-qwen3-30b-a3b.sh")));
  const Plan& p = l.plan;
  // The shape of Qwen's config.json (workloads/models/qwen3-30b-a3b.config.json), and its card's
  // "30.5B in total and 3.3B activated" (the activated count rounded to 0.1B).
  EXPECT_EQ(p.model.hidden_size, 2048);
  EXPECT_EQ(p.model.num_hidden_layers, 48);
  EXPECT_EQ(p.model.kv_heads(), 4);
  EXPECT_EQ(p.model.head_dim, 128);
  EXPECT_EQ(p.model.n_routed_experts, 128);
  EXPECT_EQ(p.model.num_experts_per_tok, 8);
  EXPECT_EQ(p.model.moe_intermediate_size, 768);
  EXPECT_EQ(p.model.vocab_size, 151936);  // a multiple of 128 already
  const ModelParams n = count_params(p.model);
  EXPECT_NEAR(double(n.total()), 30.5e9, 0.01 * 30.5e9);
  EXPECT_GE(double(n.activated() + n.embedding), 3.25e9);
  EXPECT_LE(double(n.activated() + n.embedding), 3.355e9);
  EXPECT_EQ(p.gpus(), 16);
  EXPECT_EQ(p.parallel.ep, 16);
  EXPECT_EQ(p.parallel.expert_tp, 1);
  EXPECT_EQ(p.parallel.moe_dispatcher, MoeDispatcher::DeepEP);  // flex on HybridEP
  EXPECT_TRUE(p.parallel.moe_grouped_gemm);
  EXPECT_TRUE(p.parallel.moe_overlap_ep_comm);
  EXPECT_EQ(p.parallel.grad_reduce_dtype, ReduceDtype::BF16);
  EXPECT_EQ(p.parallel.microbatches, 1024 / 16);  // DP 16, one sequence each
  EXPECT_TRUE(l.imported.unknown.empty()) << l.imported.unknown.front();
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

// --cpu-offloading --cpu-offloading-num-layers N: the first N layers' activations go to host memory
// (parallel.cpu_offload_layers); the count alone offloads nothing in Megatron-LM, nor the flag
// alone (its default count is 0); what TransformerConfig refuses is refused with the flag named.
TEST(MegatronImport, ActivationOffloadingAsMegatronReadsIt) {
  EXPECT_EQ(megatron(launch("--cpu-offloading --cpu-offloading-num-layers 3")).plan.parallel.cpu_offload_layers, 3);
  EXPECT_EQ(megatron(launch("--cpu-offloading")).plan.parallel.cpu_offload_layers, 0);
  EXPECT_EQ(megatron(launch("--cpu-offloading-num-layers 3")).plan.parallel.cpu_offload_layers, 0);
  expect_import_rejects(
      [] { importers::import_megatron(launch("--cpu-offloading --cpu-offloading-num-layers 4"), "launch.sh", {}); },
      {"--cpu-offloading-num-layers 4", "less than --num-layers 4"});
  expect_import_rejects(
      [] {
        importers::import_megatron(launch("--cpu-offloading --cpu-offloading-num-layers 1 --pipeline-model-parallel-size 2"),
                                   "launch.sh", {});
      },
      {"--cpu-offloading", "pipeline parallelism"});
  expect_import_rejects(
      [] { importers::import_megatron(launch("--cpu-offloading --cpu-offloading-num-layers 1 --recompute-activations"), "launch.sh", {}); },
      {"--cpu-offloading", "recomputation"});
}

// --cp-comm-type as Megatron-LM reads it: p2p (its default), allgather, a2a, one value or one per
// layer; a2a+p2p's two-level groups are not modelled, nor a different type per layer.
TEST(MegatronImport, ContextParallelCommTypeAsMegatronReadsIt) {
  const auto type_of = [](const std::string& extra) {
    return megatron(launch("--context-parallel-size 2 " + extra)).plan.parallel.cp_comm_type;
  };
  EXPECT_EQ(type_of(""), CpCommType::P2p);
  EXPECT_EQ(type_of("--cp-comm-type allgather"), CpCommType::AllGather);
  EXPECT_EQ(type_of("--cp-comm-type a2a a2a a2a a2a"), CpCommType::A2a);
  const Loaded left_out = megatron(launch("--context-parallel-size 2"));
  EXPECT_NE(left_out.yaml.find("Megatron-LM's default"), std::string::npos) << left_out.yaml;
  expect_import_rejects(
      [] { importers::import_megatron(launch("--context-parallel-size 2 --cp-comm-type a2a+p2p"), "launch.sh", {}); },
      {"--cp-comm-type", "a2a+p2p", "not modelled"});
  expect_import_rejects(
      [] { importers::import_megatron(launch("--context-parallel-size 2 --cp-comm-type p2p p2p a2a p2p"), "launch.sh", {}); },
      {"--cp-comm-type", "same type"});
  expect_import_rejects([] { importers::import_megatron(launch("--context-parallel-size 2 --cp-comm-type"), "launch.sh", {}); },
                        {"--cp-comm-type", "no type given"});
  // Without CP the flag chooses nothing: listed as not imported.
  const Loaded no_cp = megatron(launch("--cp-comm-type a2a"));
  EXPECT_EQ(no_cp.plan.parallel.cp, 1);
  EXPECT_TRUE(mentions(no_cp.imported.not_imported, "--cp-comm-type"));
}

// Megatron-LM takes any subset of its seven modules (transformer_config.py); each one becomes
// part of parallel.recompute, in the order given.
TEST(MegatronImport, RecomputeModulesAnySubset) {
  const auto modules_of = [](const std::string& extra) {
    return megatron(launch("--recompute-granularity selective --recompute-modules " + extra)).plan.parallel.recompute;
  };
  EXPECT_EQ(modules_of("core_attn"), Recompute::Selective);
  EXPECT_EQ(modules_of("layernorm mlp"), Recompute{Recompute::Layernorm | Recompute::Mlp});
  EXPECT_EQ(modules_of("mlp core_attn layernorm mlp"), Recompute{Recompute::CoreAttn | Recompute::Layernorm | Recompute::Mlp});
  // NVIDIA's DeepSeek-V3 H100 recipe: mla_up_proj (and layernorm, moe_act) on an MLA MoE launch.
  const std::string mla_moe =
      "--multi-latent-attention --q-lora-rank 512 --kv-lora-rank 128 --num-experts 8 --moe-router-topk 2 "
      "--moe-ffn-hidden-size 512 --expert-model-parallel-size 8 --moe-grouped-gemm --moe-token-dispatcher-type alltoall "
      "--recompute-granularity selective ";
  EXPECT_EQ(megatron(launch(mla_moe + "--recompute-modules mla_up_proj")).plan.parallel.recompute,
            Recompute{Recompute::MlaUpProj});
  const Loaded l = megatron(launch(mla_moe + "--recompute-modules mla_up_proj moe_act layernorm"));
  EXPECT_EQ(l.plan.parallel.recompute, (Recompute{Recompute::MlaUpProj | Recompute::MoeAct | Recompute::Layernorm}));
  EXPECT_NE(l.yaml.find("recompute: [\"mla_up_proj\",\"moe_act\",\"layernorm\"]"), std::string::npos) << l.yaml;
  // The deprecated --moe-layer-recompute is the moe module next to the default core_attn.
  EXPECT_EQ(megatron(launch(mla_moe.substr(0, mla_moe.find("--recompute-granularity")) + "--moe-layer-recompute"))
                .plan.parallel.recompute,
            Recompute{Recompute::CoreAttn | Recompute::Moe});
  // mla_up_proj without MLA: Megatron-LM refuses it, and so does the plan, naming the module.
  expect_import_rejects([] { megatron(launch("--recompute-granularity selective --recompute-modules mla_up_proj")); },
                        {"--recompute-modules mla_up_proj", "no MLA", "remove mla_up_proj"});
}

// --squared-relu: the non-gated squared ReLU MLP (Nemotron's), two matrices, 4 x hidden wide.
TEST(MegatronImport, SquaredRelu) {
  std::string text = launch("--squared-relu");
  text.replace(text.find(" --swiglu"), 9, "");
  const Plan p = megatron(text).plan;
  EXPECT_EQ(p.model.hidden_act, HiddenAct::Relu2);
  EXPECT_FALSE(p.model.gated_mlp());
  EXPECT_EQ(p.model.intermediate_size, 4 * 1024);  // Megatron's default without --swiglu
  expect_import_rejects([] { importers::import_megatron(launch("--squared-relu"), "launch.sh", {}); },
                        {"--squared-relu", "--swiglu", "keep one"});
}

// GPT-OSS's activation: --quick-geglu (x sigmoid(1.702 x) gates up + --glu-linear-offset), gated,
// costed as SwiGLU; --activation-func-clamp-value is the clamp (model.swiglu_limit), exported back.
TEST(MegatronImport, QuickGegluAndItsClamp) {
  std::string text = launch("--quick-geglu --activation-func-clamp-value 7.0 --glu-linear-offset 1.0");
  text.replace(text.find(" --swiglu"), 9, "");
  const Loaded l = megatron(text);
  EXPECT_EQ(l.plan.model.hidden_act, HiddenAct::Silu);
  EXPECT_TRUE(l.plan.model.gated_mlp());
  EXPECT_DOUBLE_EQ(l.plan.model.swiglu_limit, 7.0);
  EXPECT_EQ(l.plan.model.intermediate_size, 4 * 1024);  // Megatron's default width: 2/3 only with --swiglu
  const std::string exported = importers::export_plan("megatron", l.plan);  // imported back and compared
  EXPECT_NE(exported.find("--activation-func-clamp-value 7"), std::string::npos) << exported;
  // With --swiglu too Megatron-LM asserts; a clamp that is no positive number is refused.
  expect_import_rejects([] { megatron(launch("--quick-geglu")); }, {"--quick-geglu", "--swiglu", "keep one"});
  expect_import_rejects([] { megatron(launch("--activation-func-clamp-value -3")); },
                        {"--activation-func-clamp-value", "positive number"});
  expect_import_rejects([] { megatron(launch("--activation-func-clamp-value inf")); },
                        {"--activation-func-clamp-value", "positive number"});
  // Without a gated activation Megatron-LM ignores it, and so does the plan, saying so.
  std::string gelu = launch("--activation-func-clamp-value 7");
  gelu.replace(gelu.find(" --swiglu"), 9, "");
  EXPECT_DOUBLE_EQ(megatron(gelu).plan.model.swiglu_limit, 0.0);
}

// --mla-down-proj-fusion (Megatron-Core 0.17): MLA's q and kv down projections as one norm-fused
// linear; without it the Megatron profiles run them apart (software.fused.mla_down_proj false).
// Megatron-LM asserts MLA, and its fused module a q latent.
TEST(MegatronImport, MlaDownProjectionFusion) {
  const std::string mla = "--multi-latent-attention --q-lora-rank 512 --kv-lora-rank 128 ";
  const Loaded apart = megatron(launch(mla));
  EXPECT_FALSE(apart.plan.software.fused_mla_down_proj);  // the release's profile
  const Loaded fused = megatron(launch(mla + "--mla-down-proj-fusion"));
  EXPECT_TRUE(fused.plan.software.fused_mla_down_proj);
  EXPECT_NE(importers::export_plan("megatron", fused.plan).find("--mla-down-proj-fusion"), std::string::npos);
  EXPECT_EQ(importers::export_plan("megatron", apart.plan).find("--mla-down-proj-fusion"), std::string::npos);
  expect_import_rejects([] { megatron(launch("--mla-down-proj-fusion")); },
                        {"--mla-down-proj-fusion", "--multi-latent-attention"});
  expect_import_rejects([] { megatron(launch("--multi-latent-attention --kv-lora-rank 128 --mla-down-proj-fusion")); },
                        {"--mla-down-proj-fusion", "--q-lora-rank"});
}

// --moe-router-dtype fp32 (DeepSeek's and Qwen3-Next's Megatron-Bridge providers set it): the
// router's backward in FP32; fp64 has no rate in any preset and is refused; without experts, listed.
TEST(MegatronImport, MoeRouterDtype) {
  const std::string moe = "--num-experts 8 --moe-router-topk 2 --expert-model-parallel-size 8 --ffn-hidden-size 4096 ";
  EXPECT_EQ(megatron(launch(moe)).plan.parallel.moe_router_dtype, RouterDtype::BF16);
  const Loaded fp32 = megatron(launch(moe + "--moe-router-dtype fp32"));
  EXPECT_EQ(fp32.plan.parallel.moe_router_dtype, RouterDtype::FP32);
  EXPECT_EQ(fp32.plan.software.profile, "nemo-25");  // the argument came with Megatron-Core r0.12
  EXPECT_NE(fp32.yaml.find("moe_router_dtype: fp32"), std::string::npos) << fp32.yaml;
  EXPECT_NE(importers::export_plan("megatron", fp32.plan).find("--moe-router-dtype fp32"), std::string::npos);
  EXPECT_EQ(importers::export_plan("megatron", megatron(launch(moe)).plan).find("--moe-router-dtype"), std::string::npos);
  expect_import_rejects([&] { megatron(launch(moe + "--moe-router-dtype fp64")); }, {"--moe-router-dtype fp64", "fp32"});
  expect_import_rejects([&] { megatron(launch(moe + "--moe-router-dtype bf16")); }, {"--moe-router-dtype bf16", "fp32"});
  EXPECT_TRUE(mentions(megatron(launch("--moe-router-dtype fp32")).imported.not_imported, "--moe-router-dtype"));
}

// --moe-router-force-load-balancing (the benchmarks' flag: random logits give every expert its mean
// load) is stepsim's balanced routing, written so; without experts it is listed as not imported.
TEST(MegatronImport, ForcedLoadBalancingIsBalancedRouting) {
  const std::string moe = "--num-experts 8 --moe-router-topk 2 --expert-model-parallel-size 8 --ffn-hidden-size 4096 ";
  const Loaded forced = megatron(launch(moe + "--moe-router-force-load-balancing"));
  EXPECT_EQ(forced.plan.scenario.routing, Routing::Balanced);
  EXPECT_NE(forced.yaml.find("routing: balanced"), std::string::npos) << forced.yaml;
  EXPECT_FALSE(mentions(forced.imported.not_imported, "--moe-router-force-load-balancing"));
  EXPECT_EQ(megatron(launch(moe)).yaml.find("routing:"), std::string::npos);
  EXPECT_TRUE(mentions(megatron(launch("--moe-router-force-load-balancing")).imported.not_imported,
                       "--moe-router-force-load-balancing"));
}

// --moe-deepep-num-sms: the SMs DeepEP's kernels hold (software.deepep_sms, the SM tax while its
// transfers fly); --moe-hybridep-num-sms is listed as costing nothing (HybridEP's kernels are charged none).
TEST(MegatronImport, DeepEpSms) {
  const std::string moe = "--num-experts 8 --moe-router-topk 2 --expert-model-parallel-size 8 --ffn-hidden-size 4096 "
                          "--moe-token-dispatcher-type flex --moe-flex-dispatcher-backend deepep ";
  const Loaded given = megatron(launch(moe + "--moe-deepep-num-sms 24"));
  EXPECT_EQ(given.plan.software.deepep_sms, 24);
  EXPECT_NE(given.yaml.find("deepep_sms: 24"), std::string::npos) << given.yaml;
  EXPECT_EQ(megatron(launch(moe)).plan.software.deepep_sms, 20);  // the megatron-bridge profile's default
  const Loaded hybrid = megatron(launch(moe + "--moe-hybridep-num-sms 32"));
  EXPECT_TRUE(mentions(hybrid.imported.not_imported, "--moe-hybridep-num-sms"));
  // A negative count is out of range, not a malformed integer.
  expect_import_rejects([&] { importers::import_megatron(launch(moe + "--moe-deepep-num-sms -3"), "launch.sh", {}); },
                        {"--moe-deepep-num-sms -3", "must be at least 1"});
}

// --moe-paged-stash (NVIDIA's full-iteration recipes) with the receive budget Megatron-Core requires
// beside it, which needs HybridEP; the export writes both back.
TEST(MegatronImport, PagedStashWithItsReceiveBudget) {
  const std::string moe = "--num-experts 8 --moe-router-topk 2 --expert-model-parallel-size 8 --ffn-hidden-size 4096 "
                          "--moe-grouped-gemm --moe-token-dispatcher-type flex ";
  const std::string hybrid = moe + "--moe-flex-dispatcher-backend hybridep --moe-expert-rank-capacity-factor 1.5 ";
  const Loaded stashed = megatron(launch(hybrid + "--moe-paged-stash --moe-paged-stash-buffer-size-factor-cuda 1.2"));
  EXPECT_TRUE(stashed.plan.parallel.moe_paged_stash);
  EXPECT_NE(stashed.yaml.find("moe_paged_stash: true"), std::string::npos) << stashed.yaml;
  EXPECT_TRUE(mentions(stashed.imported.not_imported, "--moe-expert-rank-capacity-factor"));
  EXPECT_TRUE(mentions(stashed.imported.not_imported, "--moe-paged-stash-buffer-size-factor-cuda"));
  const std::string exported = importers::export_plan("megatron", stashed.plan);
  EXPECT_NE(exported.find("--moe-paged-stash"), std::string::npos) << exported;
  EXPECT_NE(exported.find("--moe-expert-rank-capacity-factor 1.5"), std::string::npos) << exported;
  EXPECT_FALSE(megatron(launch(hybrid)).plan.parallel.moe_paged_stash);
  const auto refused = [&](const std::string& args, std::initializer_list<std::string> pieces) {
    expect_import_rejects([&] { importers::import_megatron(launch(args), "launch.sh", {}); }, pieces);
  };
  refused(moe + "--moe-flex-dispatcher-backend hybridep --moe-paged-stash",
          {"--moe-paged-stash", "requires --moe-expert-rank-capacity-factor"});
  refused(moe + "--moe-flex-dispatcher-backend deepep --moe-expert-rank-capacity-factor 1.5",
          {"--moe-expert-rank-capacity-factor", "--moe-flex-dispatcher-backend hybridep"});
  refused(moe + "--moe-flex-dispatcher-backend hybridep --moe-expert-rank-capacity-factor -1",
          {"--moe-expert-rank-capacity-factor", "positive number"});
}

// --use-transformer-engine-op-fuser: Megatron-Core builds the experts as Transformer Engine's op-fuser
// pipeline, which for a gated MLP asserts NVTE_CUTEDSL_FUSED_GROUPED_MLP=1 (moe/experts.py,
// _is_fused_impl_supported): the fused grouped MLP, each GEMM one grouped kernel. It needs grouped
// GEMMs; on a dense model it is listed as not imported.
TEST(MegatronImport, TheOpFusersExpertsAreTheFusedGroupedMlp) {
  const std::string moe = "--num-experts 8 --moe-router-topk 2 --expert-model-parallel-size 8 --ffn-hidden-size 4096 "
                          "--swiglu --fp8-format e4m3 --fp8-recipe mxfp8 --moe-token-dispatcher-type alltoall ";
  importers::ImportOptions b200;
  b200.preset = "b200";
  const auto import = [&](const std::string& extra) {
    return load_imported(importers::import_megatron(launch(moe + extra), "launch.sh", b200));
  };
  const Loaded fused = import("--moe-grouped-gemm --use-transformer-engine-op-fuser");
  EXPECT_TRUE(fused.plan.software.fused_grouped_mlp);
  EXPECT_FALSE(fused.plan.software.grouped_gemm_per_expert);
  EXPECT_NE(fused.yaml.find("grouped_mlp: true"), std::string::npos) << fused.yaml;
  const std::string exported = importers::export_plan("megatron", fused.plan);
  EXPECT_NE(exported.find("--use-transformer-engine-op-fuser"), std::string::npos) << exported;
  EXPECT_NE(exported.find("export NVTE_CUTEDSL_FUSED_GROUPED_MLP=1"), std::string::npos) << exported;
  EXPECT_FALSE(import("--moe-grouped-gemm").plan.software.fused_grouped_mlp);
  expect_import_rejects(
      [&] { importers::import_megatron(launch(moe + "--use-transformer-engine-op-fuser"), "launch.sh", {}); },
      {"--use-transformer-engine-op-fuser", "--moe-grouped-gemm"});
  const Loaded dense = megatron(launch("--use-transformer-engine-op-fuser"));
  EXPECT_FALSE(dense.plan.software.fused_grouped_mlp);
  EXPECT_TRUE(mentions(dense.imported.not_imported, "--use-transformer-engine-op-fuser"));
}

TEST(MegatronImport, PrecisionFlags) {
  std::string fp8 = launch("--fp8-format hybrid --fp8-recipe delayed --fp8-amax-history-len 1024");
  const Plan p = megatron(fp8).plan;
  EXPECT_EQ(p.train.precision, Precision::FP8);
  EXPECT_EQ(p.train.fp8_recipe, Fp8Recipe::Delayed);
  // Each per-tensor or 1x128 recipe is the plan's train.fp8_recipe; without --fp8-recipe Megatron-LM
  // scales with delayed scaling (megatron/training/arguments.py: --fp8-recipe default "delayed").
  EXPECT_EQ(megatron(launch("--fp8-format hybrid")).plan.train.fp8_recipe, Fp8Recipe::Delayed);
  const Loaded tensorwise = megatron(launch("--fp8-format hybrid --fp8-recipe tensorwise"));
  EXPECT_EQ(tensorwise.plan.train.fp8_recipe, Fp8Recipe::Tensorwise);
  EXPECT_NE(tensorwise.yaml.find("fp8_recipe: tensorwise"), std::string::npos) << tensorwise.yaml;
  EXPECT_EQ(megatron(launch("--fp8-format e4m3 --fp8-recipe blockwise")).plan.train.fp8_recipe, Fp8Recipe::Blockwise);
  // --fp8-param-gather: the FP8 GEMMs' weights all-gathered in FP8; nothing to gather in FP8 without
  // --fp8-format, and Megatron-LM asserts the distributed optimizer (or an FSDP) with it.
  const Loaded gathered = megatron(launch("--fp8-format hybrid --fp8-recipe tensorwise --fp8-param-gather"));
  EXPECT_TRUE(gathered.plan.parallel.fp8_param_gather);
  EXPECT_NE(gathered.yaml.find("fp8_param_gather: true"), std::string::npos) << gathered.yaml;
  EXPECT_FALSE(tensorwise.plan.parallel.fp8_param_gather);
  const Loaded bf16_gather = megatron(launch("--fp8-param-gather"));
  EXPECT_FALSE(bf16_gather.plan.parallel.fp8_param_gather);
  EXPECT_NE(bf16_gather.yaml.find("--fp8-param-gather (without --fp8-format no"), std::string::npos)
      << bf16_gather.yaml;
  std::string replicated = launch("--fp8-format hybrid --fp8-param-gather");
  replicated.erase(replicated.find("--use-distributed-optimizer "), 28);
  expect_import_rejects([&] { importers::import_megatron(replicated, "launch.sh", {}); },
                        {"--fp8-param-gather", "distributed optimizer", "add --use-distributed-optimizer"});
  // Under --use-torch-fsdp2 Megatron-LM turns it off: said, and written off so that no profile's
  // default gathers in FP8 for it.
  std::string fsdp2 = launch("--use-torch-fsdp2 --untie-embeddings-and-output-weights --fp8-format hybrid --fp8-param-gather");
  fsdp2.erase(fsdp2.find("--use-distributed-optimizer "), 28);
  const Loaded fsdp2_gather = megatron(fsdp2);
  EXPECT_FALSE(fsdp2_gather.plan.parallel.fp8_param_gather);
  EXPECT_TRUE(mentions(fsdp2_gather.imported.not_imported, "--use-torch-fsdp2")) << fsdp2_gather.yaml;
  std::string none = launch();
  none.erase(none.find("--bf16 "), 7);
  expect_import_rejects([&] { importers::import_megatron(none, "launch.sh", {}); }, {"no --bf16", "FP32", "add --bf16"});
}

// --fp8-dot-product-attention: the attention core in FP8, per-tensor under the delayed and
// current-scaling recipes, MXFP8 under MXFP8's (Transformer Engine's fp8_dpa); the preset must
// hold a published FP8 attention rate (Blackwell's do, from cuDNN-frontend's GB200 benchmark).
TEST(MegatronImport, Fp8DotProductAttention) {
  importers::ImportOptions b200;
  b200.preset = "b200";
  const auto import = [&](const std::string& extra) {
    return load_imported(importers::import_megatron(launch(extra), "launch.sh", b200));
  };
  const Loaded tensorwise = import("--fp8-format hybrid --fp8-recipe tensorwise --fp8-dot-product-attention");
  EXPECT_TRUE(tensorwise.plan.train.fp8_attention);
  EXPECT_NE(tensorwise.yaml.find("fp8_attention: true"), std::string::npos) << tensorwise.yaml;
  const Loaded mx = import("--fp8-format e4m3 --fp8-recipe mxfp8 --fp8-dot-product-attention");
  EXPECT_TRUE(mx.plan.train.fp8_attention);
  EXPECT_EQ(mx.plan.train.low_precision, LowPrecision::Mxfp8);
  EXPECT_FALSE(import("--fp8-format hybrid --fp8-recipe tensorwise").plan.train.fp8_attention);
  const Loaded bf16 = import("--fp8-dot-product-attention");
  EXPECT_FALSE(bf16.plan.train.fp8_attention);
  EXPECT_NE(bf16.yaml.find("--fp8-dot-product-attention (without"), std::string::npos)
      << bf16.yaml;
  expect_import_rejects(
      [&] { importers::import_megatron(launch("--fp8-format e4m3 --fp8-recipe blockwise --fp8-dot-product-attention"), "launch.sh", b200); },
      {"--fp8-dot-product-attention", "blockwise", "remove it"});
  // The H100 preset has no published FP8 attention figure: one line naming the key and the fix.
  expect_import_rejects(
      [] { load_imported(importers::import_megatron(launch("--fp8-format hybrid --fp8-recipe tensorwise --fp8-dot-product-attention"), "launch.sh", {})); },
      {"hardware.attention_fp8_fwd_tflops", "no published rate", "train.fp8_attention=false"});
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
