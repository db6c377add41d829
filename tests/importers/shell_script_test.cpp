// The bash reader behind `stepsim import megatron`: what bash would pass to the launch command, read
// without running anything. Expected words are what bash prints for the same text (checked by hand
// with `printf '%s\n' ...`), unknowns carry the reason.
#include <gtest/gtest.h>

#include <algorithm>

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

// The words of the file's last command (the ones before it are the constructs under test).
std::vector<std::string> last_words(const std::string& text) {
  const ShellScript s = read_shell_script(text, "t.sh");
  std::vector<std::string> out;
  if (s.commands.empty()) return out;
  for (const auto& w : s.commands.back().words) out.push_back(w.known() ? w.text : "?" + w.raw);
  return out;
}

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

// Every construct that may change a variable without NAME=value leaves it unknown after it, with
// the reason (bash: each one changes TP, or may; stepsim kept TP=8 silently before).
TEST(ShellScript, CommandsThatMayChangeAVariableLeaveItUnknown) {
  const std::pair<const char*, const char*> cases[] = {
      {"eval \"TP=4\"", "may be changed by the eval on line 2"},
      {"source env.sh", "may be changed by the file sourced on line 2 (env.sh)"},
      {". ./env.sh", "may be changed by the file sourced on line 2 (./env.sh)"},
      {"read TP", "TP is set by read on line 2"},
      {"read -r -p 'tp? ' -a TP", "TP is set by read -a on line 2"},
      {"IFS=, read -r X TP", "TP is set by read on line 2"},
      {"read -r -d '' TP <<EOF\n4\nEOF", "TP is set by read on line 2"},
      {"mapfile -t TP < tp.txt", "TP is set by mapfile on line 2"},
      {"readarray TP < tp.txt", "TP is set by readarray on line 2"},
      {"let TP=TP/2", "TP is changed by let TP=TP/2 on line 2"},
      {"let 'TP <<= 1'", "TP is changed by let"},
      {"(( TP++ ))", "TP is changed by (( TP++ )) on line 2"},
      {"(( TP <<= 1 ))", "TP is changed by (( TP <<= 1 ))"},
      {"printf -v TP '%d' 4", "TP is set by printf -v on line 2"},
      {"getopts 't:' TP", "TP is set by getopts on line 2"},
      {"wait -n -p TP", "TP is set by wait -p on line 2"},
      {"declare -i TP=2+2", "TP is declared -i on line 2"},
      {"typeset -n TP=OTHER", "TP is declared -n on line 2"},
      {"declare -l TP", "TP is declared -l on line 2"},
      {"X=$(( TP = 4 ))", "TP is changed by $(( TP = 4 )) on line 2"},
      {"echo $(( TP-- ))", "TP is changed by $(( TP-- ))"},
      {"TP[0]=4", "TP has an element assigned on line 2"},
      {"cat <<EOF\n${TP:=4} $(( TP += 1 ))\nEOF", "TP is changed by the expansions of the here-document on line 2"},
      {"for TP in 2 4; do :; done", "TP is set by the for loop on line 2"},
      {"select TP in 2 4; do break; done", "TP is set by the select loop on line 2"},
      {"for (( TP = 0; TP < 2; TP++ )); do :; done", "TP is changed by (( TP = 0; TP < 2; TP++ ))"},
      {"while read TP; do :; done < f", "TP is set by read on line 2"},
      {"half() { TP=4; }\nhalf", "TP is set by the function half called on line 3"},
      {"half() { local TP=4; }\nhalf", "TP is set by the function half called on line 3"},
      {"if [ -f x ]; then unset TP; fi", "TP may be unset on line 2"},
      {"[ -f x ] && TP=4", "TP is set after a test on line 2"},
      {"builtin read TP", "TP is set by read on line 2"},
      {"read $NAME", "TP may be changed by read on line 2, whose variable name stepsim cannot know"},
  };
  for (const auto& [construct, why] : cases) {
    const std::string text = "TP=8\n" + std::string(construct) + "\nrun --tp $TP\n";
    const ShellScript s = read_shell_script(text, "t.sh");
    ASSERT_FALSE(s.commands.empty()) << construct;
    const auto& w = s.commands.back().words;
    ASSERT_EQ(w.size(), 3u) << construct;
    EXPECT_FALSE(w[2].known()) << construct << " kept TP = " << w[2].text;
    EXPECT_NE(w[2].unknown.find(why), std::string::npos) << construct << ": " << w[2].unknown;
  }
  // unset certainly run: the name is unset, so the file's own default stands for it (bash prints 2).
  EXPECT_EQ(last_words("TP=8\nunset TP\nrun ${TP:-2}\n"), (V{"run", "2"}));
  const ShellScript unset = read_shell_script("TP=8\nunset -v TP\nrun $TP\n", "t.sh");
  EXPECT_NE(unset.commands.back().words[1].unknown.find("TP is unset on line 2"), std::string::npos);
  // ${TP:=4} where it may not run; after an eval, a default no longer stands for a name never set.
  const ShellScript maybe = read_shell_script("if [ -f x ]; then : ${TP:=4}; fi\neval \"$X\"\nrun $TP ${NODES:-1}\n", "t.sh");
  EXPECT_NE(maybe.commands.back().words[1].unknown.find("may be changed by the eval on line 2"), std::string::npos);
  EXPECT_NE(maybe.commands.back().words[2].unknown.find("NODES may be changed by the eval"), std::string::npos);
  const ShellScript uncertain_default = read_shell_script("if [ -f x ]; then : ${TP:=4}; fi\nrun $TP\n", "t.sh");
  EXPECT_NE(uncertain_default.commands.back().words[1].unknown.find("TP is set inside the if on line 1"), std::string::npos)
      << uncertain_default.commands.back().words[1].unknown;
}

