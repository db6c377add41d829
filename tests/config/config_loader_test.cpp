// Good inputs: the default config and its documented values, --set overrides, the FSDP plan, and
// plans whose model comes from a Hugging Face config.json (workloads/models/).
#include <gtest/gtest.h>

#include "simulator/config/config_loader.hpp"
#include "schedules/registry.hpp"
#include "tests/config/config_test_util.hpp"

namespace stepsim::test {
namespace {

// Field-by-field model comparison (ModelConfig has no operator==). num_key_value_heads 0 means
// "same as the heads", so it is compared after that rule is applied.
void expect_same_model(const ModelConfig& a, const ModelConfig& b) {
#define STEPSIM_SAME(f) EXPECT_EQ(a.f, b.f) << #f
  STEPSIM_SAME(hidden_size);
  STEPSIM_SAME(num_hidden_layers);
  STEPSIM_SAME(first_k_dense_replace);
  STEPSIM_SAME(intermediate_size);
  STEPSIM_SAME(moe_intermediate_size);
  STEPSIM_SAME(n_routed_experts);
  STEPSIM_SAME(n_shared_experts);
  STEPSIM_SAME(num_experts_per_tok);
  STEPSIM_SAME(n_group);
  STEPSIM_SAME(topk_group);
  STEPSIM_SAME(num_attention_heads);
  STEPSIM_SAME(head_dim);
  STEPSIM_SAME(q_lora_rank);
  STEPSIM_SAME(kv_lora_rank);
  STEPSIM_SAME(qk_nope_head_dim);
  STEPSIM_SAME(qk_rope_head_dim);
  STEPSIM_SAME(v_head_dim);
  STEPSIM_SAME(vocab_size);
  STEPSIM_SAME(tie_word_embeddings);
#undef STEPSIM_SAME
  const auto kv = [](const ModelConfig& m) { return m.num_key_value_heads ? m.num_key_value_heads : m.num_attention_heads; };
  EXPECT_EQ(kv(a), kv(b)) << "num_key_value_heads (0 = heads)";
}

// The default config's non-model sections, written after a model section of the caller's.
std::string default_without_model() {
  const auto text = default_text();
  return text.substr(text.find("\ntrain:"));
}

// ---- the default config ---------------------------------------------------------------------

TEST(ConfigLoader, DefaultConfigPathIsTheDeepSeekYaml) {
  EXPECT_EQ(default_config_path(), default_yaml());
}

TEST(ConfigLoader, DefaultConfigHasTheDocumentedValues) {
  const Plan p = load_plan(default_config_path());
  EXPECT_EQ(p.source, default_yaml());
  EXPECT_EQ(p.model.name, "DeepSeek-V3");
  EXPECT_EQ(p.model.hidden_size, 7168);
  EXPECT_EQ(p.model.num_hidden_layers, 61);
  EXPECT_EQ(p.model.first_k_dense_replace, 3);
  EXPECT_EQ(p.model.moe_layers(), 58);
  EXPECT_EQ(p.model.dense_layers(), 3);
  EXPECT_EQ(p.model.n_routed_experts, 256);
  EXPECT_EQ(p.model.num_experts_per_tok, 8);
  EXPECT_EQ(p.model.n_group, 8);
  EXPECT_EQ(p.model.topk_group, 4);
  EXPECT_EQ(p.model.q_lora_rank, 1536);
  EXPECT_EQ(p.model.kv_lora_rank, 512);
  EXPECT_EQ(p.model.vocab_size, 129280);
  EXPECT_TRUE(p.model.is_moe());
  EXPECT_TRUE(p.model.is_mla());
  EXPECT_FALSE(p.model.tie_word_embeddings);

  EXPECT_EQ(p.train.global_batch, 15360);
  EXPECT_EQ(p.train.seq_len, 4096);
  EXPECT_EQ(p.train.tokens_per_step(), 15360LL * 4096);

  EXPECT_EQ(p.parallel.pp, 8);
  EXPECT_EQ(p.parallel.ep, 64);
  EXPECT_EQ(p.parallel.microbatches, 60);
  EXPECT_EQ(p.parallel.zero, 1);
  EXPECT_EQ(p.parallel.schedule, Schedule{"dualpipev"});
  EXPECT_STREQ(to_string(p.parallel.schedule), "dualpipev");

  EXPECT_EQ(p.gpus(), 2048);
  EXPECT_EQ(p.dp(), 256);
  EXPECT_EQ(p.edp(), 4);
  EXPECT_EQ(sched::path_stages(p), 16);
  EXPECT_DOUBLE_EQ(p.sequences_per_replica(), 60.0);

  EXPECT_EQ(p.hardware.name, "H800");
  EXPECT_DOUBLE_EQ(p.hardware.fp8_tflops, 1456.6);
  EXPECT_DOUBLE_EQ(p.hardware.bf16_tflops, 757.7);
  EXPECT_DOUBLE_EQ(p.hardware.ib_GBps, 50.0);
  EXPECT_DOUBLE_EQ(p.hardware.nvlink_GBps, 160.0);
  EXPECT_EQ(p.hardware.sms, 132);
  EXPECT_EQ(p.hardware.comm_sms, 0);
  EXPECT_EQ(p.cluster.nodes, 256);
  EXPECT_EQ(p.cluster.gpus_per_node, 8);

  EXPECT_EQ(p.scenario.routing, Routing::Balanced);
  EXPECT_EQ(p.scenario.seed, 1u);
  EXPECT_EQ(p.scenario.routing_samples, 200000);
  EXPECT_EQ(p.sim.mode, SimMode::Auto);
  EXPECT_EQ(p.sim.fidelity, SimFidelity::Fast);
  EXPECT_EQ(p.workload.kind, WorkloadKind::Model);
}

TEST(ConfigLoader, FromStringMatchesFromFile) {
  const Plan a = load_plan(default_yaml());
  const Plan b = load_plan_from_string(default_text(), "inline.yaml");
  EXPECT_EQ(b.source, "inline.yaml");
  expect_same_model(a.model, b.model);
  EXPECT_EQ(a.gpus(), b.gpus());
  EXPECT_EQ(a.parallel.microbatches, b.parallel.microbatches);
}

// ---- --set overrides ------------------------------------------------------------------------

TEST(ConfigLoader, SetOverridesIntegers) {
  const Plan p = load_plan(default_yaml(), {"parallel.pp=4", "parallel.microbatches=30"});
  EXPECT_EQ(p.parallel.pp, 4);
  EXPECT_EQ(p.parallel.microbatches, 30);
  EXPECT_EQ(p.dp(), 512);
  EXPECT_EQ(p.edp(), 8);
  EXPECT_EQ(sched::path_stages(p), 8);
  EXPECT_EQ(p.parallel.ep, 64);  // untouched
}

TEST(ConfigLoader, SetOverridesDoubles) {
  const Plan p = load_plan(default_yaml(), {"hardware.ib_GBps=25.5", "hardware.nvlink_GBps=200",
                                            "hardware.ib_latency_s=2e-6", "hardware.comm_sms=20"});
  EXPECT_DOUBLE_EQ(p.hardware.ib_GBps, 25.5);
  EXPECT_DOUBLE_EQ(p.hardware.nvlink_GBps, 200.0);  // an integer is a fine number
  EXPECT_DOUBLE_EQ(p.hardware.ib_latency_s, 2e-6);
  EXPECT_EQ(p.hardware.comm_sms, 20);
}

TEST(ConfigLoader, SetOverridesEnums) {
  const Plan a = load_plan(default_yaml(), {"schedule=1f1b"});
  EXPECT_EQ(a.parallel.schedule, Schedule{"1f1b"});
  EXPECT_EQ(sched::path_stages(a), 8);
  const Plan b = load_plan(default_yaml(), {"scenario.routing=deepseek", "sim.mode=reduced"});
  EXPECT_EQ(b.scenario.routing, Routing::DeepSeek);
  EXPECT_EQ(b.sim.mode, SimMode::Reduced);
  const Plan c = load_plan(default_yaml(), {"parallel.zero=\"1\""});  // a quoted choice is fine too
  EXPECT_EQ(c.parallel.zero, 1);
}

TEST(ConfigLoader, SetOverridesStringsAndBools) {
  const Plan p = load_plan(default_yaml(), {"hardware.name=H800 SXM", "model.name=\"DSv3: test\"",
                                            "model.tie_word_embeddings=true"});
  EXPECT_EQ(p.hardware.name, "H800 SXM");
  EXPECT_EQ(p.model.name, "DSv3: test");
  EXPECT_TRUE(p.model.tie_word_embeddings);
}

TEST(ConfigLoader, LaterSetWins) {
  const Plan p = load_plan(default_yaml(), {"parallel.pp=4", "parallel.pp=8"});
  EXPECT_EQ(p.parallel.pp, 8);
}

TEST(ConfigLoader, SetWholeSectionAsAFlowMap) {
  const Plan p = load_plan(default_yaml(), {"parallel={pp: 4, ep: 64, microbatches: 30, zero: 1}"});
  EXPECT_EQ(p.parallel.pp, 4);
  EXPECT_EQ(p.parallel.ep, 64);
  EXPECT_EQ(p.parallel.microbatches, 30);
  EXPECT_EQ(p.parallel.zero, 1);
  EXPECT_EQ(p.parallel.schedule, Schedule{"dualpipev"});
  EXPECT_EQ(p.dp(), 512);
}

TEST(ConfigLoader, SetSectionMapMergesLikeDottedKeys) {
  // A partial map changes only the keys it names: ep stays 64, it is not reset to the default 1.
  const Plan map = load_plan(default_yaml(), {"parallel={pp: 4, microbatches: 30}"});
  const Plan dotted = load_plan(default_yaml(), {"parallel.pp=4", "parallel.microbatches=30"});
  EXPECT_EQ(map.parallel.ep, 64);
  EXPECT_EQ(map.parallel.pp, dotted.parallel.pp);
  EXPECT_EQ(map.parallel.microbatches, dotted.parallel.microbatches);
  EXPECT_EQ(map.parallel.ep, dotted.parallel.ep);
  EXPECT_EQ(map.parallel.zero, dotted.parallel.zero);

  const Plan hw = load_plan(default_yaml(), {"hardware={ib_GBps: 25, comm_sms: 20}"});
  EXPECT_DOUBLE_EQ(hw.hardware.ib_GBps, 25.0);
  EXPECT_EQ(hw.hardware.comm_sms, 20);
  EXPECT_DOUBLE_EQ(hw.hardware.nvlink_GBps, 160.0);
  EXPECT_DOUBLE_EQ(hw.hardware.fp8_tflops, 1456.6);
}

TEST(ConfigLoader, SetNestedFlowMapInTheTopLevel) {
  const Plan p = load_plan(default_yaml(), {"cluster={nodes: 128}", "train={global_batch: 7680}"});
  EXPECT_EQ(p.gpus(), 1024);
  EXPECT_EQ(p.dp(), 128);
  EXPECT_DOUBLE_EQ(p.sequences_per_replica(), 60.0);
}

TEST(ConfigLoader, FsdpPlanIsAcceptedWithUnevenSequences) {
  const Plan p = load_plan(default_yaml(),
                           {"schedule=fsdp", "parallel.pp=1", "parallel.zero=3", "parallel.microbatches=8", "parallel.split_lone_chunks=false"});
  EXPECT_EQ(p.parallel.schedule, Schedule{"fsdp"});
  EXPECT_EQ(p.parallel.zero, 3);
  EXPECT_EQ(sched::path_stages(p), 1);
  EXPECT_EQ(p.dp(), 2048);
  EXPECT_EQ(p.edp(), 32);
  EXPECT_DOUBLE_EQ(p.sequences_per_replica(), 7.5);
}

TEST(ConfigLoader, SyntheticWorkloadSkipsModelChecks) {
  const Plan p = load_plan(default_yaml(), {"workload={kind: synthetic, f_s: 1, b_s: 2, w_s: 1}", "parallel.pp=4",
                                            "parallel.microbatches=8"});
  EXPECT_EQ(p.workload.kind, WorkloadKind::Synthetic);
  EXPECT_DOUBLE_EQ(p.workload.b_s, 2.0);
}

// ---- Hugging Face config.json ---------------------------------------------------------------

TEST(ConfigLoader, DeepSeekFromHfConfigEqualsTheDefault) {
  const Plan hf = load_plan(source_path("workloads/deepseek-v3-from-hf.yaml"));
  const Plan yaml = load_plan(default_yaml());
  expect_same_model(hf.model, yaml.model);
  EXPECT_EQ(hf.model.name, yaml.model.name);
  EXPECT_EQ(hf.model.num_key_value_heads, 128);  // in config.json, irrelevant under MLA
  EXPECT_EQ(hf.train.global_batch, yaml.train.global_batch);
  EXPECT_EQ(hf.train.seq_len, yaml.train.seq_len);
  EXPECT_EQ(hf.parallel.pp, yaml.parallel.pp);
  EXPECT_EQ(hf.parallel.ep, yaml.parallel.ep);
  EXPECT_EQ(hf.parallel.microbatches, yaml.parallel.microbatches);
  EXPECT_EQ(hf.parallel.schedule, yaml.parallel.schedule);
  EXPECT_DOUBLE_EQ(hf.hardware.fp8_tflops, yaml.hardware.fp8_tflops);
  EXPECT_DOUBLE_EQ(hf.hardware.ib_GBps, yaml.hardware.ib_GBps);
  EXPECT_EQ(hf.gpus(), yaml.gpus());
  EXPECT_EQ(sched::path_stages(hf), sched::path_stages(yaml));
}

TEST(ConfigLoader, HfConfigNameFallsBackToModelType) {
  const auto text = "model:\n  config_json: " + source_path("workloads/models/deepseek-v3.config.json") + "\n" +
                    default_without_model();
  const Plan p = load_plan_from_string(text, "hf.yaml");
  EXPECT_EQ(p.model.name, "deepseek_v3");
  EXPECT_EQ(p.model.hidden_size, 7168);
}

TEST(ConfigLoader, HfConfigIgnoresUnknownKeys) {
  // The DeepSeek file carries rope_scaling, quantization_config, auto_map, torch_dtype...; add more.
  TempFile json("config.json", R"({
    "architectures": ["SomethingNew"], "model_type": "x", "hidden_size": 7168, "num_hidden_layers": 61,
    "first_k_dense_replace": 3, "intermediate_size": 18432, "moe_intermediate_size": 2048,
    "n_routed_experts": 256, "n_shared_experts": 1, "num_experts_per_tok": 8, "n_group": 8, "topk_group": 4,
    "num_attention_heads": 128, "q_lora_rank": 1536, "kv_lora_rank": 512, "qk_nope_head_dim": 128,
    "qk_rope_head_dim": 64, "v_head_dim": 128, "vocab_size": 129280,
    "a_future_key": {"nested": [1, 2, {"deep": null}]}, "rope_theta": 1e4, "hidden_act": "silu",
    "some_flag": true, "some_list": [], "some_null": null, "some_string": "hello"})");
  const auto text = "model:\n  config_json: " + json.path() + "\n" + default_without_model();
  const Plan p = load_plan_from_string(text, "hf.yaml");
  expect_same_model(p.model, load_plan(default_yaml()).model);
  EXPECT_EQ(p.model.name, "x");
}

TEST(ConfigLoader, HfNullReadsAsZero) {
  // DeepSeek-V2-Lite's config.json: no query compression, "q_lora_rank": null.
  TempFile json("config.json", R"({
    "architectures": ["DeepseekV2ForCausalLM"], "model_type": "deepseek_v2", "hidden_size": 2048,
    "num_hidden_layers": 27, "first_k_dense_replace": 1, "intermediate_size": 10944,
    "moe_intermediate_size": 1408, "n_routed_experts": 64, "n_shared_experts": 2, "num_experts_per_tok": 6,
    "n_group": 1, "topk_group": 1, "num_attention_heads": 16, "num_key_value_heads": 16,
    "q_lora_rank": null, "kv_lora_rank": 512, "qk_nope_head_dim": 128, "qk_rope_head_dim": 64,
    "v_head_dim": 128, "vocab_size": 102400, "tie_word_embeddings": false, "topk_method": "greedy"})");
  const auto text = "model:\n  config_json: " + json.path() + "\n" + default_without_model();
  const Plan p = load_plan_from_string(text, "hf.yaml");
  EXPECT_EQ(p.model.q_lora_rank, 0);
  EXPECT_EQ(p.model.kv_lora_rank, 512);
  EXPECT_EQ(p.model.n_routed_experts, 64);
  EXPECT_EQ(p.model.num_hidden_layers, 27);
  EXPECT_EQ(p.model.name, "deepseek_v2");
}

