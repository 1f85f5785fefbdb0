// gather and scatter with XLA's general dimension numbers (including the
// batching dims added in 2024). Gather clamps start indices into the operand;
// scatter skips updates whose window would leave the operand.
#include <algorithm>
#include <limits>
#include <optional>
#include <vector>

#include "absl/strings/str_join.h"
#include "hlo/base/status_macros.h"
#include "hlo/ir/computation.h"
#include "hlo/ops/op_def.h"
#include "hlo/ops/op_util.h"

namespace sharc::hlo {
namespace {

// XLA requires these dim lists in increasing order (they define the output
// dim order), besides being distinct and in range.
absl::Status ExpectSortedDims(const Instruction& inst, const IntList& dims, int64_t rank,
                              std::string_view what) {
  RETURN_IF_ERROR(ExpectValidDims(inst, dims, rank, what));
  if (!std::is_sorted(dims.begin(), dims.end())) {
    return OpError(inst, what, " {", absl::StrJoin(dims, ","), "} must be sorted");
  }
  return absl::OkStatus();
}

absl::Status ExpectDisjoint(const Instruction& inst, const IntList& a, std::string_view a_name,
                            const IntList& b, std::string_view b_name) {
  for (int64_t d : a) {
    if (std::find(b.begin(), b.end(), d) != b.end()) {
      return OpError(inst, "dimension ", d, " is in both ", a_name, " and ", b_name);
    }
  }
  return absl::OkStatus();
}

// The index-side view shared by gather and scatter: which dim of the index
// array holds index vectors, and how the remaining ("batch") dims line up.
struct IndexLayout {
  int64_t index_vector_dim = 0;
  int64_t index_vector_size = 1;
  // Index-array dims other than index_vector_dim, in order; the j-th batch
  // dim of the output (gather) or of the updates (scatter) iterates these.
  std::vector<int64_t> batch_index_dims;
  // For each operand batching dim i, the position in batch_index_dims of the
  // matching index batching dim.
  std::vector<size_t> batching_positions;
};

absl::StatusOr<IndexLayout> GetIndexLayout(const Instruction& inst, const Shape& operand,
                                           const Shape& indices, const IntList& start_map,
                                           std::string_view start_map_name,
                                           const IntList& operand_batching,
                                           std::string_view operand_batching_name,
                                           const IntList& index_batching,
                                           std::string_view index_batching_name) {
  if (!IsInteger(indices.type())) {
    return OpError(inst, "indices must have an integer type, got ", indices.ToString());
  }
  IndexLayout layout;
  int64_t ivd = inst.attr_int("index_vector_dim", -1);
  if (ivd < 0 || ivd > indices.rank()) {
    return OpError(inst, "index_vector_dim ", ivd, " is out of range for indices of rank ",
                   indices.rank());
  }
  layout.index_vector_dim = ivd;
  layout.index_vector_size = ivd < indices.rank() ? indices.dim(ivd) : 1;
  for (int64_t d = 0; d < indices.rank(); ++d) {
    if (d != ivd) layout.batch_index_dims.push_back(d);
  }
  RETURN_IF_ERROR(ExpectValidDims(inst, start_map, operand.rank(), start_map_name));
  if (static_cast<int64_t>(start_map.size()) != layout.index_vector_size) {
    return OpError(inst, start_map_name, " has ", start_map.size(),
                   " entries but the index vectors have ", layout.index_vector_size, " elements");
  }
  RETURN_IF_ERROR(
      ExpectDisjoint(inst, start_map, start_map_name, operand_batching, operand_batching_name));
  RETURN_IF_ERROR(ExpectValidDims(inst, index_batching, indices.rank(), index_batching_name));
  if (index_batching.size() != operand_batching.size()) {
    return OpError(inst, "has ", operand_batching.size(), " ", operand_batching_name, " but ",
                   index_batching.size(), " ", index_batching_name);
  }
  for (size_t i = 0; i < index_batching.size(); ++i) {
    if (index_batching[i] == ivd) {
      return OpError(inst, index_batching_name, " contains index_vector_dim ", ivd);
    }
    int64_t od = operand_batching[i], id = index_batching[i];
    if (operand.dim(od) != indices.dim(id)) {
      return OpError(inst, "batching dim ", od, " of the operand has size ", operand.dim(od),
                     " but dim ", id, " of the indices has size ", indices.dim(id));
    }
    layout.batching_positions.push_back(static_cast<size_t>(id < ivd ? id : id - 1));
  }
  return layout;
}

// Operand dims that are neither in `removed_a` nor `removed_b`, in order.
std::vector<int64_t> RemainingDims(int64_t rank, const IntList& removed_a,
                                   const IntList& removed_b) {
  std::vector<int64_t> dims;
  for (int64_t d = 0; d < rank; ++d) {
    if (std::find(removed_a.begin(), removed_a.end(), d) == removed_a.end() &&
        std::find(removed_b.begin(), removed_b.end(), d) == removed_b.end()) {
      dims.push_back(d);
    }
  }
  return dims;
}

// Reads the start index vector for batch position `batch` (one entry per
// batch_index_dim) into `start` (operand-rank sized, zeroed by the caller),
// and sets operand batching dims to their batch coordinate.
void ReadStart(const Literal& indices, const IndexLayout& layout, const IntList& start_map,
               const IntList& operand_batching, absl::Span<const int64_t> batch,
               std::vector<int64_t>& index_scratch, std::vector<int64_t>& start) {
  const Shape& s = indices.shape();
  for (size_t j = 0; j < layout.batch_index_dims.size(); ++j) {
    index_scratch[static_cast<size_t>(layout.batch_index_dims[j])] = batch[j];
  }
  for (size_t k = 0; k < start_map.size(); ++k) {
    if (layout.index_vector_dim < s.rank()) {
      index_scratch[static_cast<size_t>(layout.index_vector_dim)] = static_cast<int64_t>(k);
    }
    int64_t value = indices.GetAsInt64(LinearIndex(s.dims(), index_scratch));
    // A u64 index above INT64_MAX reads back negative; it is out of range
    // on the high side (gather clamps it to the end, scatter skips it).
    if (value < 0 && IsUnsignedInteger(s.type())) value = std::numeric_limits<int64_t>::max();
    start[static_cast<size_t>(start_map[k])] = value;
  }
  for (size_t i = 0; i < operand_batching.size(); ++i) {
    start[static_cast<size_t>(operand_batching[i])] = batch[layout.batching_positions[i]];
  }
}

// ----------------------------------------------------------------- gather --

struct GatherConfig {
  IndexLayout layout;
  IntList offset_dims, collapsed, start_map, operand_batching, slice_sizes;
  std::vector<int64_t> offset_operand_dims;  // operand dim of each offset dim
  Shape result;
};

absl::StatusOr<GatherConfig> GetGatherConfig(const Instruction& inst) {
  if (inst.operand_count() != 2) {
    return OpError(inst, "expects 2 operands (operand, start_indices), got ", inst.operand_count());
  }
  RETURN_IF_ERROR(ExpectArrayOperand(inst, 0));
  RETURN_IF_ERROR(ExpectArrayOperand(inst, 1));
  const Shape& operand = inst.operand(0)->shape();
  const Shape& indices = inst.operand(1)->shape();
  GatherConfig c;
  c.offset_dims = inst.attr_ints("offset_dims");
  c.collapsed = inst.attr_ints("collapsed_slice_dims");
  c.start_map = inst.attr_ints("start_index_map");
  c.operand_batching = inst.attr_ints("operand_batching_dims");
  c.slice_sizes = inst.attr_ints("slice_sizes");
  const IntList& index_batching = inst.attr_ints("start_indices_batching_dims");

  if (static_cast<int64_t>(c.slice_sizes.size()) != operand.rank()) {
    return OpError(inst, "has ", c.slice_sizes.size(), " slice_sizes for an operand of rank ",
                   operand.rank());
  }
  for (int64_t d = 0; d < operand.rank(); ++d) {
    int64_t size = c.slice_sizes[static_cast<size_t>(d)];
    if (size < 0 || size > operand.dim(d)) {
      return OpError(inst, "slice size ", size, " of dim ", d, " is outside [0, ", operand.dim(d),
                     "]");
    }
  }
  RETURN_IF_ERROR(ExpectSortedDims(inst, c.collapsed, operand.rank(), "collapsed_slice_dims"));
  RETURN_IF_ERROR(
      ExpectSortedDims(inst, c.operand_batching, operand.rank(), "operand_batching_dims"));
  RETURN_IF_ERROR(ExpectDisjoint(inst, c.collapsed, "collapsed_slice_dims", c.operand_batching,
                                 "operand_batching_dims"));
  for (const IntList* list : {&c.collapsed, &c.operand_batching}) {
    for (int64_t d : *list) {
      // Exactly 1: a collapsed dim still names one operand element.
      if (c.slice_sizes[static_cast<size_t>(d)] != 1) {
        return OpError(inst, "collapses dim ", d, " whose slice size ",
                       c.slice_sizes[static_cast<size_t>(d)], " is not 1");
      }
    }
  }
  ASSIGN_OR_RETURN(c.layout, GetIndexLayout(inst, operand, indices, c.start_map, "start_index_map",
                                            c.operand_batching, "operand_batching_dims",
                                            index_batching, "start_indices_batching_dims"));
  c.offset_operand_dims = RemainingDims(operand.rank(), c.collapsed, c.operand_batching);
  if (c.offset_dims.size() != c.offset_operand_dims.size()) {
    return OpError(inst, "has ", c.offset_dims.size(), " offset_dims but the operand has ",
                   c.offset_operand_dims.size(), " dims that are neither collapsed nor batching");
  }
  int64_t out_rank = static_cast<int64_t>(c.offset_dims.size() + c.layout.batch_index_dims.size());
  RETURN_IF_ERROR(ExpectSortedDims(inst, c.offset_dims, out_rank, "offset_dims"));
  std::vector<int64_t> dims;
  size_t next_offset = 0, next_batch = 0;
  for (int64_t i = 0; i < out_rank; ++i) {
    if (next_offset < c.offset_dims.size() && c.offset_dims[next_offset] == i) {
      dims.push_back(c.slice_sizes[static_cast<size_t>(c.offset_operand_dims[next_offset++])]);
    } else {
      dims.push_back(indices.dim(c.layout.batch_index_dims[next_batch++]));
    }
  }
  c.result = Shape(operand.type(), std::move(dims));
  return c;
}

absl::StatusOr<Shape> InferGather(const Instruction& inst) {
  ASSIGN_OR_RETURN(GatherConfig c, GetGatherConfig(inst));
  return c.result;
}

absl::StatusOr<Literal> EvaluateGather(const Instruction& inst,
                                       absl::Span<const Literal* const> operands, EvalContext&) {
  RETURN_IF_ERROR(ExpectOperandValues(inst, operands));
  ASSIGN_OR_RETURN(GatherConfig c, GetGatherConfig(inst));
  const Literal& operand = *operands[0];
  const Literal& indices = *operands[1];
  const Shape& oshape = operand.shape();
  Literal result(c.result);
  std::vector<int64_t> batch(c.layout.batch_index_dims.size());
  std::vector<int64_t> scratch(static_cast<size_t>(indices.shape().rank()), 0);
  std::vector<int64_t> start(static_cast<size_t>(oshape.rank()));
  std::vector<int64_t> in(static_cast<size_t>(oshape.rank()));
  int64_t out_index = 0;
  ForEachIndex(c.result.dims(), [&](const std::vector<int64_t>& out) {
    size_t next_offset = 0, next_batch = 0;
    for (size_t i = 0; i < out.size(); ++i) {
      if (next_offset < c.offset_dims.size() &&
          c.offset_dims[next_offset] == static_cast<int64_t>(i)) {
        ++next_offset;
      } else {
        batch[next_batch++] = out[i];
      }
    }
    std::fill(start.begin(), start.end(), 0);
    ReadStart(indices, c.layout, c.start_map, c.operand_batching, batch, scratch, start);
    // Start indices are clamped so the whole slice lies inside the operand.
    for (int64_t d : c.start_map) {
      size_t ud = static_cast<size_t>(d);
      start[ud] = std::clamp<int64_t>(start[ud], 0, oshape.dim(d) - c.slice_sizes[ud]);
    }
    in = start;
    for (size_t k = 0; k < c.offset_dims.size(); ++k) {
      in[static_cast<size_t>(c.offset_operand_dims[k])] +=
          out[static_cast<size_t>(c.offset_dims[k])];
    }
    CopyElement(operand, LinearIndex(oshape.dims(), in), result, out_index++);
  });
  return result;
}

// ---------------------------------------------------------------- scatter --

struct ScatterConfig {
  int64_t n = 1;  // number of operands (and of updates)
  IndexLayout layout;
  IntList update_window_dims, inserted, scatter_map, input_batching;
  std::vector<int64_t> window_operand_dims;  // operand dim of each update window dim
  Shape result;
};

absl::StatusOr<ScatterConfig> GetScatterConfig(const Instruction& inst) {
  int64_t count = inst.operand_count();
  if (count < 3 || count % 2 != 1) {
    return OpError(inst, "expects N operands, the indices and N updates, got ", count, " operands");
  }
  ScatterConfig c;
  c.n = (count - 1) / 2;
  for (int64_t i = 0; i < count; ++i) RETURN_IF_ERROR(ExpectArrayOperand(inst, i));
  const Shape& operand = inst.operand(0)->shape();
  const Shape& indices = inst.operand(c.n)->shape();
  const Shape& updates = inst.operand(c.n + 1)->shape();
  for (int64_t i = 0; i < c.n; ++i) {
    const Shape& o = inst.operand(i)->shape();
    const Shape& u = inst.operand(c.n + 1 + i)->shape();
    if (o.dims() != operand.dims()) {
      return OpError(inst, "operand ", i, " is ", o.ToString(), " but operand 0 is ",
                     operand.ToString());
    }
    if (u.dims() != updates.dims()) {
      return OpError(inst, "updates ", i, " is ", u.ToString(), " but updates 0 is ",
                     updates.ToString());
    }
    if (u.type() != o.type()) {
      return OpError(inst, "updates ", i, " has type ", PrimitiveTypeName(u.type()),
                     " but operand ", i, " has type ", PrimitiveTypeName(o.type()));
    }
  }
  c.update_window_dims = inst.attr_ints("update_window_dims");
  c.inserted = inst.attr_ints("inserted_window_dims");
  c.scatter_map = inst.attr_ints("scatter_dims_to_operand_dims");
  c.input_batching = inst.attr_ints("input_batching_dims");
  const IntList& index_batching = inst.attr_ints("scatter_indices_batching_dims");

  RETURN_IF_ERROR(
      ExpectSortedDims(inst, c.update_window_dims, updates.rank(), "update_window_dims"));
  RETURN_IF_ERROR(ExpectSortedDims(inst, c.inserted, operand.rank(), "inserted_window_dims"));
  RETURN_IF_ERROR(ExpectSortedDims(inst, c.input_batching, operand.rank(), "input_batching_dims"));
  RETURN_IF_ERROR(ExpectDisjoint(inst, c.inserted, "inserted_window_dims", c.input_batching,
                                 "input_batching_dims"));
  ASSIGN_OR_RETURN(c.layout, GetIndexLayout(inst, operand, indices, c.scatter_map,
                                            "scatter_dims_to_operand_dims", c.input_batching,
                                            "input_batching_dims", index_batching,
                                            "scatter_indices_batching_dims"));
  c.window_operand_dims = RemainingDims(operand.rank(), c.inserted, c.input_batching);
  if (c.update_window_dims.size() != c.window_operand_dims.size()) {
    return OpError(inst, "has ", c.update_window_dims.size(),
                   " update_window_dims but the operand has ", c.window_operand_dims.size(),
                   " dims that are neither inserted nor batching");
  }
  int64_t expected_rank =
      static_cast<int64_t>(c.update_window_dims.size() + c.layout.batch_index_dims.size());
  if (updates.rank() != expected_rank) {
    return OpError(inst, "updates have rank ", updates.rank(), ", expected ", expected_rank, " (",
                   c.update_window_dims.size(), " window dims + ", c.layout.batch_index_dims.size(),
                   " scatter dims)");
  }
  size_t next_window = 0, next_batch = 0;
  for (int64_t i = 0; i < updates.rank(); ++i) {
    if (next_window < c.update_window_dims.size() && c.update_window_dims[next_window] == i) {
      int64_t od = c.window_operand_dims[next_window++];
      if (updates.dim(i) > operand.dim(od)) {
        return OpError(inst, "update window dim ", i, " has size ", updates.dim(i),
                       " but operand dim ", od, " only ", operand.dim(od));
      }
    } else {
      int64_t id = c.layout.batch_index_dims[next_batch++];
      if (updates.dim(i) != indices.dim(id)) {
        return OpError(inst, "update scatter dim ", i, " has size ", updates.dim(i),
                       " but indices dim ", id, " has size ", indices.dim(id));
      }
    }
  }
  if (c.n == 1) {
    c.result = operand;
  } else {
    std::vector<Shape> shapes;
    for (int64_t i = 0; i < c.n; ++i) shapes.push_back(inst.operand(i)->shape());
    c.result = Shape::Tuple(std::move(shapes));
  }
  return c;
}

absl::StatusOr<Shape> InferScatter(const Instruction& inst) {
  ASSIGN_OR_RETURN(ScatterConfig c, GetScatterConfig(inst));
  return c.result;
}

// to_apply combines (current_0..current_{N-1}, update_0..update_{N-1}).
absl::Status VerifyScatter(const Instruction& inst) {
  ASSIGN_OR_RETURN(ScatterConfig c, GetScatterConfig(inst));
  std::vector<Shape> params;
  for (int64_t k = 0; k < 2; ++k) {
    for (int64_t i = 0; i < c.n; ++i) {
      params.push_back(Shape::Scalar(inst.operand(i)->shape().type()));
    }
  }
  Shape result =
      c.n == 1 ? params[0] : Shape::Tuple(std::vector<Shape>(params.begin(), params.begin() + c.n));
  return ExpectComputationSignature(inst, inst.attr_computation("to_apply"), "to_apply", params,
                                    &result);
}

absl::StatusOr<Literal> EvaluateScatter(const Instruction& inst,
                                        absl::Span<const Literal* const> operands,
                                        EvalContext& ctx) {
  RETURN_IF_ERROR(ExpectOperandValues(inst, operands));
  ASSIGN_OR_RETURN(ScatterConfig c, GetScatterConfig(inst));
  RETURN_IF_ERROR(VerifyScatter(inst));
  const Computation& reducer = *inst.attr_computation("to_apply");
  std::optional<Opcode> fast_op;
  if (c.n == 1) fast_op = MatchBinaryReducer(reducer);

  std::vector<Literal> results;
  for (int64_t i = 0; i < c.n; ++i) results.push_back(*operands[i]);
  const Literal& indices = *operands[c.n];
  const Shape& oshape = operands[0]->shape();
  const Shape& ushape = operands[c.n + 1]->shape();

  // Extent of the update window along each operand dim (1 for inserted and
  // batching dims): a start index is valid only if the whole window fits.
  std::vector<int64_t> window_extent(static_cast<size_t>(oshape.rank()), 1);
  for (size_t k = 0; k < c.update_window_dims.size(); ++k) {
    window_extent[static_cast<size_t>(c.window_operand_dims[k])] =
        ushape.dim(c.update_window_dims[k]);
  }
  std::vector<int64_t> batch(c.layout.batch_index_dims.size());
  std::vector<int64_t> scratch(static_cast<size_t>(indices.shape().rank()), 0);
  std::vector<int64_t> start(static_cast<size_t>(oshape.rank()));
  std::vector<Literal> acc, xs;
  absl::Status status;
  int64_t update_index = 0;
  ForEachIndex(ushape.dims(), [&](const std::vector<int64_t>& u) {
    int64_t this_update = update_index++;
    if (!status.ok()) return;
    size_t next_window = 0, next_batch = 0;
    for (size_t i = 0; i < u.size(); ++i) {
      if (next_window < c.update_window_dims.size() &&
          c.update_window_dims[next_window] == static_cast<int64_t>(i)) {
        ++next_window;
      } else {
        batch[next_batch++] = u[i];
      }
    }
    std::fill(start.begin(), start.end(), 0);
    ReadStart(indices, c.layout, c.scatter_map, c.input_batching, batch, scratch, start);
    for (int64_t d = 0; d < oshape.rank(); ++d) {
      size_t ud = static_cast<size_t>(d);
      if (start[ud] < 0 || start[ud] > oshape.dim(d) - window_extent[ud]) return;
    }
    for (size_t k = 0; k < c.update_window_dims.size(); ++k) {
      start[static_cast<size_t>(c.window_operand_dims[k])] +=
          u[static_cast<size_t>(c.update_window_dims[k])];
    }
    int64_t target = LinearIndex(oshape.dims(), start);
    if (fast_op.has_value()) {
      ApplyBinaryReducer(*fast_op, results[0], target, *operands[2], this_update);
      return;
    }
    acc.clear();
    xs.clear();
    for (int64_t i = 0; i < c.n; ++i) {
      acc.push_back(ScalarAt(results[static_cast<size_t>(i)], target));
      xs.push_back(ScalarAt(*operands[c.n + 1 + i], this_update));
    }
    status = CallScalarReducer(ctx, reducer, acc, xs);
    if (!status.ok()) return;
    for (int64_t i = 0; i < c.n; ++i) {
      CopyElement(acc[static_cast<size_t>(i)], 0, results[static_cast<size_t>(i)], target);
    }
  });
  RETURN_IF_ERROR(status);
  if (c.n == 1) return std::move(results[0]);
  return Literal::Tuple(std::move(results));
}

}  // namespace

void RegisterGatherScatterOps(OpRegistry& registry) {
  {
    OpDef def;
    def.opcode = Opcode::kGather;
    def.min_operands = 2;
    def.max_operands = 2;
    def.attributes = {{"offset_dims", AttrKind::kIntList, true},
                      {"collapsed_slice_dims", AttrKind::kIntList, true},
                      {"start_index_map", AttrKind::kIntList, true},
                      {"operand_batching_dims", AttrKind::kIntList},
                      {"start_indices_batching_dims", AttrKind::kIntList},
                      {"index_vector_dim", AttrKind::kInt, true},
                      {"slice_sizes", AttrKind::kIntList, true},
                      {"indices_are_sorted", AttrKind::kBool}};
    def.infer_shape = InferGather;
    def.evaluate = EvaluateGather;
    registry.Register(std::move(def));
  }
  {
    OpDef def;
    def.opcode = Opcode::kScatter;
    def.min_operands = 3;
    def.max_operands = -1;
    def.attributes = {{"update_window_dims", AttrKind::kIntList, true},
                      {"inserted_window_dims", AttrKind::kIntList, true},
                      {"scatter_dims_to_operand_dims", AttrKind::kIntList, true},
                      {"input_batching_dims", AttrKind::kIntList},
                      {"scatter_indices_batching_dims", AttrKind::kIntList},
                      {"index_vector_dim", AttrKind::kInt, true},
                      {"indices_are_sorted", AttrKind::kBool},
                      {"unique_indices", AttrKind::kBool},
                      {"to_apply", AttrKind::kComputation, true}};
    def.infer_shape = InferScatter;
    def.verify = VerifyScatter;
    def.evaluate = EvaluateScatter;
    registry.Register(std::move(def));
  }
}

}  // namespace sharc::hlo
