// NumPy .npy files <-> hlo::Literal. This is how `sharc run` takes its inputs
// and hands back its outputs, so users can produce and check them with NumPy.
// Supports format versions 1.0, 2.0 and 3.0, little-endian, C order.
#pragma once

#include <optional>
#include <string>
#include "absl/strings/string_view.h"

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "hlo/ir/literal.h"
#include "hlo/ir/shape.h"

namespace sharc::runtime {

// The NumPy dtype descriptor for `type` ("<f4", "|b1", ...). bf16 has no
// NumPy dtype, so it is an error naming the type.
absl::StatusOr<std::string> NpyDescrFor(hlo::PrimitiveType type);

// The type a value of `type` is written to .npy as: itself where NumPy has
// the dtype; bf16 and the 8- and 4-bit floats as f32, the sub-byte
// integers as s8 / u8 (every value exactly; NumPy has none of them, and
// ml_dtypes' own types save as raw void bytes that lose the type).
hlo::PrimitiveType NpyWrittenType(hlo::PrimitiveType type);
// The element type for a descriptor; accepts "=" and "<" byte orders (and
// "|" for one-byte types). Big-endian and unknown dtypes are errors.
absl::StatusOr<hlo::PrimitiveType> PrimitiveTypeForNpyDescr(absl::string_view descr);

// Serialises an array literal as a version 1.0 file (2.0 if the header needs
// it), its values converted to NpyWrittenType. `name` is used in error
// messages only.
absl::StatusOr<std::string> EncodeNpy(const hlo::Literal& literal, absl::string_view name = "<npy>");

// Parses the bytes of an .npy file. `name` (usually the path) prefixes every
// error. If `expected` is set, the dims must equal it, and the dtype too,
// except that a type NumPy lacks (bf16, the narrow types) is also read from
// its NpyWrittenType (floats round to nearest even; integers must fit) or
// from raw void bytes of its width ('<V2' for bf16, '|V1': how ml_dtypes'
// arrays save), taken as its bit patterns.
absl::StatusOr<hlo::Literal> DecodeNpy(absl::string_view bytes, absl::string_view name,
                                       const std::optional<hlo::Shape>& expected = std::nullopt);

// File wrappers of the above. Reading checks the file size before reading so
// that a malformed file never causes a large allocation.
absl::StatusOr<hlo::Literal> ReadNpyFile(const std::string& path,
                                         const std::optional<hlo::Shape>& expected = std::nullopt);
absl::Status WriteNpyFile(const std::string& path, const hlo::Literal& literal);

}  // namespace sharc::runtime
