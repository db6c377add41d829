// Squared ReLU (Nemotron's hidden_act relu2, Megatron-LM's --squared-relu) against hand figures.
#include <gtest/gtest.h>

#include <string>

#include "simulator/config/config_loader.hpp"
#include "vocabulary/model_params.hpp"
#include "tests/workloads/layer_work_sums.hpp"
#include "workloads/layers/layer_work.hpp"

namespace stepsim {
namespace {

using test::memory_bytes;

const std::string kLlama = std::string(STEPSIM_SOURCE_DIR) + "/workloads/llama-3.1-8b.yaml";

// Squared ReLU (Nemotron's relu2, Megatron's --squared-relu): a non-gated MLP of two matrices whose
// activation reads and writes one BF16 value per width element (4f bytes per token), its backward
// reads the gradient and the input and writes one (6f), as GELU's.
TEST(SquaredRelu, IsANonGatedMlpWithGelusBytes) {
  const Plan p = load_plan(kLlama, {"model.hidden_act=relu2", "parallel.pp=1", "cluster.nodes=1", "train.global_batch=8",
                                    "parallel.microbatches=1"});
  EXPECT_FALSE(p.model.gated_mlp());
  EXPECT_EQ(count_params(p.model).dense_ffn, 2 * 4096 * 14336);
  const double f = 14336;
  EXPECT_NEAR(memory_bytes(p, 3, LayerPart::MlpF, "activation"), 4 * f, 1e-9);
  EXPECT_NEAR(memory_bytes(p, 3, LayerPart::MlpB, "activation_bwd"), 6 * f, 1e-9);
  const Plan gelu = load_plan(kLlama, {"model.hidden_act=gelu", "parallel.pp=1", "cluster.nodes=1", "train.global_batch=8",
                                       "parallel.microbatches=1"});
  const LayerWork a = layer_work(p, 3, 1.0, 0), b = layer_work(gelu, 3, 1.0, 0);
  for (int part = 0; part < kLayerParts; ++part) {
    EXPECT_DOUBLE_EQ(a.parts[part].flops(Precision::BF16), b.parts[part].flops(Precision::BF16)) << part;
    EXPECT_EQ(a.parts[part].memory.size(), b.parts[part].memory.size()) << part;
  }
}

}  // namespace
}  // namespace stepsim
