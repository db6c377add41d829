// Hostile and careless input, one class per test: each must end in one error line naming the file
// or --set, the key and the fix, with exit code 2 -- or in a right answer. Never a crash, a hang,
// an exhausted memory, a silently ignored key or a lost file.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "vocabulary/config_error.hpp"
#include "simulator/config/config_loader.hpp"
#include "simulator/io/json_text.hpp"
#include "tests/cli_runner.hpp"
#include "tests/config/config_test_util.hpp"
#include "workloads/routing/load_file.hpp"

namespace stepsim::test {
namespace {

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

const std::string kDefault = std::string(STEPSIM_SOURCE_DIR) + "/workloads/deepseek-v3.yaml";

// ---- files that are not configs ----

// A text yaml-cpp loops on forever (a fuzzing find of a shape the pre-parse checks do not
// know): the parse's time limit turns it into one error line after 10 s instead of a hang.
TEST(HostileFiles, YamlTheParserLoopsOnIsOneLineNotAHang) {
  expect_rejected("roofline " + std::string(STEPSIM_SOURCE_DIR) + "/tests/data/yaml-cpp-loop.yaml",
                  {"yaml-cpp-loop.yaml", "malformed YAML", "did not finish within 10 s"});
}

// The guard's alarm must end the parse even in a process that ignores SIGALRM: a fork inherits the
// disposition (and libFuzzer, which drives this parse in fuzz builds, installs its own handler).
TEST(HostileFiles, YamlLoopEndsEvenWhereTheCallerIgnoresTheAlarm) {
  std::signal(SIGALRM, SIG_IGN);  // this test's own process (each test runs in its own)
  const std::string text = slurp(std::string(STEPSIM_SOURCE_DIR) + "/tests/data/yaml-cpp-loop.yaml");
  const std::string msg = config_error_of([&] { (void)load_plan_from_string(text, "loop.yaml"); });
  EXPECT_NE(msg.find("loop.yaml: malformed YAML: the parser did not finish within 10 s"), std::string::npos) << msg;
}

// Few values, many bytes: a 300 kB string aliased 20,000 times is a 360 kB file that needed 6 GB.
TEST(HostileFiles, AliasesOfALongStringAreBoundedByBytes) {
  ScratchDir d;
  std::string y = "a: &a " + std::string(300000, 'x') + "\nb: [";
  for (int i = 0; i < 20000; ++i) y += i ? ",*a" : "*a";
  y += "]\n";
  const std::string path = d.write("long.yaml", y);
  expect_rejected("roofline " + path, {path, "b: more than 16 MiB", "aliases"});
  // The same with a long map key: keys are copied per alias too.
  std::string k = "a: &a\n  ? " + std::string(300000, 'k') + "\n  : 1\nb: [";
  for (int i = 0; i < 20000; ++i) k += i ? ",*a" : "*a";
  k += "]\n";
  const std::string keys = d.write("keys.yaml", k);
  expect_rejected("roofline " + keys, {keys, "more than 16 MiB", "aliases"});
}

TEST(HostileFiles, AliasBombIsBoundedNotExpanded) {
  ScratchDir d;
  // 9^8 = 43 million leaves once expanded, from 330 bytes.
  std::string y = "a: &a [x,x,x,x,x,x,x,x,x]\n";
  const char* names = "abcdefgh";
  for (int i = 1; i < 8; ++i) {
    y += std::string(1, names[i]) + ": &" + names[i] + " [";
    for (int k = 0; k < 9; ++k) y += std::string(k ? "," : "") + "*" + names[i - 1];
    y += "]\n";
  }
  const std::string path = d.write("bomb.yaml", y);
  expect_rejected("roofline " + path, {path, "100000 values", "aliases"});
  // The same bomb as one flow map in a --set value.
  std::string flow = "{a: &a [x,x,x,x,x,x,x,x,x]";
  for (int i = 1; i < 8; ++i) {
    flow += std::string(", ") + names[i] + ": &" + names[i] + " [";
    for (int k = 0; k < 9; ++k) flow += std::string(k ? "," : "") + "*" + names[i - 1];
    flow += "]";
  }
  expect_rejected("roofline --set 'model=" + flow + "}'", {"--set", "100000 values"});
}

TEST(HostileFiles, RootCommaDoesNotHangTheYamlParser) {
  // Found by scripts/fuzz.sh (config): yaml-cpp 0.7 loops forever, allocating, on these.
  for (const char* v : {",a", " ,}", "\"x\",a", "[1],b", "{a: 1},b", "&a ,b"})
    expect_rejected(std::string("roofline --set 'model.name=") + v + "'", {"--set model.name", "','"});
  ScratchDir d;
  const std::string path = d.write("comma.yaml", "# a config\n,model: {}\n");
  expect_rejected("roofline " + path, {path, "','"});
  // A ',' right after a root anchor or tag, with a line after it (scripts/fuzz.sh config, 10 minutes).
  for (const char* text : {" &a,2]\nx: &a\n", "&a,\nx\n", " !t,\nx\n", " &\xfe\xff\xff\xf9,2]\nx: &a\n",
                           "  a: 61\n , b: 2\n", "# c\n  a: 1\n ,\n", "&x [1, x' &a ],y[1:2*a\n"}) {
    const std::string anchored = d.write("anchor.yaml", text);
    expect_rejected("roofline " + anchored, {anchored, "','"});
  }
}

TEST(HostileFiles, DevicesFifosAndDirectoriesAreNotRead) {
  ScratchDir d;
  const std::string fifo = d.file("config.fifo");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  expect_rejected("roofline /dev/zero", {"/dev/zero", "a device", "regular file"});
  expect_rejected("roofline " + fifo, {fifo, "a FIFO"});  // must not block waiting for a writer
  expect_rejected("roofline " + d.path().string(), {d.path().string(), "a directory"});
  expect_rejected("roofline --set model.config_json=/dev/zero", {"/dev/zero", "model.config_json"});
  expect_rejected("roofline --set hardware.profile=" + fifo, {fifo, "hardware.profile"});
  expect_rejected("compare /dev/zero", {"/dev/zero", "profiler trace"});
}

TEST(HostileFiles, OversizedConfigIsRefusedBeforeReading) {
  ScratchDir d;
  const std::string path = d.write("big.yaml", "# " + std::string(2 << 20, 'x') + "\n");
  expect_rejected("roofline " + path, {path, "1 MiB"});
}

TEST(HostileFiles, ExtraYamlDocumentsAreRejected) {
  ScratchDir d;
  const std::string path = d.write("two.yaml", slurp(kDefault) + "\n---\nparallel: {pp: 4}\n");
  expect_rejected("roofline " + path, {path, "2 YAML documents"});
}

TEST(HostileFiles, DeeplyNestedHfConfigIsOneLine) {
  ScratchDir d;
  const std::string json = d.write("config.json", std::string(5000, '[') + std::string(5000, ']'));
  expect_rejected("roofline --set model.config_json=" + json, {json});
}

// ---- sizes and numbers ----

TEST(HostileNumbers, HugeModelDimensionsNameTheKeyAndTheLimit) {
  expect_rejected("roofline --set model.hidden_size=4611686018427387904", {"--set", "model.hidden_size", "at most 1048576"});
  expect_rejected("roofline --set model.n_routed_experts=4294967296", {"model.n_routed_experts", "at most 16384"});
  expect_rejected("roofline --set model.num_hidden_layers=1000000000000", {"model.num_hidden_layers", "at most 4096"});
  expect_rejected("roofline --set model.vocab_size=18446744073709551615", {"model.vocab_size", "at most"});
}

TEST(HostileNumbers, ProductsOfDimensionsThatOverflowAreCaught) {
  // Each within its own bound, together 61 layers x 16384 experts x 3 x 2^20 x 2^22 ~ 1.3e19
  // parameters: past int64. The check names the model and the limit (2^50).
  expect_rejected("roofline --set model.n_routed_experts=16384 --set model.n_group=8 --set parallel.ep=64 "
                  "--set model.moe_intermediate_size=4194304 --set model.hidden_size=1048576",
                  {"model", "parameters exceed", "1.13e+15"});
}

TEST(HostileNumbers, MoeModelWithoutMoeLayerIsRejectedNotCrashing) {
  expect_rejected("simulate --quiet --set model.first_k_dense_replace=61",
                  {"--set model.first_k_dense_replace=61", "model.first_k_dense_replace", "n_routed_experts=0"});
}

TEST(HostileNumbers, ExtremeFloatsNeverReachSimGrid) {
  expect_rejected("roofline --set 'scenario.stragglers=[{gpu: 1, clock: 1e300}]'",
                  {"scenario.stragglers[0].clock", "between 0.001 and 1000"});
  expect_rejected("roofline --set 'scenario.stragglers=[{gpu: 1, nic_GBps: 1e-300}]'",
                  {"scenario.stragglers[0].nic_GBps"});
  expect_rejected("roofline --set scenario.jitter_sigma=10", {"scenario.jitter_sigma", "at most 1"});
  expect_rejected("roofline --set hardware.a2a_efficiency=1e-20", {"hardware.a2a_efficiency", "at least 0.01"});
  expect_rejected("roofline --set hardware.fp8_tflops=1e-300", {"hardware.fp8_tflops"});
  expect_rejected("roofline --set hardware.ib_GBps=.inf", {"hardware.ib_GBps", "finite"});
  expect_rejected("roofline --set hardware.nonmatmul_s_per_token_layer=1.7e6", {"hardware.nonmatmul_s_per_token_layer"});
}

TEST(HostileNumbers, ReplaysThatWouldRunForHoursAreRefused) {
  // Every GPU of 32,768 replayed: twice the 16,384-GPU step's 1.2e8 activities, over 1.5e8.
  expect_rejected("simulate --quiet --set sim.mode=full --set cluster.nodes=4096 --set train.global_batch=245760",
                  {"sim.mode", "SimGrid activities", "sim.mode=auto"});
  // A reduced replay of TP 8 x CP 16 x PP 16 runs all 2,048 GPUs of its one replica, 1,024
  // microbatches each (about 2.7e8 activities): the guard once counted one GPU per pipeline rank
  // (2.1e6) and let a 36-minute replay start.
  expect_rejected("simulate --quiet " + std::string(STEPSIM_SOURCE_DIR) +
                      "/workloads/llama-3.1-405b.yaml --set parallel.tp=8 --set parallel.cp=16 --set parallel.pp=16 "
                      "--set parallel.microbatches=1024 --set cluster.nodes=256 --set train.global_batch=1024",
                  {"--set parallel.microbatches=1024", "SimGrid activities on 2048 simulated GPUs", "over the 1.5e+08"});
  // Op tags hold 16-bit microbatch indices.
  expect_rejected("simulate --quiet --set train.global_batch=16777216 --set parallel.microbatches=65536",
                  {"parallel.microbatches", "at most 65534"});
}

// ---- keys that would be silently ignored ----

TEST(IgnoredKeys, ScenarioKeysOfAnotherRoutingAreErrors) {
  expect_rejected("roofline --set scenario.zipf_s=2", {"scenario.zipf_s", "scenario.routing=zipf"});
  expect_rejected("roofline --set scenario.load_file=x.csv", {"scenario.load_file", "scenario.routing=file"});
  expect_rejected("roofline --set scenario.routing=zipf --set scenario.hot_share=0.5",
                  {"scenario.hot_share", "here scenario.routing is zipf"});
  expect_rejected("roofline --set scenario.layer_correlation=0.5", {"scenario.layer_correlation"});
  expect_rejected("roofline --set workload.f_s=2", {"workload.f_s", "workload.kind=synthetic"});
}

// One rule, declared in the schema, for every key another setting makes meaningful: set while
// that setting says it is unread, it is an error (its inert value -- false, 1, the default -- is
// accepted: it means what not reading it means).
TEST(IgnoredKeys, KeysThePlanCannotReadAreErrors) {
  const std::string llama = std::string(STEPSIM_SOURCE_DIR) + "/workloads/llama-3.1-8b.yaml";
  // A dense model has no shared expert to overlap and no all-to-all to split around.
  expect_rejected("roofline " + llama + " --set parallel.overlap_shared_expert=true",
                  {"--set parallel.overlap_shared_expert=true", "only read with an MoE model with shared experts",
                   "a dense model", "set parallel.overlap_shared_expert=false"});
  expect_rejected("roofline " + llama + " --set parallel.split_lone_chunks=true",
                  {"parallel.split_lone_chunks", "a dense model"});
  // An MoE model without a shared expert (Mixtral).
  expect_rejected("roofline " + llama + " --set model.config_json=" + std::string(STEPSIM_SOURCE_DIR) +
                      "/workloads/models/mixtral-8x7b.config.json --set parallel.ep=8 --set parallel.overlap_shared_expert=true",
                  {"parallel.overlap_shared_expert", "the model has no shared expert"});
  // split_lone_chunks with no all-to-all (EP 1) or no pipeline chunks (FSDP): given in the same
  // command, an error; the default file's, left unread by such a --set, a note.
  expect_rejected("roofline --set parallel.ep=1 --set parallel.split_lone_chunks=true",
                  {"--set parallel.split_lone_chunks=true", "parallel.ep is 1", "set parallel.split_lone_chunks=false"});
  const std::string fsdp = "roofline --set schedule=fsdp --set parallel.pp=1 --set parallel.zero=3 --set parallel.microbatches=8";
  expect_rejected(fsdp + " --set parallel.split_lone_chunks=true",
                  {"parallel.split_lone_chunks", "schedule fsdp, which runs no pipeline chunks"});
  for (const std::string& args : {std::string("roofline --set parallel.ep=1"), fsdp}) {
    const CliResult r = run_stepsim(args);
    EXPECT_EQ(r.code, 0) << args << "\n" << r.err;
    EXPECT_NE(r.err.find("note: parallel.split_lone_chunks = true ("), std::string::npos) << args << "\n" << r.err;
  }
  EXPECT_EQ(run_stepsim(fsdp + " --set parallel.split_lone_chunks=false").code, 0);
  // Leaf-switch keys on a star, the rail layout on multi-plane (always rails), HSDP without ZeRO-3.
  expect_rejected("roofline --set cluster.leaf_nics=16", {"cluster.leaf_nics", "cluster.topology is star"});
  expect_rejected("roofline --set cluster.topology=multi-plane --set cluster.rail_optimized=true",
                  {"cluster.rail_optimized", "only read with cluster.topology fat-tree"});
  expect_rejected("roofline --set parallel.fsdp_shard_size=8", {"parallel.fsdp_shard_size", "set parallel.zero=3"});
  EXPECT_EQ(run_stepsim("roofline --set cluster.oversubscription=1 --set parallel.fsdp_shard_size=0").code, 0);
}

// Megatron-LM's overlap flags where they cannot apply: Megatron takes them as no-ops (and a launch
// script imported as it is carries them), so they are accepted -- but each with a note naming why
// it is not read, on stderr and in the report, never silently. The replay is indeed the same.
TEST(IgnoredKeys, MegatronFlagsThatCannotApplyAreNotes) {
  const std::string llama = std::string(STEPSIM_SOURCE_DIR) + "/workloads/llama-3.1-8b.yaml";
  const std::string one_node = "simulate --json " + llama +
                               " --set cluster.nodes=1 --set parallel.pp=1 --set parallel.tp=8 "
                               "--set train.global_batch=4 --set parallel.microbatches=2";
  const CliResult plain = run_stepsim(one_node);
  const CliResult flags = run_stepsim(one_node + " --set parallel.overlap_grad_reduce=true "
                                                 "--set parallel.overlap_param_gather=true --set parallel.ddp_bucket_size=1000000");
  ASSERT_EQ(plain.code, 0) << plain.err;
  ASSERT_EQ(flags.code, 0) << flags.err;
  // TP 8 on 8 GPUs: one GPU holds each weight, nothing is reduced over data parallelism.
  for (const char* key : {"parallel.overlap_grad_reduce", "parallel.overlap_param_gather", "parallel.ddp_bucket_size"})
    EXPECT_NE(flags.err.find(std::string("note: ") + key), std::string::npos) << key << ": " << flags.err;
  EXPECT_NE(flags.err.find("one GPU holds each weight"), std::string::npos) << flags.err;
  const auto a = nlohmann::json::parse(plain.out), b = nlohmann::json::parse(flags.out);
  EXPECT_EQ(a["step_time_s"], b["step_time_s"]);
  EXPECT_EQ(a["sim"]["activities"], b["sim"]["activities"]);
  EXPECT_EQ(a["memory"]["peak_bytes"], b["memory"]["peak_bytes"]);
  EXPECT_EQ(b["notes"].size(), 3u) << b["notes"];
  // tp_comm_overlap at TP 1; ZeRO-3's true (FSDP overlaps anyway), and the default config's bucket
  // size there.
  const CliResult tp1 = run_stepsim("roofline " + llama + " --set parallel.tp_comm_overlap=true");
  EXPECT_EQ(tp1.code, 0) << tp1.err;
  EXPECT_NE(tp1.err.find("note: parallel.tp_comm_overlap = true (--set parallel.tp_comm_overlap=true) is a no-op"),
            std::string::npos)
      << tp1.err;
  const CliResult fsdp = run_stepsim("roofline --set schedule=fsdp --set parallel.pp=1 --set parallel.zero=3 "
                                     "--set parallel.microbatches=8 --set parallel.split_lone_chunks=false");
  EXPECT_EQ(fsdp.code, 0) << fsdp.err;
  EXPECT_NE(fsdp.err.find("note: parallel.overlap_grad_reduce = true (" + kDefault + ") is a no-op"), std::string::npos)
      << fsdp.err;
  EXPECT_NE(fsdp.err.find("note: parallel.ddp_bucket_size"), std::string::npos) << fsdp.err;
  // Off, the flags are quiet; an explicit false under ZeRO-3 stays an error (an FSDP without overlap).
  EXPECT_EQ(run_stepsim("roofline " + llama).err, "");
  expect_rejected("roofline --set schedule=fsdp --set parallel.pp=1 --set parallel.zero=3 --set parallel.microbatches=8 "
                  "--set parallel.split_lone_chunks=false --set parallel.overlap_grad_reduce=false",
                  {"--set parallel.overlap_grad_reduce=false", "ZeRO-3"});
}

// A batch given in tokens is named, and fixed, in tokens: main's message blamed train.global_batch,
// a key the config did not hold, and asked for a multiple of replicas in sequences.
TEST(Messages, BatchInTokensIsNamedInTokens) {
  expect_rejected("roofline --set train.global_batch_tokens=61440000",
                  {"--set train.global_batch_tokens=61440000", "train.global_batch_tokens: 61440000 tokens (15000 sequences",
                   "use a multiple of 1048576 tokens"});
  expect_rejected("roofline --set train.global_batch_tokens=4096",
                  {"train.global_batch_tokens: 4096 tokens (1 sequence of", "use at least 1048576 tokens"});
}

TEST(IgnoredKeys, UnknownCommandSaysSo) {
  expect_rejected("frobnicate", {"frobnicate", "unknown command", "simulate"});
}

TEST(Cli, VersionPrintsTheProjectVersion) {
  const CliResult r = run_stepsim("--version");
  EXPECT_EQ(r.code, 0);
  EXPECT_EQ(r.out.rfind("stepsim 0.", 0), 0u) << r.out;
}

// ---- messages ----

TEST(Messages, PlanErrorsFromSetNameTheSet) {
  expect_rejected("roofline --set parallel.pp=7", {"--set parallel.pp=7", "parallel.pp", "does not divide"});
  // All that fsdp needs, in one message (--set schedule=fsdp alone brings both).
  expect_rejected("roofline --set schedule=fsdp --set parallel.pp=8 --set parallel.zero=1",
                  {"parallel.pp=1 and parallel.zero=3"});
}

TEST(Messages, NonUtf8NamesAreRejectedAndNonUtf8PathsStillGiveValidJson) {
  expect_rejected("roofline --set 'model.name=a\xff'", {"model.name", "UTF-8"});
  ScratchDir d;
  const std::string odd = d.write(std::string("odd\xff.yaml"), slurp(kDefault));
  const CliResult r = run_stepsim("roofline --json '" + odd + "'");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NO_THROW({ const auto report = nlohmann::json::parse(r.out); (void)report; });
}

// The default config with `line` added first in its sim: section, written to `name` in `d`.
std::string default_with_sim_line(const ScratchDir& d, const std::string& name, const std::string& line) {
  std::string yaml = slurp(kDefault);
  const size_t sim = yaml.find("\nsim:\n");
  EXPECT_NE(sim, std::string::npos) << "the default config has no sim: section";
  if (sim != std::string::npos) yaml.insert(sim + 6, line + "\n");
  return d.write(name, yaml);
}

// Bytes that are not UTF-8 in a --set key or value, or in a file's value, are named in the one
// error line as \xNN escapes, so the line itself stays valid UTF-8.
TEST(Messages, NonUtf8SetTextIsRejectedByNameAndEchoedAsEscapes) {
  // FF FE would reach the YAML parser as a UTF-16 byte-order mark and an empty value.
  expect_rejected("roofline --set 'sim.fidelity=\xff\xfe'", {"--set sim.fidelity", "not UTF-8", "write it in UTF-8"});
  expect_rejected("roofline --set 'sim.m\xffode=full'", {"--set sim.m\\xffode", "key is not UTF-8"});
  ScratchDir d;
  const std::string path = default_with_sim_line(d, "bytes.yaml", "  fidelity: \"fa\xffst\"");
  expect_rejected("roofline " + path, {"sim.fidelity", "unknown value \"fa\\xffst\"", "use one of: exact, fast"});
  for (const std::string& args : std::vector<std::string>{"roofline --set 'sim.fidelity=\xff\xfe'", "roofline " + path}) {
    const CliResult r = run_stepsim(args);
    EXPECT_TRUE(io::is_utf8(r.err)) << r.err;
  }
}

// A YAML tag was dropped without a word ("!!null 2" read as 2): it is refused by name.
TEST(Messages, YamlTagsAreRefusedNotDropped) {
  expect_rejected("roofline --set 'parallel.pp=!!null 2'", {"--set parallel.pp", "YAML tag", "remove it"});
  expect_rejected("roofline --set 'parallel.pp=!custom 2'", {"--set parallel.pp", "YAML tag !custom"});
  ScratchDir d;
  const std::string path = default_with_sim_line(d, "tagged.yaml", "  mode: !!str full");
  expect_rejected("roofline " + path, {path, "sim.mode", "YAML tag"});
}

// An empty value is most often an unset shell variable: read as "not given" it changed what ran
// (--emit-jobs "" ran the whole sweep instead of writing its job list).
TEST(Messages, EmptyOptionValuesAreRefusedNotReadAsAbsent) {
  ScratchDir d;
  const std::string dir = d.file("sweep");
  expect_rejected("sweep --grid parallel.microbatches=16,32 -o " + dir + " --emit-jobs ''",
                  {"--emit-jobs", "value is empty", "leave the option out"});
  EXPECT_FALSE(std::filesystem::exists(dir)) << "the refused sweep left " << dir;
  expect_rejected("simulate ''", {"config", "value is empty"});
  expect_rejected("simulate --quiet --trace ''", {"--trace", "value is empty"});
  expect_rejected("platform -o ''", {"--output", "value is empty"});
}

// Values that are valid numbers or text but no plan: each names its key and its bound.
TEST(Messages, OutOfRangeCountsRatesAndControlCharactersAreRefused) {
  // Each multi-token-prediction module is a layer the explain replays build: 10^4 took 6 GB.
  expect_rejected("roofline --set model.num_nextn_predict_layers=10000", {"model.num_nextn_predict_layers", "at most 64"});
  // A reported step of 5e-324 s made the report print an infinite percentage.
  expect_rejected("roofline --set train.reported_step_s=5e-324", {"train.reported_step_s", "at least 1e-06"});
  // An escape sequence in a name would reach the terminal through the text report.
  expect_rejected("roofline --set 'model.name=\x1b[31mRED\x07'", {"model.name", "control characters"});
}

TEST(Messages, LongValuesAreCutInTheErrorLine) {
  const std::string value(5000, 'x');
  const CliResult r = run_stepsim("roofline --set sim.fidelity=" + value);
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_LT(r.err.size(), 300u) << r.err;
  EXPECT_NE(r.err.find("xxx...\""), std::string::npos) << r.err;
}

TEST(Messages, ControlCharactersCannotSplitTheErrorLine) {
  expect_rejected("roofline '/no/such\nfile.yaml'", {"/no/such"});
}

// ---- outputs ----

// Outputs written after minutes of work (the waterfall, a sweep's chart or job list) are checked
// before the work starts, and a refused sweep leaves no directory behind.
TEST(Outputs, PathsWrittenLateAreCheckedFirst) {
  ScratchDir d;
  const std::string missing = d.file("no/such/folder/out");
  expect_rejected("explain --quiet --no-routing-sim --png " + missing + ".png", {missing, "--png", "folder exists"});
  const std::string dir = d.file("sweep");
  expect_rejected("sweep --quiet --grid parallel.microbatches=20,30 -o " + dir + " --png " + missing + ".png",
                  {"--png", "folder exists"});
  expect_rejected("sweep --quiet --grid parallel.microbatches=20,30 -o " + dir + " --emit-jobs " + missing + ".txt",
                  {"--emit-jobs", "folder exists"});
  expect_rejected("sweep --quiet --grid parallel.microbatches=20,30 -o " + dir + " --emit-jobs /dev/full",
                  {"/dev/full", "--emit-jobs"});
  EXPECT_FALSE(std::filesystem::exists(dir)) << "a refused sweep left " << dir;
}

TEST(Outputs, WriteErrorsAreReported) {
  const std::string synthetic =
      "simulate --quiet --set workload.kind=synthetic --set schedule=1f1b --set parallel.pp=2 "
      "--set parallel.microbatches=2";
  expect_rejected(synthetic + " --trace /dev/full", {"/dev/full", "--trace"});
  expect_rejected("roofline --json > /dev/full", {"stdout", "cannot write"});
  expect_rejected("platform -o /dev/full", {"/dev/full", "-o"});
}

TEST(Outputs, CalibrateNeverEmptiesAnExistingProfile) {
  ScratchDir d;
  const std::string out = d.write("profile.yaml", "precious\n");
  expect_rejected("calibrate /no/such/trace.json -o " + out, {"/no/such/trace.json"});
  EXPECT_EQ(slurp(out), "precious\n");
  // A trace with kernels but no phase annotations cannot calibrate anything.
  const std::string bare = d.write(
      "bare.json", R"({"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "ts": 1, "dur": 2}]})");
  expect_rejected("calibrate " + bare + " -o " + out, {bare, "no phase annotations"});
  EXPECT_EQ(slurp(out), "precious\n");
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(d.path()), {}), 2);  // no temporary left
}

