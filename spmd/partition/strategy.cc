#include "spmd/partition/strategy.h"

#include <algorithm>
#include <tuple>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "hlo/ops/op_util.h"
#include "hlo/ops/spmd_global_view.h"
#include "spmd/partition/reshard.h"
#include "spmd/sharding_projection.h"
#include "spmd/sharding_util.h"

namespace sharc::spmd {

using hlo::Instruction;
using hlo::Shape;
using hlo::Sharding;

std::optional<hlo::Opcode> SplitScatterCombiner(const Instruction& inst) {
  if (inst.opcode() != hlo::Opcode::kScatter || inst.operand_count() != 3) return std::nullopt;
  // (Padding rows and the other devices' base take the combiner's identity.)
  std::optional<hlo::Opcode> op = hlo::MatchBinaryReducer(*inst.attr_computation("to_apply"));
  if ((op == hlo::Opcode::kAdd || op == hlo::Opcode::kMaximum || op == hlo::Opcode::kMinimum) &&
      hlo::BinaryReducerIdentity(*op, inst.shape().type())) {
    return op;
  }
  return std::nullopt;
}

namespace {

DimFactors FactorSpace(const ShardingRule& rule) {
  DimFactors dims;
  for (size_t f = 0; f < rule.factors.size(); ++f) dims.push_back({static_cast<int64_t>(f)});
  return dims;
}

bool HasFactors(const DimFactors& dims) {
  for (const auto& d : dims)
    if (!d.empty()) return true;
  return false;
}

// Factors the local op cannot split: need-replication ones, permutation ones
// (slicing, padding or concatenating along a split dim would need halos), and
// reduction factors whose partial results nothing combines (a variadic
// reduce's are gathered and reduced again, localize.cc; a scatter's updates
// only under add, max or min, SplitScatterCombiner).
std::vector<int64_t> UnsplittableFactors(const Instruction& inst, const ShardingRule& rule) {
  std::vector<int64_t> out;
  // (A gather's reduction factors are split indexed dims: each device's
  // rows outside its shard are zero, split_gather.h.)
  const bool combinable = inst.opcode() == hlo::Opcode::kDot ||
                          inst.opcode() == hlo::Opcode::kRaggedDot ||
                          inst.opcode() == hlo::Opcode::kGather ||
                          inst.opcode() == hlo::Opcode::kConvolution ||
                          inst.opcode() == hlo::Opcode::kReduce ||
                          SplitScatterCombiner(inst).has_value();
  for (size_t f = 0; f < rule.factors.size(); ++f) {
    FactorKind kind = rule.factors[f].kind;
    if (kind == FactorKind::kNeedReplication || kind == FactorKind::kPermutation ||
        (kind == FactorKind::kReduction && !combinable)) {
      out.push_back(static_cast<int64_t>(f));
    }
  }
  return out;
}

std::optional<Sharding> ToFactors(const Sharding& s, const DimFactors& dims,
                                  const ShardingRule& rule) {
  return ProjectSharding(s, dims, FactorSpace(rule), rule);
}

// Drops splits some tensor of the op cannot hold exactly, until every
// projection round-trips.
Sharding Legalize(Sharding iteration, const Instruction& inst, const ShardingRule& rule) {
  if (!iteration.IsTiled()) return iteration;
  const DimFactors space = FactorSpace(rule);
  std::vector<int64_t> bad = UnsplittableFactors(inst, rule);
  for (int round = 0; round < 8; ++round) {
    if (!bad.empty()) iteration = ReplicateDims(iteration, bad);
    if (!iteration.IsTiled()) return iteration;
    bad.clear();
    std::vector<int64_t> counts = FactorTileCounts(iteration, space, rule);
    std::vector<const DimFactors*> tensors;
    for (const DimFactors& d : rule.operands) tensors.push_back(&d);
    for (const DimFactors& d : rule.results) tensors.push_back(&d);
    for (const DimFactors* t : tensors) {
      if (!HasFactors(*t)) continue;
      std::optional<Sharding> on_tensor = ProjectSharding(iteration, space, *t, rule);
      if (!on_tensor) continue;
      std::vector<int64_t> back = FactorTileCounts(*on_tensor, *t, rule);
      for (size_t f = 0; f < counts.size(); ++f) {
        bool present = false;
        for (const auto& dim : *t)
          for (int64_t id : dim) present |= id == static_cast<int64_t>(f);
        if (present && back[f] != counts[f] &&
            std::find(bad.begin(), bad.end(), static_cast<int64_t>(f)) == bad.end()) {
          bad.push_back(static_cast<int64_t>(f));
        }
      }
    }
    if (bad.empty()) return iteration;
  }
  return Sharding::Replicated();
}

Sharding Project(const Sharding& iteration, const DimFactors& to, const ShardingRule& rule) {
  if (!HasFactors(to)) return Sharding::Replicated();
  std::optional<Sharding> s = ProjectSharding(iteration, FactorSpace(rule), to, rule);
  return s ? *s : Sharding::Replicated();
}

Sharding DataLayout(const Sharding& s) {
  return s.IsMaximal() || s.IsUnknown() ? Sharding::Replicated() : s;
}

std::string StepName(std::string_view target) {
  if (target == hlo::kSpmdAllGather) return "all-gather";
  if (target == hlo::kSpmdAllSlice) return "local slice";
  if (target == hlo::kSpmdAllToAll) return "all-to-all";
  if (target == hlo::kSpmdCollectivePermute) return "collective-permute";
  return std::string(target);
}

// Bytes one device sends for one reshard step (the counts of
// cost_report.h: all-gather (n-1)/n of its result, all-to-all (n-1)/n of its
// buffer, collective-permute the whole buffer).
int64_t StepBytes(const Shape& shape, const Sharding& from, const ReshardStep& step) {
  const Sharding to = DataLayout(step.after);
  if (step.target == hlo::kSpmdAllGather) {
    // Gathered one dim at a time within device groups (reshard.cc).
    std::vector<int64_t> dims;
    for (int64_t d = 0; d < shape.rank(); ++d)
      if (from.TileCount(d) != to.TileCount(d)) dims.push_back(d);
    std::sort(dims.rbegin(), dims.rend());
    Sharding current = from;
    int64_t bytes = 0;
    for (int64_t d : dims) {
      const int64_t n = current.TileCount(d);
      if (n <= 1) continue;
      bytes += (n - 1) * current.ShardShape(shape).byte_size();
      current = ReplicateDims(current, {d});
    }
    return bytes;
  }
  if (step.target == hlo::kSpmdAllToAll) {
    // Each device keeps 1/g of its buffer, g the groups' size (the factor
    // by which the source dims' tile counts fall).
    int64_t g = 1;
    for (int64_t d = 0; d < shape.rank(); ++d) {
      const int64_t before = from.TileCount(d), after = to.TileCount(d);
      if (before > after && after > 0) g *= before / after;
    }
    return (g - 1) * from.ShardShape(shape).byte_size() / g;
  }
  if (step.target == hlo::kSpmdCollectivePermute) {
    if (from.tile_assignment().devices() == to.tile_assignment().devices()) return 0;
    return to.ShardShape(shape).byte_size();
  }
  return 0;  // a local slice
}

std::string Bytes(int64_t b) { return absl::StrCat(b, " B"); }

}  // namespace

int64_t ReshardBytesSent(const Shape& shape, const Sharding& from_in, const Sharding& to_in,
                         std::vector<std::string>* steps) {
  if (shape.is_tuple()) {
    int64_t total = 0;
    for (int64_t i = 0; i < shape.tuple_size(); ++i)
      total += ReshardBytesSent(shape.tuple_shape(i), from_in.ElementSharding(shape, i),
                                to_in.ElementSharding(shape, i), steps);
    return total;
  }
  // A maximal value read by other devices is broadcast from its own first
  // (reshard.h): an all-reduce of the whole value.
  if (!NeedsNoReshard(from_in, to_in) && from_in.IsMaximal()) {
    if (steps) steps->push_back(absl::StrCat("broadcast from device ", from_in.maximal_device(),
                                             ": ", Bytes(shape.byte_size())));
    return shape.byte_size() + ReshardBytesSent(shape, Sharding::Replicated(), to_in, steps);
  }
  const Sharding from = DataLayout(from_in), to = DataLayout(to_in);
  // Manual values cross region boundaries without communication.
  if (from == to || from.IsManual() || to.IsManual()) return 0;
  absl::StatusOr<std::vector<ReshardStep>> plan = PlanReshard(shape, from, to);
  if (!plan.ok()) {
    // No plan (the partitioner reports the error when it gets there): cost
    // it as moving the whole value.
    if (steps) steps->push_back(absl::StrCat("no reshard plan: ", Bytes(shape.byte_size())));
    return shape.byte_size();
  }
  Sharding current = from;
  int64_t total = 0;
  for (size_t k = 0; k < plan->size(); ++k) {
    const ReshardStep& step = (*plan)[k];
    const int64_t b = StepBytes(shape, current, step);
    if (steps) {
      // Intermediate layouts are named; the last is the target.
      steps->push_back(absl::StrCat(
          StepName(step.target),
          k + 1 < plan->size() ? absl::StrCat(" to ", DataLayout(step.after).ToString()) : "",
          ": ", Bytes(b)));
    }
    total += b;
    current = DataLayout(step.after);
  }
  return total;
}

namespace {

// The result dim a reduce-scatter can produce directly, if any: the
// instruction's sharding must equal the reduced layout with exactly one
// more split dim, divisible, whose device groups are the reduction groups.
std::optional<int64_t> ScatterDim(const Instruction& inst, const Sharding& own,
                                  const Sharding& local_result,
                                  const std::vector<std::vector<int64_t>>& groups) {
  if (!inst.shape().is_array() || groups.empty()) return std::nullopt;
  if (!own.IsTiled() || own.HasManualSubgroup()) return std::nullopt;
  const int64_t n = static_cast<int64_t>(groups[0].size());
  for (int64_t d = 0; d < inst.shape().rank(); ++d) {
    if (own.TileCount(d) != n * local_result.TileCount(d)) continue;
    if (local_result.TileCount(d) != 1 || inst.shape().dim(d) % n != 0) continue;
    if (!(ReplicateDims(own, {d}) == local_result)) continue;
    if (GroupsAlongDims(own, {d}) != groups) continue;
    return d;
  }
  return std::nullopt;
}

}  // namespace

absl::StatusOr<OpStrategy> ChooseStrategy(const Instruction& inst, const ShardingRule& rule,
                                          const std::vector<Sharding>& operand_shardings,
                                          const Sharding& result_sharding,
                                          StrategyExplanation* explanation) {
  // Candidates, in preference order for ties.
  std::vector<Sharding> candidates;
  auto add = [&](std::optional<Sharding> s) {
    if (!s) return;
    Sharding legal = Legalize(*s, inst, rule);
    if (std::find(candidates.begin(), candidates.end(), legal) == candidates.end())
      candidates.push_back(legal);
  };
  for (size_t r = 0; r < rule.results.size(); ++r) {
    Sharding leaf = inst.shape().is_tuple()
                        ? result_sharding.ElementSharding(inst.shape(), static_cast<int64_t>(r))
                        : result_sharding;
    if (leaf.IsTiled()) add(ToFactors(leaf, rule.results[r], rule));
  }
  for (size_t i = 0; i < rule.operands.size() && i < operand_shardings.size(); ++i) {
    if (operand_shardings[i].IsTiled() && HasFactors(rule.operands[i]))
      add(ToFactors(operand_shardings[i], rule.operands[i], rule));
  }
  const size_t singles = candidates.size();
  for (size_t a = 0; a < singles; ++a) {
    for (size_t b = a + 1; b < singles; ++b) {
      if (candidates[a].IsTiled() && candidates[b].IsTiled())
        add(MergeCompatible(candidates[a], candidates[b]));
    }
  }
  add(Sharding::Replicated());

  std::optional<OpStrategy> best, sliced_only;
  size_t sliced_only_index = 0;
  std::tuple<bool, bool, int64_t> best_cost{false, false, 0};
  for (const Sharding& iteration : candidates) {
    OpStrategy s;
    s.iteration = iteration;
    StrategyCandidate account;
    account.iteration = iteration;
    std::vector<std::string>* moves = explanation ? &account.moves : nullptr;
    int64_t bytes = 0, operand_bytes = 0;
    bool moves_operands = false;
    for (size_t i = 0; i < inst.operands().size(); ++i) {
      Sharding target = i < rule.operands.size() ? Project(iteration, rule.operands[i], rule)
                                                 : Sharding::Replicated();
      const Sharding& current = operand_shardings[i];
      const Instruction* op = inst.operand(static_cast<int64_t>(i));
      std::vector<std::string> steps;
      int64_t moved = ReshardBytesSent(op->shape(), current, target, moves ? &steps : nullptr);
      moves_operands |= !NeedsNoReshard(current, target);
      if (moves && !steps.empty()) {
        moves->push_back(absl::StrCat("operand ", i, " (", op->name(), ") ", current.ToString(),
                                      " -> ", target.ToString(), ": ", absl::StrJoin(steps, ", ")));
      }
      bytes += moved;
      operand_bytes += moved;
      s.operand_targets.push_back(std::move(target));
    }
    // Split reduction factors and the result's layout.
    std::vector<int64_t> counts = FactorTileCounts(iteration, FactorSpace(rule), rule);
    for (size_t f = 0; f < rule.factors.size(); ++f) {
      if (rule.factors[f].kind == FactorKind::kReduction && counts[f] > 1)
        s.split_reduction_factors.push_back(static_cast<int64_t>(f));
    }
    std::vector<Sharding> leaves;
    for (const DimFactors& r : rule.results) leaves.push_back(Project(iteration, r, rule));
    s.local_result = inst.shape().is_tuple() ? Sharding::Tuple(leaves) : leaves[0];
    Sharding completed = s.local_result;
    if (!s.split_reduction_factors.empty()) {
      // All-reduce 2(n-1)/n of the partial result, reduce-scatter (n-1)/n.
      std::vector<std::vector<int64_t>> groups =
          GroupsAlongDims(iteration, s.split_reduction_factors);
      const int64_t n = static_cast<int64_t>(groups[0].size());
      const int64_t partial = s.local_result.ShardShape(inst.shape()).byte_size();
      s.scatter_dim = ScatterDim(inst, result_sharding, s.local_result, groups);
      int64_t b = 0;
      if (s.scatter_dim) {
        b = (n - 1) * partial / n;
        completed = result_sharding;
      } else {
        b = 2 * (n - 1) * partial / n;
      }
      if (moves) {
        moves->push_back(absl::StrCat("partial result ", s.local_result.ToString(), ": ",
                                      s.scatter_dim ? "reduce-scatter" : "all-reduce", " over ", n,
                                      " devices: ", Bytes(b)));
      }
      bytes += b;
    }
    std::vector<std::string> steps;
    const int64_t result_bytes =
        ReshardBytesSent(inst.shape(), completed, result_sharding, moves ? &steps : nullptr);
    const bool result_moves = inst.opcode() == hlo::Opcode::kDot && result_bytes > 0;
    bytes += result_bytes;
    if (moves && !steps.empty()) {
      moves->push_back(absl::StrCat("result ", completed.ToString(), " -> ",
                                    result_sharding.ToString(), ": ", absl::StrJoin(steps, ", ")));
    }
    s.bytes_sent = bytes;
    // First the split plans that use every operand where it lies (see
    // strategy.h), then bytes.
    const bool in_place = !moves_operands && iteration.IsTiled();
    if (explanation) {
      account.bytes_sent = bytes;
      account.takes_operands_as_they_are = in_place;
      explanation->candidates.push_back(std::move(account));
    }
    // Strictly cheaper only: a tie keeps the earlier candidate.
    // Then, for a dot, plans that give the result its own layout (or one it
    // slices locally) before those that move it afterwards: GSPMD's dot
    // handler partitions toward the result's sharding, resharding operands
    // to fit it.
    const std::tuple<bool, bool, int64_t> cost{!in_place, result_moves, bytes};
    if (!best || cost < best_cost) {
      best = s;
      best_cost = cost;
      if (explanation) explanation->chosen = explanation->candidates.size() - 1;
    }
    // Plans whose operands only slice locally what they hold, for the
    // refinement below.
    if (moves_operands && operand_bytes == 0 && iteration.IsTiled() && !result_moves &&
        (!sliced_only || bytes < sliced_only->bytes_sent)) {
      sliced_only = std::move(s);
      sliced_only_index = explanation ? explanation->candidates.size() - 1 : 0;
    }
  }
  if (!best) return absl::InternalError(absl::StrCat("no strategy for ", inst.Describe()));
  // An in-place plan gives way to one that only slices its operands locally
  // and sends fewer bytes: it splits the op further for free (XLA's dot
  // handler slices a replicated lhs to the result's rows before a
  // contracting split's all-reduce, DotPartialContracting2, where taking the
  // operands as they are would all-reduce the whole product and slice it).
  if (!std::get<0>(best_cost) && sliced_only && sliced_only->bytes_sent < best->bytes_sent) {
    best = std::move(sliced_only);
    if (explanation) {
      explanation->chosen = sliced_only_index;
      explanation->sliced_locally = true;
    }
  }
  return *std::move(best);
}

std::string StrategyExplanation::ToText(const Instruction& inst) const {
  std::string out = absl::StrCat(inst.name(), " = ", inst.shape().ToString(), " ",
                                 hlo::OpcodeName(inst.opcode()), ": ", candidates.size(),
                                 " plan", candidates.size() == 1 ? "" : "s",
                                 " considered (iteration shardings over the op's factors; bytes are "
                                 "what one device sends)\n");
  for (size_t k = 0; k < candidates.size(); ++k) {
    const StrategyCandidate& c = candidates[k];
    absl::StrAppend(&out, k == chosen ? "* " : "  ", k + 1, ". ", c.iteration.ToString(), ": ",
                    Bytes(c.bytes_sent), "\n");
    if (c.moves.empty()) absl::StrAppend(&out, "       no communication\n");
    for (const std::string& m : c.moves) absl::StrAppend(&out, "       ", m, "\n");
  }
  if (candidates.empty()) return out;
  const StrategyCandidate& win = candidates[chosen];
  bool cheaper_moves_operands = false, tie = false;
  for (size_t k = 0; k < candidates.size(); ++k) {
    if (k == chosen) continue;
    if (candidates[k].bytes_sent < win.bytes_sent) cheaper_moves_operands = true;
    if (candidates[k].bytes_sent == win.bytes_sent &&
        candidates[k].takes_operands_as_they_are == win.takes_operands_as_they_are)
      tie = true;
  }
  std::string why =
      sliced_locally
          ? "its operands only slice locally what they hold, and it sends fewer bytes than the "
            "plans taking them as they are"
      : cheaper_moves_operands
          ? "it splits the op with every operand as it is (plans that send fewer bytes reshard "
            "an operand or run the op whole)"
      : win.takes_operands_as_they_are
          ? "it splits the op with every operand as it is, and sends the fewest bytes"
                                       : "the fewest bytes";
  if (tie) {
    absl::StrAppend(&why, "; of the plans tied with it, the earliest (the result's sharding "
                          "first, as GSPMD partitions toward the result)");
  }
  absl::StrAppend(&out, "chose plan ", chosen + 1, ": ", why, "\n");
  return out;
}

}  // namespace sharc::spmd
