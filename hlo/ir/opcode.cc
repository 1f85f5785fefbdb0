#include "hlo/ir/opcode.h"

#include <array>

namespace sharc::hlo {
namespace {
constexpr std::array<std::string_view, kNumOpcodes> kNames = {
#define V(name, text) text,
#include "hlo/ir/opcode.def"
#undef V
};
}  // namespace

std::string_view OpcodeName(Opcode opcode) { return kNames[static_cast<int>(opcode)]; }

std::optional<Opcode> OpcodeFromName(std::string_view name) {
  for (int i = 0; i < kNumOpcodes; ++i) {
    if (kNames[i] == name) return static_cast<Opcode>(i);
  }
  return std::nullopt;
}

}  // namespace sharc::hlo
