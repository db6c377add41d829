// hardware.preset: one line switches GPU. The expected peaks are the datasheets' dense figures typed
// in here (NVIDIA H100/H200/DGX B200/GB200 NVL72, AMD MI300X data sheets), not read from the files;
// achievable rates are the H800's measured fractions of its peaks (1456.6 / 1979, 757.7 / 989).
// Precedence: --set > the config's keys > hardware.profile > hardware.preset.
#include <gtest/gtest.h>

#include <string>

#include "simulator/config/config_loader.hpp"
#include "tests/config/config_test_util.hpp"

namespace stepsim {
namespace {

using test::default_text;
using test::default_yaml;
using test::replaced;
using test::TempFile;

struct Datasheet {
  const char* preset;
  double fp8, bf16, memory_GB, ib_GBps, link_per_direction_GBps;
};

// Dense peaks (TFLOP/s), HBM (GB), NIC and scale-up link per direction (GB/s).
const Datasheet kSheets[] = {
    {"h800", 1979, 989, 80, 50, 200},      {"h100-sxm", 1979, 989, 80, 50, 450},
    {"h200", 1979, 989, 141, 50, 450},     {"b200", 4500, 2250, 180, 50, 900},
    {"gb200", 5000, 2500, 186, 50, 900},   {"mi300x", 2614.9, 1307.4, 192, 50, 448},
    // Blackwell Ultra: HGX B300 (2.1 TB over 8 GPUs) and GB300 NVL72 (20 TB over 72), ConnectX-8.
    {"b300", 4500, 2250, 270, 100, 900},   {"gb300", 5000, 2500, 279, 100, 900},
};

TEST(HardwarePreset, EveryPresetMatchesItsDatasheet) {
  for (const auto& d : kSheets) {
    SCOPED_TRACE(d.preset);
    const Plan p = load_plan(default_yaml(), {std::string("hardware.preset=") + d.preset});
    EXPECT_DOUBLE_EQ(p.hardware.peak_fp8_tflops, d.fp8);
    EXPECT_DOUBLE_EQ(p.hardware.peak_bf16_tflops, d.bf16);
    EXPECT_DOUBLE_EQ(p.hardware.memory_GiB, d.memory_GB);  // HBM "GB" are binary stack sizes
    EXPECT_DOUBLE_EQ(p.hardware.ib_GBps, d.ib_GBps);
    // Achievable: the H800's measured shares of peak, within the files' 0.1 TFLOP/s rounding.
    EXPECT_NEAR(p.hardware.fp8_tflops, d.fp8 * 1456.6 / 1979, 0.06);
    EXPECT_NEAR(p.hardware.bf16_tflops, d.bf16 * 757.7 / 989, 0.06);
    // Scale-up link: 80 % of the datasheet (DeepSeek measured 160 of the H800's 200).
    EXPECT_NEAR(p.hardware.nvlink_GBps, 0.8 * d.link_per_direction_GBps, 1e-9);
  }
}

TEST(HardwarePreset, DefaultConfigIsTheSeedsH800) {
  const Plan p = load_plan(default_yaml());
  EXPECT_EQ(p.hardware.name, "H800");
  EXPECT_DOUBLE_EQ(p.hardware.fp8_tflops, 1456.6);
  EXPECT_DOUBLE_EQ(p.hardware.bf16_tflops, 757.7);
  EXPECT_DOUBLE_EQ(p.hardware.nvlink_GBps, 160);
  EXPECT_EQ(p.hardware.sms, 132);
  EXPECT_TRUE(p.notes.empty());
}

TEST(HardwarePreset, OneLineInAConfigSwitchesGpu) {
  const TempFile f("b200.yaml", replaced(default_text(), "preset: h800", "preset: b200"));
  const Plan p = load_plan(f.path());
  EXPECT_EQ(p.hardware.name, "B200");
  EXPECT_DOUBLE_EQ(p.hardware.fp8_tflops, 3312.1);
  EXPECT_EQ(p.hardware.sms, 148);
}

TEST(HardwarePreset, CommandLineBeatsConfigBeatsProfileBeatsPreset) {
  // The config sets nvlink_GBps itself; a profile sets nvlink_GBps and memory_GiB; the preset all.
  const TempFile prof("prof.yaml", "hardware:\n  nvlink_GBps: 111\n  memory_GiB: 99\n  comm_sms: 7\n");
  const std::string text =
      replaced(default_text(), "  preset: h800\n",
               "  preset: h200\n  nvlink_GBps: 222\n  profile: " + prof.path() + "\n");
  const TempFile cfg("c.yaml", text);
  const Plan p = load_plan(cfg.path(), {"hardware.comm_sms=3"});
  EXPECT_DOUBLE_EQ(p.hardware.nvlink_GBps, 222);  // config over profile and preset
  EXPECT_DOUBLE_EQ(p.hardware.memory_GiB, 99);    // profile over preset (H200: 141)
  EXPECT_EQ(p.hardware.comm_sms, 3);              // --set over profile
  EXPECT_DOUBLE_EQ(p.hardware.peak_fp8_tflops, 1979);  // preset fills the rest
  // Overridden preset and profile keys are never silent: each is a note the command line prints.
  ASSERT_EQ(p.notes.size(), 4u);  // nvlink over profile and preset, memory over preset, comm_sms over profile
  std::string all;
  for (const auto& n : p.notes) all += n + "\n";
  EXPECT_NE(all.find("hardware.nvlink_GBps = 222"), std::string::npos) << all;
  EXPECT_NE(all.find("hardware.memory_GiB = 99 overrides hardware.preset h200's 141"), std::string::npos) << all;
  EXPECT_NE(all.find("hardware.comm_sms = 3"), std::string::npos) << all;

  // --set of a preset switches GPU on a config that names another one.
  const Plan q = load_plan(default_yaml(), {"hardware.preset=mi300x", "hardware.ib_GBps=100"});
  EXPECT_EQ(q.hardware.name, "MI300X");
  EXPECT_DOUBLE_EQ(q.hardware.ib_GBps, 100);
}

// A preset given with --set switches the GPU even on a config with rates of its own: Llama 3.1
// 405B's file states H100 rates and no peaks, and --set hardware.preset=b200 took B200's peaks
// (MFU 0.518 -> 0.228) while the step kept the H100 rates. Now the preset's keys replace the
// file's, each replacement a note; a key given with --set still wins over the preset.
// The shipped file now names the h100-sxm preset (the per-op cost model reads its keys), so the
// test writes the H100 rates it used to state into a copy of it.
std::string llama_with_own_rates() {
  const std::string llama = test::source_path("workloads/llama-3.1-405b.yaml");
  return replaced(replaced(test::read_text(llama), "  preset: h100-sxm ",
                           "  name: H100\n  fp8_tflops: 1456.6\n  bf16_tflops: 757.7\n  ib_GBps: 50\n  nvlink_GBps: 360\n"
                           "  sms: 132\n  memory_GiB: 80\n #"),
                  "config_json: models/", "config_json: " + test::source_path("workloads/models/"));
}

TEST(HardwarePreset, PresetGivenWithSetReplacesTheFilesGpuKeys) {
  const TempFile own("llama-own-rates.yaml", llama_with_own_rates());
  const std::string& llama = own.path();
  const Plan p = load_plan(llama, {"hardware.preset=b200"});
  EXPECT_EQ(p.hardware.name, "B200");
  EXPECT_DOUBLE_EQ(p.hardware.fp8_tflops, 3312.1);  // the B200 preset's, not the file's 1456.6
  EXPECT_DOUBLE_EQ(p.hardware.bf16_tflops, 1723.8);
  EXPECT_DOUBLE_EQ(p.hardware.peak_bf16_tflops, 2250);
  EXPECT_DOUBLE_EQ(p.hardware.nvlink_GBps, 720);
  EXPECT_EQ(p.hardware.sms, 148);
  EXPECT_DOUBLE_EQ(p.hardware.memory_GiB, 180);
  std::string all;
  for (const auto& n : p.notes) all += n + "\n";
  EXPECT_NE(all.find("hardware.fp8_tflops = 3312.1 from hardware.preset b200 (--set) replaces " + llama + "'s 1456.6"),
            std::string::npos)
      << all;
  // Another --set still beats the preset, and says so.
  const Plan q = load_plan(llama, {"hardware.bf16_tflops=1500", "hardware.preset=b200"});
  EXPECT_DOUBLE_EQ(q.hardware.bf16_tflops, 1500);
  EXPECT_DOUBLE_EQ(q.hardware.fp8_tflops, 3312.1);
  // The config's own preset still fills only what the file leaves unset (one file, one intent).
  const TempFile f("mixed.yaml", replaced(test::read_text(llama), "  name: H100\n", "  name: H100\n  preset: b200\n"));
  const Plan r = load_plan(f.path());
  EXPECT_DOUBLE_EQ(r.hardware.fp8_tflops, 1456.6);
  EXPECT_DOUBLE_EQ(r.hardware.peak_fp8_tflops, 4500);
  EXPECT_FALSE(r.notes.empty());
}

// The gb200 and gb300 presets' names say NVL72, but the rack is a cluster key: the README and a note
// both say the domain stays one node unless cluster.nvlink_domain=72 is set; the HGX parts say nothing.
TEST(HardwarePreset, Nvl72PresetsSayTheirNvlinkDomainIsOneNodeUnlessSet) {
  for (const std::string preset : {"gb200", "gb300"}) {
    SCOPED_TRACE(preset);
    const auto has_note = [&](const Plan& p) {
      for (const auto& n : p.notes)
        if (n.find("hardware.preset " + preset + " leaves cluster.nvlink_domain at one node (8 GPUs)") != std::string::npos &&
            n.find("NVL72 rack is cluster.nvlink_domain=72") != std::string::npos)
          return true;
      return false;
    };
    const Plan eight = load_plan(default_yaml(), {"hardware.preset=" + preset});
    EXPECT_EQ(eight.nvlink_ranks(), 8);
    EXPECT_TRUE(has_note(eight));
    const Plan rack = load_plan(default_yaml(), {"hardware.preset=" + preset, "cluster.nvlink_domain=72"});
    EXPECT_EQ(rack.nvlink_ranks(), 64);  // one EP-64 group per 72-GPU rack
    EXPECT_FALSE(has_note(rack));
  }
  for (const char* hgx : {"b200", "b300"}) EXPECT_TRUE(load_plan(default_yaml(), {std::string("hardware.preset=") + hgx}).notes.empty());
}

TEST(HardwarePreset, UnknownPresetIsOneLineError) {
  test::expect_default_rejects({"hardware.preset=h900"},
                               {"--set", "hardware.preset", "h900", "h800, h100-sxm, h200, b200, gb200, b300, gb300, mi300x"});
  test::expect_text_rejects(replaced(default_text(), "preset: h800", "preset: A100"), "bad.yaml",
                            {"bad.yaml", "hardware.preset", "A100", "use one of"});
}

// Blackwell's block-scaled formats run only on a preset that names their tensor cores' share: the
// B200 and GB200 presets carry the datasheets' dense FP4 peaks (DGX B200: 144 PFLOP/s sparse FP4 per
// 8 GPUs, 9 dense each; GB200 NVL72: 1,440 per 72, 10 dense); the H800 has no MXFP8 or FP4 path
// (checked where GEMMs are costed per op, sim.compute: predicted).
TEST(HardwarePreset, BlockScaledFormatsNeedABlackwellPreset) {
  test::expect_default_rejects({"sim.compute=predicted", "train.precision=mxfp8"},
                               {"train.precision: mxfp8", "H800", "hardware.gemm_mxfp8_peak_share", "use fp8",
                                "the Blackwell presets have one"});
  test::expect_default_rejects({"sim.compute=predicted", "train.precision=nvfp4"},
                               {"train.precision: nvfp4", "H800", "hardware.peak_fp4_tflops", "use fp8"});
  // Blackwell Ultra: HGX B300's 105 PFLOP/s dense FP4 per 8 GPUs; GB300's 15 dense (NVIDIA's blog).
  for (const auto& [preset, fp4] : {std::pair<const char*, double>{"b200", 9000}, {"gb200", 10000}, {"b300", 13125}, {"gb300", 15000}}) {
    SCOPED_TRACE(preset);
    const Plan p = load_plan(default_yaml(), {std::string("hardware.preset=") + preset, "sim.compute=predicted", "train.precision=nvfp4"});
    EXPECT_EQ(p.hardware.peak_fp4_tflops, fp4);
    EXPECT_EQ(p.train.low_precision, LowPrecision::Nvfp4);
    EXPECT_NO_THROW(load_plan(default_yaml(), {std::string("hardware.preset=") + preset, "sim.compute=predicted", "train.precision=mxfp8"}));
  }
}

}  // namespace
}  // namespace stepsim
