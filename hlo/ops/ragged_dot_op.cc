// ragged-dot(lhs, rhs, group_sizes): a dot whose lhs is cut into groups
// along one "ragged" dim; group_sizes[..., g] says how many consecutive
// positions of that dim group g holds. XLA's three modes, by what the ragged
// dim is (shapes for one batch dim b, lhs [b,m,k]):
//
//   non-contracting (m): rhs [g,b,k,n] has a group dim  -> [b,m,n]
//       row i of group j is multiplied by rhs[j]; rows past sum(sizes) are 0
//   contracting (k):     rhs [b,k,n]                    -> [g,b,m,n]
//       result[j] contracts only the k of group j
//   batch (b):           rhs [b,k,n]                    -> [b,m,n]
//       a plain dot, 0 for the batches past sum(sizes)
//
//   %r = f32[16,8] ragged-dot(f32[16,4] %x, f32[3,4,8] %w, s32[3] %sizes),
//          lhs_contracting_dims={1}, rhs_contracting_dims={1},
//          lhs_ragged_dims={0}, rhs_group_dims={0}
//
// group_sizes is [g], or [prefix..., g] with one size list per index of the
// lhs dims that precede the ragged dim among those of its kind (batch dims,
// then the dims of the ragged dim's kind), as XLA's shape inference says.
#include <algorithm>
#include <vector>

#include "hlo/base/status_macros.h"
#include "hlo/eval/complex_values.h"
#include "hlo/ops/dot_dimension_numbers.h"
#include "hlo/ops/op_def.h"
#include "hlo/ops/op_util.h"