TEST(ConfigLoader, YamlModelKeysOverrideTheHfConfig) {
  const auto text = "model:\n  config_json: " + source_path("workloads/models/deepseek-v3.config.json") +
                    "\n  name: Tweaked\n  n_shared_experts: 2\n  first_k_dense_replace: 5\n" + default_without_model();
  const Plan p = load_plan_from_string(text, "hf.yaml");
  EXPECT_EQ(p.model.name, "Tweaked");
  EXPECT_EQ(p.model.n_shared_experts, 2);
  EXPECT_EQ(p.model.first_k_dense_replace, 5);
  EXPECT_EQ(p.model.hidden_size, 7168);  // the rest still comes from config.json
}

TEST(ConfigLoader, SetModelKeysOverrideTheHfConfig) {
  const Plan p = load_plan(source_path("workloads/deepseek-v3-from-hf.yaml"), {"model.num_hidden_layers=32"});
  EXPECT_EQ(p.model.num_hidden_layers, 32);
  EXPECT_EQ(p.model.hidden_size, 7168);
}

TEST(ConfigLoader, YamlOverridesABadHfValue) {
  // A value the YAML replaces is never checked: the user's fix wins.
  TempFile json("config.json", R"({"hidden_size": "oops", "num_hidden_layers": 32, "num_attention_heads": 32,
    "intermediate_size": 14336, "vocab_size": 32000})");
  const auto text = "model:\n  config_json: " + json.path() + "\n  hidden_size: 4096\n" + default_without_model();
  const Plan p = load_plan_from_string(text, "hf.yaml", {"parallel.ep=1", "parallel.split_lone_chunks=false"});
  EXPECT_EQ(p.model.hidden_size, 4096);
}

