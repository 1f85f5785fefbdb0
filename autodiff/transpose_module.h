// The transpose of a whole program (`sharc transpose`): for an entry
// f(l_0..l_{k-1}, r...) -> y linear in the l's, a module whose entry is
// f^T(ct_y, r...) -> ct_l. Unlike Transpose (linearize.h), which returns a
// tuple for the transform's callers, the shapes here are symmetric so that
// the transpose of the transpose is the original program: one cotangent
// parameter per element of y (one for an array), and the cotangent itself
// as the result when there is one linear parameter. Names follow
// transpose_naming.h.
#pragma once

#include <cstdint>
#include <memory>

#include "absl/status/statusor.h"
#include "hlo/ir/module.h"

namespace sharc::autodiff {

// `num_linear` < 0: every floating-point parameter is linear and the others
// (indices, ...) are passed through; otherwise the first `num_linear`
// parameters are linear. Fails, naming the op, when the entry is not linear
// in them.
absl::StatusOr<std::unique_ptr<hlo::Module>> TransposeModule(const hlo::Module& module,
                                                             int64_t num_linear = -1);

}  // namespace sharc::autodiff