TEST(Outputs, EmitJobsNeverWritesALineAShellWouldSplit) {
  ScratchDir d;
  const std::string jobs = d.file("jobs.txt");
  expect_rejected("sweep --grid 'parallel.microbatches=20,30\necho pwned' -o " + d.file("sw") + " --emit-jobs " + jobs,
                  {"--grid parallel.microbatches", "line break"});
  EXPECT_FALSE(std::filesystem::exists(jobs));
  EXPECT_FALSE(std::filesystem::exists(d.file("sw")));
  expect_rejected("sweep --set 'model.name=a\nb' --grid parallel.microbatches=20,30 -o " + d.file("sw2") +
                      " --emit-jobs " + jobs,
                  {"model.name"});
}

// ---- profiler traces ----

std::string kernel_event(const std::string& ts, const std::string& dur) {
  return R"({"ph": "X", "cat": "kernel", "name": "k", "ts": )" + ts + R"(, "dur": )" + dur + "}";
}

TEST(HostileTraces, BrokenTimesAreErrorsNotZeros) {
  ScratchDir d;
  const auto trace = [&](const std::string& name, const std::string& ev) {
    return d.write(name, R"({"traceEvents": [)" + ev + "]}");
  };
  const std::string neg = trace("neg.json", kernel_event("-5", "2"));
  expect_rejected("compare " + neg, {neg, "ts must be"});
  const std::string bad_dur = trace("dur.json", kernel_event("5", "\"long\""));
  expect_rejected("compare " + bad_dur, {bad_dur, "dur must be"});
  const std::string no_dur = trace("nodur.json", R"({"ph": "X", "cat": "kernel", "name": "k", "ts": 1})");
  expect_rejected("compare " + no_dur, {no_dur, "dur must be"});
  const std::string fake_gz = d.write("fake.json.gz", std::string("\x1f\x8b garbage", 10));
  expect_rejected("compare " + fake_gz, {fake_gz});
}