TEST(ConfigLoader, SetConfigJsonSwapsTheWholeModel) {
  // The file's DeepSeek keys must not survive under the new config.json (they would win over it).
  const Plan p = load_plan(default_yaml(), {"model.config_json=" + source_path("workloads/models/llama-3.1-8b.config.json"), "parallel.ep=1",
                                            "schedule=1f1b", "parallel.split_lone_chunks=false"});
  EXPECT_EQ(p.model.hidden_size, 4096);
  EXPECT_EQ(p.model.num_hidden_layers, 32);
  EXPECT_EQ(p.model.n_routed_experts, 0);
  EXPECT_EQ(p.model.kv_lora_rank, 0);
  EXPECT_EQ(p.model.q_lora_rank, 0);
  EXPECT_EQ(p.model.name, "llama");
  // Model keys set after it still apply.
  const Plan q = load_plan(default_yaml(), {"model.config_json=" + source_path("workloads/models/llama-3.1-8b.config.json"), "parallel.ep=1",
                                            "schedule=1f1b", "model.name=L8", "parallel.split_lone_chunks=false"});
  EXPECT_EQ(q.model.name, "L8");
}

// The order of --set never matters: a model key given before the config.json that replaces the
// file's model keeps its value, as it does after it (--set model.num_hidden_layers=4 --set
// model.config_json=F once lost the layer count). The file's model keys it replaces are named in a note.
TEST(ConfigLoader, SetOrderNeverMatters) {
  const std::string json = "model.config_json=" + source_path("workloads/models/llama-3.1-8b.config.json");
  const std::vector<std::string> rest = {"parallel.ep=1", "schedule=1f1b", "parallel.split_lone_chunks=false"};
  std::vector<std::string> before = {"model.num_hidden_layers=16", json}, after = {json, "model.num_hidden_layers=16"};
  before.insert(before.end(), rest.begin(), rest.end());
  after.insert(after.end(), rest.begin(), rest.end());
  const Plan a = load_plan(default_yaml(), before), b = load_plan(default_yaml(), after);
  EXPECT_EQ(a.model.num_hidden_layers, 16);
  EXPECT_EQ(b.model.num_hidden_layers, 16);
  expect_same_model(a.model, b.model);
  EXPECT_EQ(a.model.hidden_size, 4096);  // the rest from the new config.json
  EXPECT_EQ(a.notes, b.notes);
  ASSERT_FALSE(a.notes.empty());
  EXPECT_NE(a.notes.front().find("--set model.config_json replaces the model of " + default_yaml() + ": its model."),
            std::string::npos)
      << a.notes.front();
  EXPECT_NE(a.notes.front().find("model.n_routed_experts"), std::string::npos) << a.notes.front();
  EXPECT_EQ(a.notes.front().find("model.num_hidden_layers"), std::string::npos) << "given with --set: " << a.notes.front();
}

