// Tensor and context parallelism, ZeRO-2: bytes, FLOPs and memory of the model workload against
// closed forms worked out here by hand (Megatron TP with sequence parallelism; CP's three exchange
// types as Transformer Engine runs them; see workloads/traffic/model_parallel_comm.hpp).
#include <gtest/gtest.h>

#include <algorithm>
#include <map>

#include "simulator/config/config_loader.hpp"
#include "vocabulary/op_sink.hpp"
#include "simulator/roofline/roofline.hpp"
#include "workloads/model/model_workload.hpp"
#include "vocabulary/config_error.hpp"
#include "tests/config/config_test_util.hpp"
#include "workloads/memory/activation_bytes.hpp"
#include "workloads/memory/memory_estimate.hpp"
#include "workloads/layers/layer_work.hpp"
#include "workloads/traffic/model_parallel_comm.hpp"

namespace stepsim {
namespace {

using ops::OpKind;

// Llama 3.1 8B (HF config): hidden 4096, 32 layers, 32 heads, 8 KV heads of 128, FFN 14336.
constexpr double kHidden = 4096, kSeq = 8192;

Plan llama8b(std::vector<std::string> sets) {
  // The speed-of-light model: FLOPs at the stated rate, so FLOP conservation shows in the times.
  std::vector<std::string> all = {"cluster.nodes=1", "parallel.pp=1", "train.global_batch=4",
                                  "parallel.microbatches=2", "sim.compute=speed-of-light"};
  all.insert(all.end(), sets.begin(), sets.end());
  return load_plan(std::string(STEPSIM_SOURCE_DIR) + "/workloads/llama-3.1-8b.yaml", all);
}

struct Emitted {
  double compute_flops = 0;                   // FP8-equivalent work on the compute stream
  std::map<OpKind, int> ops;                  // comm ops by kind
  std::map<OpKind, std::vector<double>> out;  // bytes of each outgoing flow, by kind
};

// Emits one GPU's whole program, as the engine would fetch it.
Emitted emit(const ModelWorkload& w, int64_t gpu) {
  Emitted e;
  std::vector<ops::StreamQueue> queues(static_cast<size_t>(w.num_streams()));
  ops::OpSink sink(uint32_t(gpu), queues, w.plan().hardware.fp8_tflops * 1e12, w.plan().hardware.bf16_tflops * 1e12);
  const auto prog = w.program(gpu);
  while (prog->emit_next(sink)) {
    for (auto& q : queues) {
      size_t flow = 0;
      for (const auto& op : q.ops) {
        if (!op.comm) {
          e.compute_flops += op.work_flops;
        } else {
          ++e.ops[op.tag.kind];
          for (int i = 0; i < op.n_out; ++i) e.out[op.tag.kind].push_back(q.flows[flow + size_t(i)].bytes);
        }
        flow += size_t(op.n_out + op.n_in);
      }
      q.ops.clear();
      q.deps.clear();
      q.flows.clear();
    }
  }
  return e;
}

TEST(TensorParallel, BytesPerLayerEqualTheClosedForm) {
  // 8 GPUs, TP 8, one replica of 4 sequences in 2 microbatches of 2.
  const Plan p = llama8b({"parallel.tp=8"});
  const ModelWorkload w(p);
  const Emitted e = emit(w, 3);
  // Per layer and microbatch: all-gather + reduce-scatter around attention and MLP, forward and
  // backward (4 all-gathers and 4 reduce-scatters), and in the backward the input of each block
  // gathered again for its weight gradient (Megatron keeps only the sequence shard): 2 more
  // all-gathers; 32 layers x 2 microbatches.
  EXPECT_EQ(e.ops.at(OpKind::TpAllGather), 4 * 32 * 2);
  EXPECT_EQ(e.ops.at(OpKind::TpReduceScatter), 4 * 32 * 2);
  EXPECT_EQ(e.ops.at(OpKind::TpAllGatherWgrad), 2 * 32 * 2);
  // Each sends (tp-1)/tp of the gathered [2 x 8192 tokens, 4096] BF16 tensor to its ring successor.
  const double bytes = 7.0 / 8.0 * 2 * kSeq * kHidden * 2;
  for (const auto kind : {OpKind::TpAllGather, OpKind::TpReduceScatter, OpKind::TpAllGatherWgrad})
    for (const double b : e.out.at(kind)) EXPECT_DOUBLE_EQ(b, bytes);
  // The roofline's closed form: the same 640 collectives per GPU.
  const Roofline r = compute_roofline(p);
  EXPECT_DOUBLE_EQ(r.tpcp.tp_collectives, 640);
  EXPECT_DOUBLE_EQ(r.tpcp.tp_bytes_per_collective, bytes);
  EXPECT_NEAR(r.tp_comm_s, 640 * bytes / (p.hardware.nvlink_GBps * 1e9), 1e-12);
  // tp_comm_overlap moves the same collectives as userbuffers' pipelines: ring exchanges for the
  // 2 x 2 all-gathers per layer on the critical path, 2 split reduce-scatters (3 splits, then 1)
  // per forward block, the rest as before.
  const Emitted u = emit(ModelWorkload(llama8b({"parallel.tp=8", "parallel.tp_comm_overlap=true"})), 3);
  EXPECT_EQ(u.ops.at(OpKind::TpAllGatherRing), 4 * 32 * 2);
  EXPECT_EQ(u.ops.at(OpKind::TpReduceScatterSplit), 4 * 32 * 2);
  EXPECT_EQ(u.ops.at(OpKind::TpReduceScatter), 2 * 32 * 2);
  EXPECT_EQ(u.ops.at(OpKind::TpAllGatherWgrad), 2 * 32 * 2);
  EXPECT_EQ(u.ops.count(OpKind::TpAllGather), 0u);
  double split_bytes = 0;
  for (const double b : u.out.at(OpKind::TpReduceScatterSplit)) split_bytes += b;
  EXPECT_NEAR(split_bytes, 2 * 32 * 2 * bytes, 1e-6 * bytes);
  for (const double b : u.out.at(OpKind::TpAllGatherRing)) EXPECT_DOUBLE_EQ(b, bytes);
}

// Llama 3.1 8B's 8 KV heads on TP 16 (two nodes): Megatron keeps each KV head whole on 16 / 8 = 2
// ranks; every rank computes 1/16 of the QKV projection's columns and all-gathers its whole output
// over TP (the gradient is reduce-scattered in the backward): per layer and microbatch one more
// all-gather and one more reduce-scatter, each (tp-1)/tp x tokens x (32 x 128 + 8 x 256) x 2 bytes.
TEST(TensorParallel, FewerKvHeadsThanTpAreReplicatedWithTheirAllGather) {
  const Plan p = llama8b({"cluster.nodes=2", "parallel.tp=16", "train.global_batch=2", "parallel.microbatches=2"});
  const Emitted e = emit(ModelWorkload(p), 9);
  EXPECT_EQ(e.ops.at(OpKind::TpAllGather), 5 * 32 * 2);  // 4 around the blocks + the QKV output's
  EXPECT_EQ(e.ops.at(OpKind::TpReduceScatter), 5 * 32 * 2);
  const double tokens = 1 * kSeq;  // one sequence per microbatch
  const double hidden = 15.0 / 16.0 * tokens * kHidden * 2;
  const double qkv = 15.0 / 16.0 * tokens * (32 * 128 + 8 * 256) * 2;
  int qkv_seen = 0;
  for (const double b : e.out.at(OpKind::TpAllGather)) {
    EXPECT_TRUE(b == hidden || b == qkv) << b;
    qkv_seen += b == qkv ? 1 : 0;
  }
  EXPECT_EQ(qkv_seen, 32 * 2);
  const Roofline r = compute_roofline(p);
  EXPECT_DOUBLE_EQ(r.tpcp.tp_qkv_bytes_per_gpu, 2 * 32 * 2 * qkv);
  // 10 hidden-sized collectives per layer and microbatch (the 8 around the blocks and the 2 weight-
  // gradient re-gathers) and the QKV pair.
  EXPECT_DOUBLE_EQ(r.tpcp.tp_bytes_per_gpu, 10 * 32 * 2 * hidden + 2 * 32 * 2 * qkv);
  // Each rank keeps one KV head's K and V, not half of one: per token of the replica (before the
  // 1/tp of sequence parallelism) 2 x 8 heads x 256 x 2 bytes more than TP 8 (heads split).
  const Plan p8 = llama8b({"parallel.tp=8"});
  EXPECT_DOUBLE_EQ(layer_activations(p, false).saved_per_token - layer_activations(p8, false).saved_per_token,
                   8.0 * 256 * 2);
  // Megatron refuses KV heads that neither split over TP nor divide it: 12 of 96 heads on TP 8.
  const std::string msg = test::config_error_of([] {
    llama8b({"model.num_attention_heads=96", "model.num_key_value_heads=12", "model.head_dim=128", "parallel.tp=8"});
  });
  EXPECT_NE(msg.find("parallel.tp: 8 neither divides nor is a multiple of the 12 key-value heads"), std::string::npos)
      << msg;
}

TEST(TensorParallel, KeepsTotalFlops) {
  // 8 sequences on 8 GPUs: 8 replicas of one (tp 1) or one TP group running all 8 in 2 microbatches.
  const Plan p1 = llama8b({"train.global_batch=8", "parallel.microbatches=1"});
  const Plan p8 = llama8b({"train.global_batch=8", "parallel.microbatches=2", "parallel.tp=8"});
  const double total1 = emit(ModelWorkload(p1), 0).compute_flops * 8;
  const double total8 = emit(ModelWorkload(p8), 5).compute_flops * 8;
  EXPECT_NEAR(total8 / total1, 1.0, 1e-12);
  // Hand check of the scale: 6 N per token for the 8 x 8192 tokens plus attention, N ~ 7.5e9.
  EXPECT_GT(total1, 6 * 7.0e9 * 8 * kSeq);
}

// The FP8 GEMMs' weights, as the same stage 0 of Llama 3.1 8B holds them (counted below): Transformer
// Engine's cached copy beside the BF16 weights (software.fp8_weight_cache) at 1 byte a value plus its
// transpose on an H100 (its FP8 GEMMs read one layout), 1 on a B200; with FP8 parameters
// (parallel.fp8_param_gather) that copy instead of the BF16; MXFP8 keeps both block layouts, 2 x
// (1 + 1/32); torchao (torchtitan) caches nothing.
TEST(TensorParallel, Fp8WeightsHeldAsTheFrameworkKeepsThem) {
  // The busiest rank's layers, and its embedding (rank 0) or LM head (128256 x 4096) and final norm.
  const double matmuls = 41943040.0 + 176160768.0, norms = 8192, embedding = 525336576.0;
  struct Held {
    double weights, all, fp8;
  };
  const auto held = [&](std::vector<std::string> extra) {
    std::vector<std::string> sets = {"cluster.nodes=8", "parallel.pp=4", "train.global_batch=512", "parallel.microbatches=16",
                                     "software.profile=megatron-bridge"};
    sets.insert(sets.end(), extra.begin(), extra.end());
    const MemoryEstimate m = estimate_memory(load_plan(std::string(STEPSIM_SOURCE_DIR) + "/workloads/llama-3.1-8b.yaml", sets));
    const double layers = double(m.layers);
    const double all = layers * (matmuls + norms) + (m.rank == 0 ? embedding : 0.0) + (m.lm_head ? embedding + 4096 : 0.0);
    return Held{m.fixed.weights_bytes, all, layers * matmuls};
  };
  const Held bf16 = held({"train.precision=bf16", "parallel.fp8_stash=false"});
  EXPECT_DOUBLE_EQ(bf16.weights, 2 * bf16.all);
  // Without --fp8-param-gather: BF16 weights and Transformer Engine's cached FP8 copy (and its
  // transpose on Hopper) beside them.
  const Held h100 = held({"train.precision=fp8", "train.fp8_recipe=tensorwise", "hardware.preset=h100-sxm",
                          "parallel.fp8_param_gather=false"});
  EXPECT_DOUBLE_EQ(h100.weights, 2 * h100.all + 2 * h100.fp8);
  const Held b200 = held({"train.precision=fp8", "train.fp8_recipe=tensorwise", "hardware.preset=b200",
                          "parallel.fp8_param_gather=false"});
  EXPECT_DOUBLE_EQ(b200.weights, 2 * b200.all + 1 * b200.fp8);
  // With it (the megatron-bridge profile's default for per-tensor FP8, as its precision configs set
  // it): the FP8 GEMMs' weights in FP8 alone, one byte a value.
  const Held params = held({"train.precision=fp8", "train.fp8_recipe=tensorwise", "hardware.preset=b200"});
  EXPECT_DOUBLE_EQ(params.weights, 2 * params.all - 1 * params.fp8);
  const Held mx = held({"train.precision=mxfp8", "hardware.preset=b200", "parallel.fp8_param_gather=true"});
  EXPECT_DOUBLE_EQ(mx.weights, 2 * mx.all + (2 * (1 + 1.0 / 32) - 2) * mx.fp8);
  const Held titan = held({"train.precision=fp8", "train.fp8_recipe=tensorwise", "software.profile=torchtitan"});
  EXPECT_DOUBLE_EQ(titan.weights, 2 * titan.all);
}

TEST(TensorParallel, WeightsPerGpuDropByTp) {
  // Llama 3.1 8B on 4 stages (stage 0: its layers + the embedding). Per layer: attention
  // q, o 4096 x 4096, k, v 4096 x 1024 = 41,943,040; FFN 3 x 4096 x 14336 = 176,160,768; two
  // RMSNorms 8,192 (replicated). Embedding 128256 x 4096 = 525,336,576 (vocabulary-parallel).
  const std::vector<std::string> sets = {"cluster.nodes=8", "parallel.pp=4", "train.global_batch=512",
                                         "parallel.microbatches=16"};
  Plan p1 = load_plan(std::string(STEPSIM_SOURCE_DIR) + "/workloads/llama-3.1-8b.yaml", sets);
  // Same microbatch (2 sequences) per replica: 2 replicas of 8 GPUs hold 64 sequences.
  auto s8 = sets;
  s8.push_back("parallel.tp=8");
  s8.push_back("train.global_batch=64");
  Plan p8 = load_plan(std::string(STEPSIM_SOURCE_DIR) + "/workloads/llama-3.1-8b.yaml", s8);
  const double matmuls = 41943040.0 + 176160768.0, norms = 8192, embedding = 525336576.0;
  const MemoryEstimate m1 = estimate_memory(p1), m8 = estimate_memory(p8);
  ASSERT_EQ(m1.rank, 0);
  ASSERT_EQ(m8.rank, 0);
  ASSERT_EQ(m8.layers, m1.layers);  // the partition's choice (9: the first stage holds no head)
  const double layers = double(m1.layers);
  EXPECT_DOUBLE_EQ(m1.fixed.weights_bytes, 2 * (layers * (matmuls + norms) + embedding));
  EXPECT_DOUBLE_EQ(m8.fixed.weights_bytes, 2 * (layers * (matmuls / 8 + norms) + embedding / 8));
  // Activations: sequence parallelism shards them all over TP (Korthikanti et al.).
  EXPECT_EQ(m8.in_flight_microbatches, m1.in_flight_microbatches);
  EXPECT_NEAR(m8.activations_bytes, m1.activations_bytes / 8, 1e-9 * m1.activations_bytes);
}

TEST(ContextParallel, EachCommTypeMovesTheBytesOfItsClosedForm) {
  // CP 4 x TP 2 on 8 GPUs, 2 microbatches of 2 sequences. A TP rank holds 4 of the 8 KV heads:
  // 4 x (128 + 128) x 2 bytes = 2048 bytes of K and V per token; c, what one GPU sends to gather
  // a microbatch's K and V, is (cp - 1) / cp of them over 2 x 8192 tokens.
  const double c = 3.0 / 4.0 * 2 * kSeq * 2048;
  const double per_layer_mb = 32 * 2;
  // p2p (Megatron's default): a ring step an op. The forward's 3 exchanges move c / 3 each (c in
  // all); the backward's 4 move K/V alone, K/V with dK/dV twice, dK/dV alone: c/3, 2c/3, 2c/3, c/3
  // (2c in all).
  const Plan p2p = llama8b({"parallel.tp=2", "parallel.cp=4"});
  ASSERT_EQ(p2p.parallel.cp_comm_type, CpCommType::P2p);
  const Emitted ring = emit(ModelWorkload(p2p), 6);
  EXPECT_EQ(ring.ops.at(OpKind::CpRing), per_layer_mb * 7);
  EXPECT_EQ(ring.ops.count(OpKind::CpAllGather), 0u);
  const auto& steps = ring.out.at(OpKind::CpRing);
  EXPECT_EQ(std::count(steps.begin(), steps.end(), c / 3), per_layer_mb * 5);
  EXPECT_EQ(std::count(steps.begin(), steps.end(), 2 * c / 3), per_layer_mb * 2);
  // allgather: K/V gathered in the forward and again in the backward, dK/dV reduce-scattered: c each.
  const Plan ag = llama8b({"parallel.tp=2", "parallel.cp=4", "parallel.cp_comm_type=allgather"});
  const Emitted gather = emit(ModelWorkload(ag), 6);
  EXPECT_EQ(gather.ops.at(OpKind::CpAllGather), per_layer_mb * 2);
  EXPECT_EQ(gather.ops.at(OpKind::CpReduceScatter), per_layer_mb);
  for (const double b : gather.out.at(OpKind::CpAllGather)) EXPECT_DOUBLE_EQ(b, c);
  for (const double b : gather.out.at(OpKind::CpReduceScatter)) EXPECT_DOUBLE_EQ(b, c);
  // a2a: each GPU holds a quarter of the tokens; Q, K, V of a token on a TP rank are 16 heads x 128
  // + 2048 / 2 values (6144 bytes), the output 16 x 128 (4096 bytes); an all-to-all sends 3/4 of
  // them, a third to each of the 3 other CP ranks. Forward Q,K,V then O; backward dO then dQ,dK,dV.
  const Plan a2a = llama8b({"parallel.tp=2", "parallel.cp=4", "parallel.cp_comm_type=a2a"});
  const Emitted swap = emit(ModelWorkload(a2a), 6);
  EXPECT_EQ(swap.ops.at(OpKind::CpAllToAll), per_layer_mb * 4);
  const double tokens = 2 * kSeq / 4, qkv = 3.0 / 4.0 * tokens * 6144 / 3, o = 3.0 / 4.0 * tokens * 4096 / 3;
  const auto& flows = swap.out.at(OpKind::CpAllToAll);
  EXPECT_EQ(flows.size(), size_t(per_layer_mb * 4 * 3));
  EXPECT_EQ(std::count(flows.begin(), flows.end(), qkv), per_layer_mb * 2 * 3);
  EXPECT_EQ(std::count(flows.begin(), flows.end(), o), per_layer_mb * 2 * 3);
  // The roofline counts the same bytes.
  EXPECT_DOUBLE_EQ(compute_roofline(p2p).tpcp.cp_bytes_per_gpu, per_layer_mb * 3 * c);
  EXPECT_DOUBLE_EQ(compute_roofline(ag).tpcp.cp_bytes_per_gpu, per_layer_mb * 3 * c);
  EXPECT_DOUBLE_EQ(compute_roofline(a2a).tpcp.cp_bytes_per_gpu, per_layer_mb * 2 * 3 * (qkv + o));
  // CP moves tensors, not FLOPs: the same compute whichever way, and TP collectives cover this CP
  // rank's quarter of the tokens.
  EXPECT_NEAR(swap.compute_flops / ring.compute_flops, 1.0, 1e-12);
  EXPECT_NEAR(gather.compute_flops / ring.compute_flops, 1.0, 1e-12);
  for (const double b : ring.out.at(OpKind::TpAllGather)) EXPECT_DOUBLE_EQ(b, 1.0 / 2.0 * 2 * kSeq / 4 * kHidden * 2);
  // TP x CP split one replica's work over 8 GPUs: 4 sequences cost half of 8 replicas of one.
  const Plan one = llama8b({"train.global_batch=8", "parallel.microbatches=1"});
  const double total = ring.compute_flops * 8, total_one = emit(ModelWorkload(one), 0).compute_flops * 8;
  EXPECT_NEAR(total / (total_one / 2), 1.0, 1e-12);
}

TEST(ContextParallel, A2aNeedsHeadsThatCpDivides) {
  // Llama 3.1 8B at TP 2: 16 query and 4 K/V heads a rank. CP 4 divides both; CP 8 not the K/V
  // heads (Transformer Engine asserts it), so a2a is refused and p2p named as the fix.
  EXPECT_NO_THROW(llama8b({"parallel.tp=2", "parallel.cp=4", "parallel.cp_comm_type=a2a"}));
  try {
    llama8b({"cluster.nodes=2", "parallel.tp=2", "parallel.cp=8", "parallel.cp_comm_type=a2a", "train.global_batch=2",
             "parallel.microbatches=1"});
    FAIL() << "a2a with 4 K/V heads over CP 8 accepted";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("parallel.cp_comm_type"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("p2p"), std::string::npos) << e.what();
  }
  // Without CP the key has nothing to choose: refused unless left at its default.
  EXPECT_THROW(llama8b({"parallel.cp_comm_type=a2a", "train.global_batch=8", "parallel.microbatches=1"}), ConfigError);
  EXPECT_NO_THROW(llama8b({"parallel.cp_comm_type=p2p", "train.global_batch=8", "parallel.microbatches=1"}));
}

TEST(ZeroTwo, ReducesGradientsEveryMicrobatchAndShardsThem) {
  // 1F1B on 4 stages of Llama 8B, 16 replicas: ZeRO-1 reduce-scatters each rank's gradients once,
  // ZeRO-2 once per microbatch; ZeRO-2 keeps FP32 gradients only for its 1/16 shard.
  const std::vector<std::string> sets = {"cluster.nodes=8", "parallel.pp=4", "train.global_batch=512",
                                         "parallel.microbatches=16"};
  const auto path = std::string(STEPSIM_SOURCE_DIR) + "/workloads/llama-3.1-8b.yaml";
  auto s2 = sets;
  s2.push_back("parallel.zero=2");
  const Plan p1 = load_plan(path, sets), p2 = load_plan(path, s2);
  EXPECT_EQ(emit(ModelWorkload(p1), 0).ops.at(OpKind::DpReduceScatter), 1);
  EXPECT_EQ(emit(ModelWorkload(p2), 0).ops.at(OpKind::DpReduceScatter), 16);
  const MemoryEstimate m1 = estimate_memory(p1), m2 = estimate_memory(p2);
  EXPECT_DOUBLE_EQ(m2.fixed.grads_bytes, m1.fixed.grads_bytes / 16);
  EXPECT_DOUBLE_EQ(m2.fixed.weights_bytes, m1.fixed.weights_bytes);
  // Roofline: one all-gather plus 16 reduce-scatters instead of one of each.
  const Roofline r1 = compute_roofline(p1), r2 = compute_roofline(p2);
  EXPECT_NEAR(r2.dp_comm_s, r1.dp.allgather_s + 16 * r1.dp.reducescatter_s, 1e-12);
}

TEST(Hsdp, ShardsInsideAGroupAndAllReducesAcross) {
  // FSDP of Llama 3.1 8B on 64 GPUs (8 nodes) sharded over groups of 8 (one node each), 8 copies.
  // Parameters: 32 x 218,112,000 per layer + embedding and LM head 2 x 525,336,576 + final norm
  // 4,096 = 8,030,261,248 (the model card's 8.03 B).
  const double params = 8030261248.0;
  const std::vector<std::string> sets = {"schedule=fsdp", "parallel.pp=1", "parallel.zero=3",
                                         "parallel.microbatches=2", "train.global_batch=128"};
  const auto path = std::string(STEPSIM_SOURCE_DIR) + "/workloads/llama-3.1-8b.yaml";
  auto hs = sets;
  hs.push_back("parallel.fsdp_shard_size=8");
  const Plan full = load_plan(path, sets), hsdp = load_plan(path, hs);
  EXPECT_DOUBLE_EQ(estimate_memory(full).fixed.weights_bytes, 2 * params / 64);
  EXPECT_DOUBLE_EQ(estimate_memory(hsdp).fixed.weights_bytes, 2 * params / 8);
  // FP32 master weight and two FP32 Adam moments: 12 bytes per parameter of the shard.
  EXPECT_DOUBLE_EQ(estimate_memory(hsdp).fixed.optimizer_bytes, 12 * params / 8);
  // GPU 9's gathers stay on its node (NVLink ring to GPU 10); its shard's gradients are all-reduced
  // once with the 7 other copies (GPUs 1, 9, ..., 57): 2 x 7/8 of the FP32 shard to GPU 17.
  const Emitted e = emit(ModelWorkload(hsdp), 9);
  EXPECT_EQ(e.ops.at(OpKind::DpAllReduce), 1);
  EXPECT_DOUBLE_EQ(e.out.at(OpKind::DpAllReduce).at(0), 2.0 * 7 / 8 * params / 8 * 4);
  for (const double b : e.out.at(OpKind::FsdpAllGather)) EXPECT_GT(b, 0);
  const Roofline r = compute_roofline(hsdp);
  EXPECT_EQ(r.dp.non_expert_ib_nodes, 1);
  EXPECT_NEAR(r.dp.hsdp_allreduce_s, 2.0 * 7 / 8 * params / 8 * 4 / 50e9, 1e-12);
  EXPECT_NEAR(r.dp_comm_s, 2 * r.dp.fsdp_per_microbatch_s + r.dp.hsdp_allreduce_s, 1e-12);
  EXPECT_EQ(compute_roofline(full).dp.hsdp_allreduce_s, 0.0);
}

// The host's calls for the TP and CP collectives, counted by hand from Megatron's sequence
// parallelism: an attention block or dense MLP all-gathers its input and reduce-scatters its output
// in the forward (2), and in the backward all-gathers the output gradient, reduce-scatters the input
// gradient and gathers the input again for the weight gradient (3); an MoE block's experts run at
// expert TP 1 (none). Userbuffers issue them inside the GEMMs (none counted); CP adds its K/V
// all-gather (F) and dK/dV reduce-scatter (B) either way. Current scaling adds an amax all-reduce
// per cast sequence-parallel tensor, from C++: one each way per block.
TEST(TensorParallel, TheHostIssuesEachCollectiveOnce) {
  const auto launches = [](const Plan& p, int64_t layer) {
    const LayerWork w = layer_work(p, layer, 1.0, 0.0);
    std::map<LayerPart, std::pair<double, double>> out;
    for (const LayerPart part : {LayerPart::AttnF, LayerPart::MlpF, LayerPart::AttnB, LayerPart::MlpB})
      out[part] = {w.part(part).collective_launches, w.part(part).looped_collective_launches};
    return out;
  };
  using P = std::pair<double, double>;
  const auto dense = launches(llama8b({"parallel.tp=2", "train.global_batch=8", "train.precision=fp8", "train.fp8_recipe=tensorwise"}), 3);
  EXPECT_EQ(dense.at(LayerPart::AttnF), P(2, 1));
  EXPECT_EQ(dense.at(LayerPart::MlpF), P(2, 1));
  EXPECT_EQ(dense.at(LayerPart::AttnB), P(3, 1));
  EXPECT_EQ(dense.at(LayerPart::MlpB), P(3, 1));
  const auto ub = launches(llama8b({"parallel.tp=2", "parallel.cp=2", "parallel.tp_comm_overlap=true"}), 3);
  EXPECT_EQ(ub.at(LayerPart::AttnF), P(1, 0));  // p2p's one ring step at CP 2 only; BF16: no amax
  EXPECT_EQ(ub.at(LayerPart::MlpB), P(0, 0));
  // No TP: CP's own calls only, as Transformer Engine issues them at CP 4. p2p: a send/recv per
  // ring step, 3 forward and 4 backward (the last sends dK/dV home); allgather: K and V gathered
  // apart, forward and backward, and dK, dV reduce-scattered apart; a2a: one all-to-all before the
  // core and one after.
  const auto cp = launches(llama8b({"parallel.cp=4"}), 3);
  EXPECT_EQ(cp.at(LayerPart::AttnF), P(3, 0));
  EXPECT_EQ(cp.at(LayerPart::AttnB), P(4, 0));
  EXPECT_EQ(cp.at(LayerPart::MlpF), P(0, 0));
  const auto cp_ag = launches(llama8b({"parallel.cp=4", "parallel.cp_comm_type=allgather"}), 3);
  EXPECT_EQ(cp_ag.at(LayerPart::AttnF), P(2, 0));
  EXPECT_EQ(cp_ag.at(LayerPart::AttnB), P(4, 0));
  const auto cp_a2a = launches(llama8b({"parallel.cp=4", "parallel.cp_comm_type=a2a"}), 3);
  EXPECT_EQ(cp_a2a.at(LayerPart::AttnF), P(2, 0));
  EXPECT_EQ(cp_a2a.at(LayerPart::AttnB), P(2, 0));
  // DeepSeek-V3 at TP 2 without userbuffers, current scaling and mla_up_proj recomputed, as
  // docs/megatron-mla-audit.md counts Megatron-Core 0.14: the forward gathers the rope key and the
  // two latents and reduce-scatters the output (4, amax for q_up's and kv_up's inputs: 2); the
  // backward gathers the output gradient, reduce-scatters the two latents' and the rope key's
  // gradients, gathers the latents again for the weight gradients (6) and for the recompute (2);
  // amax for the output gradient and the recompute's two casts (3). The MoE block issues none.
  const Plan ds = load_plan(std::string(STEPSIM_SOURCE_DIR) + "/workloads/published/checks/DSV3-H100-1024-FP8.yaml");
  const auto mla = launches(ds, 10);
  EXPECT_EQ(mla.at(LayerPart::AttnF), P(4, 2));
  EXPECT_EQ(mla.at(LayerPart::AttnB), P(8, 3));
  EXPECT_EQ(mla.at(LayerPart::MlpF), P(0, 0));
  EXPECT_EQ(mla.at(LayerPart::MlpB), P(0, 0));
}

}  // namespace
}  // namespace stepsim
