// Opcodes of the IR, generated from opcode.def.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace sharc::hlo {

enum class Opcode : int {
#define V(name, text) name,
#include "hlo/ir/opcode.def"
#undef V
};

inline constexpr int kNumOpcodes = 0
#define V(name, text) +1
#include "hlo/ir/opcode.def"
#undef V
    ;

// A std::string (not a view): Debian's Abseil has its own string_view type,
// and absl::StrCat accepts std::string but not std::string_view.
const std::string& OpcodeName(Opcode opcode);
std::optional<Opcode> OpcodeFromName(std::string_view name);

}  // namespace sharc::hlo