TEST(ConfigLoader, Llama31_8bPlanLoads) {
  const Plan p = load_plan(source_path("workloads/llama-3.1-8b.yaml"));
  EXPECT_EQ(p.model.name, "Llama-3.1-8B");
  EXPECT_EQ(p.model.hidden_size, 4096);
  EXPECT_EQ(p.model.num_hidden_layers, 32);
  EXPECT_EQ(p.model.intermediate_size, 14336);
  EXPECT_EQ(p.model.num_attention_heads, 32);
  EXPECT_EQ(p.model.num_key_value_heads, 8);
  EXPECT_EQ(p.model.vocab_size, 128256);
  EXPECT_FALSE(p.model.tie_word_embeddings);
  EXPECT_FALSE(p.model.is_moe());
  EXPECT_FALSE(p.model.is_mla());
  EXPECT_EQ(p.model.dense_layers(), 32);
  EXPECT_EQ(p.parallel.schedule, Schedule{"1f1b"});
  EXPECT_EQ(p.gpus(), 64);
  EXPECT_EQ(p.dp(), 16);
  EXPECT_EQ(sched::path_stages(p), 4);
  EXPECT_EQ(p.train.tokens_per_step(), 512LL * 8192);
  EXPECT_DOUBLE_EQ(p.sequences_per_replica(), 32.0);
}

