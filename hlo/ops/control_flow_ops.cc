// PLACEHOLDER: being written; registers nothing yet.
#include "hlo/ops/op_def.h"

namespace sharc::hlo {
void RegisterControlFlowOps(OpRegistry& registry) {}
}  // namespace sharc::hlo
