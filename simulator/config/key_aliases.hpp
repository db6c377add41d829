// Other tools' names for stepsim's config keys: Megatron-LM's arguments, torchtitan's TOML keys
// and common shorthands (`vpp`, `dp`, `mbs`). One table: the importers (simulator/importers/) map
// a source's names through it, and an unknown key's message searches it for "did you mean".
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace stepsim {

struct KeyAlias {
  std::string_view name;  // lowercase, words joined by '_' (Megatron's --num-query-groups is num_query_groups)
  std::string_view key;   // the stepsim key it means; "" when stepsim derives the value instead
  std::string_view tool;  // whose name it is: "Megatron-LM", "torchtitan", "" for a shorthand
  std::string_view hint;  // how the value translates, when not one to one ("" when it does)
};

std::span<const KeyAlias> key_aliases();

// `name` as the table spells names: lowercase, leading dashes dropped, '-' and '.' read as '_'.
std::string alias_spelling(std::string_view name);

// The entry for another tool's name (any spelling alias_spelling accepts), or nullptr.
const KeyAlias* find_alias(std::string_view name);

// For an unknown dotted key: " did you mean `KEY`?" (another tool's name for it, the same name in
// another section, or the nearest key by edit distance), or how stepsim expresses the value when it
// has no such key; "" when nothing is close. `known` holds every accepted dotted key.
std::string did_you_mean(const std::string& unknown_key, const std::vector<std::string>& known);

}  // namespace stepsim