TEST(HostileTraces, GzippedTraceReadsLikeThePlainOne) {
  ScratchDir d;
  const std::string plain = std::string(STEPSIM_SOURCE_DIR) + "/tests/data/deepseek-train.json";
  const std::string gz = d.file("train.json.gz");
  ASSERT_EQ(std::system(("gzip -c '" + plain + "' > '" + gz + "'").c_str()), 0);
  const CliResult a = run_stepsim("compare " + plain + " --json --quiet");
  const CliResult b = run_stepsim("compare " + gz + " --json --quiet");
  ASSERT_EQ(a.code, 0) << a.err;
  ASSERT_EQ(b.code, 0) << b.err;
  auto ja = nlohmann::json::parse(a.out), jb = nlohmann::json::parse(b.out);
  ja.erase("trace");
  jb.erase("trace");
  EXPECT_EQ(ja, jb);
}

TEST(HostileTraces, HugeNumbersAreNotUndefinedBehaviour) {
  // Found by scripts/fuzz.sh (profile_trace, UBSan): a float correlation id past int64.
  ScratchDir d;
  const std::string t = d.write("big.json", R"({"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "ts": 1,
    "dur": 2, "args": {"correlation": 1e300}}, {"ph": "X", "cat": "kernel", "name": "k", "ts": 1e400, "dur": 1}]})");
  expect_rejected("compare " + t, {t});
}

