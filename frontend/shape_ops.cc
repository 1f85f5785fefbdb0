#include "frontend/shape_ops.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "frontend/trace_error.h"
#include "frontend/tracer.h"

namespace sharc::frontend {
namespace {

using hlo::Opcode;

std::string DimsText(absl::Span<const int64_t> dims) {
  return absl::StrCat("[", absl::StrJoin(dims, ","), "]");
}

// `axis` in [-rank, rank) as a non-negative axis.
int64_t NormalizeAxis(int64_t axis, int64_t rank, const char* what,
                      const std::source_location& loc) {
  if (axis < -rank || axis >= rank) {
    ThrowTraceError(loc, absl::StrCat(what, ": axis ", axis, " is out of range for rank ", rank));
  }
  return axis < 0 ? axis + rank : axis;
}

}  // namespace

std::vector<int64_t> BroadcastShapes(absl::Span<const int64_t> a, absl::Span<const int64_t> b,
                                     std::source_location loc) {
  const size_t rank = std::max(a.size(), b.size());
  std::vector<int64_t> out(rank);
  for (size_t i = 0; i < rank; ++i) {
    // Aligned from the end; a missing dim acts as 1.
    const int64_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    const int64_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (da != db && da != 1 && db != 1) {
      ThrowTraceError(loc, absl::StrCat("shapes ", DimsText(a), " and ", DimsText(b),
                                        " do not broadcast (dimension ", i, " of the result: ", da,
                                        " vs ", db, ")"));
    }
    out[i] = da == 1 ? db : da;
  }
  return out;
}

Tensor reshape(const Tensor& x, std::vector<int64_t> dims, std::source_location loc) {
  int64_t known = 1, inferred = -1;
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] == -1) {
      if (inferred >= 0) ThrowTraceError(loc, "reshape: at most one dimension may be -1");
      inferred = static_cast<int64_t>(i);
    } else {
      known *= dims[i];
    }
  }
  const int64_t elements = x.shape().num_elements();
  if (inferred >= 0) {
    if (known == 0 || elements % known != 0) {
      ThrowTraceError(loc, absl::StrCat("reshape: cannot infer the -1 in ", DimsText(dims),
                                        " for ", x.ToString()));
    }
    dims[static_cast<size_t>(inferred)] = elements / known;
  }
  if (dims == x.dims()) return x;
  return Emit(Opcode::kReshape, {x}, {}, hlo::Shape(x.dtype(), dims), loc);
}

Tensor transpose(const Tensor& x, std::vector<int64_t> perm, std::source_location loc) {
  if (perm.empty()) {
    for (int64_t d = x.rank() - 1; d >= 0; --d) perm.push_back(d);
  }
  for (int64_t& p : perm) p = NormalizeAxis(p, x.rank(), "transpose", loc);
  bool identity = true;
  for (size_t i = 0; i < perm.size(); ++i) identity &= perm[i] == static_cast<int64_t>(i);
  if (identity && static_cast<int64_t>(perm.size()) == x.rank()) return x;
  return Emit(Opcode::kTranspose, {x}, {{"dimensions", perm}}, std::nullopt, loc);
}

Tensor broadcast_to(const Tensor& x, absl::Span<const int64_t> dims, std::source_location loc) {
  if (absl::Span<const int64_t>(x.dims()) == dims) return x;
  const int64_t rank = static_cast<int64_t>(dims.size());
  if (x.rank() > rank) {
    ThrowTraceError(loc, absl::StrCat("cannot broadcast ", x.ToString(), " to ", DimsText(dims),
                                      ": the target has fewer dimensions"));
  }
  // Operand dims that already match map onto the result; size-1 dims that
  // stretch are reshaped away first (XLA's broadcast only adds dims).
  const int64_t offset = rank - x.rank();
  std::vector<int64_t> kept_dims, mapping;
  for (int64_t i = 0; i < x.rank(); ++i) {
    const int64_t target = dims[static_cast<size_t>(offset + i)];
    if (x.dim(i) == target) {
      kept_dims.push_back(target);
      mapping.push_back(offset + i);
    } else if (x.dim(i) != 1) {
      ThrowTraceError(loc, absl::StrCat("cannot broadcast ", x.ToString(), " to ",
                                        DimsText(dims), ": dimension ", i, " has size ", x.dim(i),
                                        " but the target has ", target));
    }
  }
  Tensor source = reshape(x, kept_dims, loc);
  return Emit(Opcode::kBroadcast, {source}, {{"dimensions", mapping}},
              hlo::Shape(x.dtype(), std::vector<int64_t>(dims.begin(), dims.end())), loc);
}