namespace sharc::hlo {
namespace {

enum class RaggedMode { kNonContracting, kContracting, kBatch };

struct RaggedDims {
  DotDims dot;  // rhs_free excludes the group dim
  int64_t lhs_ragged = 0;
  int64_t rhs_group = -1;
  RaggedMode mode = RaggedMode::kNonContracting;
  // The lhs dims whose indices select a row of group_sizes (empty for [g]).
  std::vector<int64_t> prefix;
  int64_t num_groups = 0;
};

bool Contains(const std::vector<int64_t>& v, int64_t x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

absl::StatusOr<RaggedDims> GetRaggedDims(const Instruction& inst) {
  for (int64_t i = 0; i < 3; ++i) RETURN_IF_ERROR(ExpectArrayOperand(inst, i));
  const Shape& lhs = inst.operand(0)->shape();
  const Shape& rhs = inst.operand(1)->shape();
  const Shape& sizes = inst.operand(2)->shape();
  const IntList ragged = inst.attr_ints("lhs_ragged_dims");
  const IntList group = inst.attr_ints("rhs_group_dims");
  RaggedDims rd;
  ASSIGN_OR_RETURN(rd.dot, GetDotDims(inst, group));
  if (ragged.size() != 1) {
    return OpError(inst, "needs exactly one lhs_ragged_dims, got ", ragged.size());
  }
  rd.lhs_ragged = ragged[0];
  if (rd.lhs_ragged < 0 || rd.lhs_ragged >= lhs.rank()) {
    return OpError(inst, "lhs ragged dim ", rd.lhs_ragged, " is out of range [0, ", lhs.rank(),
                   ")");
  }
  const IntList& lb = rd.dot.lhs_batch;
  const IntList& lc = rd.dot.lhs_contracting;
  const std::vector<int64_t>* kind = &rd.dot.lhs_free;
  if (Contains(lb, rd.lhs_ragged)) {
    rd.mode = RaggedMode::kBatch;
    kind = nullptr;
  } else if (Contains(lc, rd.lhs_ragged)) {
    rd.mode = RaggedMode::kContracting;
    kind = &lc;
  }
  if (rd.mode == RaggedMode::kNonContracting) {
    if (group.size() != 1) {
      return OpError(inst, "needs exactly one rhs_group_dims when the ragged dim is a "
                           "non-contracting dim, got ", group.size());
    }
    rd.rhs_group = group[0];
  } else if (!group.empty()) {
    return OpError(inst, "takes no rhs_group_dims when the ragged dim is a ",
                   rd.mode == RaggedMode::kBatch ? "batch" : "contracting", " dim");
  }
  // The prefix of group_sizes: batch dims (up to the ragged one in batch
  // mode), then the dims of the ragged dim's kind before it.
  std::vector<int64_t> prefix;
  for (int64_t d : lb) {
    if (d == rd.lhs_ragged) break;
    prefix.push_back(d);
  }
  if (kind != nullptr) {
    for (int64_t d : *kind) {
      if (d == rd.lhs_ragged) break;
      prefix.push_back(d);
    }
  }
  if (sizes.rank() < 1 || !IsInteger(sizes.type())) {
    return OpError(inst, "needs integer group_sizes of rank 1 or more, got ", sizes.ToString());
  }
  if (sizes.rank() != 1) {
    bool match = sizes.rank() == static_cast<int64_t>(prefix.size()) + 1;
    for (size_t i = 0; match && i < prefix.size(); ++i) {
      match = sizes.dim(static_cast<int64_t>(i)) == lhs.dim(prefix[i]);
    }
    if (!match) {
      std::string expected;
      for (int64_t d : prefix) expected += std::to_string(lhs.dim(d)) + ",";
      return OpError(inst, "needs group_sizes of shape [g] or [", expected, "g], got ",
                     sizes.ToString());
    }
    rd.prefix = prefix;
  }
  rd.num_groups = sizes.dim(sizes.rank() - 1);
  if (rd.rhs_group >= 0 && rhs.dim(rd.rhs_group) != rd.num_groups) {
    return OpError(inst, "rhs group dim ", rd.rhs_group, " has size ", rhs.dim(rd.rhs_group),
                   " but group_sizes holds ", rd.num_groups, " groups");
  }
  return rd;
}

absl::StatusOr<Shape> InferRaggedDot(const Instruction& inst) {
  ASSIGN_OR_RETURN(RaggedDims rd, GetRaggedDims(inst));
  const Shape& lhs = inst.operand(0)->shape();
  const Shape& rhs = inst.operand(1)->shape();
  std::vector<int64_t> dims;
  if (rd.mode == RaggedMode::kContracting) dims.push_back(rd.num_groups);
  for (int64_t d : rd.dot.lhs_batch) dims.push_back(lhs.dim(d));
  for (int64_t d : rd.dot.lhs_free) dims.push_back(lhs.dim(d));
  for (int64_t d : rd.dot.rhs_free) dims.push_back(rhs.dim(d));
  // As for dot, the element type is the declared one (mixed precision).
  PrimitiveType type = inst.shape().is_array() ? inst.shape().type() : lhs.type();
  Shape result(type, std::move(dims));
  RETURN_IF_ERROR(ValidateShape(result)) << " (ragged-dot result, in " << inst.Describe() << ")";
  return result;
}

absl::StatusOr<Literal> EvaluateRaggedDot(const Instruction& inst,
                                          absl::Span<const Literal* const> operands,
                                          EvalContext&) {
  RETURN_IF_ERROR(ExpectOperandValues(inst, operands));
  ASSIGN_OR_RETURN(RaggedDims rd, GetRaggedDims(inst));
  ASSIGN_OR_RETURN(Shape result_shape, InferRaggedDot(inst));
  const Literal& lhs = *operands[0];
  const Literal& rhs = *operands[1];
  const Literal& sizes = *operands[2];
  const Shape& ls = lhs.shape();
  const Shape& rs = rhs.shape();
  const bool is_float = IsFloatingPoint(result_shape.type());
  const bool is_complex = IsComplex(result_shape.type());
  std::vector<int64_t> k_dims;
  for (int64_t d : rd.dot.lhs_contracting) k_dims.push_back(ls.dim(d));
  const int64_t ragged_size = ls.dim(rd.lhs_ragged);

  Literal result(result_shape);
  std::vector<int64_t> li(static_cast<size_t>(ls.rank())), ri(static_cast<size_t>(rs.rank()));
  int64_t out_linear = 0;
  ForEachIndex(result_shape.dims(), [&](const std::vector<int64_t>& out) {
    size_t pos = 0;
    int64_t group = 0;
    if (rd.mode == RaggedMode::kContracting) group = out[pos++];
    for (size_t i = 0; i < rd.dot.lhs_batch.size(); ++i, ++pos) {
      li[static_cast<size_t>(rd.dot.lhs_batch[i])] = out[pos];
      ri[static_cast<size_t>(rd.dot.rhs_batch[i])] = out[pos];
    }
    for (int64_t d : rd.dot.lhs_free) li[static_cast<size_t>(d)] = out[pos++];
    for (int64_t d : rd.dot.rhs_free) ri[static_cast<size_t>(d)] = out[pos++];
    double fsum = 0;
    uint64_t isum = 0;
    Complex128 csum = 0;
    ForEachIndex(k_dims, [&](const std::vector<int64_t>& k) {
      for (size_t i = 0; i < k.size(); ++i) {
        li[static_cast<size_t>(rd.dot.lhs_contracting[i])] = k[i];
        ri[static_cast<size_t>(rd.dot.rhs_contracting[i])] = k[i];
      }
      // The group boundaries of this row of group_sizes.
      int64_t row = 0;
      for (int64_t d : rd.prefix) row = row * ls.dim(d) + li[static_cast<size_t>(d)];
      const int64_t at = li[static_cast<size_t>(rd.lhs_ragged)];
      int64_t start = 0, end = 0;
      bool inside = false;
      for (int64_t g = 0; g < rd.num_groups; ++g) {
        start = end;
        end += sizes.GetAsInt64(row * rd.num_groups + g);
        if (rd.mode == RaggedMode::kNonContracting && at >= start && at < end) {
          ri[static_cast<size_t>(rd.rhs_group)] = g;
          inside = true;
          break;
        }
        if (rd.mode == RaggedMode::kContracting && g == group) {
          inside = at >= std::clamp<int64_t>(start, 0, ragged_size) &&
                   at < std::clamp<int64_t>(end, 0, ragged_size);
          break;
        }
      }
      if (rd.mode == RaggedMode::kBatch) inside = at < end;
      if (!inside) return;
      const int64_t lo = LinearIndex(ls.dims(), li), ro = LinearIndex(rs.dims(), ri);
      if (is_complex) {
        csum += GetComplex(lhs, lo) * GetComplex(rhs, ro);
      } else if (is_float) {
        fsum += lhs.GetAsDouble(lo) * rhs.GetAsDouble(ro);
      } else {
        isum += static_cast<uint64_t>(lhs.GetAsInt64(lo)) * static_cast<uint64_t>(rhs.GetAsInt64(ro));
      }
    });
    if (is_complex) {
      SetComplex(result, out_linear, csum);
    } else if (is_float) {
      result.SetFromDouble(out_linear, fsum);
    } else {
      result.SetFromInt64(out_linear, static_cast<int64_t>(isum));
    }
    ++out_linear;
  });
  return result;
}

}  // namespace

void RegisterRaggedDotOp(OpRegistry& registry) {
  OpDef def;
  def.opcode = Opcode::kRaggedDot;
  def.min_operands = 3;
  def.max_operands = 3;
  def.attributes = {{"lhs_batch_dims", AttrKind::kIntList},
                    {"lhs_contracting_dims", AttrKind::kIntList},
                    {"rhs_batch_dims", AttrKind::kIntList},
                    {"rhs_contracting_dims", AttrKind::kIntList},
                    {"lhs_ragged_dims", AttrKind::kIntList, /*required=*/true},
                    {"rhs_group_dims", AttrKind::kIntList}};
  def.infer_shape = InferRaggedDot;
  def.evaluate = EvaluateRaggedDot;
  registry.Register(std::move(def));
}

}  // namespace sharc::hlo
