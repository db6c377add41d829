#include "vocabulary/op.hpp"

namespace stepsim::ops {

const char* to_string(OpKind k) {
  switch (k) {
    case OpKind::Forward: return "F";
    case OpKind::Backward: return "B";
    case OpKind::BackwardInput: return "B_input";
    case OpKind::WeightGrad: return "W";
    case OpKind::ForwardBackward: return "F&B";
    case OpKind::Attention: return "attention";
    case OpKind::DenseMlp: return "dense_mlp";
    case OpKind::MoeGemm: return "moe_gemm";
    case OpKind::SharedExpert: return "shared_expert";
    case OpKind::Router: return "router";
    case OpKind::Embedding: return "embedding";
    case OpKind::Head: return "head";
    case OpKind::NonMatmul: return "nonmatmul";
    case OpKind::Optimizer: return "optimizer";
    case OpKind::OtherCompute: return "compute";
    case OpKind::PpSend: return "pp_send";
    case OpKind::PpRecv: return "pp_recv";
    case OpKind::PpSendRecv: return "pp_sendrecv";
    case OpKind::EpDispatch: return "ep_dispatch";
    case OpKind::EpCombine: return "ep_combine";
    case OpKind::DpAllGather: return "dp_allgather";
    case OpKind::DpReduceScatter: return "dp_reducescatter";
    case OpKind::DpAllReduce: return "dp_allreduce";
    case OpKind::FsdpAllGather: return "fsdp_allgather";
    case OpKind::FsdpReduceScatter: return "fsdp_reducescatter";
    case OpKind::TpAllGather: return "tp_allgather";
    case OpKind::TpReduceScatter: return "tp_reducescatter";
    case OpKind::TpAllGatherRing: return "tp_allgather_ring";
    case OpKind::TpReduceScatterSplit: return "tp_reducescatter_split";
    case OpKind::TpAllGatherWgrad: return "tp_allgather_wgrad";
    case OpKind::CpAllGather: return "cp_allgather";
    case OpKind::CpReduceScatter: return "cp_reducescatter";
    case OpKind::OtherComm: return "comm";
    case OpKind::Count_: break;
  }
  return "?";
}

const char* to_string(Phase p) {
  switch (p) {
    case Phase::None: return "";
    case Phase::Forward: return "fwd";
    case Phase::Backward: return "bwd";
    case Phase::Weight: return "wgrad";
  }
  return "?";
}

CommClass comm_class(OpKind k) {
  switch (k) {
    case OpKind::PpSend:
    case OpKind::PpRecv:
    case OpKind::PpSendRecv: return CommClass::Pp;
    case OpKind::EpDispatch:
    case OpKind::EpCombine: return CommClass::Ep;
    case OpKind::DpAllGather:
    case OpKind::DpReduceScatter:
    case OpKind::DpAllReduce:
    case OpKind::FsdpAllGather:
    case OpKind::FsdpReduceScatter: return CommClass::Dp;
    case OpKind::TpAllGather:
    case OpKind::TpReduceScatter:
    case OpKind::TpAllGatherRing:
    case OpKind::TpReduceScatterSplit:
    case OpKind::TpAllGatherWgrad: return CommClass::Tp;
    case OpKind::CpAllGather:
    case OpKind::CpReduceScatter: return CommClass::Cp;
    case OpKind::OtherComm: return CommClass::Other;
    default: return CommClass::None;
  }
}

bool is_comm_kind(OpKind k) { return comm_class(k) != CommClass::None; }

}  // namespace stepsim::ops
