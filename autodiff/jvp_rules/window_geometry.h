// reduce-window seen as K shifted views of its padded operand: for each
// position k inside the window, the k-th element of every window is a
// strided slice of the operand padded (and base-dilated) as the window says.
// The derivatives of windowed reductions other than sums are built from these
// views with ordinary elementwise ops, so sharc needs no select-and-scatter.
#pragma once

#include <cstdint>
#include <vector>

#include "autodiff/builder.h"

namespace sharc::autodiff {

struct WindowDim {
  int64_t size = 1, stride = 1, pad_lo = 0, pad_hi = 0, base_dilation = 1,
          window_dilation = 1;
  int64_t operand = 0;  // operand size along this dim
  int64_t output = 0;   // result size along this dim
};

class WindowGeometry {
 public:
  // The window of a reduce-window or select-and-scatter instruction.
  static WindowGeometry Of(const Instruction& inst);

  int64_t rank() const { return static_cast<int64_t>(dims_.size()); }
  const WindowDim& dim(int64_t d) const { return dims_[static_cast<size_t>(d)]; }
  std::vector<int64_t> output_dims() const;
  // Number of positions in a window (the product of the window sizes).
  int64_t num_offsets() const;
  // The multi-index within the window of position k (row-major, the order
  // in which the interpreter folds a window's elements).
  std::vector<int64_t> Offset(int64_t k) const;

  // The operand padded and base-dilated as the window sees it, with `value`
  // (a scalar) in the padding and the dilation holes.
  Instruction* Pad(Emitter& e, Instruction* operand, Instruction* value) const;
  // Element `offset` of every window: a strided slice of Pad(...)'s result,
  // with the result's dims.
  Instruction* Element(Emitter& e, Instruction* padded, const std::vector<int64_t>& offset) const;
  // Element offsets[w] of each window w (zero where offsets[w] is -1):
  // offsets is s32[output dims], `padded` a Pad(...) result.
  Instruction* AtOffsets(Emitter& e, Instruction* padded, Instruction* offsets) const;
  // pred[output dims]: whether element `offset` of each window is a real
  // operand element (not padding or a dilation hole); nullptr when all are.
  Instruction* Valid(Emitter& e, const std::vector<int64_t>& offset) const;

 private:
  std::vector<WindowDim> dims_;
};

}  // namespace sharc::autodiff
