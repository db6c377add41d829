// The batch in tokens or sequences, the split in microbatches or sequences per microbatch, and the
// "did you mean" hints for other tools' key names. Expected values are the configs' own numbers
// multiplied out here (15360 sequences x 4096 tokens, 512 x 8192 ...), never a run's output.
#include <gtest/gtest.h>

#include <set>

#include "vocabulary/config_error.hpp"
#include "simulator/config/config_loader.hpp"
#include "simulator/config/key_aliases.hpp"
#include "tests/config/config_test_util.hpp"

namespace stepsim::test {
namespace {

// The default config: 15360 sequences of 4096 tokens, 2048 GPUs, PP 8, so 256 data-parallel
// replicas of 60 sequences, 60 microbatches.
constexpr int64_t kSeqs = 15360, kSeqLen = 4096, kReplicas = 256;

std::string llama_text() { return read_text(source_path("workloads/llama-3.1-8b.yaml")); }
// The Llama 3.1 8B config, loaded as if it sat in workloads/ (its config_json is relative).
Plan load_llama(const std::string& text, const std::vector<std::string>& sets = {}) {
  return load_plan_from_string(text, "llama.yaml", sets, source_path("workloads"));
}

TEST(BatchUnits, TokensPerStepCanBeGivenInsteadOfSequences) {
  const auto text = replaced(default_text(), "global_batch: 15360", "global_batch_tokens: " + std::to_string(kSeqs * kSeqLen));
  const Plan p = load_plan_from_string(text, "tokens.yaml");
  EXPECT_EQ(p.train.global_batch, kSeqs);
  EXPECT_EQ(p.train.tokens_per_step(), kSeqs * kSeqLen);
  EXPECT_EQ(p.train.global_batch_tokens, kSeqs * kSeqLen);
}

TEST(BatchUnits, TokensThatAreNoWholeNumberOfSequencesAreRefusedWithBothNeighbours) {
  const int64_t tokens = kSeqs * kSeqLen + 1000;
  const auto text = replaced(default_text(), "global_batch: 15360", "global_batch_tokens: " + std::to_string(tokens));
  // 15360 x 4096 = 62,914,560 and 15361 x 4096 = 62,918,656.
  expect_text_rejects(text, "tokens.yaml",
                      {"tokens.yaml", "train.global_batch_tokens", "62,915,560 tokens", "4,096-token sequences",
                       "62,914,560 (15,360 sequences) or 62,918,656 (15,361)"});
}

TEST(BatchUnits, FewerTokensThanOneSequenceSuggestOneSequence) {
  const auto text = replaced(default_text(), "global_batch: 15360", "global_batch_tokens: 100");
  const auto msg = expect_text_rejects(text, "tiny.yaml", {"train.global_batch_tokens", "use 4,096 (1)"});
}

TEST(BatchUnits, TheBatchGivenBothWaysInOneFileIsRefused) {
  const auto text = replaced(default_text(), "global_batch: 15360", "global_batch: 15360\n  global_batch_tokens: 62914560");
  expect_text_rejects(text, "both.yaml", {"both.yaml", "train.global_batch_tokens", "given twice", "not both"});
}

TEST(BatchUnits, ABatchGivenNeitherWayIsMissing) {
  const auto text = replaced(default_text(), "  global_batch: 15360", "");
  expect_text_rejects(text, "none.yaml", {"none.yaml", "train.global_batch", "missing", "train.global_batch_tokens"});
}

TEST(BatchUnits, ASetOfOneFormReplacesTheFilesOther) {
  // Half the tokens: 7680 sequences, 30 per replica; one sequence per microbatch.
  const Plan p = load_plan(default_yaml(), {"train.global_batch_tokens=" + std::to_string(kSeqs * kSeqLen / 2),
                                            "parallel.micro_batch_size=1"});
  EXPECT_EQ(p.train.global_batch, kSeqs / 2);
  EXPECT_EQ(p.parallel.microbatches, kSeqs / 2 / kReplicas);
  // And back: a sequence count replaces a file's tokens.
  const auto text = replaced(default_text(), "global_batch: 15360", "global_batch_tokens: 62914560");
  const Plan q = load_plan_from_string(text, "tokens.yaml", {"train.global_batch=15360"});
  EXPECT_EQ(q.train.global_batch, kSeqs);
  EXPECT_EQ(q.train.global_batch_tokens, 0);
}

TEST(BatchUnits, TwoSetsGivingBothFormsAreRefused) {
  expect_default_rejects({"train.global_batch=7680", "train.global_batch_tokens=31457280"},
                         {"--set train.global_batch_tokens=31457280", "train.global_batch",
                          "--set train.global_batch=7680", "keep one"});
}

TEST(BatchUnits, MicroBatchSizeGivesTheMicrobatches) {
  const auto text = replaced(default_text(), "microbatches: 60", "micro_batch_size: 2");
  const Plan p = load_plan_from_string(text, "mbs.yaml");
  EXPECT_EQ(p.parallel.microbatches, kSeqs / kReplicas / 2);
  EXPECT_EQ(p.parallel.micro_batch_size, 2);
  EXPECT_DOUBLE_EQ(p.sequences_per_microbatch(), 2.0);
}

TEST(BatchUnits, MicroBatchSizeThatAgreesWithMicrobatchesIsAccepted) {
  const auto text = replaced(default_text(), "microbatches: 60", "microbatches: 60\n  micro_batch_size: 1");
  EXPECT_EQ(load_plan_from_string(text, "agree.yaml").parallel.microbatches, 60);
}

TEST(BatchUnits, MicroBatchSizeThatDisagreesIsOneLine) {
  const auto text = replaced(default_text(), "microbatches: 60", "microbatches: 60\n  micro_batch_size: 2");
  expect_text_rejects(text, "disagree.yaml",
                      {"disagree.yaml", "parallel.microbatches", "60 disagrees with parallel.micro_batch_size 2",
                       "60 sequences per replica / 2 = 30 microbatches", "give one of the two"});
}

TEST(BatchUnits, MicroBatchSizeThatDoesNotDivideTheReplicasShareSuggestsADivisor) {
  const auto text = replaced(default_text(), "microbatches: 60", "micro_batch_size: 7");
  expect_text_rejects(text, "seven.yaml", {"parallel.micro_batch_size", "7 sequences per microbatch",
                                           "60 sequences of each of the 256", "use a divisor such as 6"});
}

TEST(BatchUnits, NeitherMicrobatchesNorTheirSizeIsMissing) {
  const auto text = replaced(default_text(), "  microbatches: 60 ", "  # none ");
  expect_text_rejects(text, "split.yaml", {"parallel.microbatches", "missing", "parallel.micro_batch_size"});
}

TEST(BatchUnits, ASetOfSeqLenOnSequencesSaysTheTokensPerStep) {
  // Llama 3.1 8B: 512 sequences; 512 x 131072 = 67,108,864 tokens against 512 x 8192 = 4,194,304.
  const Plan p = load_llama(llama_text(), {"train.seq_len=131072", "parallel.cp=8"});
  EXPECT_EQ(p.train.global_batch, 512);
  std::string note;
  for (const auto& n : p.notes)
    if (n.find("seq_len") != std::string::npos) note = n;
  expect_message(note, {"--set train.seq_len=131072", "512 sequences", "67,108,864 tokens per step",
                              "4,194,304 at the file's seq_len 8,192", "train.global_batch_tokens"});
}

TEST(BatchUnits, ASetOfSeqLenKeepsTokensGivenAsTokens) {
  auto text = replaced(llama_text(), "global_batch: 512 ", "global_batch_tokens: 4194304 ");
  text = replaced(text, "microbatches: 32", "micro_batch_size: 1");
  const Plan p = load_llama(text, {"train.seq_len=16384"});
  EXPECT_EQ(p.train.global_batch, 4194304 / 16384);
  EXPECT_EQ(p.train.tokens_per_step(), 4194304);
  EXPECT_EQ(p.parallel.microbatches, 4194304 / 16384 / 16);  // 16 replicas, one sequence each
  for (const auto& n : p.notes) EXPECT_EQ(n.find("seq_len"), std::string::npos) << n;
}

TEST(BatchUnits, NewKeysAreBoundedAndTyped) {
  expect_default_rejects({"train.global_batch_tokens=0"}, {"train.global_batch_tokens", "positive integer"});
  expect_default_rejects({"train.global_batch_tokens=1e15"}, {"train.global_batch_tokens", "at most"});
  expect_default_rejects({"parallel.micro_batch_size=two"}, {"parallel.micro_batch_size", "expected an integer"});
  // 2^40 tokens of 4096-token sequences: 268,435,456 sequences, over the bound of a step.
  expect_default_rejects({"train.global_batch_tokens=1099511627776"},
                         {"train.global_batch_tokens", "268,435,456 sequences", "16,777,216"});
}

// ---- did you mean -----------------------------------------------------------------------------

TEST(KeyHints, OtherToolsNamesPointToTheStepsimKey) {
  expect_default_rejects({"parallel.vpp=2"}, {"--set", "parallel.vpp", "unknown key", "did you mean `parallel.virtual_stages`?"});
  expect_default_rejects({"parallel.virtual_pipeline_model_parallel_size=2"},
                         {"did you mean `parallel.virtual_stages`?", "Megatron-LM"});
  expect_default_rejects({"parallel.tensor_model_parallel_size=8"}, {"did you mean `parallel.tp`?"});
  expect_default_rejects({"parallel.distributed_optimizer=true"}, {"did you mean `parallel.zero`?", "ZeRO-1"});
  expect_default_rejects({"parallel.use_distributed_optimizer=true"}, {"did you mean `parallel.zero`?"});
  expect_default_rejects({"train.global_batch_size=1024"}, {"did you mean `train.global_batch`?"});
  expect_default_rejects({"parallel.sequence_parallel=true"}, {"sequence parallelism", "parallel.tp"});
  expect_default_rejects({"parallel.tensor_parallel_degree=8"}, {"did you mean `parallel.tp`?", "torchtitan"});
}

TEST(KeyHints, DerivedSizesSayHowStepsimDerivesThem) {
  const auto text = replaced(default_text(), "  pp: 8 ", "  dp: 4\n  pp: 8 ");
  expect_text_rejects(text, "dp.yaml", {"dp.yaml", "parallel.dp", "unknown key", "stepsim has no such key",
                                        "cluster.nodes x cluster.gpus_per_node / (parallel.pp x parallel.tp x parallel.cp)"});
  expect_default_rejects({"parallel.data_parallel_size=4"}, {"stepsim has no such key", "derived"});
}

TEST(KeyHints, AKeyInTheWrongSectionPointsToItsSection) {
  expect_default_rejects({"train.micro_batch_size=1"}, {"train.micro_batch_size", "did you mean `parallel.micro_batch_size`?"});
  expect_default_rejects({"parallel.seq_len=4096"}, {"did you mean `train.seq_len`?"});
}

TEST(KeyHints, MisspellingsGetTheNearestKey) {
  const auto typo = replaced(default_text(), "  pp: 8 ", "  ppp: 8 ");
  expect_text_rejects(typo, "typo.yaml", {"typo.yaml", "parallel.ppp", "unknown key", "did you mean `parallel.pp`?"});
  expect_default_rejects({"parallel.virtual_stage=2"}, {"did you mean `parallel.virtual_stages`?"});
  expect_default_rejects({"parallel.microbatchs=2"}, {"did you mean `parallel.microbatches`?"});
  expect_default_rejects({"paralel.pp=4"}, {"--set", "paralel", "unknown key", "did you mean `parallel`?"});
  // Nothing close: the plain message.
  const auto far = default_text() + "\noptimiser:\n  lr: 0.1\n";
  expect_text_rejects(far, "extra.yaml", {"extra.yaml", "optimiser", "unknown key", "check its spelling"});
}

TEST(KeyHints, EveryAliasNamesAKeyThatExistsOnce) {
  std::set<std::string> names;
  for (const auto& a : key_aliases()) {
    EXPECT_TRUE(names.insert(std::string(a.name)).second) << "alias given twice: " << a.name;
    EXPECT_EQ(alias_spelling(a.name), a.name) << "alias not in the table's spelling: " << a.name;
    if (!a.key.empty()) EXPECT_TRUE(is_config_key(std::string(a.key))) << a.name << " -> " << a.key << " is no key";
    if (a.key.empty()) EXPECT_FALSE(a.hint.empty()) << a.name << " has neither a key nor a hint";
  }
  // Spellings another tool uses find the same entry.
  ASSERT_NE(find_alias("--tensor-model-parallel-size"), nullptr);
  EXPECT_EQ(find_alias("--tensor-model-parallel-size")->key, "parallel.tp");
  EXPECT_EQ(find_alias("Tensor_Parallel_Degree")->key, "parallel.tp");
  EXPECT_EQ(find_alias("no-such-name"), nullptr);
}

}  // namespace
}  // namespace stepsim::test