Tensor slice(const Tensor& x, std::vector<int64_t> start, std::vector<int64_t> limit,
             std::vector<int64_t> strides, std::source_location loc) {
  if (strides.empty()) strides.assign(start.size(), 1);
  if (static_cast<int64_t>(start.size()) != x.rank() ||
      static_cast<int64_t>(limit.size()) != x.rank() ||
      static_cast<int64_t>(strides.size()) != x.rank()) {
    ThrowTraceError(loc, absl::StrCat("slice: ", x.ToString(), " needs ", x.rank(),
                                      " starts, limits and strides, got ", start.size(), ", ",
                                      limit.size(), " and ", strides.size()));
  }
  hlo::IntListList entries;
  for (int64_t d = 0; d < x.rank(); ++d) {
    entries.push_back({start[static_cast<size_t>(d)], limit[static_cast<size_t>(d)],
                       strides[static_cast<size_t>(d)]});
  }
  return Emit(Opcode::kSlice, {x}, {{"slice", entries}}, std::nullopt, loc);
}

Tensor index(const Tensor& x, int64_t i, std::source_location loc) {
  if (x.rank() == 0) ThrowTraceError(loc, "index: cannot index a scalar");
  if (i < -x.dim(0) || i >= x.dim(0)) {
    ThrowTraceError(loc, absl::StrCat("index ", i, " is out of range for ", x.ToString()));
  }
  if (i < 0) i += x.dim(0);
  std::vector<int64_t> start(static_cast<size_t>(x.rank()), 0), limit = x.dims();
  start[0] = i;
  limit[0] = i + 1;
  Tensor row = slice(x, start, limit, {}, loc);
  return reshape(row, std::vector<int64_t>(x.dims().begin() + 1, x.dims().end()), loc);
}

Tensor concatenate(absl::Span<const Tensor> xs, int64_t axis, std::source_location loc) {
  if (xs.empty()) ThrowTraceError(loc, "concatenate: needs at least one Tensor");
  axis = NormalizeAxis(axis, xs[0].rank(), "concatenate", loc);
  if (xs.size() == 1) return xs[0];
  return Emit(Opcode::kConcatenate, xs, {{"dimensions", hlo::IntList{axis}}}, std::nullopt, loc);
}

Tensor squeeze(const Tensor& x, std::vector<int64_t> axes, std::source_location loc) {
  std::vector<bool> drop(static_cast<size_t>(x.rank()), false);
  if (axes.empty()) {
    for (int64_t d = 0; d < x.rank(); ++d) drop[static_cast<size_t>(d)] = x.dim(d) == 1;
  }
  for (int64_t axis : axes) {
    const int64_t d = NormalizeAxis(axis, x.rank(), "squeeze", loc);
    if (x.dim(d) != 1) {
      ThrowTraceError(loc, absl::StrCat("squeeze: axis ", axis, " of ", x.ToString(),
                                        " has size ", x.dim(d), ", not 1"));
    }
    drop[static_cast<size_t>(d)] = true;
  }
  std::vector<int64_t> dims;
  for (int64_t d = 0; d < x.rank(); ++d) {
    if (!drop[static_cast<size_t>(d)]) dims.push_back(x.dim(d));
  }
  return reshape(x, dims, loc);
}

Tensor expand_dims(const Tensor& x, int64_t axis, std::source_location loc) {
  axis = NormalizeAxis(axis, x.rank() + 1, "expand_dims", loc);
  std::vector<int64_t> dims = x.dims();
  dims.insert(dims.begin() + axis, 1);
  return reshape(x, dims, loc);
}

}  // namespace sharc::frontend
