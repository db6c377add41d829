// Hostile and careless input to `stepsim import`: files that are no launch script or job config,
// odd paths, bytes that are not UTF-8, sizes past the bounds. Each ends in one error line naming
// the file and what to do, exit 2 -- or in a plan that loads. Never a crash, hang or half-written file.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <sstream>
#include <string>

#include "tests/cli_runner.hpp"

namespace stepsim::test {
namespace {

const std::string kLaunch =
    "torchrun --nnodes 1 --nproc-per-node 8 pretrain_gpt.py --num-layers 4 --hidden-size 1024 --num-attention-heads 8 "
    "--seq-length 2048 --micro-batch-size 1 --global-batch-size 16 --vocab-size 32000 --swiglu --disable-bias-linear "
    "--bf16 --use-distributed-optimizer";
const std::string kJob =
    "[model]\nname = \"llama3\"\nflavor = \"8B\"\n[training]\nlocal_batch_size = 1\nseq_len = 8192\n"
    "[activation_checkpoint]\nmode = \"full\"\n";

TEST(HostileImports, FilesThatAreNoScriptOrConfig) {
  ScratchDir d;
  const std::string fifo = d.file("launch.fifo");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  expect_rejected("import megatron " + fifo, {fifo, "a FIFO"});  // must not block waiting for a writer
  expect_rejected("import megatron /dev/zero", {"/dev/zero", "a device"});
  expect_rejected("import torchtitan " + d.path().string() + " --gpus 8", {d.path().string(), "a directory"});
  expect_rejected("import megatron " + d.file("missing.sh"), {"missing.sh", "cannot read"});
  const std::string big = d.write("big.sh", "# " + std::string(2 << 20, 'x') + "\n");
  expect_rejected("import megatron " + big, {big, "1 MiB"});
  const std::string binary = d.write("binary.sh", std::string("\x7f" "ELF\0\0\0", 7) + kLaunch);
  expect_rejected("import megatron " + binary, {binary, "NUL bytes"});
  std::string nul = "[model]\nname = \"ll";
  nul += '\0';
  nul += "ama3\"\n";
  const std::string toml_nul = d.write("nul.toml", nul);
  expect_rejected("import torchtitan " + toml_nul + " --gpus 8", {toml_nul, "NUL bytes"});
  expect_rejected("import pytorch " + binary, {"import pytorch", "unknown source", "megatron", "torchtitan"});
}

TEST(HostileImports, BytesThatAreNotUtf8) {
  ScratchDir d;
  // In a no-cost argument: imported, the note shows the bytes escaped and stays valid UTF-8.
  const std::string odd = d.write("odd.sh", kLaunch + " --tensorboard-dir /runs/\xff\xfe --lr \xe9x\n");
  const CliResult ok = run_stepsim("import megatron " + odd + " -o " + d.file("odd.yaml"));
  EXPECT_EQ(ok.code, 0) << ok.err;
  EXPECT_NE(ok.err.find("--tensorboard-dir"), std::string::npos) << ok.err;
  EXPECT_EQ(run_stepsim("simulate --quiet " + d.file("odd.yaml")).code, 0);
  // In a cost-relevant one: refused by name.
  const std::string bad = d.write("bad.sh", kLaunch + " --tensor-model-parallel-size \xff\n");
  expect_rejected("import megatron " + bad, {"--tensor-model-parallel-size", "expected an integer"});
  // A file name that is not UTF-8 still makes a plan whose name loads.
  const std::string named = d.write("launch-\xe9.sh", kLaunch + "\n");
  const CliResult r = run_stepsim("import megatron '" + named + "' -o " + d.file("named.yaml"));
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(run_stepsim("roofline " + d.file("named.yaml")).code, 0);
  const std::string toml = d.write("odd.toml", kJob + "[job]\ndescription = \"\xff\xfe\"\n");
  expect_rejected("import torchtitan " + toml + " --gpus 8", {toml, "not valid TOML"});
}

TEST(HostileImports, NumbersAndSizesPastTheBounds) {
  ScratchDir d;
  const std::string launch = d.write("l.sh", kLaunch + "\n");
  expect_rejected("import megatron " + launch + " --gpus -8", {"--gpus -8", "1 to 16777216"});
  expect_rejected("import megatron " + launch + " --gpus 99999999999", {"--gpus", "1 to 16777216"});
  expect_rejected("import megatron " + launch + " --gpus 12", {"12 GPUs are not a whole number of 8-GPU nodes", "--gpus-per-node"});
  const std::string huge = d.write("h.sh", kLaunch + " --num-layers 99999999999999999999\n");
  expect_rejected("import megatron " + huge, {"--num-layers 99999999999999999999", "expected an integer"});
  const std::string many = d.write("m.sh", kLaunch + " --num-layers 100000\n");
  expect_rejected("import megatron " + many, {"--num-layers 100000", "model.num_hidden_layers", "at most 4096"});
  const std::string arith = d.write("a.sh", "N=$((9223372036854775807 * 2))\n" + kLaunch + " --hidden-size $N\n");
  expect_rejected("import megatron " + arith, {"--hidden-size $N", "overflows"});
  const std::string deep = d.write("deep.toml", "x = " + std::string(100000, '[') + "\n");
  expect_rejected("import torchtitan " + deep + " --gpus 8", {deep, "nested over 64 deep"});
  const std::string big_int = d.write("i.toml", kJob + "[parallelism]\ntensor_parallel_degree = 9223372036854775808\n");
  // toml11 reads a number past int64 as the largest int64; the bound still names the key.
  expect_rejected("import torchtitan " + big_int + " --gpus 8", {big_int, "tensor_parallel_degree", "between 1 and 16777216"});
  // 0 is no count of GPUs (main read it as "not given": Megatron's torchrun then won silently), and a
  // number past int64 is quoted as typed, not as the largest int64.
  expect_rejected("import torchtitan " + d.write("j.toml", kJob) + " --gpus 0", {"--gpus 0", "1 to 16777216"});
  expect_rejected("import megatron " + launch + " --gpus 0", {"--gpus 0", "1 to 16777216"});
  expect_rejected("import megatron " + launch + " --gpus-per-node 0", {"--gpus-per-node 0", "1 to 4096"});
  expect_rejected("import megatron " + launch + " --gpus 99999999999999999999999",
                  {"--gpus 99999999999999999999999:", "1 to 16777216"});
  expect_rejected("import megatron " + launch + " --gpus ''", {"--gpus: the value is empty"});
  expect_rejected("import megatron " + launch + " --gpus 8x", {"--gpus 8x", "1 to 16777216"});
}

// A launch script saved with Windows line endings: bash keeps each CR, so no backslash joins the
// next line and the options after it are lost (main reported the first option missing from the
// join, e.g. "--num-layers is missing"). Refused at the first CR LF, with the conversion.
TEST(HostileImports, WindowsLineEndingsAreNamedNotMisread) {
  ScratchDir d;
  const std::string crlf = d.write("crlf.sh", "#!/bin/bash\r\nGPUS=8\r\n" + kLaunch + " \\\r\n  --seq-length 2048\r\n");
  expect_rejected("import megatron " + crlf, {crlf + ":1:", "CR LF", "sed -i"});
}

TEST(HostileImports, OutputsAreCheckedFirstAndNeverHalfWritten) {
  ScratchDir d;
  const std::string launch = d.write("l.sh", kLaunch + "\n");
  expect_rejected("import megatron " + launch + " -o " + d.file("no/such/dir/plan.yaml"), {"-o", "folder exists"});
  expect_rejected("import megatron " + launch + " -o /dev/full", {"/dev/full", "-o"});
  // A refused import leaves an existing plan as it was.
  const std::string out = d.write("plan.yaml", "precious\n");
  const std::string bad = d.write("bad.sh", kLaunch + " --optimizer-cpu-offload\n");
  expect_rejected("import megatron " + bad + " -o " + out, {"--optimizer-cpu-offload"});
  std::ifstream in(out);
  std::stringstream ss;
  ss << in.rdbuf();
  EXPECT_EQ(ss.str(), "precious\n");
  // Nothing from the file runs: a command substitution that would create a file does not.
  const std::string marker = d.file("ran");
  const std::string sneaky = d.write("s.sh", "X=$(touch " + marker + ")\n`touch " + marker + "`\n" + kLaunch + "\n");
  EXPECT_EQ(run_stepsim("import megatron " + sneaky + " -q").code, 0);
  EXPECT_FALSE(std::filesystem::exists(marker));
}

}  // namespace
}  // namespace stepsim::test
