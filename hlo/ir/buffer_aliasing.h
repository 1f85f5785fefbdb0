// The module header's buffer aliasing: which entry outputs may reuse an
// entry parameter's buffer (`input_output_alias`) and which parameters the
// caller gives up (`buffer_donor`). sharc's runtime gives every value its
// own buffer, so these are kept only to be checked against the entry
// computation and printed back unchanged:
//
//   HloModule m, input_output_alias={ {0}: (1, {}, must-alias) },
//                buffer_donor={ (0, {1}) }
#pragma once

#include <cstdint>
#include <vector>

namespace sharc::hlo {

// A tuple index path into a shape: {} is the whole value, {1, 0} element 0
// of element 1.
using ShapeIndexPath = std::vector<int64_t>;

// Output `output_index` of the entry may share the buffer of parameter
// `parameter_number` at `parameter_index` (must share it if `must_alias`).
struct InputOutputAlias {
  ShapeIndexPath output_index;
  int64_t parameter_number = 0;
  ShapeIndexPath parameter_index;
  bool must_alias = false;
  bool operator==(const InputOutputAlias& o) const {
    return output_index == o.output_index && parameter_number == o.parameter_number &&
           parameter_index == o.parameter_index && must_alias == o.must_alias;
  }
};

// Parameter `parameter_number` at `parameter_index` is donated by the caller.
struct BufferDonor {
  int64_t parameter_number = 0;
  ShapeIndexPath parameter_index;
  bool operator==(const BufferDonor& o) const {
    return parameter_number == o.parameter_number && parameter_index == o.parameter_index;
  }
};

}  // namespace sharc::hlo
