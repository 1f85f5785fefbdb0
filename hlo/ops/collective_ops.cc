// Cross-device collectives: all-reduce, all-gather, reduce-scatter,
// all-to-all and collective-permute. Evaluation exchanges each device's value
// through EvalContext::ExchangeWithAllDevices and combines contributions in
// replica-group order, so every device computes bit-identical results.
//
// Which devices an op's replica_groups and source_target_pairs name follows
// XLA's group modes (collective_groups.h): without a channel_id they are
// replica ids, with one partition ids, with use_global_device_ids global
// device ids. Empty replica_groups mean one group of all of them in order.
#include <algorithm>
#include <optional>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_join.h"
#include "hlo/base/status_macros.h"
#include "hlo/ir/computation.h"
#include "hlo/ir/module.h"
#include "hlo/ops/collective_groups.h"
#include "hlo/ops/op_def.h"
#include "hlo/ops/op_util.h"
#include "hlo/ops/ragged_all_to_all.h"

namespace sharc::hlo {
namespace {

// Number of device ids the module declares, when the instruction is in one.
std::optional<int64_t> DeclaredDeviceCount(const Instruction& inst) {
  if (inst.parent() == nullptr || inst.parent()->parent() == nullptr) return std::nullopt;
  const ModuleConfig& config = inst.parent()->parent()->config();
  return config.num_partitions * config.replica_count;
}

absl::Status CheckChannel(const Instruction& inst) {
  // XLA's parser and verifier take channel_id=0 as a channel like any
  // other (its per-device test programs write it); only negative ids are
  // malformed.
  if (inst.has_attr("channel_id") && inst.attr_int("channel_id", 0) < 0) {
    return OpError(inst, "channel_id must not be negative, got ", inst.attr_int("channel_id", 0));
  }
  if (inst.attr_bool("use_global_device_ids") && !inst.has_attr("channel_id")) {
    return OpError(inst, "use_global_device_ids=true requires a channel_id");
  }
  return absl::OkStatus();
}

// `uniform`: every group has the same size, as every collective whose
// result shape follows its group size needs. all-reduce's does not, and
// XLA's verifier lets its groups differ ({{0,2,4},{1,3,5,6}}).
absl::Status CheckReplicaGroups(const Instruction& inst, bool uniform = true) {
  RETURN_IF_ERROR(CheckChannel(inst));
  const IntListList& groups = inst.attr_int_lists("replica_groups");
  std::optional<int64_t> bound = DeclaredDeviceCount(inst);
  absl::flat_hash_set<int64_t> seen;
  for (size_t g = 0; g < groups.size(); ++g) {
    if (groups[g].empty()) return OpError(inst, "replica group ", g, " is empty");
    if (uniform && groups[g].size() != groups[0].size()) {
      return OpError(inst, "replica group ", g, " has ", groups[g].size(),
                     " members but group 0 has ", groups[0].size(),
                     "; all groups must have the same size");
    }
    for (int64_t id : groups[g]) {
      if (id < 0 || (bound.has_value() && id >= *bound)) {
        return OpError(inst, "replica group ", g, " names device ", id, ", outside [0, ",
                       bound.value_or(0), ")");
      }
      if (!seen.insert(id).second) {
        return OpError(inst, "device ", id, " appears twice in replica_groups");
      }
    }
  }
  return absl::OkStatus();
}

// Group size when replica_groups is given; nullopt for "all partitions",
// whose size shape inference cannot know.
std::optional<int64_t> KnownGroupSize(const Instruction& inst) {
  const IntListList& groups = inst.attr_int_lists("replica_groups");
  if (groups.empty() || groups[0].empty()) return std::nullopt;
  return static_cast<int64_t>(groups[0].size());
}

// This device's replica group and its position in it.
struct GroupMembership {
  std::vector<int64_t> members;
  int64_t position = 0;
};

absl::StatusOr<GroupMembership> FindGroup(const Instruction& inst, const EvalContext& ctx,
                                          int64_t num_devices) {
  const int64_t me = ctx.partition_id();
  GroupMembership m;
  ASSIGN_OR_RETURN(m.members, CollectiveGroup(inst, me, num_devices));
  m.position = std::find(m.members.begin(), m.members.end(), me) - m.members.begin();
  return m;
}

// One value for the rendezvous: the operand, or a tuple of all operands so
// that a variadic collective still meets the other devices exactly once.
Literal PackOperands(absl::Span<const Literal* const> operands) {
  if (operands.size() == 1) return *operands[0];
  std::vector<Literal> elements;
  for (const Literal* op : operands) elements.push_back(*op);
  return Literal::Tuple(std::move(elements));
}

// Exchanges and checks that every group member sent a value shaped like ours.
absl::StatusOr<std::vector<Literal>> Exchange(const Instruction& inst,
                                              absl::Span<const Literal* const> operands,
                                              EvalContext& ctx, GroupMembership& group) {
  Literal mine = PackOperands(operands);
  Shape expected = mine.shape();
  ASSIGN_OR_RETURN(std::vector<Literal> all, ctx.ExchangeWithAllDevices(inst, std::move(mine)));
  ASSIGN_OR_RETURN(group, FindGroup(inst, ctx, static_cast<int64_t>(all.size())));
  for (int64_t id : group.members) {
    if (all[static_cast<size_t>(id)].shape() != expected) {
      return OpError(inst, "device ", id, " contributed ",
                     all[static_cast<size_t>(id)].shape().ToString(), ", expected ",
                     expected.ToString());
    }
  }
  return all;
}

// Operand k of device `id`'s contribution.
const Literal& Contribution(const std::vector<Literal>& all, int64_t id, int64_t k,
                            int64_t num_operands) {
  const Literal& value = all[static_cast<size_t>(id)];
  return num_operands == 1 ? value : value.element(k);
}

absl::Status ExpectArrayOperands(const Instruction& inst) {
  if (inst.operand_count() < 1) return OpError(inst, "expects at least 1 operand");
  for (int64_t i = 0; i < inst.operand_count(); ++i) RETURN_IF_ERROR(ExpectArrayOperand(inst, i));
  return absl::OkStatus();
}

Shape OperandsResult(std::vector<Shape> shapes) {
  if (shapes.size() == 1) return std::move(shapes[0]);
  return Shape::Tuple(std::move(shapes));
}

// to_apply must be (T[], T[]) -> T[] for every operand element type T.
absl::Status CheckBinaryReducer(const Instruction& inst) {
  for (const Instruction* op : inst.operands()) {
    Shape scalar = Shape::Scalar(op->shape().type());
    RETURN_IF_ERROR(ExpectComputationSignature(inst, inst.attr_computation("to_apply"), "to_apply",
                                               {scalar, scalar}, &scalar));
  }
  return absl::OkStatus();
}

// Reduces operand k over the group in member order.
absl::StatusOr<Literal> ReduceOverGroup(const Instruction& inst, const std::vector<Literal>& all,
                                        const GroupMembership& group, int64_t k, EvalContext& ctx) {
  int64_t num_operands = inst.operand_count();
  const Computation& reducer = *inst.attr_computation("to_apply");
  std::optional<Opcode> fast_op = MatchBinaryReducer(reducer);
  Literal acc = Contribution(all, group.members[0], k, num_operands);
  std::vector<Literal> acc_scalar(1), x_scalar(1);
  for (size_t j = 1; j < group.members.size(); ++j) {
    const Literal& x = Contribution(all, group.members[j], k, num_operands);
    for (int64_t i = 0; i < acc.num_elements(); ++i) {
      if (fast_op.has_value()) {
        ApplyBinaryReducer(*fast_op, acc, i, x, i);
        continue;
      }
      acc_scalar[0] = ScalarAt(acc, i);
      x_scalar[0] = ScalarAt(x, i);
      RETURN_IF_ERROR(CallScalarReducer(ctx, reducer, acc_scalar, x_scalar));
      CopyElement(acc_scalar[0], 0, acc, i);
    }
  }
  return acc;
}

// The single dimension of all-gather / reduce-scatter / array all-to-all.
absl::StatusOr<int64_t> SingleDimension(const Instruction& inst, int64_t rank) {
  const IntList& dims = inst.attr_ints("dimensions");
  if (dims.size() != 1) {
    return OpError(inst, "expects exactly one dimension in dimensions, got {",
                   absl::StrJoin(dims, ","), "}");
  }
  RETURN_IF_ERROR(ExpectValidDims(inst, dims, rank, "collective"));
  return dims[0];
}

// Copies chunk `chunk` (of size `chunk_size` along `dim`) of `from` into
// chunk `to_chunk` of `to`.
void CopyChunk(const Literal& from, int64_t chunk, Literal& to, int64_t to_chunk, int64_t dim,
               int64_t chunk_size) {
  std::vector<int64_t> dims = from.shape().dims();
  dims[static_cast<size_t>(dim)] = chunk_size;
  std::vector<int64_t> src, dst;
  ForEachIndex(dims, [&](const std::vector<int64_t>& index) {
    src = index;
    dst = index;
    src[static_cast<size_t>(dim)] += chunk * chunk_size;
    dst[static_cast<size_t>(dim)] += to_chunk * chunk_size;
    CopyElement(from, LinearIndex(from.shape().dims(), src), to,
                LinearIndex(to.shape().dims(), dst));
  });
}

// The declared array shape of result k, if the instruction declares one.
const Shape* DeclaredShape(const Instruction& inst, int64_t k) {
  const Shape& shape = inst.shape();
  if (inst.operand_count() == 1) return shape.is_array() ? &shape : nullptr;
  if (!shape.is_tuple() || k >= shape.tuple_size() || !shape.tuple_shape(k).is_array()) {
    return nullptr;
  }
  return &shape.tuple_shape(k);
}

// ------------------------------------------------------------- all-reduce --

absl::StatusOr<Shape> InferAllReduce(const Instruction& inst) {
  RETURN_IF_ERROR(ExpectArrayOperands(inst));
  std::vector<Shape> shapes;
  for (const Instruction* op : inst.operands()) shapes.push_back(op->shape());
  return OperandsResult(std::move(shapes));
}

absl::Status VerifyAllReduce(const Instruction& inst) {
  RETURN_IF_ERROR(InferAllReduce(inst).status());
  RETURN_IF_ERROR(CheckReplicaGroups(inst, /*uniform=*/false));
  return CheckBinaryReducer(inst);
}

absl::StatusOr<Literal> EvaluateAllReduce(const Instruction& inst,
                                          absl::Span<const Literal* const> operands,
                                          EvalContext& ctx) {
  RETURN_IF_ERROR(ExpectOperandValues(inst, operands));
  RETURN_IF_ERROR(VerifyAllReduce(inst));
  GroupMembership group;
  ASSIGN_OR_RETURN(std::vector<Literal> all, Exchange(inst, operands, ctx, group));
  std::vector<Literal> results;
  for (int64_t k = 0; k < inst.operand_count(); ++k) {
    ASSIGN_OR_RETURN(Literal r, ReduceOverGroup(inst, all, group, k, ctx));
    results.push_back(std::move(r));
  }
  if (results.size() == 1) return std::move(results[0]);
  return Literal::Tuple(std::move(results));
}

// ------------------------------------------- all-gather and reduce-scatter --

// Result shape of operand k when dim `dim` is multiplied (gather) or divided
// (scatter) by the group size. With unknown group size the declared shape is
// accepted if it is consistent with some group size.
absl::StatusOr<Shape> ScaledShape(const Instruction& inst, int64_t k, int64_t dim, bool gather) {
  const Shape& operand = inst.operand(k)->shape();
  std::optional<int64_t> group_size = KnownGroupSize(inst);
  if (group_size.has_value()) {
    Shape result = operand;
    int64_t g = *group_size;
    if (gather) {
      __int128 scaled = __int128{operand.dim(dim)} * g;
      if (scaled > kMaxElements) {
        return OpError(inst, "gathered dim ", dim, " would have ", operand.dim(dim), " x ", g,
                       " elements, too many");
      }
      result.mutable_dims()[static_cast<size_t>(dim)] = static_cast<int64_t>(scaled);
    } else {
      if (operand.dim(dim) % g != 0) {
        return OpError(inst, "dim ", dim, " of size ", operand.dim(dim),
                       " is not divisible by the group size ", g);
      }
      result.mutable_dims()[static_cast<size_t>(dim)] = operand.dim(dim) / g;
    }
    return result;
  }
  const Shape& whole = inst.shape();
  const Shape* declared = &whole;
  if (inst.operand_count() > 1) {
    if (!whole.is_tuple() || whole.tuple_size() != inst.operand_count()) {
      return OpError(inst, "with empty replica_groups must declare a tuple of ",
                     inst.operand_count(), " arrays, declares ", whole.ToString());
    }
    declared = &whole.tuple_shape(k);
  }
  bool consistent = declared->is_array() && declared->type() == operand.type() &&
                    declared->rank() == operand.rank();
  for (int64_t d = 0; consistent && d < operand.rank(); ++d) {
    int64_t o = operand.dim(d), r = declared->dim(d);
    if (d != dim) {
      consistent = o == r;
    } else {
      int64_t small = gather ? o : r, big = gather ? r : o;
      consistent = small == 0 ? big == 0 : (big >= small && big % small == 0);
    }
  }
  if (!consistent) {
    return OpError(inst, "declares ", declared->ToString(), " for operand ", operand.ToString(),
                   "; with empty replica_groups dim ", dim,
                   gather ? " must be a multiple of" : " must divide", " the operand's");
  }
  return *declared;
}

absl::StatusOr<Shape> InferScaled(const Instruction& inst, bool gather) {
  RETURN_IF_ERROR(ExpectArrayOperands(inst));
  std::vector<Shape> shapes;
  for (int64_t k = 0; k < inst.operand_count(); ++k) {
    ASSIGN_OR_RETURN(int64_t dim, SingleDimension(inst, inst.operand(k)->shape().rank()));
    ASSIGN_OR_RETURN(Shape s, ScaledShape(inst, k, dim, gather));
    shapes.push_back(std::move(s));
  }
  return OperandsResult(std::move(shapes));
}

absl::StatusOr<Shape> InferAllGather(const Instruction& inst) { return InferScaled(inst, true); }

absl::Status VerifyAllGather(const Instruction& inst) {
  RETURN_IF_ERROR(InferAllGather(inst).status());
  return CheckReplicaGroups(inst);
}

absl::StatusOr<Literal> EvaluateAllGather(const Instruction& inst,
                                          absl::Span<const Literal* const> operands,
                                          EvalContext& ctx) {
  RETURN_IF_ERROR(ExpectOperandValues(inst, operands));
  RETURN_IF_ERROR(VerifyAllGather(inst));
  GroupMembership group;
  ASSIGN_OR_RETURN(std::vector<Literal> all, Exchange(inst, operands, ctx, group));
  int64_t g = static_cast<int64_t>(group.members.size());
  std::vector<Literal> results;
  for (int64_t k = 0; k < inst.operand_count(); ++k) {
    const Shape& operand = operands[static_cast<size_t>(k)]->shape();
    int64_t dim = inst.attr_ints("dimensions")[0];
    Shape shape = operand;
    shape.mutable_dims()[static_cast<size_t>(dim)] *= g;
    const Shape* declared = DeclaredShape(inst, k);
    if (declared != nullptr && *declared != shape) {
      return OpError(inst, "gathers ", shape.ToString(), " over ", g, " devices but declares ",
                     declared->ToString());
    }
    Literal result(shape);
    for (int64_t j = 0; j < g; ++j) {
      CopyChunk(Contribution(all, group.members[static_cast<size_t>(j)], k, inst.operand_count()),
                0, result, j, dim, operand.dim(dim));
    }
    results.push_back(std::move(result));
  }
  if (results.size() == 1) return std::move(results[0]);
  return Literal::Tuple(std::move(results));
}

absl::StatusOr<Shape> InferReduceScatter(const Instruction& inst) {
  return InferScaled(inst, false);
}

absl::Status VerifyReduceScatter(const Instruction& inst) {
  RETURN_IF_ERROR(InferReduceScatter(inst).status());
  RETURN_IF_ERROR(CheckReplicaGroups(inst));
  return CheckBinaryReducer(inst);
}

absl::StatusOr<Literal> EvaluateReduceScatter(const Instruction& inst,
                                              absl::Span<const Literal* const> operands,
                                              EvalContext& ctx) {
  RETURN_IF_ERROR(ExpectOperandValues(inst, operands));
  RETURN_IF_ERROR(VerifyReduceScatter(inst));
  GroupMembership group;
  ASSIGN_OR_RETURN(std::vector<Literal> all, Exchange(inst, operands, ctx, group));
  int64_t g = static_cast<int64_t>(group.members.size());
  int64_t dim = inst.attr_ints("dimensions")[0];
  std::vector<Literal> results;
  for (int64_t k = 0; k < inst.operand_count(); ++k) {
    const Shape& operand = operands[static_cast<size_t>(k)]->shape();
    if (operand.dim(dim) % g != 0) {
      return OpError(inst, "dim ", dim, " of size ", operand.dim(dim), " is not divisible by the ",
                     g, " devices of the group");
    }
    Shape shape = operand;
    shape.mutable_dims()[static_cast<size_t>(dim)] /= g;
    const Shape* declared = DeclaredShape(inst, k);
    if (declared != nullptr && *declared != shape) {
      return OpError(inst, "scatters to ", shape.ToString(), " over ", g, " devices but declares ",
                     declared->ToString());
    }
    ASSIGN_OR_RETURN(Literal reduced, ReduceOverGroup(inst, all, group, k, ctx));
    Literal result(shape);
    CopyChunk(reduced, group.position, result, 0, dim, shape.dim(dim));
    results.push_back(std::move(result));
  }
  if (results.size() == 1) return std::move(results[0]);
  return Literal::Tuple(std::move(results));
}

// ------------------------------------------------------------- all-to-all --

// Array form (dimensions={d}, one operand): split d into group-size chunks,
// send chunk j to member j, concatenate received chunks along d in member
// order. Tuple form (no dimensions): operand j goes to member j; the result
// tuple holds, at j, what member j sent us.
absl::StatusOr<Shape> InferAllToAll(const Instruction& inst) {
  RETURN_IF_ERROR(ExpectArrayOperands(inst));
  std::optional<int64_t> group_size = KnownGroupSize(inst);
  if (inst.has_attr("dimensions")) {
    if (inst.operand_count() != 1) {
      return OpError(inst, "with dimensions expects 1 operand, got ", inst.operand_count());
    }
    const Shape& operand = inst.operand(0)->shape();
    ASSIGN_OR_RETURN(int64_t dim, SingleDimension(inst, operand.rank()));
    if (group_size.has_value() && operand.dim(dim) % *group_size != 0) {
      return OpError(inst, "dim ", dim, " of size ", operand.dim(dim),
                     " is not divisible by the group size ", *group_size);
    }
    return operand;
  }
  const Shape& first = inst.operand(0)->shape();
  for (int64_t i = 1; i < inst.operand_count(); ++i) {
    if (inst.operand(i)->shape() != first) {
      return OpError(inst, "operand ", i, " is ", inst.operand(i)->shape().ToString(),
                     " but operand 0 is ", first.ToString());
    }
  }
  if (group_size.has_value() && *group_size != inst.operand_count()) {
    return OpError(inst, "has ", inst.operand_count(), " operands for groups of ", *group_size,
                   " devices");
  }
  std::vector<Shape> shapes;
  for (const Instruction* op : inst.operands()) shapes.push_back(op->shape());
  return Shape::Tuple(std::move(shapes));
}

absl::Status VerifyAllToAll(const Instruction& inst) {
  RETURN_IF_ERROR(InferAllToAll(inst).status());
  return CheckReplicaGroups(inst);
}

absl::StatusOr<Literal> EvaluateAllToAll(const Instruction& inst,
                                         absl::Span<const Literal* const> operands,
                                         EvalContext& ctx) {
  RETURN_IF_ERROR(ExpectOperandValues(inst, operands));
  RETURN_IF_ERROR(VerifyAllToAll(inst));
  GroupMembership group;
  ASSIGN_OR_RETURN(std::vector<Literal> all, Exchange(inst, operands, ctx, group));
  int64_t g = static_cast<int64_t>(group.members.size());
  if (!inst.has_attr("dimensions")) {
    if (inst.operand_count() != g) {
      return OpError(inst, "has ", inst.operand_count(), " operands for a group of ", g,
                     " devices");
    }
    std::vector<Literal> results;
    for (int64_t j = 0; j < g; ++j) {
      results.push_back(Contribution(all, group.members[static_cast<size_t>(j)], group.position,
                                     inst.operand_count()));
    }
    return Literal::Tuple(std::move(results));
  }
  const Shape& shape = operands[0]->shape();
  int64_t dim = inst.attr_ints("dimensions")[0];
  if (shape.dim(dim) % g != 0) {
    return OpError(inst, "dim ", dim, " of size ", shape.dim(dim), " is not divisible by the ", g,
                   " devices of the group");
  }
  int64_t chunk = shape.dim(dim) / g;
  Literal result(shape);
  for (int64_t j = 0; j < g; ++j) {
    CopyChunk(all[static_cast<size_t>(group.members[static_cast<size_t>(j)])], group.position,
              result, j, dim, chunk);
  }
  return result;
}

// ----------------------------------------------------- collective-permute --

// One operand, or several permuted together (XLA's combined form, a tuple of
// results). XLA's in-place form, collective-permute(input, output,
// input_start_indices, output_start_indices), slice_sizes={{...}}, writes
// slices of the input into the output buffer: it is read and verified, and
// refuses to run.
bool IsInPlacePermute(const Instruction& inst) { return inst.has_attr("slice_sizes"); }

absl::StatusOr<Shape> InferCollectivePermute(const Instruction& inst) {
  if (IsInPlacePermute(inst)) {
    if (inst.operand_count() != 4) {
      return OpError(inst, "with slice_sizes takes (input, output, input_start_indices, "
                           "output_start_indices), got ", inst.operand_count(), " operands");
    }
    return inst.operand(1)->shape();
  }
  RETURN_IF_ERROR(ExpectArrayOperands(inst));
  std::vector<Shape> shapes;
  for (const Instruction* op : inst.operands()) shapes.push_back(op->shape());
  return OperandsResult(std::move(shapes));
}

absl::Status VerifyCollectivePermute(const Instruction& inst) {
  RETURN_IF_ERROR(InferCollectivePermute(inst).status());
  RETURN_IF_ERROR(CheckChannel(inst));
  std::optional<int64_t> bound = DeclaredDeviceCount(inst);
  absl::flat_hash_set<int64_t> sources, targets;
  for (const std::vector<int64_t>& pair : inst.attr_int_lists("source_target_pairs")) {
    if (pair.size() != 2) {
      return OpError(inst, "source_target_pairs entry {", absl::StrJoin(pair, ","),
                     "} is not a pair");
    }
    for (int64_t id : pair) {
      if (id < 0 || (bound.has_value() && id >= *bound)) {
        return OpError(inst, "source_target_pairs names device ", id, ", outside [0, ",
                       bound.value_or(0), ")");
      }
    }
    // The in-place form may read (and write) one device several times, a
    // slice each.
    if (IsInPlacePermute(inst)) continue;
    if (!sources.insert(pair[0]).second) {
      return OpError(inst, "device ", pair[0], " is the source of more than one pair");
    }
    if (!targets.insert(pair[1]).second) {
      return OpError(inst, "device ", pair[1], " is the target of more than one pair");
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<Literal> EvaluateCollectivePermute(const Instruction& inst,
                                                  absl::Span<const Literal* const> operands,
                                                  EvalContext& ctx) {
  RETURN_IF_ERROR(ExpectOperandValues(inst, operands));
  RETURN_IF_ERROR(VerifyCollectivePermute(inst));
  if (IsInPlacePermute(inst)) {
    return absl::UnimplementedError(absl::StrCat(
        "the in-place collective-permute (with slice_sizes) does not run yet, in ",
        inst.Describe()));
  }
  Literal mine = PackOperands(operands);
  const Shape expected = mine.shape();
  ASSIGN_OR_RETURN(std::vector<Literal> all, ctx.ExchangeWithAllDevices(inst, std::move(mine)));
  const int64_t me = ctx.partition_id();
  ASSIGN_OR_RETURN(auto pairs, GlobalPairs(inst, static_cast<int64_t>(all.size())));
  for (const auto& [source, target] : pairs) {
    if (target != me) continue;
    const Literal& received = all[static_cast<size_t>(source)];
    if (received.shape() != expected) {
      return OpError(inst, "device ", source, " sent ", received.shape().ToString(), ", expected ",
                     expected.ToString());
    }
    return received;
  }
  // Devices that are no pair's target receive zeros.
  return Literal(expected);
}

// ------------------------------------------------------ ragged-all-to-all --

// ragged-all-to-all(input, output, input_offsets, send_sizes, output_offsets,
// recv_sizes): the n offsets hold U = n / (group size) updates per member;
// update k = j * U + u sends member j the rows [input_offsets[k],
// input_offsets[k] + send_sizes[k]) of our input (dim 0), written into its
// output at row output_offsets[k]; the result is the output operand with
// every member's rows for us written in. recv_sizes[k] is how many rows
// member j sends us in its update u (XLA's runtime uses it; the values come
// from the senders' send_sizes).
absl::StatusOr<Shape> InferRaggedAllToAll(const Instruction& inst) {
  RETURN_IF_ERROR(ExpectArrayOperands(inst));
  const Shape& input = inst.operand(0)->shape();
  const Shape& output = inst.operand(1)->shape();
  if (input.rank() < 1 || input.type() != output.type() || output.rank() != input.rank()) {
    return OpError(inst, "needs an input and output of one element type and rank >= 1, got ",
                   input.ToString(), " and ", output.ToString());
  }
  for (int64_t d = 1; d < input.rank(); ++d) {
    if (input.dim(d) != output.dim(d)) {
      return OpError(inst, "input ", input.ToString(), " and output ", output.ToString(),
                     " differ in dim ", d, " (only dim 0 may differ)");
    }
  }
  const Shape& offsets = inst.operand(2)->shape();
  for (int64_t i = 2; i < 6; ++i) {
    const Shape& s = inst.operand(i)->shape();
    if (s.rank() != 1 || (s.type() != PrimitiveType::kS32 && s.type() != PrimitiveType::kS64) ||
        s != offsets) {
      return OpError(inst, "operand ", i, " (offsets and sizes) must be s32[n] or s64[n] like "
                     "operand 2, got ", s.ToString());
    }
  }
  std::optional<int64_t> group_size = KnownGroupSize(inst);
  if (group_size.has_value() && offsets.dim(0) % *group_size != 0) {
    return OpError(inst, "has ", offsets.dim(0), " offsets for groups of ", *group_size,
                   " devices");
  }
  return output;
}

absl::Status VerifyRaggedAllToAll(const Instruction& inst) {
  RETURN_IF_ERROR(InferRaggedAllToAll(inst).status());
  return CheckReplicaGroups(inst);
}

absl::StatusOr<Literal> EvaluateRaggedAllToAll(const Instruction& inst,
                                               absl::Span<const Literal* const> operands,
                                               EvalContext& ctx) {
  RETURN_IF_ERROR(ExpectOperandValues(inst, operands));
  RETURN_IF_ERROR(VerifyRaggedAllToAll(inst));
  // What the others need from us: the input and where its rows go.
  const Literal* sent[] = {operands[0], operands[2], operands[3], operands[4]};
  GroupMembership group;
  ASSIGN_OR_RETURN(std::vector<Literal> all, Exchange(inst, sent, ctx, group));
  const int64_t g = static_cast<int64_t>(group.members.size());
  absl::StatusOr<int64_t> per_member = UpdatesPerMember(operands[2]->num_elements(), g);
  if (!per_member.ok()) return OpError(inst, per_member.status().message());
  Literal result = *operands[1];
  const int64_t out_rows = result.shape().dim(0);
  const int64_t row = out_rows == 0 ? 0 : result.num_elements() / out_rows;
  for (int64_t j = 0; j < g; ++j) {
    const Literal& from = all[static_cast<size_t>(group.members[static_cast<size_t>(j)])];
    const Literal& input = from.element(0);
    const int64_t in_rows = input.shape().dim(0);
    for (int64_t u = 0; u < *per_member; ++u) {
      const int64_t update = group.position * *per_member + u;
      const int64_t in_offset = from.element(1).GetAsInt64(update);
      const int64_t size = from.element(2).GetAsInt64(update);
      const int64_t out_offset = from.element(3).GetAsInt64(update);
      if (absl::Status rows = CheckRaggedRows(group.members[static_cast<size_t>(j)], in_offset,
                                              size, in_rows, out_offset, out_rows);
          !rows.ok()) {
        return OpError(inst, rows.message());
      }
      for (int64_t i = 0; i < size * row; ++i) {
        CopyElement(input, in_offset * row + i, result, out_offset * row + i);
      }
    }
  }
  return result;
}

// --------------------------------------------------- collective-broadcast --

// Every member of a replica group receives the value of the group's first.
absl::StatusOr<Shape> InferCollectiveBroadcast(const Instruction& inst) {
  if (inst.operand_count() != 1) {
    return OpError(inst, "expects 1 operand, got ", inst.operand_count());
  }
  RETURN_IF_ERROR(ExpectArrayOperand(inst, 0));
  return inst.operand(0)->shape();
}

absl::Status VerifyCollectiveBroadcast(const Instruction& inst) {
  RETURN_IF_ERROR(InferCollectiveBroadcast(inst).status());
  RETURN_IF_ERROR(CheckChannel(inst));
  return CheckReplicaGroups(inst);
}

absl::StatusOr<Literal> EvaluateCollectiveBroadcast(const Instruction& inst,
                                                    absl::Span<const Literal* const> operands,
                                                    EvalContext& ctx) {
  RETURN_IF_ERROR(ExpectOperandValues(inst, operands));
  RETURN_IF_ERROR(VerifyCollectiveBroadcast(inst));
  GroupMembership group;
  ASSIGN_OR_RETURN(std::vector<Literal> all, Exchange(inst, operands, ctx, group));
  return all[static_cast<size_t>(group.members.front())];
}

std::vector<AttrSpec> GroupAttrs(bool with_dimensions, bool with_reducer) {
  std::vector<AttrSpec> attrs = {{"channel_id", AttrKind::kInt},
                                 {"replica_groups", AttrKind::kReplicaGroups}};
  if (with_dimensions) attrs.push_back({"dimensions", AttrKind::kIntList, true});
  attrs.push_back({"use_global_device_ids", AttrKind::kBool});
  if (with_reducer) attrs.push_back({"to_apply", AttrKind::kComputation, true});
  return attrs;
}

}  // namespace

void RegisterCollectiveOps(OpRegistry& registry) {
  OpTraits collective;
  collective.collective = true;
  {
    OpDef def;
    def.opcode = Opcode::kAllReduce;
    def.min_operands = 1;
    def.max_operands = -1;
    def.attributes = GroupAttrs(false, true);
    def.infer_shape = InferAllReduce;
    def.verify = VerifyAllReduce;
    def.evaluate = EvaluateAllReduce;
    def.traits = collective;
    registry.Register(std::move(def));
  }
  {
    OpDef def;
    def.opcode = Opcode::kAllGather;
    def.min_operands = 1;
    def.max_operands = -1;
    def.attributes = GroupAttrs(true, false);
    def.infer_shape = InferAllGather;
    def.verify = VerifyAllGather;
    def.evaluate = EvaluateAllGather;
    def.traits = collective;
    registry.Register(std::move(def));
  }
  {
    OpDef def;
    def.opcode = Opcode::kReduceScatter;
    def.min_operands = 1;
    def.max_operands = -1;
    def.attributes = GroupAttrs(true, true);
    def.infer_shape = InferReduceScatter;
    def.verify = VerifyReduceScatter;
    def.evaluate = EvaluateReduceScatter;
    def.traits = collective;
    registry.Register(std::move(def));
  }
  std::vector<AttrSpec> all_to_all_attrs = GroupAttrs(true, false);
  for (AttrSpec& spec : all_to_all_attrs) {
    if (spec.name == "dimensions") spec.required = false;
  }
  {
    OpDef def;
    def.opcode = Opcode::kAllToAll;
    def.min_operands = 1;
    def.max_operands = -1;
    def.attributes = all_to_all_attrs;
    def.infer_shape = InferAllToAll;
    def.verify = VerifyAllToAll;
    def.evaluate = EvaluateAllToAll;
    def.traits = collective;
    registry.Register(std::move(def));
  }
  {
    OpDef def;
    def.opcode = Opcode::kCollectivePermute;
    def.min_operands = 1;
    def.max_operands = -1;
    def.attributes = {{"channel_id", AttrKind::kInt},
                      {"source_target_pairs", AttrKind::kPairs, true},
                      {"slice_sizes", AttrKind::kEnum}};
    def.infer_shape = InferCollectivePermute;
    def.verify = VerifyCollectivePermute;
    def.evaluate = EvaluateCollectivePermute;
    def.traits = collective;
    registry.Register(std::move(def));
  }
  {
    OpDef def;
    def.opcode = Opcode::kCollectiveBroadcast;
    def.min_operands = 1;
    def.max_operands = 1;
    def.attributes = {{"channel_id", AttrKind::kInt},
                      {"replica_groups", AttrKind::kReplicaGroups}};
    def.infer_shape = InferCollectiveBroadcast;
    def.verify = VerifyCollectiveBroadcast;
    def.evaluate = EvaluateCollectiveBroadcast;
    def.traits = collective;
    registry.Register(std::move(def));
  }
  {
    OpDef def;
    def.opcode = Opcode::kRaggedAllToAll;
    def.min_operands = 6;
    def.max_operands = 6;
    def.attributes = GroupAttrs(false, false);
    def.infer_shape = InferRaggedAllToAll;
    def.verify = VerifyRaggedAllToAll;
    def.evaluate = EvaluateRaggedAllToAll;
    def.traits = collective;
    registry.Register(std::move(def));
  }
}

}  // namespace sharc::hlo
