// Reading a convolution's `dim_labels`, `window` and group counts. The rules
// are XLA's (operation semantics of ConvWithGeneralPadding); the checks are
// sharc's, each naming the instruction and the dimension at fault.
#include "hlo/ops/convolution_dims.h"

#include <string>
#include <string_view>

#include "absl/strings/str_split.h"
#include "hlo/base/status_macros.h"
#include "hlo/ops/op_util.h"

namespace sharc::hlo {
namespace {

// Window values beyond this cannot give a valid shape; bounding them keeps
// the size arithmetic below in range.
constexpr int64_t kMaxWindowValue = kMaxElements;

// The labels of one tensor: the dims holding the two named roles and the
// spatial dims in spatial order ('0', '1', ...).
struct TensorLabels {
  int64_t first = -1, second = -1;
  std::vector<int64_t> spatial;
};

absl::StatusOr<TensorLabels> ParseTensorLabels(const Instruction& inst, std::string_view labels,
                                               int64_t rank, char first, char second,
                                               std::string_view tensor) {
  if (static_cast<int64_t>(labels.size()) != rank) {
    return OpError(inst, "dim_labels give ", tensor, " ", labels.size(), " labels ('", labels,
                   "') but it has rank ", rank);
  }
  TensorLabels out;
  const int64_t num_spatial = rank - 2;
  out.spatial.assign(static_cast<size_t>(num_spatial < 0 ? 0 : num_spatial), -1);
  for (int64_t d = 0; d < rank; ++d) {
    char c = labels[static_cast<size_t>(d)];
    int64_t* slot = nullptr;
    if (c == first) {
      slot = &out.first;
    } else if (c == second) {
      slot = &out.second;
    } else if (c >= '0' && c <= '9' && c - '0' < num_spatial) {
      slot = &out.spatial[static_cast<size_t>(c - '0')];
    } else {
      return OpError(inst, "dim_labels give ", tensor, " dim ", d, " the label '",
                     std::string(1, c), "'; expected '", std::string(1, first), "', '",
                     std::string(1, second), "' or a spatial index below ",
                     num_spatial < 0 ? 0 : num_spatial);
    }
    if (*slot != -1) {
      return OpError(inst, "dim_labels give ", tensor, " the label '", std::string(1, c),
                     "' twice (dims ", *slot, " and ", d, ")");
    }
    *slot = d;
  }
  if (out.first == -1 || out.second == -1) {
    return OpError(inst, "dim_labels for ", tensor, " ('", labels, "') lack '",
                   std::string(1, out.first == -1 ? first : second), "'");
  }
  return out;
}

}  // namespace

absl::StatusOr<ConvDims> GetConvDims(const Instruction& inst) {
  if (inst.operand_count() != 2) {
    return OpError(inst, "expects 2 operands, got ", inst.operand_count());
  }
  RETURN_IF_ERROR(ExpectArrayOperand(inst, 0));
  RETURN_IF_ERROR(ExpectArrayOperand(inst, 1));
  const Shape& lhs = inst.operand(0)->shape();
  const Shape& rhs = inst.operand(1)->shape();
  // A pred operand beside a numeric one reads as 0/1 of the result type (XLA
  // converts it; LowerForCompute does too, before anything computes).
  const bool numeric_result = inst.shape().is_array() && inst.shape().type() != PrimitiveType::kPred;
  for (int64_t i = 0; i < 2; ++i) {
    if (inst.operand(i)->shape().type() != PrimitiveType::kPred) continue;
    if (!numeric_result || inst.operand(1 - i)->shape().type() == PrimitiveType::kPred) {
      return OpError(inst, "expects numeric operands, operand ", i,
                     " is pred (a pred operand needs a numeric one beside it and a numeric result)");
    }
  }
  if (lhs.rank() < 2 || lhs.rank() != rhs.rank()) {
    return OpError(inst, "expects lhs and kernel of the same rank >= 2, got ", lhs.rank(),
                   " and ", rhs.rank());
  }

  // dim_labels=LHS_RHS->OUT
  const std::string& text = inst.attr_string("dim_labels");
  std::vector<std::string> sides = absl::StrSplit(text, "->");
  std::vector<std::string> inputs =
      sides.size() == 2 ? absl::StrSplit(sides[0], '_') : std::vector<std::string>();
  if (inputs.size() != 2) {
    return OpError(inst, "has dim_labels '", text, "', expected LHS_KERNEL->OUT (e.g. b01f_01io->b01f)");
  }
  ConvDims cd;
  const int64_t rank = lhs.rank();
  ASSIGN_OR_RETURN(TensorLabels l, ParseTensorLabels(inst, inputs[0], rank, 'b', 'f', "lhs"));
  ASSIGN_OR_RETURN(TensorLabels r, ParseTensorLabels(inst, inputs[1], rank, 'i', 'o', "kernel"));
  ASSIGN_OR_RETURN(TensorLabels o, ParseTensorLabels(inst, sides[1], rank, 'b', 'f', "output"));
  cd.lhs_batch = l.first;
  cd.lhs_feature = l.second;
  cd.lhs_spatial = l.spatial;
  cd.rhs_input_feature = r.first;
  cd.rhs_output_feature = r.second;
  cd.rhs_spatial = r.spatial;
  cd.out_batch = o.first;
  cd.out_feature = o.second;
  cd.out_spatial = o.spatial;

  cd.feature_group_count = inst.attr_int("feature_group_count", 1);
  cd.batch_group_count = inst.attr_int("batch_group_count", 1);
  const int64_t g = cd.feature_group_count, bg = cd.batch_group_count;
  if (g < 1) return OpError(inst, "has feature_group_count ", g, ", must be >= 1");
  if (bg < 1) return OpError(inst, "has batch_group_count ", bg, ", must be >= 1");
  if (g > 1 && bg > 1) {
    return OpError(inst, "has feature_group_count ", g, " and batch_group_count ", bg,
                   "; at most one of them may exceed 1");
  }
  const int64_t in_features = lhs.dim(cd.lhs_feature);
  const int64_t kernel_in = rhs.dim(cd.rhs_input_feature);
  const int64_t kernel_out = rhs.dim(cd.rhs_output_feature);
  const int64_t batch = lhs.dim(cd.lhs_batch);
  if (in_features % g != 0 || in_features / g != kernel_in) {
    return OpError(inst, "lhs feature dim ", cd.lhs_feature, " has size ", in_features,
                   ", which must be feature_group_count (", g,
                   ") times the kernel input feature size (kernel dim ", cd.rhs_input_feature,
                   ": ", kernel_in, ")");
  }
  if (kernel_out % g != 0) {
    return OpError(inst, "kernel output feature dim ", cd.rhs_output_feature, " has size ",
                   kernel_out, ", not divisible by feature_group_count ", g);
  }
  if (batch % bg != 0) {
    return OpError(inst, "lhs batch dim ", cd.lhs_batch, " has size ", batch,
                   ", not divisible by batch_group_count ", bg);
  }
  if (kernel_out % bg != 0) {
    return OpError(inst, "kernel output feature dim ", cd.rhs_output_feature, " has size ",
                   kernel_out, ", not divisible by batch_group_count ", bg);
  }

  // The window: one entry per spatial dim; absent only without spatial dims.
  const size_t num_spatial = cd.lhs_spatial.size();
  const IntListList empty;
  const IntListList& window = inst.has_attr("window") ? inst.attr_int_lists("window") : empty;
  for (size_t d = 0; d < window.size(); ++d) {
    if (window[d].size() != 6 && window[d].size() != 7) {
      // Not OpError: describing the instruction prints the (malformed) window.
      return absl::InvalidArgumentError(absl::StrCat(
          "convolution window dimension ", d, " has ", window[d].size(),
          " fields, expected 6 or 7 (with rhs_reversal), in %", inst.name()));
    }
  }
  if (window.size() != num_spatial) {
    return OpError(inst, "window has ", window.size(), " dimensions but dim_labels give ",
                   num_spatial, " spatial dimensions");
  }
  cd.out_dims.assign(static_cast<size_t>(rank), 0);
  cd.out_dims[static_cast<size_t>(cd.out_batch)] = batch / bg;
  cd.out_dims[static_cast<size_t>(cd.out_feature)] = kernel_out;
  for (size_t s = 0; s < num_spatial; ++s) {
    const std::vector<int64_t>& w = window[s];
    for (int64_t v : w) {
      if (v > kMaxWindowValue || v < -kMaxWindowValue) {
        return OpError(inst, "window dimension ", s, " has out-of-range value ", v);
      }
    }
    ConvWindowDim wd{w[0], w[1], w[2], w[3], w[4], w[5], w.size() == 7 && w[6] != 0};
    const int64_t kernel_size = rhs.dim(cd.rhs_spatial[s]);
    if (wd.size != kernel_size) {
      return OpError(inst, "window dimension ", s, " has size ", wd.size,
                     " but the kernel's spatial dim ", cd.rhs_spatial[s], " has size ",
                     kernel_size);
    }
    if (wd.stride < 1) {
      return OpError(inst, "window dimension ", s, " has stride ", wd.stride, ", must be >= 1");
    }
    if (wd.lhs_dilation < 1 || wd.rhs_dilation < 1) {
      return OpError(inst, "window dimension ", s, " has lhs_dilate ", wd.lhs_dilation,
                     " and rhs_dilate ", wd.rhs_dilation, ", both must be >= 1");
    }
    const int64_t in_size = lhs.dim(cd.lhs_spatial[s]);
    __int128 dilated = in_size == 0 ? 0 : (__int128{in_size} - 1) * wd.lhs_dilation + 1;
    __int128 padded = dilated + wd.pad_lo + wd.pad_hi;
    __int128 span = kernel_size == 0 ? 0 : (__int128{kernel_size} - 1) * wd.rhs_dilation + 1;
    if (padded < 0) {
      return OpError(inst, "window dimension ", s, " pads lhs dim ", cd.lhs_spatial[s],
                     " to a negative size (", static_cast<int64_t>(padded), ")");
    }
    cd.out_dims[static_cast<size_t>(cd.out_spatial[s])] =
        padded < span ? 0 : static_cast<int64_t>((padded - span) / wd.stride + 1);
    cd.window.push_back(wd);
  }
  return cd;
}

}  // namespace sharc::hlo
