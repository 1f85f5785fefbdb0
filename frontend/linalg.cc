#include "frontend/linalg.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "frontend/reductions.h"
#include "frontend/shape_ops.h"
#include "frontend/trace_error.h"
#include "frontend/tracer.h"

namespace sharc::frontend {
namespace {

using hlo::Opcode;

// Position of `label` in `labels`, or -1.
int64_t Find(const std::string& labels, char label) {
  size_t p = labels.find(label);
  return p == std::string::npos ? -1 : static_cast<int64_t>(p);
}

struct EinsumSpec {
  std::vector<std::string> inputs;
  std::string output;
};

EinsumSpec ParseEinsum(std::string_view text, const std::vector<const Tensor*>& operands,
                       const std::source_location& loc) {
  std::string spec;
  for (char c : text) {
    if (c != ' ') spec.push_back(c);
  }
  auto fail = [&](const std::string& why) {
    ThrowTraceError(loc, absl::StrCat("einsum \"", std::string(text), "\": ", why));
  };
  EinsumSpec parsed;
  const size_t arrow = spec.find("->");
  std::string lhs = spec.substr(0, arrow);
  size_t start = 0;
  while (true) {
    size_t comma = lhs.find(',', start);
    parsed.inputs.push_back(lhs.substr(start, comma == std::string::npos ? comma : comma - start));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  if (parsed.inputs.size() != operands.size()) {
    fail(absl::StrCat("names ", parsed.inputs.size(), " operands but ", operands.size(),
                      " were given"));
  }
  std::map<char, int64_t> counts;
  std::map<char, int64_t> sizes;
  for (size_t i = 0; i < operands.size(); ++i) {
    const std::string& labels = parsed.inputs[i];
    const Tensor& x = *operands[i];
    if (static_cast<int64_t>(labels.size()) != x.rank()) {
      fail(absl::StrCat("operand ", i, " has ", labels.size(), " labels but is ", x.ToString()));
    }
    for (size_t d = 0; d < labels.size(); ++d) {
      const char c = labels[d];
      if (!std::isalpha(static_cast<unsigned char>(c))) fail(absl::StrCat("bad label '", std::string(1, c), "'"));
      if (labels.find(c) != d) {
        fail(absl::StrCat("label '", std::string(1, c), "' repeats within operand ", i,
                          " (traces and diagonals are not supported)"));
      }
      auto [it, inserted] = sizes.emplace(c, x.dim(static_cast<int64_t>(d)));
      if (!inserted && it->second != x.dim(static_cast<int64_t>(d))) {
        fail(absl::StrCat("label '", std::string(1, c), "' has size ", it->second, " and ",
                          x.dim(static_cast<int64_t>(d))));
      }
      ++counts[c];
    }
  }
  if (arrow == std::string::npos) {
    // numpy's implicit output: the labels used once, alphabetically.
    for (const auto& [c, n] : counts) {
      if (n == 1) parsed.output.push_back(c);
    }
  } else {
    parsed.output = spec.substr(arrow + 2);
    for (size_t i = 0; i < parsed.output.size(); ++i) {
      const char c = parsed.output[i];
      if (!counts.count(c)) fail(absl::StrCat("output label '", std::string(1, c), "' is not an input label"));
      if (parsed.output.find(c) != i) fail(absl::StrCat("output label '", std::string(1, c), "' repeats"));
    }
  }
  return parsed;
}

// Sums away the labels of `x` that appear nowhere in `keep`.
Tensor SumUnused(const Tensor& x, std::string& labels, const std::string& keep,
                 const std::source_location& loc) {
  std::vector<int64_t> axes;
  std::string kept;
  for (size_t d = 0; d < labels.size(); ++d) {
    if (keep.find(labels[d]) == std::string::npos) {
      axes.push_back(static_cast<int64_t>(d));
    } else {
      kept.push_back(labels[d]);
    }
  }
  labels = kept;
  if (axes.empty()) return x;
  return sum(x, Axes(axes), false, loc);
}

// Transposes `x` (labelled `labels`) into the order of `output`.
Tensor ToOutputOrder(const Tensor& x, const std::string& labels, const std::string& output,
                     const std::source_location& loc) {
  std::vector<int64_t> perm;
  for (char c : output) perm.push_back(Find(labels, c));
  return transpose(x, perm, loc);
}

}  // namespace

Tensor dot_general(const Tensor& lhs, const Tensor& rhs, const DotDimensions& dimensions,
                   std::optional<DType> result_type, std::source_location loc) {
  if (lhs.dtype() != rhs.dtype()) {
    ThrowTraceError(loc, absl::StrCat("dot: operands ", lhs.ToString(), " and ", rhs.ToString(),
                                      " have different element types"));
  }
  std::optional<hlo::Shape> declared;
  if (result_type.has_value()) declared = hlo::Shape(*result_type, {});
  Tensor result = Emit(Opcode::kDot, {lhs, rhs},
                       {{"lhs_batch_dims", dimensions.lhs_batch},
                        {"lhs_contracting_dims", dimensions.lhs_contracting},
                        {"rhs_batch_dims", dimensions.rhs_batch},
                        {"rhs_contracting_dims", dimensions.rhs_contracting}},
                       declared, loc);
  return result;
}

Tensor matmul(const Tensor& a, const Tensor& b, std::source_location loc) {
  if (a.rank() == 0 || b.rank() == 0) {
    ThrowTraceError(loc, absl::StrCat("matmul: operands must have rank >= 1, got ", a.ToString(),
                                      " and ", b.ToString(), " (use * for scalars)"));
  }
  // numpy: a vector is a 1-row (lhs) or 1-column (rhs) matrix whose extra
  // dimension is dropped from the result.
  Tensor x = a.rank() == 1 ? reshape(a, {1, a.dim(0)}, loc) : a;
  Tensor y = b.rank() == 1 ? reshape(b, {b.dim(0), 1}, loc) : b;
  const int64_t k_x = x.dim(x.rank() - 1), k_y = y.dim(y.rank() - 2);
  if (k_x != k_y) {
    ThrowTraceError(loc, absl::StrCat("matmul: shapes ", a.ToString(), " and ", b.ToString(),
                                      " are not aligned: ", k_x, " (last dimension of a) != ",
                                      k_y, b.rank() == 1 ? " (b)" : " (second-to-last dimension of b)"));
  }
  std::vector<int64_t> batch = BroadcastShapes(
      std::vector<int64_t>(x.dims().begin(), x.dims().end() - 2),
      std::vector<int64_t>(y.dims().begin(), y.dims().end() - 2), loc);
  const int64_t nb = static_cast<int64_t>(batch.size());
  std::vector<int64_t> x_dims = batch, y_dims = batch;
  x_dims.insert(x_dims.end(), x.dims().end() - 2, x.dims().end());
  y_dims.insert(y_dims.end(), y.dims().end() - 2, y.dims().end());
  x = broadcast_to(x, x_dims, loc);
  y = broadcast_to(y, y_dims, loc);
  DotDimensions dims;
  for (int64_t d = 0; d < nb; ++d) {
    dims.lhs_batch.push_back(d);
    dims.rhs_batch.push_back(d);
  }
  dims.lhs_contracting = {nb + 1};
  dims.rhs_contracting = {nb};
  Tensor result = dot_general(x, y, dims, std::nullopt, loc);
  if (a.rank() == 1 || b.rank() == 1) {
    std::vector<int64_t> out = batch;
    if (a.rank() > 1) out.push_back(x.dim(nb));
    if (b.rank() > 1) out.push_back(y.dim(nb + 1));
    result = reshape(result, out, loc);
  }
  return result;
}

Tensor einsum(std::string_view spec, const Tensor& a, const Tensor& b, std::source_location loc) {
  EinsumSpec parsed = ParseEinsum(spec, {&a, &b}, loc);
  std::string la = parsed.inputs[0], lb = parsed.inputs[1];
  const std::string& out = parsed.output;
  // Labels only one operand has and the output drops are summed first.
  Tensor x = SumUnused(a, la, lb + out, loc);
  Tensor y = SumUnused(b, lb, la + out, loc);
  DotDimensions dims;
  std::string batch, lhs_free, rhs_free;
  for (size_t d = 0; d < la.size(); ++d) {
    const char c = la[d];
    const int64_t in_b = Find(lb, c);
    if (in_b < 0) {
      lhs_free.push_back(c);
    } else if (out.find(c) != std::string::npos) {
      batch.push_back(c);
      dims.lhs_batch.push_back(static_cast<int64_t>(d));
      dims.rhs_batch.push_back(in_b);
    } else {
      dims.lhs_contracting.push_back(static_cast<int64_t>(d));
      dims.rhs_contracting.push_back(in_b);
    }
  }
  for (char c : lb) {
    if (Find(la, c) < 0) rhs_free.push_back(c);
  }
  Tensor result = dot_general(x, y, dims, std::nullopt, loc);
  return ToOutputOrder(result, batch + lhs_free + rhs_free, out, loc);
}

Tensor einsum(std::string_view spec, const Tensor& a, std::source_location loc) {
  EinsumSpec parsed = ParseEinsum(spec, {&a}, loc);
  std::string labels = parsed.inputs[0];
  Tensor x = SumUnused(a, labels, parsed.output, loc);
  return ToOutputOrder(x, labels, parsed.output, loc);
}

}  // namespace sharc::frontend
