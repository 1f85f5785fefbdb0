#include "hlo/ir/opcode.h"

#include <array>

namespace sharc::hlo {
namespace {
const std::array<std::string, kNumOpcodes>& Names() {
  static const auto* names = new std::array<std::string, kNumOpcodes>{
#define V(name, text) text,
#include "hlo/ir/opcode.def"
#undef V
  };
  return *names;
}
}  // namespace

const std::string& OpcodeName(Opcode opcode) { return Names()[static_cast<int>(opcode)]; }

std::optional<Opcode> OpcodeFromName(std::string_view name) {
  for (int i = 0; i < kNumOpcodes; ++i) {
    if (Names()[i] == name) return static_cast<Opcode>(i);
  }
  return std::nullopt;
}

}  // namespace sharc::hlo
