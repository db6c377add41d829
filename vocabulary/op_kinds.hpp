// What an op does, for reports and traces: the workload's vocabulary, one row per kind. The
// engine stores a tag's kind and passes it through untouched; it reads only the tag's
// communication class (vocabulary/comm_classes.hpp), which OpSink fills from the kind's row.
#pragma once

#include <cstddef>
#include <cstdint>
#include <iterator>

#include "vocabulary/comm_classes.hpp"

namespace stepsim::ops {

enum class OpKind : uint8_t {
  // compute: whole pipeline chunks (synthetic workload)
  Forward,
  Backward,         // input and weight gradient together
  BackwardInput,    // input gradient only (zero-bubble split)
  WeightGrad,       // deferred weight gradient
  ForwardBackward,  // an overlapped F&B pair as one block
  // compute: model layers
  Attention,
  DenseMlp,
  MoeGemm,
  SharedExpert,
  Router,
  Embedding,
  Head,
  NonMatmul,
  Optimizer,
  OtherCompute,
  // communication
  PpSend,
  PpRecv,
  PpSendRecv,
  EpDispatch,
  EpCombine,
  DpAllGather,
  DpReduceScatter,
  DpAllReduce,
  FsdpAllGather,
  FsdpReduceScatter,
  TpAllGather,       // tensor parallel (sequence parallel): a block's input
  TpReduceScatter,   // its output
  TpAllGatherRing,   // parallel.tp_comm_overlap: the all-gather as a ring exchange pipelined with its GEMM
  TpReduceScatterSplit,  // parallel.tp_comm_overlap: the GEMM's output reduce-scattered split by split
  TpAllGatherWgrad,  // backward: the block's input gathered again for the column-parallel weight gradient
  CpAllGather,       // context parallel (parallel.cp_comm_type allgather): K and V of the whole sequence
  CpReduceScatter,   // their gradients
  CpRing,            // p2p: K/V passed around the CP ring (backward: with dK/dV), beside the attention
  CpAllToAll,        // a2a: Q, K, V (or the output, or their gradients) from a sequence to a head split
  EtpAllGather,      // expert tensor parallel: the rows an all-to-all brought, gathered over the expert-TP group
  EtpReduceScatter,  // the experts' outputs (or input gradients), reduce-scattered over it
  HostOffload,       // a layer's saved activations copied to host memory (parallel.cpu_offload_layers)
  HostReload,        // and copied back before its backward
  OtherComm,
  Count_
};

struct OpKindInfo {
  const char* name;        // "ep_dispatch": the trace's `op` argument, messages
  CommClass comm_class;    // None: a compute kind
  const char* trace_kind;  // the trace's `kind` argument: "dispatch", "attention", "chunk", ...
  const char* what;        // a compute op in trace event names: "attn"; "chunk" for the others
  const char* stream;      // a comm op's stream in trace thread names: "ep all-to-all"; "comm" for the others
  const char* chunk_pass;  // a whole-chunk kind's pass when its tag has no phase: "F", "B", "W", "F&B"; else ""
};

inline constexpr OpKindInfo kOpKindTable[] = {
    // name              class              trace kind              what              stream                          pass
    {"F", CommClass::None, "chunk", "chunk", "comm", "F"},
    {"B", CommClass::None, "chunk", "chunk", "comm", "B"},
    {"B_input", CommClass::None, "chunk", "chunk", "comm", "B"},
    {"W", CommClass::None, "chunk", "chunk", "comm", "W"},
    {"F&B", CommClass::None, "chunk", "chunk", "comm", "F&B"},
    {"attention", CommClass::None, "attention", "attn", "comm", ""},
    {"dense_mlp", CommClass::None, "gemm", "dense-mlp", "comm", ""},
    {"moe_gemm", CommClass::None, "gemm", "moe-mlp", "comm", ""},
    {"shared_expert", CommClass::None, "gemm", "shared-expert", "comm", ""},
    {"router", CommClass::None, "gemm", "router", "comm", ""},
    {"embedding", CommClass::None, "embedding", "embedding", "comm", ""},
    {"head", CommClass::None, "gemm", "head", "comm", ""},
    {"nonmatmul", CommClass::None, "nonmatmul", "nonmatmul", "comm", ""},
    {"optimizer", CommClass::None, "optimizer", "optimizer", "comm", ""},
    {"compute", CommClass::None, "compute", "compute", "comm", ""},
    {"pp_send", CommClass::Pp, "pp-send", "chunk", "pp send", ""},
    {"pp_recv", CommClass::Pp, "pp-recv", "chunk", "pp recv", ""},
    {"pp_sendrecv", CommClass::Pp, "pp-sendrecv", "chunk", "pp send", ""},
    {"ep_dispatch", CommClass::Ep, "dispatch", "chunk", "ep all-to-all", ""},
    {"ep_combine", CommClass::Ep, "combine", "chunk", "ep all-to-all", ""},
    {"dp_allgather", CommClass::Dp, "zero-allgather", "chunk", "dp all-gather", ""},
    {"dp_reducescatter", CommClass::Dp, "zero-reducescatter", "chunk", "dp reduce", ""},
    {"dp_allreduce", CommClass::Dp, "dp-allreduce", "chunk", "dp reduce", ""},
    {"fsdp_allgather", CommClass::Dp, "fsdp-allgather", "chunk", "dp all-gather", ""},
    {"fsdp_reducescatter", CommClass::Dp, "fsdp-reducescatter", "chunk", "dp reduce", ""},
    {"tp_allgather", CommClass::Tp, "tp-allgather", "chunk", "tp all-gather / reduce-scatter", ""},
    {"tp_reducescatter", CommClass::Tp, "tp-reducescatter", "chunk", "tp all-gather / reduce-scatter", ""},
    {"tp_allgather_ring", CommClass::Tp, "tp-allgather-ring", "chunk", "tp all-gather / reduce-scatter", ""},
    {"tp_reducescatter_split", CommClass::Tp, "tp-reducescatter-split", "chunk", "tp all-gather / reduce-scatter", ""},
    {"tp_allgather_wgrad", CommClass::Tp, "tp-allgather-wgrad", "chunk", "tp all-gather / reduce-scatter", ""},
    {"cp_allgather", CommClass::Cp, "cp-allgather-kv", "chunk", "cp exchange", ""},
    {"cp_reducescatter", CommClass::Cp, "cp-reducescatter-dkv", "chunk", "cp exchange", ""},
    {"cp_ring", CommClass::Cp, "cp-ring-kv", "chunk", "cp exchange", ""},
    {"cp_alltoall", CommClass::Cp, "cp-alltoall", "chunk", "cp exchange", ""},
    {"etp_allgather", CommClass::Ep, "expert-tp-allgather", "chunk", "ep all-to-all", ""},
    {"etp_reducescatter", CommClass::Ep, "expert-tp-reducescatter", "chunk", "ep all-to-all", ""},
    {"host_offload", CommClass::Host, "host-offload", "chunk", "host copy", ""},
    {"host_reload", CommClass::Host, "host-reload", "chunk", "host copy", ""},
    {"comm", CommClass::Other, "comm", "chunk", "comm", ""},
};
static_assert(std::size(kOpKindTable) == size_t(OpKind::Count_), "one row per OpKind");

inline const OpKindInfo& info(OpKind k) { return kOpKindTable[size_t(k)]; }
inline const char* to_string(OpKind k) { return k < OpKind::Count_ ? info(k).name : "?"; }
inline CommClass comm_class(OpKind k) { return k < OpKind::Count_ ? info(k).comm_class : CommClass::None; }
inline bool is_comm_kind(OpKind k) { return comm_class(k) != CommClass::None; }

enum class Phase : uint8_t { None, Forward, Backward, Weight };

const char* to_string(Phase p);

}  // namespace stepsim::ops