// What does not change a variable keeps it (bash prints the same words).
TEST(ShellScript, WhatCannotChangeAVariableKeepsIt) {
  EXPECT_EQ(last_words("TP=8\n( TP=4 )\nrun $TP\n"), (V{"run", "8"}));                       // a subshell
  EXPECT_EQ(last_words("TP=8\nexport -n TP\nrun $TP\n"), (V{"run", "8"}));                   // un-exports only
  EXPECT_EQ(last_words("TP=8\ncat <<'EOF'\n${TP:=4}\nEOF\nrun $TP\n"), (V{"run", "8"}));      // a quoted here-doc
  EXPECT_EQ(last_words("TP=8\n: ${TP:=4}\nrun $TP\n"), (V{"run", "8"}));                     // already set
  EXPECT_EQ(last_words("unset TP\n: ${TP:=4}\nrun $TP\n"), (V{"run", "4"}));
  EXPECT_EQ(last_words("source env.sh\nTP=8\nrun $TP\n"), (V{"run", "8"}));                  // set after the source
  EXPECT_EQ(last_words("TP=8\nunset -f TP\nrun $TP\n"), (V{"run", "8"}));                    // a function's name
  EXPECT_EQ(last_words("TP=8\necho $(( TP == 8 )) $(( TP <= 8 ))\nrun $TP\n"), (V{"run", "8"}));  // comparisons
  // A launch inside a function is listed once, where the function is written.
  const ShellScript f = read_shell_script("go() { run --a; }\ngo\ngo\n", "t.sh");
  EXPECT_EQ(std::count_if(f.commands.begin(), f.commands.end(), [](const ShellCommand& c) { return c.words[0].text == "run"; }), 1);
  // Functions that call each other without end are followed a bounded number of times.
  const ShellScript loop = read_shell_script("TP=8\nf() { g; }\ng() { f; }\nf\nrun $TP\n", "t.sh");
  EXPECT_FALSE(loop.commands.back().words[1].known());
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
  // A bare ( among a command's arguments (NVIDIA's DeepSeek-V3 GB200 guide writes --moe-layer-freq
  // ([0]*3+[1]*58) so) is bash's syntax error too; a function definition's "name ()" is not.
  EXPECT_NE(message("run --moe-layer-freq ([0]*3+[1]*58) \\\n  --x 1\n").find("bad.sh:1: an unquoted ( among a command's arguments"),
            std::string::npos);
  EXPECT_EQ(message("f () { run; }\nrun --a 1\n"), "accepted");
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
