// Uneven expert loads (scenario.routing): each model's table against its closed form or its
// distribution's moments, seeds, the load-file reader, and the flows the loads put on links.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <string>

#include "vocabulary/config_error.hpp"
#include "../scratch_dir.hpp"
#include "simulator/config/config_loader.hpp"
#include "workloads/traffic/ep_traffic.hpp"
#include "workloads/routing/expert_loads.hpp"
#include "workloads/routing/expert_popularity.hpp"

namespace stepsim {
namespace {

Plan plan(std::vector<std::string> sets = {}) { return load_plan(default_config_path(), sets); }

// The default plan: 58 MoE layers x 60 microbatches, 256 experts, EP 64.
TEST(ExpertLoads, HotExpertsGetTheirShareInEveryMicrobatch) {
  const ExpertLoads loads(plan({"scenario.routing=hot", "scenario.hot_experts=4", "scenario.hot_share=0.6"}));
  // Closed form: 4 experts share 60 % of the rows, so the busiest gets 0.6 / 4 of them against a
  // mean of 1 / 256: max / mean = 0.6 x 256 / 4 = 38.4. Counts are a multinomial of the EP
  // group's 64 x 4096 x 8 rows per microbatch: relative sd sqrt((1 - 0.15) / (0.15 n)) = 0.16 %, so
  // 1 % bounds the max of four within ~6 sd.
  const double n = 64.0 * 4096 * 8;
  EXPECT_DOUBLE_EQ(ExpertLoads::group_rows_per_microbatch(plan()), n);
  for (int64_t l = 3; l < 61; l += 7)
    for (int64_t mb = 0; mb < 60; mb += 11) {
      double mx = 0, hot_sum = 0;
      std::vector<double> s;
      for (int64_t e = 0; e < 256; ++e) s.push_back(loads.expert_share(l, mb, e));
      std::sort(s.begin(), s.end(), std::greater<>());
      mx = s[0];
      for (int i = 0; i < 4; ++i) hot_sum += s[size_t(i)];
      EXPECT_NEAR(mx * 256, 38.4, 0.01 * 38.4) << "layer " << l << " mb " << mb;
      EXPECT_NEAR(hot_sum, 0.6, 0.002);
    }
}

TEST(ExpertLoads, ZipfAndHotProfilesMatchTheirClosedForms) {
  // Zipf s = 1 over 4 experts: 1/r normalised by H_4 = 25/12.
  const auto z = zipf_profile(4, 1.0);
  EXPECT_NEAR(z[0], 12.0 / 25, 1e-15);
  EXPECT_NEAR(z[3], 3.0 / 25, 1e-15);
  const auto flat = zipf_profile(8, 0.0);
  for (double x : flat) EXPECT_DOUBLE_EQ(x, 1.0 / 8);
  const auto h = hot_profile(10, 2, 0.5);
  EXPECT_DOUBLE_EQ(h[0], 0.25);
  EXPECT_DOUBLE_EQ(h[9], 0.5 / 8);
}

TEST(ExpertLoads, MicrobatchCountsHaveTheMultinomialSpread) {
  // Zipf with s = 0: every expert expects 1 / 256 of the rows (as under DeepSeek's iid scores); a
  // microbatch's count then has sd sqrt(n p (1 - p)). Pool all 58 x 60 x 256 expert shares.
  const ExpertLoads loads(plan({"scenario.routing=zipf", "scenario.zipf_s=0"}));
  const double n = ExpertLoads::group_rows_per_microbatch(plan()), p = 1.0 / 256;
  double sum = 0, sq = 0, count = 0;
  for (int64_t l = 3; l < 61; ++l)
    for (int64_t mb = 0; mb < 60; ++mb)
      for (int64_t e = 0; e < 256; ++e) {
        const double d = loads.expert_share(l, mb, e) - p;
        sum += d;
        sq += d * d;
        ++count;
      }
  EXPECT_NEAR(sum / count, 0.0, 1e-12);  // every microbatch's shares add up to 1
  // 890k samples: the sample sd is within 1 % of the truth; 3 % tolerance.
  EXPECT_NEAR(std::sqrt(sq / count), std::sqrt(p * (1 - p) / n), 0.03 * std::sqrt(p * (1 - p) / n));
}

TEST(ExpertLoads, DeepSeekRoutingKeepsTheMeanLoad) {
  // iid scores: every expert's expected share is 1 / 256; the table keeps exactly that.
  const ExpertLoads loads(plan({"scenario.routing=deepseek"}));
  EXPECT_TRUE(loads.balanced());
  EXPECT_DOUBLE_EQ(loads.expert_share(30, 7, 100), 1.0 / 256);
  EXPECT_FALSE(ExpertLoads(plan({"scenario.routing=zipf", "scenario.zipf_s=0"})).balanced());
}

TEST(ExpertLoads, DirichletSharesHaveTheDirichletVariance) {
  // Dirichlet(alpha) over E experts: Var = (1/E)(1 - 1/E) / (E alpha + 1). The microbatch noise
  // (p / n ~ 2e-9) is negligible against it (~1.5e-5 at alpha = 1).
  for (const double alpha : {0.3, 1.0}) {
    const ExpertLoads loads(plan({"scenario.routing=dirichlet", "scenario.dirichlet_alpha=" + std::to_string(alpha)}));
    const double E = 256, var = (1 / E) * (1 - 1 / E) / (E * alpha + 1);
    double sq = 0, count = 0;
    for (int64_t l = 3; l < 61; ++l)
      for (int64_t e = 0; e < 256; ++e) {
        const double d = loads.expert_share(l, 0, e) - 1 / E;
        sq += d * d;
        ++count;
      }
    // 58 x 256 draws of a skewed variable: 10 % covers the sampling error of the variance.
    EXPECT_NEAR(sq / count, var, 0.10 * var) << "alpha " << alpha;
  }
}

TEST(ExpertLoads, SeedsReproduceAndDiffer) {
  const auto table = [](const char* seed) {
    const ExpertLoads l(plan({"scenario.routing=zipf", std::string("scenario.seed=") + seed}));
    std::vector<double> v;
    for (int64_t e = 0; e < 256; ++e) v.push_back(l.expert_share(10, 3, e));
    return v;
  };
  EXPECT_EQ(table("7"), table("7"));  // bit for bit
  EXPECT_NE(table("7"), table("8"));
}

TEST(ExpertLoads, LayerCorrelationKeepsTheSamePopularExperts) {
  const auto busiest = [](const ExpertLoads& l, int64_t layer) {
    int64_t best = 0;
    for (int64_t e = 0; e < 256; ++e)
      if (l.expert_share(layer, 0, e) > l.expert_share(layer, 0, best)) best = e;
    return best;
  };
  // Zipf s = 1: the top expert holds 2x the second's rows, far beyond the microbatch noise.
  const ExpertLoads same(plan({"scenario.routing=zipf", "scenario.layer_correlation=1"}));
  const ExpertLoads fresh(plan({"scenario.routing=zipf", "scenario.layer_correlation=0"}));
  int same_top = 0, fresh_top = 0;
  for (int64_t l = 3; l < 61; ++l) {
    same_top += busiest(same, l) == busiest(same, 3);
    fresh_top += busiest(fresh, l) == busiest(fresh, 3);
  }
  EXPECT_EQ(same_top, 58);
  EXPECT_LT(fresh_top, 6);  // independent layers: 1 / 256 chance each beyond layer 3 itself
}

TEST(ExpertLoads, SlotsSumTheirExperts) {
  const ExpertLoads loads(plan({"scenario.routing=zipf", "scenario.zipf_s=1.2"}));
  for (int64_t slot = 0; slot < 64; ++slot) {
    double s = 0;
    for (int64_t e = 4 * slot; e < 4 * slot + 4; ++e) s += loads.expert_share(20, 5, e);
    EXPECT_NEAR(loads.slot_share(20, 5, slot), s, 1e-15);
  }
}

// ---- the load file ----

std::string write_file(const std::string& name, const std::string& text) {
  const std::string path = stepsim::test::process_scratch().file(name);
  std::ofstream(path) << text;
  return path;
}

// A 5-layer model with 2 MoE layers (3, 4) of 8 experts.
Plan small_moe(std::vector<std::string> sets) {
  std::vector<std::string> base = {"model.num_hidden_layers=5", "model.n_routed_experts=8", "model.n_group=8",
                                   "model.topk_group=4", "model.num_experts_per_tok=2", "cluster.nodes=1",
                                   "parallel.pp=1", "parallel.ep=8", "schedule=1f1b", "train.global_batch=8",
                                   "parallel.microbatches=1"};
  base.insert(base.end(), sets.begin(), sets.end());
  return plan(base);
}

std::string csv_rows() {
  std::string s = "# measured\nlayer,expert,tokens\n";
  for (int l = 3; l < 5; ++l)
    for (int e = 0; e < 8; ++e) s += std::to_string(l) + "," + std::to_string(e) + "," + std::to_string(e == 2 ? 30 : 10) + "\n";
  return s;
}

TEST(LoadFile, CsvAndJsonGiveTheFileShares) {
  const std::string csv = write_file("loads_ok.csv", csv_rows());
  const std::string json = write_file(
      "loads_ok.json", R"({"layers": {"3": [10,10,30,10,10,10,10,10], "4": [10,10,30,10,10,10,10,10]}})");
  for (const auto& path : {csv, json}) {
    const ExpertLoads l(small_moe({"scenario.routing=file", "scenario.load_file=" + path}));
    // 30 of 100 tokens on expert 2, the same in every microbatch (no draws).
    EXPECT_DOUBLE_EQ(l.expert_share(3, 0, 2), 0.3) << path;
    EXPECT_DOUBLE_EQ(l.expert_share(4, 0, 0), 0.1) << path;
    EXPECT_DOUBLE_EQ(l.slot_share(4, 0, 2), 0.3) << path;  // EP 8: one expert per GPU
  }
}

void expect_file_error(const std::string& name, const std::string& text, const std::string& what) {
  const std::string path = write_file(name, text);
  try {
    ExpertLoads l(small_moe({"scenario.routing=file", "scenario.load_file=" + path}));
    ADD_FAILURE() << "no error for " << name;
  } catch (const ConfigError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find(path), std::string::npos) << msg;
    EXPECT_NE(msg.find("scenario.load_file"), std::string::npos) << msg;
    EXPECT_NE(msg.find(what), std::string::npos) << msg;
    EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
  }
}

TEST(LoadFile, BadFilesNameTheFileTheKeyAndTheProblem) {
  expect_file_error("bad_header.csv", "layer,tokens\n3,1\n", "header");
  expect_file_error("garbled.csv", "layer,expert,tokens\n3,x,1\n", "line 2");
  expect_file_error("negative.csv", "layer,expert,tokens\n3,0,-1\n", "negative");
  std::string missing_layer = "layer,expert,tokens\n";
  for (int e = 0; e < 8; ++e) missing_layer += "3," + std::to_string(e) + ",1\n";
  expect_file_error("missing_layer.csv", missing_layer, "layer 4: missing");
  expect_file_error("dense_layer.csv", "layer,expert,tokens\n1,0,1\n", "not an MoE layer");
  expect_file_error("garbled.json", "{\"layers\": [1, 2", "not valid JSON");
  expect_file_error("short.json", R"({"layers": {"3": [1, 2]}})", "array of 8");
  expect_file_error("loads.txt", "x", "unknown format");
  try {
    ExpertLoads l(small_moe({"scenario.routing=file", "scenario.load_file=/nonexistent/loads.csv"}));
    ADD_FAILURE() << "no error for a missing file";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/loads.csv: scenario.load_file: cannot read"), std::string::npos)
        << e.what();
  }
}

// ---- flows ----

double total(const std::vector<PeerFlow>& f) {
  double s = 0;
  for (const auto& x : f) s += x.bytes;
  return s;
}

TEST(LoadedAllToAll, EvenSharesReproduceTheBalancedFlows) {
  const Plan p = plan();
  const RoutingStats r = uniform_routing(p);
  const std::vector<double> even(64, 1.0 / 64);
  const auto tokens = [](int64_t) { return 4096.0; };
  const int64_t gpu = 64 * 3 + 8 * 2 + 5;  // second EP group of the rank, node 2, rail 5
  const AllToAll loaded = ep_all_to_all_loaded(p, r, gpu, tokens, 1.0, even.data());
  const AllToAll balanced = ep_all_to_all(p, ep_layout(p, r), gpu, tokens, 1.0);
  ASSERT_EQ(loaded.out.size(), balanced.out.size());
  for (size_t i = 0; i < loaded.out.size(); ++i) {
    EXPECT_EQ(loaded.out[i].peer, balanced.out[i].peer);
    EXPECT_NEAR(loaded.out[i].bytes, balanced.out[i].bytes, 1e-9 * balanced.out[i].bytes);
    EXPECT_NEAR(loaded.in[i].bytes, balanced.in[i].bytes, 1e-9 * balanced.in[i].bytes);
  }
}

TEST(LoadedAllToAll, AHotNodeReceivesEveryTokenAndSendsItBack) {
  // EP 32 = 4 nodes, uniform node statistics: a token touches 4 nodes' worth of its 8 experts
  // (mean_nodes = 4). Node 0 holds 40 % of the rows, nodes 1..3 20 % each: the chance to need
  // node n is min(1, 4 x share) = 1 for node 0 and 0.8 for the others.
  const Plan p = plan({"parallel.ep=32"});
  const RoutingStats r = uniform_routing(p);
  ASSERT_DOUBLE_EQ(r.mean_nodes, 4.0);
  std::vector<double> share(32, 0.2 / 8);
  for (int j = 0; j < 8; ++j) share[size_t(j)] = 0.4 / 8;
  const auto tokens = [](int64_t) { return 1000.0; };
  const int64_t gpu = 8 + 3;  // node 1, rail 3
  const AllToAll a = ep_all_to_all_loaded(p, r, gpu, tokens, 1.0, share.data());
  for (const auto& f : a.out) {
    if (f.peer / 8 == 1) continue;
    EXPECT_EQ(f.peer % 8, 3);
    EXPECT_NEAR(f.bytes, f.peer / 8 == 0 ? 1000.0 : 800.0, 1e-9) << f.peer;
  }
  // What node 1 receives over IB: every other node's rail-3 GPU's tokens x 0.8.
  double ib_in = 0;
  for (const auto& f : a.in)
    if (f.peer / 8 != 1) ib_in += f.bytes;
  EXPECT_NEAR(ib_in, 3 * 1000 * 0.8, 1e-9);
  // NVLink: 4 x 1000 x 0.8 copies reach this rail; a touched node gets 8 x 0.2 / 0.8 = 2 experts,
  // so a local GPU (1/8 of the node's rows) is needed with probability 1 - (7/8)^2.
  for (const auto& f : a.out)
    if (f.peer / 8 == 1) EXPECT_NEAR(f.bytes, 3200 * (1 - 49.0 / 64), 1e-9);
  // Combine retraces the flows: what arrived is sent back.
  const AllToAll back = reversed(a);
  EXPECT_DOUBLE_EQ(total(back.out), total(a.in));
  EXPECT_DOUBLE_EQ(total(back.in), total(a.out));
}

}  // namespace
}  // namespace stepsim
