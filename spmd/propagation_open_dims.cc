// Open dims of a sharding constraint (XLA's `unspecified_dims`, JAX's
// P(x, UNCONSTRAINED)): the constraint fixes its listed dims and lets
// propagation add tiling on the open ones, taken from its operand or users
// and merged in only when compatible. DrJAX relies on this: a broadcast to
// the clients keeps whatever sharding its argument had on the other dims.
#include <algorithm>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "spmd/propagation_internal.h"
#include "spmd/sharding_util.h"

namespace sharc::spmd::internal {

using hlo::Instruction;
using hlo::Sharding;

std::optional<std::vector<int64_t>> ParseUnspecifiedDims(const std::string& backend_config) {
  const std::string key = "unspecified_dims=[";
  const size_t start = backend_config.find(key);
  if (start == std::string::npos) return std::nullopt;
  const size_t end = backend_config.find(']', start);
  if (end == std::string::npos) return std::nullopt;
  std::vector<int64_t> dims;
  const std::string list = backend_config.substr(start + key.size(), end - start - key.size());
  for (absl::string_view item : absl::StrSplit(list, ',', absl::SkipWhitespace())) {
    int64_t d = 0;
    if (!absl::SimpleAtoi(item, &d) || d < 0) return std::nullopt;
    dims.push_back(d);
  }
  return dims;
}

bool RefineOpenDims(Instruction& inst, State& state) {
  if (state.aggressiveness < 1 || !inst.has_sharding() || !inst.shape().is_array()) return false;
  const Sharding& current = *inst.sharding();
  if (current.IsManual() || current.IsMaximal() || current.IsTuple()) return false;
  const std::vector<int64_t>& open = state.open_dims.at(&inst);
  std::vector<int64_t> fixed;
  for (int64_t d = 0; d < inst.shape().rank(); ++d) {
    if (std::find(open.begin(), open.end(), d) == open.end()) fixed.push_back(d);
  }
  std::vector<std::pair<Sharding, const Instruction*>> candidates;
  if (inst.operand_count() == 1 && inst.operand(0)->has_sharding()) {
    candidates.emplace_back(*inst.operand(0)->sharding(), inst.operand(0));
  }
  for (const Instruction* user : inst.users()) {
    if (std::optional<Sharding> s = ShardingFromUser(inst, *user, state)) {
      candidates.emplace_back(*s, user);
    }
  }
  for (const auto& [candidate, from] : candidates) {
    if (candidate.IsManual() || candidate.IsTileMaximal() || candidate.IsTuple()) continue;
    const Sharding& now = *inst.sharding();
    Sharding restricted = ReplicateDims(candidate, fixed);
    if (restricted.IsReplicated()) continue;
    std::optional<Sharding> merged =
        now.IsReplicated() ? std::optional<Sharding>(restricted) : MergeCompatible(now, restricted);
    if (!merged || *merged == now || !IsMoreSpecific(*merged, now)) continue;
    state.Set(inst, *merged, from, "open dims of a sharding constraint");
    return true;
  }
  return false;
}

}  // namespace sharc::spmd::internal
