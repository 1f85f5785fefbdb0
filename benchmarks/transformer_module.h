// Generates transformer-like HLO modules of a requested size for the
// compiler benchmarks: layers of layernorm, attention-style dots, MLP dots
// with bias, reshapes and transposes, with the parameters annotated for a
// data- and model-parallel 2x2 mesh, as a user would.
#pragma once

#include <string>

namespace sharc::benchmarks {

// A module of roughly `target_instructions` instructions.
std::string TransformerLikeModule(int64_t target_instructions);

}  // namespace sharc::benchmarks