// What reading the routing load file `path` says for a 4-layer plan with `experts` experts ("" if
// it is accepted).
std::string load_file_error(const std::string& path, int64_t experts) {
  Plan plan;
  plan.source = "test";
  plan.model.num_hidden_layers = 4;
  plan.model.first_k_dense_replace = 1;
  plan.model.n_routed_experts = experts;
  plan.scenario.routing = Routing::File;
  plan.scenario.load_file = path;
  try {
    (void)read_load_file(plan);
    return "";
  } catch (const ConfigError& e) {
    return e.what();
  }
}

TEST(HostileFiles, NumbersPastTheDoubleRangeAreOneLine) {
  // Found by scripts/fuzz.sh (load_file): nlohmann throws out_of_range, not parse_error, on 1e3068.
  ScratchDir d;
  const std::string hf = d.write("config.json", R"({"hidden_size": 1e3068})");
  expect_rejected("roofline --set model.config_json=" + hf, {hf, "not valid JSON"});
  const std::string err =
      load_file_error(d.write("loads.json", R"({"layers": {"1": [1e3068, 1, 1, 1, 1, 1, 1, 1]}})"), 8);
  EXPECT_NE(err.find("scenario.load_file"), std::string::npos) << "accepted, or: " << err;
}

// JSON lets a key stand twice in one object and nlohmann keeps the last: a config.json with
// "hidden_size" appended ran as a 3.4e9-parameter model instead of 6.7e11, with exit 0.
TEST(HostileFiles, KeysGivenTwiceInJsonInputsAreRefused) {
  ScratchDir d;
  std::string hf = slurp(std::string(STEPSIM_SOURCE_DIR) + "/workloads/models/deepseek-v3.config.json");
  const size_t end = hf.rfind('}');
  ASSERT_NE(end, std::string::npos);
  hf.insert(end, ", \"hidden_size\": 1");
  const std::string path = d.write("config.json", hf);
  expect_rejected("roofline " + std::string(STEPSIM_SOURCE_DIR) +
                      "/workloads/deepseek-v3-from-hf.yaml --set model.config_json=" + path,
                  {path, "\"hidden_size\" given twice"});
  const std::string err = load_file_error(d.write("loads.json", R"({"layers": {"1": [1, 1], "1": [5, 1]}})"), 2);
  EXPECT_NE(err.find("\"1\" given twice"), std::string::npos) << "accepted, or: " << err;
}

