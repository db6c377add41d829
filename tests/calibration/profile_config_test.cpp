// hardware.profile: a YAML file's hardware: map fills in keys the config leaves unset; explicit
// keys and --set win; bad profiles and out-of-range keys are one-line ConfigErrors naming the file
// and the key.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "vocabulary/config_error.hpp"
#include "../scratch_dir.hpp"
#include "simulator/config/config_loader.hpp"
#include "tests/calibration/calibration_test_util.hpp"

namespace stepsim {
namespace {

// A profile file unique to this test process, removed at scope end.
struct ProfileFile {
  std::filesystem::path path;
  explicit ProfileFile(const std::string& text) {
    static int count = 0;
    path = stepsim::test::process_scratch().file("profile-" + std::to_string(count++) + ".yaml");
    std::ofstream(path) << text;
  }
  ~ProfileFile() { std::filesystem::remove(path); }
};

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

TEST(ProfileConfig, DefaultsAreSpeedOfLight) {
  const Plan p = load_plan(default_config_path(), {});
  EXPECT_EQ(p.hardware.gemm_efficiency, 1.0);
  EXPECT_EQ(p.hardware.wgrad_efficiency(), 1.0);
  EXPECT_EQ(p.hardware.bf16_gemm_efficiency, 1.0);
  EXPECT_EQ(p.hardware.attention_efficiency, 1.0);
  EXPECT_EQ(p.hardware.a2a_efficiency, 1.0);
  EXPECT_EQ(p.hardware.a2a_latency_s, 0.0);
  EXPECT_EQ(p.hardware.a2a_layout_latency_s, 0.0);
}

TEST(ProfileConfig, ProfileFillsUnsetKeysAndExplicitKeysWin) {
  ProfileFile prof("hardware:\n  gemm_efficiency: 0.6\n  a2a_latency_s: 0.002\n  comm_sms: 24\n");
  // The capture config sets comm_sms: 20 itself, so the profile's 24 must not win.
  const Plan p = load_plan(test::capture_yaml(), {test::kSpeedOfLight, "hardware.profile=" + prof.path.string(), "hardware.a2a_latency_s=0.003"});
  EXPECT_EQ(p.hardware.gemm_efficiency, 0.6);
  EXPECT_EQ(p.hardware.comm_sms, 20);
  EXPECT_EQ(p.hardware.a2a_latency_s, 0.003);
  EXPECT_EQ(p.hardware.wgrad_efficiency(), 0.6);  // unset wgrad follows gemm_efficiency
}

TEST(ProfileConfig, ShippedProfileLoads) {
  const Plan p = load_plan(test::capture_yaml(), {test::kSpeedOfLight, "hardware.profile=" + test::calibrated_profile()});
  EXPECT_LT(p.hardware.gemm_efficiency, 1.0);
  EXPECT_GT(p.hardware.a2a_latency_s, 0.0);
  EXPECT_GT(p.hardware.nonmatmul_s_per_token_layer, 0.0);
}

TEST(ProfileConfig, BadProfilesAreOneLineErrors) {
  const std::string missing = error_of([] { load_plan(test::capture_yaml(), {"hardware.profile=/no/such/profile.yaml"}); });
  EXPECT_NE(missing.find("hardware.profile"), std::string::npos) << missing;
  EXPECT_NE(missing.find("/no/such/profile.yaml"), std::string::npos) << missing;

  ProfileFile unknown("hardware:\n  gemm_efficncy: 0.5\n");
  const std::string u = error_of([&] { load_plan(test::capture_yaml(), {"hardware.profile=" + unknown.path.string()}); });
  EXPECT_NE(u.find(unknown.path.string()), std::string::npos) << u;
  EXPECT_NE(u.find("hardware.gemm_efficncy"), std::string::npos) << u;

  ProfileFile other("hardware:\n  gemm_efficiency: 0.5\nparallel:\n  pp: 2\n");
  const std::string o = error_of([&] { load_plan(test::capture_yaml(), {"hardware.profile=" + other.path.string()}); });
  EXPECT_NE(o.find("parallel"), std::string::npos) << o;

  ProfileFile negative("hardware:\n  a2a_latency_s: -1\n");
  const std::string n = error_of([&] { load_plan(test::capture_yaml(), {"hardware.profile=" + negative.path.string()}); });
  EXPECT_NE(n.find("hardware.a2a_latency_s"), std::string::npos) << n;
  EXPECT_NE(n.find("negative"), std::string::npos) << n;
}

TEST(ProfileConfig, EfficienciesAreSharesOfTheRate) {
  const std::string above = error_of([] { load_plan(default_config_path(), {"hardware.gemm_efficiency=1.5"}); });
  EXPECT_NE(above.find("hardware.gemm_efficiency"), std::string::npos) << above;
  EXPECT_NE(above.find("at most 1"), std::string::npos) << above;
  const std::string zero = error_of([] { load_plan(default_config_path(), {"hardware.attention_efficiency=0"}); });
  EXPECT_NE(zero.find("hardware.attention_efficiency"), std::string::npos) << zero;
}

TEST(ProfileConfig, CaptureScheduleNeedsItsScenario) {
  const std::string pp = error_of([] { load_plan(test::capture_yaml(), {"parallel.pp=2", "parallel.ep=32"}); });
  EXPECT_NE(pp.find("parallel.pp"), std::string::npos) << pp;
  const std::string mb = error_of([] { load_plan(test::capture_yaml(), {"parallel.microbatches=1", "train.global_batch=64"}); });
  EXPECT_NE(mb.find("parallel.microbatches"), std::string::npos) << mb;
}

}  // namespace
}  // namespace stepsim
