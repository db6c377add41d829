#include "simulator/search/search_dir.hpp"

#include <filesystem>
#include <nlohmann/json.hpp>

#include "simulator/io/command_files.hpp"
#include "simulator/io/input_file.hpp"
#include "simulator/io/json_text.hpp"
#include "simulator/io/output_file.hpp"
#include "vocabulary/config_error.hpp"

namespace stepsim::search {
namespace {

std::string manifest_path(const std::string& dir) { return dir + "/search.json"; }

}  // namespace

void claim_search_dir(const std::string& dir, const SearchManifest& m) {
  std::error_code ec;
  const auto there = [&](const std::string& p) { return std::filesystem::exists(std::filesystem::symlink_status(p, ec)); };
  const std::string fix = "; use another -o, or remove " + dir + "/search.json and " + dir + "/points to replace it";
  if (there(manifest_path(dir))) {
    SearchManifest old;
    try {
      const auto j = nlohmann::json::parse(io::read_input_file(manifest_path(dir), "-o", io::kMiB));
      old.config = j.at("config").get<std::string>();
      old.sets = j.at("sets").get<std::vector<std::string>>();
      old.only = j.at("only").get<std::vector<std::string>>();
      old.fix = j.at("fix").get<std::vector<std::string>>();
    } catch (const std::exception&) {
      throw ConfigError("-o " + dir + ": holds a search.json that is not a readable search manifest" + fix);
    }
    io::forget_input(manifest_path(dir));  // read to be written again: the search resumes
    if (old == m) return;
    throw ConfigError("-o " + dir + ": holds another search (of " + io::shortened(old.config, 120) +
                      " with other --set, --only or --fix values), whose replays this one would misread" + fix);
  }
  const std::string points = dir + "/points";
  if (there(points) && std::filesystem::is_directory(points, ec) && !std::filesystem::is_empty(points, ec))
    throw ConfigError("-o " + dir + ": " + points + " holds point files but " + dir +
                      " has no search.json to say what they ran; use another -o, or remove " + points);
}

void write_search_manifest(const std::string& dir, const SearchManifest& m) {
  std::error_code ec;
  std::filesystem::create_directories(dir + "/points", ec);
  if (ec) throw ConfigError(dir + ": cannot create the search directory (" + ec.message() + "); check -o");
  const nlohmann::json j = {{"config", m.config}, {"sets", m.sets}, {"only", m.only}, {"fix", m.fix}};
  io::write_output_file(manifest_path(dir), "-o", io::kDashIsStdout, io::json_text(j, 2) + "\n");
}

}  // namespace stepsim::search
