// A convolution's dimension numbers and window, read from its attributes and
// checked against its operands once, here. The op definition (shape
// inference, verifier, interpreter), the sharding rule and the cost model all
// read this struct rather than re-parsing `dim_labels` and `window`.
#pragma once

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "hlo/ir/instruction.h"

namespace sharc::hlo {

// One spatial dimension of the window (XLA's WindowDimension).
struct ConvWindowDim {
  int64_t size = 1, stride = 1, pad_lo = 0, pad_hi = 0;
  int64_t lhs_dilation = 1;  // base dilation: a transposed convolution
  int64_t rhs_dilation = 1;  // window dilation: an atrous convolution
  bool reversed = false;     // the kernel is read back to front (rhs_reversal)

  // One window over the whole input (`input` elements): the result has one
  // position and input and kernel elements pair up one to one, a plain
  // contraction (a 1x1 weight gradient's spatial dims).
  bool CoversWholeInput(int64_t input) const {
    return size == input && pad_lo == 0 && pad_hi == 0 && lhs_dilation == 1 &&
           rhs_dilation == 1 && !reversed;
  }
};

struct ConvDims {
  // lhs: batch 'b', feature 'f', spatial '0'..'n-1'.
  int64_t lhs_batch = 0, lhs_feature = 0;
  std::vector<int64_t> lhs_spatial;
  // rhs (kernel): input feature 'i', output feature 'o', spatial.
  int64_t rhs_input_feature = 0, rhs_output_feature = 0;
  std::vector<int64_t> rhs_spatial;
  // result: batch 'b', feature 'f', spatial.
  int64_t out_batch = 0, out_feature = 0;
  std::vector<int64_t> out_spatial;
  std::vector<ConvWindowDim> window;  // one per spatial dim
  int64_t feature_group_count = 1;
  int64_t batch_group_count = 1;
  // Result dims (in result dim order) and the element type (the declared
  // one, as for dot: mixed precision is written in the result shape).
  std::vector<int64_t> out_dims;
};

// Reads and checks the attributes of the convolution `inst` against its
// operands' shapes; errors name the instruction and the offending dimension.
absl::StatusOr<ConvDims> GetConvDims(const Instruction& inst);

}  // namespace sharc::hlo
