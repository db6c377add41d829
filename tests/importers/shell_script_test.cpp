// The bash reader behind `stepsim import megatron`: what bash would pass to the launch command, read
// without running anything. Expected words are what bash prints for the same text (checked by hand
// with `printf '%s\n' ...`), unknowns carry the reason.
#include <gtest/gtest.h>

#include "vocabulary/config_error.hpp"
#include "simulator/importers/shell_script.hpp"

namespace stepsim::importers {
namespace {

// The words of the one command in `text`.
std::vector<std::string> words_of(const std::string& text) {
  const ShellScript s = read_shell_script(text, "t.sh");
  EXPECT_EQ(s.commands.size(), 1u) << text;
  std::vector<std::string> out;
  if (s.commands.empty()) return out;
  for (const auto& w : s.commands.front().words) out.push_back(w.known() ? w.text : "?" + w.raw);
  return out;
}

using V = std::vector<std::string>;

TEST(ShellScript, ContinuationsCommentsAndQuotes) {
  EXPECT_EQ(words_of("run --a 1 \\\n  --b 'x y' \\\n  --c \"z $'w'\" # a comment\n"),
            (V{"run", "--a", "1", "--b", "x y", "--c", "z $'w'"}));
  EXPECT_EQ(words_of("run --x=\"a\"'b'c \"\" ''\n"), (V{"run", "--x=abc", "", ""}));
  EXPECT_EQ(words_of("run a\\ b \\$HOME\n"), (V{"run", "a b", "$HOME"}));
  EXPECT_EQ(words_of("run $'a\\tb'\n"), (V{"run", "a\tb"}));
}

TEST(ShellScript, VariablesDefaultsAndArithmetic) {
  const std::string text =
      "GPUS=8\nNODES=${SLURM_NNODES:-4}\nWORLD=$((GPUS*NODES))\nEMPTY=\nX=${EMPTY:-d1}\nY=${EMPTY-d2}\n"
      "run $WORLD ${NODES} \"$X\" \"$Y\" $((  (GPUS + 2) % 3 - -1 ))\n";
  EXPECT_EQ(words_of(text), (V{"run", "32", "4", "d1", "", "2"}));
}

TEST(ShellScript, UnsetVariablesAndCommandsAreUnknownWithTheReason) {
  const ShellScript s = read_shell_script("run $NOPE $(hostname) `date` $1 ${2:-two}\n", "t.sh");
  ASSERT_EQ(s.commands.size(), 1u);
  const auto& w = s.commands[0].words;
  ASSERT_EQ(w.size(), 6u);
  EXPECT_NE(w[1].unknown.find("NOPE is not set in the file"), std::string::npos) << w[1].unknown;
  EXPECT_NE(w[2].unknown.find("output of a command"), std::string::npos);
  EXPECT_NE(w[3].unknown.find("output of a command"), std::string::npos);
  EXPECT_NE(w[4].unknown.find("argument given to the script"), std::string::npos);
  EXPECT_EQ(w[5].text, "two");
  EXPECT_EQ(w[1].raw, "$NOPE");
}

TEST(ShellScript, ArraysSplitAsBashDoes) {
  const std::string text =
      "A=(\n  --x 1   # comment\n  \"--y two words\"\n)\nA+=(--z)\nB=\"--p 1 --q\"\n"
      "run ${A[@]} \"${A[@]}\" $B \"$B\" ${#A[@]} ${A[1]}\n";
  EXPECT_EQ(words_of(text), (V{"run", "--x", "1", "--y", "two", "words", "--z", "--x", "1", "--y two words", "--z", "--p",
                               "1", "--q", "--p 1 --q", "4", "1"}));
}

TEST(ShellScript, WordLinesAreWhereTheWordIsWritten) {
  const ShellScript s = read_shell_script("A=(\n --x\n 5\n)\n\nrun \\\n ${A[@]} --y\n", "t.sh");
  ASSERT_EQ(s.commands.size(), 1u);
  const auto& w = s.commands[0].words;
  ASSERT_EQ(w.size(), 4u);
  EXPECT_EQ(w[1].line, 2);  // --x in the array
  EXPECT_EQ(w[2].line, 3);
  EXPECT_EQ(w[3].line, 7);  // --y after the continuation
  EXPECT_EQ(s.commands[0].line, 6);
}

TEST(ShellScript, IfBranchesTheFileDecidesRun) {
  const std::string text =
      "DTYPE=fp8\nif [[ \"$DTYPE\" == \"fp8\" ]]; then\n  P=(--fp8-format hybrid)\nelif [ \"$DTYPE\" = bf16 ]; then\n"
      "  P=(--bf16)\nelse\n  P=()\nfi\n[ -n \"$DTYPE\" ] && Q=yes || Q=no\nrun ${P[@]} $Q\n";
  EXPECT_EQ(words_of(text), (V{"run", "--fp8-format", "hybrid", "yes"}));
  EXPECT_EQ(words_of("N=8\nif [ $N -gt 4 -a $N -le 8 ]; then M=big; else M=small; fi\nrun $M\n"), (V{"run", "big"}));
}

TEST(ShellScript, VariablesSetUnderAnUndecidableIfAreUnknown) {
  const ShellScript s =
      read_shell_script("if [ -f /etc/x ]; then TP=8; else TP=4; fi\nfor i in 1 2; do NL=$i; done\nrun $TP $NL\n", "t.sh");
  const auto& w = s.commands.back().words;
  ASSERT_EQ(w.size(), 3u);
  EXPECT_NE(w[1].unknown.find("whose condition stepsim cannot decide"), std::string::npos) << w[1].unknown;
  EXPECT_NE(w[2].unknown.find("for loop"), std::string::npos) << w[2].unknown;
}

TEST(ShellScript, RedirectionsHereDocsAndPipesAreNotWords) {
  const std::string text = "cat <<EOF > /tmp/x\n--not-an-arg $(rm -rf /)\nEOF\nrun --a 2>&1 >> log.txt | tee out\n";
  const ShellScript s = read_shell_script(text, "t.sh");
  ASSERT_EQ(s.commands.size(), 3u);  // cat, run, tee
  EXPECT_EQ(s.commands[1].words.size(), 2u);
  EXPECT_EQ(s.commands[1].words[1].text, "--a");
}

TEST(ShellScript, OptionListsWithoutALaunchLineAreKept) {
  const ShellScript s = read_shell_script("GPT_ARGS=(--num-layers 2)\nMORE=\"--hidden-size 64\"\nNAME=x\n", "t.sh");
  ASSERT_EQ(s.option_lists.size(), 2u);
  EXPECT_EQ(s.option_lists[0].size(), 2u);
  EXPECT_EQ(s.option_lists[1][1].text, "64");
}

TEST(ShellScript, MalformedTextIsOneLineNamingWhere) {
  const auto message = [](const std::string& text) -> std::string {
    try {
      read_shell_script(text, "bad.sh");
    } catch (const ConfigError& e) {
      return e.what();
    }
    return "accepted";
  };
  EXPECT_NE(message("run 'open\n\n").find("bad.sh:1: the single quote opened here is never closed"), std::string::npos);
  EXPECT_NE(message("ok\nA=(--x\n").find("bad.sh:2: the array A=( opened here is never closed"), std::string::npos);
  EXPECT_NE(message("run \"a\nb\n").find("bad.sh:1: the double quote"), std::string::npos);
  EXPECT_NE(message("if true; then x\n").find("has no \"fi\""), std::string::npos);
  EXPECT_NE(message("run )\n").find("bad.sh:1: unexpected \")\""), std::string::npos);
  EXPECT_NE(message(std::string("run a\0b\n", 8)).find("NUL"), std::string::npos);
  EXPECT_NE(message("cat <<END\nnever ends\n").find("here-document"), std::string::npos);
  // An operator inside an array is bash's syntax error (and read nothing: a fuzzing find, the reader
  // looped to its 100000-word bound on it).
  EXPECT_NE(message("A=(--x ; --y)\n").find("bad.sh:1: unexpected \";\" inside the array A=( ... )"), std::string::npos);
  EXPECT_NE(message("A=(--x\n 2>x)\n").find("unexpected \">\" inside the array"), std::string::npos);
}

TEST(ShellScript, ExpansionIsBounded) {
  // Doubling a variable 30 times would be 2^30 words; the reader stops at 16 MiB of text.
  std::string text = "A=xxxxxxxxxxxxxxxx\n";
  for (int i = 0; i < 30; ++i) text += "A=\"$A$A\"\n";
  try {
    read_shell_script(text, "big.sh");
    FAIL() << "accepted";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("16 MiB"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace stepsim::importers