// ---- sweeps ----

TEST(HostileSweeps, CollectRejectsPointFilesThatAreNotReports) {
  ScratchDir d;
  const std::string dir = d.file("sw");
  const CliResult e = run_stepsim("sweep --quiet --grid parallel.microbatches=20,30 -o " + dir + " --emit-jobs " +
                                  d.file("jobs.txt"));
  ASSERT_EQ(e.code, 0) << e.err;
  std::ofstream(dir + "/points/000.json") << R"({"hello": 1})";
  std::ofstream(dir + "/points/001.json") << R"({"hello": 2})";
  const CliResult c = run_stepsim("sweep --collect " + dir);
  EXPECT_EQ(c.code, 1) << c.err;
  const std::string csv = slurp(dir + "/sweep.csv");
  EXPECT_NE(csv.find("not a stepsim simulate report"), std::string::npos) << csv;
}

// A sweep folder belongs to one manifest, and --collect takes a point only if its report ran with
// that point's settings: points of an earlier sweep (H800 results, once labelled "b200") are
// never relabelled as the new grid's rows.
TEST(HostileSweeps, PointsOfAnotherSweepAreNeverRelabelled) {
  ScratchDir d;
  const std::string synthetic = "sweep -q --set workload.kind=synthetic --set schedule=1f1b --set parallel.pp=4 ";
  const std::string a = d.file("a"), b = d.file("b");
  ASSERT_EQ(run_stepsim(synthetic + "--grid parallel.microbatches=2,6 -o " + a).code, 0);
  // Another grid into the same folder: refused before anything is written.
  const std::string before = slurp(a + "/sweep.json");
  expect_rejected(synthetic + "--grid parallel.microbatches=6,2 -o " + a + " --emit-jobs " + d.file("jobs.txt"),
                  {"-o " + a, "holds another sweep", "parallel.microbatches=2,6"});
  expect_rejected(synthetic + "--grid workload.f_s=1,2 -o " + a, {"-o " + a, "holds another sweep"});
  EXPECT_EQ(slurp(a + "/sweep.json"), before);
  EXPECT_FALSE(std::filesystem::exists(d.file("jobs.txt")));
  // The same sweep again may reuse it (a rerun finishes an interrupted sweep).
  EXPECT_EQ(run_stepsim(synthetic + "--grid parallel.microbatches=2,6 -o " + a + " --emit-jobs " + d.file("jobs.txt")).code, 0);
  // Point files with no manifest say nothing of what they ran: refused too.
  std::filesystem::create_directories(d.file("loose/points"));
  std::ofstream(d.file("loose/points/000.json")) << "{}";
  expect_rejected(synthetic + "--grid parallel.microbatches=2,6 -o " + d.file("loose"), {"has no sweep.json"});
  // Old points copied under a new grid's names (here the grid reversed): each is refused by what it ran.
  ASSERT_EQ(run_stepsim(synthetic + "--grid parallel.microbatches=6,2 -o " + b + " --emit-jobs " + d.file("jobs-b.txt")).code, 0);
  std::filesystem::copy_file(a + "/points/000.json", b + "/points/000.json");
  auto report = nlohmann::json::parse(slurp(a + "/points/001.json"));
  report.erase("sets");  // as an older stepsim wrote it
  std::ofstream(b + "/points/001.json") << report.dump();
  const CliResult c = run_stepsim("sweep --collect " + b);
  EXPECT_EQ(c.code, 1) << c.err;
  const std::string csv = slurp(b + "/sweep.csv");
  EXPECT_NE(csv.find("points/000.json ran with --set workload.kind=synthetic --set schedule=1f1b --set parallel.pp=4 "
                     "--set parallel.microbatches=2, not this point's"),
            std::string::npos)
      << csv;
  EXPECT_NE(csv.find("points/001.json does not record the config and --set values it ran with"), std::string::npos) << csv;
  EXPECT_EQ(csv.find("step_time_s"), std::string::npos) << "a report was taken: " << csv;
}

