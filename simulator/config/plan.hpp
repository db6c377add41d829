// The validated description of one training step: model, training, parallelism plan, hardware,
// cluster, scenario and simulation options. Every later stage (roofline, workload, schedule,
// engine, report) reads only this struct, never YAML.
#pragma once

#include <cstdint>
#include <string>

namespace stepsim {

// Hugging Face config.json names, so a model's own config file can be read as-is.
struct ModelConfig {
  std::string name = "model";
  int64_t hidden_size = 0;
  int64_t num_hidden_layers = 0;
  int64_t first_k_dense_replace = 0;   // the first k layers use a dense FFN
  int64_t intermediate_size = 0;       // dense FFN width
  int64_t moe_intermediate_size = 0;   // one expert's FFN width
  int64_t n_routed_experts = 0;        // 0 = dense model
  int64_t n_shared_experts = 0;
  int64_t num_experts_per_tok = 0;
  int64_t n_group = 1;                 // expert groups (DeepSeek maps one group to one node)
  int64_t topk_group = 1;              // groups a token may use (node-limited routing)
  int64_t num_attention_heads = 0;
  int64_t num_key_value_heads = 0;     // for non-MLA attention; 0 = same as heads
  int64_t head_dim = 0;                // for non-MLA attention; 0 = hidden / heads
  int64_t q_lora_rank = 0;             // 0 = no query compression
  int64_t kv_lora_rank = 0;            // 0 = standard (non-MLA) attention
  int64_t qk_nope_head_dim = 0;
  int64_t qk_rope_head_dim = 0;
  int64_t v_head_dim = 0;
  int64_t vocab_size = 0;
  bool tie_word_embeddings = false;

  bool is_moe() const { return n_routed_experts > 0; }
  bool is_mla() const { return kv_lora_rank > 0; }
  int64_t moe_layers() const { return is_moe() ? num_hidden_layers - first_k_dense_replace : 0; }
  int64_t dense_layers() const { return num_hidden_layers - moe_layers(); }
};

struct TrainConfig {
  int64_t global_batch = 0;  // sequences per step
  int64_t seq_len = 0;       // tokens per sequence
  int64_t tokens_per_step() const { return global_batch * seq_len; }
};

enum class Schedule { OneFOneB, DualPipeV, Fsdp };

struct ParallelConfig {
  int64_t pp = 1;            // pipeline ranks (DualPipeV: ranks, each holding two stages)
  int64_t ep = 1;            // expert-parallel group size
  int64_t microbatches = 1;  // per pipeline (per data-parallel replica)
  int64_t zero = 1;          // 1 = ZeRO-1 (optimizer states sharded), 3 = FSDP
  Schedule schedule = Schedule::DualPipeV;
};

// Achievable rates of one GPU and its links. Speed-of-light vs calibrated is only a matter of
// which numbers sit here, never a code path.
struct HardwareConfig {
  std::string name = "H800";
  double fp8_tflops = 0;
  double bf16_tflops = 0;
  double ib_GBps = 0;          // per GPU NIC, per direction
  double nvlink_GBps = 0;      // per GPU, per direction
  double ib_latency_s = 0;     // one hop through the fabric
  double nvlink_latency_s = 0;
  int64_t sms = 132;
  int64_t comm_sms = 0;        // SMs communication kernels take from compute while in flight
  double nonmatmul_s_per_token_layer = 0;  // norms, SwiGLU, casts; 0 in speed-of-light mode
};

struct ClusterConfig {
  int64_t nodes = 0;
  int64_t gpus_per_node = 0;
  int64_t gpus() const { return nodes * gpus_per_node; }
};

enum class Routing { Balanced, DeepSeek };

struct ScenarioConfig {
  Routing routing = Routing::Balanced;
  uint64_t seed = 1;
  int64_t routing_samples = 200000;  // Monte-Carlo tokens for DeepSeek routing statistics
};

enum class SimMode { Auto, Full, Reduced };

struct SimConfig {
  SimMode mode = SimMode::Auto;
};

enum class WorkloadKind { Model, Synthetic };

// An abstract pipeline for studying a schedule in isolation: fixed per-chunk times.
struct WorkloadConfig {
  WorkloadKind kind = WorkloadKind::Model;
  double f_s = 1;           // forward of one chunk, one microbatch
  double b_s = 2;           // whole backward of one chunk (input + weight gradient)
  double w_s = 1;           // the weight-gradient part of b_s
  double fb_s = 0;          // an overlapped F&B pair; 0 = f_s + b_s (no overlap gain)
  double send_bytes = 0;    // per pipeline send; 0 = no communication
};

struct Plan {
  std::string source;  // the config file it came from, for messages
  ModelConfig model;
  TrainConfig train;
  ParallelConfig parallel;
  HardwareConfig hardware;
  ClusterConfig cluster;
  ScenarioConfig scenario;
  SimConfig sim;
  WorkloadConfig workload;

  // Derived layout. GPUs are numbered node-major: gpu = node * gpus_per_node + local.
  int64_t gpus() const { return cluster.gpus(); }
  int64_t dp() const { return gpus() / parallel.pp; }              // replicas of the pipeline
  int64_t stages() const { return parallel.schedule == Schedule::DualPipeV ? 2 * parallel.pp : parallel.pp; }
  int64_t edp() const { return dp() / parallel.ep; }               // expert data-parallel degree
  double sequences_per_replica() const { return double(train.global_batch) / double(dp()); }
};

const char* to_string(Schedule s);
const char* to_string(Routing r);
const char* to_string(SimMode m);

}  // namespace stepsim