TEST(ConfigLoader, MixtralLoadsWithEp8) {
  const auto text = "model:\n  config_json: " + source_path("workloads/models/mixtral-8x7b.config.json") + "\n" +
                    read_text(source_path("workloads/llama-3.1-8b.yaml")).substr(
                        read_text(source_path("workloads/llama-3.1-8b.yaml")).find("\ntrain:"));
  const Plan p = load_plan_from_string(text, "mixtral.yaml", {"parallel.ep=8"});
  EXPECT_EQ(p.model.name, "mixtral");
  EXPECT_TRUE(p.model.is_moe());
  EXPECT_EQ(p.model.n_routed_experts, 8);       // from num_local_experts
  EXPECT_EQ(p.model.num_experts_per_tok, 2);
  EXPECT_EQ(p.model.moe_intermediate_size, 14336);  // Mixtral's intermediate_size is the expert width
  EXPECT_EQ(p.model.n_shared_experts, 0);
  EXPECT_EQ(p.model.first_k_dense_replace, 0);
  EXPECT_EQ(p.model.moe_layers(), 32);
  EXPECT_EQ(p.model.n_group, 1);
  EXPECT_EQ(p.model.topk_group, 1);
  EXPECT_EQ(p.model.num_key_value_heads, 8);
  EXPECT_EQ(p.model.vocab_size, 32000);
  EXPECT_EQ(p.parallel.ep, 8);
  EXPECT_EQ(p.edp(), 2);
}

TEST(ConfigLoader, ShippedHfConfigsAreValidJsonWithTheirPublishedKeys) {
  // The stepsim-ignored keys must be there too: these are the files as Hugging Face publishes them.
  const auto ds = read_text(source_path("workloads/models/deepseek-v3.config.json"));
  for (const char* key : {"\"rope_scaling\"", "\"quantization_config\"", "\"torch_dtype\"", "\"architectures\"",
                          "\"num_nextn_predict_layers\"", "\"routed_scaling_factor\"", "\"topk_method\""})
    EXPECT_NE(ds.find(key), std::string::npos) << key;
  const auto llama = read_text(source_path("workloads/models/llama-3.1-8b.config.json"));
  EXPECT_NE(llama.find("\"rope_theta\": 500000.0"), std::string::npos);
  const auto mixtral = read_text(source_path("workloads/models/mixtral-8x7b.config.json"));
  EXPECT_NE(mixtral.find("\"num_local_experts\": 8"), std::string::npos);
}

}  // namespace
}  // namespace stepsim::test
