// Every repository path the README and docs/ name exists: a file moved in a refactor (e.g.
// workloads/deepseek/layer_work.cpp -> workloads/layers/) must take its mentions along.
#include <gtest/gtest.h>

#include <cctype>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

namespace stepsim::test {
namespace {

namespace fs = std::filesystem;

std::vector<fs::path> documents() {
  const fs::path root = STEPSIM_SOURCE_DIR;
  std::vector<fs::path> docs = {root / "README.md", root / "simulator" / "engine" / "README.md"};
  for (const auto& e : fs::directory_iterator(root / "docs"))
    if (e.path().extension() == ".md") docs.push_back(e.path());
  return docs;
}

// Paths into the repository's own top folders, as the docs write them (`workloads/layers/x.cpp`).
// Placeholders (NAME, <name>, *) and output folders a command creates (-o DIR) are not paths to check.
TEST(DocsPaths, EveryRepositoryPathTheDocsNameExists) {
  const fs::path root = STEPSIM_SOURCE_DIR;
  const std::regex path_re(
      R"(((?:workloads|simulator|vocabulary|schedules|platforms|traces|tests|scripts|fuzz|cmake)/[A-Za-z0-9_./-]*[A-Za-z0-9_]))");
  const std::regex output_re(R"((?:-o|--png|--emit-jobs)\s+$)");
  int checked = 0;
  for (const fs::path& doc : documents()) {
    std::ifstream in(doc);
    std::stringstream ss;
    ss << in.rdbuf();
    const std::string text = ss.str();
    for (auto it = std::sregex_iterator(text.begin(), text.end(), path_re); it != std::sregex_iterator(); ++it) {
      const std::string p = (*it)[1].str();
      const size_t at = size_t(it->position(1));
      const std::string before = text.substr(at >= 20 ? at - 20 : 0, at >= 20 ? 20 : at);
      if (at > 0 && (std::isalnum(static_cast<unsigned char>(text[at - 1])) || std::string("-_./").find(text[at - 1]) != std::string::npos))
        continue;  // inside a longer name (build-fuzz/findings/)
      if (std::regex_search(before, output_re)) continue;  // an output the command writes
      if (p.find("NAME") != std::string::npos) continue;  // a placeholder
      // A pattern, not a path: the word goes on into a wildcard or placeholder (gpt-*.yaml, <name>.csv).
      size_t end = at + p.size();
      while (end < text.size() && (std::isalnum(static_cast<unsigned char>(text[end])) ||
                                   std::string("-_./*<>{}$").find(text[end]) != std::string::npos))
        ++end;
      if (text.substr(at, end - at).find_first_of("*<{$") != std::string::npos) continue;
      ++checked;
      EXPECT_TRUE(fs::exists(root / p)) << doc.filename().string() << " names " << p << ", which does not exist";
    }
  }
  EXPECT_GT(checked, 50);  // the pattern still finds the docs' paths
}

}  // namespace
}  // namespace stepsim::test
