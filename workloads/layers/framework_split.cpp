#include "workloads/layers/framework_split.hpp"

#include <algorithm>
#include <cctype>

#include "simulator/io/json_text.hpp"

namespace stepsim {
namespace {

std::string str(int64_t v) { return std::to_string(v); }

[[noreturn]] void refuse(const std::string& why) { throw SplitError(why); }

// Stages in layer order from each rank's stage counts: stage c x pp + r is rank r's stage c.
std::vector<int64_t> by_rank(int64_t pp, int64_t vp, const std::vector<int64_t>& per_rank) {
  std::vector<int64_t> out(size_t(pp * vp));
  for (int64_t c = 0; c < vp; ++c)
    for (int64_t r = 0; r < pp; ++r) out[size_t(c * pp + r)] = per_rank[size_t(r)] / vp;
  return out;
}

}  // namespace

std::vector<int64_t> megatron_even_split(int64_t layers, int64_t pp, int64_t vp, bool embedding_is_layer,
                                         bool loss_is_layer) {
  const int64_t counted = layers + (embedding_is_layer ? 1 : 0) + (loss_is_layer ? 1 : 0);
  const std::string what = embedding_is_layer || loss_is_layer
                               ? str(counted) + " layers (" + str(layers) + (embedding_is_layer ? " + the embedding" : "") +
                                     (loss_is_layer ? " + the loss" : "") + ")"
                               : str(layers) + " layers";
  if (counted % pp != 0)
    refuse(what + " do not split evenly over the " + str(pp) +
           " pipeline ranks, which Megatron-LM refuses; give --decoder-first-pipeline-num-layers / "
           "--decoder-last-pipeline-num-layers or --pipeline-model-parallel-layout for an uneven split");
  const int64_t per_rank = counted / pp;
  if (per_rank % vp != 0)
    refuse("the " + str(per_rank) + " layers of each pipeline rank (" + what + " / " + str(pp) +
           ") do not split over its " + str(vp) + " virtual stages, which Megatron-LM refuses");
  std::vector<int64_t> out(size_t(pp * vp), per_rank / vp);
  if (embedding_is_layer) --out.front();
  if (loss_is_layer) --out.back();
  return out;
}

std::vector<int64_t> megatron_uneven_split(int64_t layers, int64_t pp, int64_t vp, int64_t first, int64_t last) {
  int64_t middle_layers = layers, middle_ranks = pp;
  for (const auto& [n, which] : {std::pair{first, "first"}, std::pair{last, "last"}}) {
    if (n == 0) continue;
    if (n % vp != 0)
      refuse("the " + str(n) + " layers of the " + std::string(which) + " pipeline rank do not split over its " + str(vp) +
             " virtual stages, which Megatron-LM refuses");
    middle_layers -= n;
    --middle_ranks;
  }
  if (pp == 1)
    refuse("an uneven first or last pipeline stage needs pipeline parallelism (--pipeline-model-parallel-size > 1)");
  if (middle_layers < 0)
    refuse("the first and last pipeline ranks hold " + str(layers - middle_layers) + " layers, more than the " +
           str(layers) + " of --num-layers");
  if ((middle_layers > 0) != (middle_ranks > 0))
    refuse(str(middle_layers) + " layers are left for " + str(middle_ranks) +
           " middle pipeline ranks, which Megatron-LM refuses (both or neither must be zero)");
  if (middle_ranks > 0 && middle_layers % middle_ranks != 0)
    refuse("the " + str(middle_layers) + " layers left for the " + str(middle_ranks) +
           " middle pipeline ranks do not split evenly over them, which Megatron-LM refuses");
  const int64_t middle = middle_ranks > 0 ? middle_layers / middle_ranks : 0;
  if (middle_ranks > 0 && middle % vp != 0)
    refuse("the " + str(middle) + " layers of each middle pipeline rank do not split over its " + str(vp) +
           " virtual stages, which Megatron-LM refuses");
  std::vector<int64_t> per_rank(size_t(pp), middle);
  if (first > 0) per_rank.front() = first;
  if (last > 0) per_rank.back() = last;
  return by_rank(pp, vp, per_rank);
}

std::vector<int64_t> megatron_layout_split(const std::string& layout, int64_t pp, int64_t layers, int64_t mtp_layers) {
  constexpr size_t kMaxChars = size_t(1) << 20;  // a layout of a million layers is no model
  // As Megatron's parse_str_to_list: commas are cosmetic; "(xy)*n" unrolls first, then "x*n".
  std::string s;
  for (const char c : layout)
    if (c != ',') s += c;
  const auto unroll = [&](bool groups) {
    std::string out;
    size_t i = 0;
    while (i < s.size()) {
      size_t body_begin = i, body_end = i + 1;  // the repeated text [body_begin, body_end)
      if (groups) {
        const size_t close = s[i] == '(' ? s.find(')', i + 1) : std::string::npos;
        if (close == std::string::npos || close == i + 1) {
          out += s[i++];
          continue;
        }
        body_begin = i + 1, body_end = close;
      }
      const size_t star = groups ? body_end + 1 : i + 1;
      size_t digits = star + 1;
      while (digits < s.size() && std::isdigit(static_cast<unsigned char>(s[digits]))) ++digits;
      if (star >= s.size() || s[star] != '*' || digits == star + 1) {
        out += s[i++];
        continue;
      }
      if (digits - star - 1 > 7) refuse("repeats a part over 9,999,999 times; no model has that many layers");
      const size_t n = std::stoul(s.substr(star + 1, digits - star - 1));
      if ((body_end - body_begin) * n + out.size() > kMaxChars) refuse("unrolls to over a million characters; no model has that many layers");
      for (size_t k = 0; k < n; ++k) out.append(s, body_begin, body_end - body_begin);
      i = digits;
    }
    s = std::move(out);
  };
  if (s.size() > kMaxChars) refuse("is over a million characters; no model has that many layers");
  unroll(true);
  unroll(false);
  std::vector<std::string> stages(1);
  for (const char c : s) {
    if (c == '|') {
      stages.emplace_back();
      continue;
    }
    if (c != 'E' && c != 'L' && c != 't' && c != 'm')
      refuse("holds \"" + io::printable(std::string(1, c)) +
             "\", which is no layer Megatron-LM knows (E embedding, t decoder layer, m MTP layer, L loss)");
    stages.back() += c;
  }
  const int64_t n = int64_t(stages.size());
  if (n % pp != 0)
    refuse("describes " + str(n) + " stages, not a multiple of the " + str(pp) + " pipeline ranks, which Megatron-LM refuses");
  std::string flat;
  for (const auto& st : stages) flat += st;
  const auto count = [&](char c) { return int64_t(std::count(flat.begin(), flat.end(), c)); };
  if (flat.empty() || flat.front() != 'E' || flat.back() != 'L' || count('E') != 1 || count('L') != 1)
    refuse("must start with the embedding (E) and end with the loss (L), each once, as Megatron-LM requires");
  if (count('t') != layers)
    refuse("places " + str(count('t')) + " decoder layers (t), but --num-layers is " + str(layers) +
           "; Megatron-LM requires them to match");
  if (count('m') != mtp_layers)
    refuse("places " + str(count('m')) + " MTP layers (m), but --mtp-num-layers is " + str(mtp_layers) +
           "; Megatron-LM requires them to match");
  if (const size_t m = flat.find('m'); m != std::string::npos && flat.find('t', m) != std::string::npos)
    refuse("places a decoder layer after an MTP layer; Megatron-LM requires the MTP layers last");
  std::vector<int64_t> out;
  for (const auto& st : stages) out.push_back(int64_t(std::count(st.begin(), st.end(), 't')));
  return out;
}

std::vector<int64_t> torchtitan_split(int64_t stages, int64_t layers, int64_t input_weight, int64_t output_weight) {
  if (stages == 1) return {layers};
  const int64_t effective = layers + input_weight + output_weight;
  if (stages > effective)
    refuse(str(stages) + " stages exceed the " + str(effective) + " effective layers (" + str(layers) + " + " +
           str(input_weight) + " + " + str(output_weight) + "), which torchtitan refuses");
  const int64_t per = effective / stages, extra = effective % stages;
  if (input_weight > per || output_weight > per)
    refuse("the " + std::string(input_weight > per ? "first" : "last") + " stage's weight (" +
           str(input_weight > per ? input_weight : output_weight) + ") exceeds the " + str(per) +
           " layers of a stage, which torchtitan refuses");
  std::vector<int64_t> out;
  int64_t placed = 0;
  for (int64_t s = 0; s < stages; ++s) {
    int64_t n = per + (s < extra ? 1 : 0);
    if (s == 0) n -= input_weight;
    if (s == stages - 1) n -= output_weight;
    n = std::min(n, layers - placed);  // torchtitan stops at the last layer
    out.push_back(n);
    placed += n;
  }
  return out;
}

}  // namespace stepsim