TEST(HostileSweeps, TamperedManifestIsOneLine) {
  ScratchDir d;
  const std::string dir = d.file("sw");
  std::filesystem::create_directories(dir);
  std::ofstream(dir + "/sweep.json") << R"({"binary": "x", "config": "y", "sets": [],
    "grid": [{"key": "parallel.pp", "values": ["1", "2", "3", "4", "5", "6", "7", "8", "9", "10"]},
             {"key": "parallel.ep", "values": ["1", "2", "3", "4", "5", "6", "7", "8", "9", "10"]},
             {"key": "parallel.microbatches", "values": ["1", "2", "3", "4", "5", "6", "7", "8", "9", "10"]},
             {"key": "train.seq_len", "values": ["1", "2", "3", "4", "5", "6", "7", "8", "9", "10"]},
             {"key": "train.global_batch", "values": ["1", "2", "3", "4", "5", "6", "7", "8", "9", "10"]},
             {"key": "cluster.nodes", "values": ["1", "2", "3", "4", "5", "6", "7", "8", "9", "10"]}]})";
  expect_rejected("sweep --collect " + dir, {dir + "/sweep.json", "1000000 points"});
  std::ofstream(dir + "/sweep.json") << R"({"binary": "x", "config": "y", "sets": ["frob=1"], "grid": []})";
  expect_rejected("sweep --collect " + dir, {"sweep.json", "not a sweep manifest"});
  // A key with no values made a sweep of no points that "succeeded" with an empty table.
  std::ofstream(dir + "/sweep.json") << R"({"binary": "x", "config": "y", "sets": [],
    "grid": [{"key": "parallel.pp", "values": []}]})";
  expect_rejected("sweep --collect " + dir, {"sweep.json", "parallel.pp: no values"});
}

}  // namespace
}  // namespace stepsim::test
