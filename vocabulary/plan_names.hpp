// The names configs use for the plan's enums: one table per enum, which parsing, the list of
// accepted values in messages and to_string all read. The first entry is the default where the key
// is optional.
#pragma once

#include <cstddef>
#include <optional>
#include <string_view>

#include "vocabulary/plan.hpp"

namespace stepsim {

template <typename E>
struct Named {
  E value;
  const char* name;
};
// Schedules: sched::schedule_registry() is their one name table.
// parallel.recompute: one of these shorthands, or a list of Megatron-LM's --recompute-modules names.
inline constexpr Named<Recompute> kRecomputeShorthands[] = {{Recompute::None, "none"},
                                                            {Recompute::DeepSeek, "deepseek"},
                                                            {Recompute::Selective, "selective"},
                                                            {Recompute::Full, "full"},
                                                            {Recompute::TorchtitanOp, "torchtitan-op"}};
// In Megatron-LM's order (megatron/core/transformer/transformer_config.py, recompute_modules).
inline constexpr Named<Recompute::Module> kRecomputeModules[] = {
    {Recompute::CoreAttn, "core_attn"}, {Recompute::MoeAct, "moe_act"}, {Recompute::Layernorm, "layernorm"},
    {Recompute::MlaUpProj, "mla_up_proj"}, {Recompute::Mlp, "mlp"},    {Recompute::Moe, "moe"},
    {Recompute::SharedExperts, "shared_experts"}};
inline constexpr Named<MoeDispatcher> kMoeDispatchers[] = {
    {MoeDispatcher::DeepEP, "deepep"}, {MoeDispatcher::AllToAll, "alltoall"}, {MoeDispatcher::AllGather, "allgather"}};
inline constexpr Named<FlexBackend> kFlexBackends[] = {{FlexBackend::DeepEP, "deepep"}, {FlexBackend::HybridEP, "hybridep"}};
// Megatron-Core's --cp-comm-type names.
inline constexpr Named<CpCommType> kCpCommTypes[] = {
    {CpCommType::P2p, "p2p"}, {CpCommType::AllGather, "allgather"}, {CpCommType::A2a, "a2a"}};
inline constexpr Named<Precision> kPrecisions[] = {{Precision::FP8, "fp8"}, {Precision::BF16, "bf16"}};
// train.precision's values: the GEMMs' number format and, for the quantised ones, their scaling.
struct TrainPrecisionName {
  Precision precision;
  LowPrecision low_precision;
  const char* name;
};
inline constexpr TrainPrecisionName kTrainPrecisions[] = {{Precision::FP8, LowPrecision::Fp8, "fp8"},
                                                          {Precision::BF16, LowPrecision::Fp8, "bf16"},
                                                          {Precision::FP8, LowPrecision::Mxfp8, "mxfp8"},
                                                          {Precision::FP8, LowPrecision::Nvfp4, "nvfp4"}};
inline constexpr Named<Fp8Recipe> kFp8Recipes[] = {
    {Fp8Recipe::Blockwise, "blockwise"}, {Fp8Recipe::Delayed, "delayed"}, {Fp8Recipe::Tensorwise, "tensorwise"}};
inline constexpr Named<CudaGraphs> kCudaGraphs[] = {
    {CudaGraphs::None, "none"}, {CudaGraphs::Layers, "layers"}, {CudaGraphs::FullIteration, "full_iteration"}};
// Megatron-Core's --cuda-graph-scope names (software.cuda_graph_scope).
inline constexpr Named<GraphScope> kGraphScopes[] = {{kGraphAttn, "attn"},
                                                     {kGraphMlp, "mlp"},
                                                     {kGraphMoeRouter, "moe_router"},
                                                     {kGraphMoePreprocess, "moe_preprocess"}};
inline constexpr Named<AttentionKernel> kAttentionKernels[] = {{AttentionKernel::Fused, "fused"},
                                                                {AttentionKernel::Flash2, "flash2"}};
inline constexpr Named<PipelineSplit> kPipelineSplits[] = {{PipelineSplit::Balanced, "balanced"},
                                                           {PipelineSplit::Megatron, "megatron"},
                                                           {PipelineSplit::Torchtitan, "torchtitan"}};
inline constexpr Named<MegatronFlops> kMegatronFlops[] = {{MegatronFlops::R08, "r0.8"}, {MegatronFlops::V012, "v0.12"}};
inline constexpr Named<MomentDtype> kMomentDtypes[] = {{MomentDtype::FP32, "fp32"}, {MomentDtype::BF16, "bf16"}};
inline constexpr Named<ReduceDtype> kReduceDtypes[] = {{ReduceDtype::FP32, "fp32"}, {ReduceDtype::BF16, "bf16"}};
inline constexpr Named<RouterDtype> kRouterDtypes[] = {{RouterDtype::BF16, "bf16"}, {RouterDtype::FP32, "fp32"}};
inline constexpr Named<Routing> kRoutings[] = {{Routing::Balanced, "balanced"}, {Routing::DeepSeek, "deepseek"},
                                        {Routing::Zipf, "zipf"},         {Routing::Dirichlet, "dirichlet"},
                                        {Routing::Hot, "hot"},           {Routing::File, "file"}};
inline constexpr Named<Topology> kTopologies[] = {
    {Topology::Star, "star"}, {Topology::FatTree, "fat-tree"}, {Topology::MultiPlane, "multi-plane"}};
inline constexpr Named<SimMode> kSimModes[] = {{SimMode::Auto, "auto"}, {SimMode::Full, "full"}, {SimMode::Reduced, "reduced"}};
inline constexpr Named<SimFidelity> kSimFidelities[] = {{SimFidelity::Exact, "exact"}, {SimFidelity::Fast, "fast"}};
inline constexpr Named<WorkloadKind> kWorkloadKinds[] = {{WorkloadKind::Model, "model"}, {WorkloadKind::Synthetic, "synthetic"}};
inline constexpr Named<ComputeModel> kComputeModels[] = {{ComputeModel::Predicted, "predicted"},
                                                         {ComputeModel::SpeedOfLight, "speed-of-light"}};
// Hugging Face hidden_act names: silu (SwiGLU) and geglu are gated, the others are not (relu2: squared ReLU,
// Nemotron's, Megatron-LM's --squared-relu).
inline constexpr Named<HiddenAct> kHiddenActs[] = {{HiddenAct::Silu, "silu"},
                                                   {HiddenAct::Gelu, "gelu"},
                                                   {HiddenAct::GeluNew, "gelu_new"},
                                                   {HiddenAct::GeluPytorchTanh, "gelu_pytorch_tanh"},
                                                   {HiddenAct::GeluFast, "gelu_fast"},
                                                   {HiddenAct::Relu, "relu"},
                                                   {HiddenAct::GeGlu, "geglu"},
                                                   {HiddenAct::Relu2, "relu2"}};
inline constexpr Named<Norm> kNorms[] = {{Norm::RmsNorm, "rmsnorm"}, {Norm::LayerNorm, "layernorm"}};

// The value a table names `name`, if any.
template <typename E, size_t N>
std::optional<E> value_of(const Named<E> (&table)[N], std::string_view name) {
  for (const auto& n : table)
    if (name == n.name) return n.value;
  return std::nullopt;
}

template <typename E, size_t N>
const char* name_of(const Named<E> (&table)[N], E value) {
  for (const auto& n : table)
    if (n.value == value) return n.name;
  return "?";
}

}  // namespace stepsim
