// A decoder-only transformer language model written with sharc's C++
// frontend: token and position embeddings, `layers` blocks of causal
// multi-head attention and an MLP (each behind a layernorm, with residual
// connections), a final layernorm and an output layer tied to the token
// embedding, trained on next-token cross-entropy.
#pragma once

#include <cstdint>

#include "frontend/frontend.h"

namespace sharc::examples::lm {

struct ModelConfig {
  int64_t vocab = 16;
  int64_t context = 8;  // tokens per sequence the model sees
  int64_t width = 16;
  int64_t heads = 2;
  int64_t mlp_width = 32;
  int64_t layers = 2;
};

// Parameters as a dict tree: {"embed": [vocab,width], "position": [context,
// width], "layers": [{"ln1_scale", "ln1_bias", "query", "key", "value",
// "out", "ln2_scale", "ln2_bias", "mlp_in", "mlp_in_bias", "mlp_out",
// "mlp_out_bias"}, ...], "final_scale", "final_bias"}, f32, initialised
// deterministically from `seed` (scaled normal weights, unit scales, zero
// biases).
frontend::HostTree InitParams(const ModelConfig& config, uint64_t seed);
int64_t CountParams(const frontend::HostTree& params);

// Mean next-token cross-entropy of `tokens` (s32[batch, context + 1]): the
// model reads tokens [0, context) and predicts [1, context].
frontend::Tensor Loss(const ModelConfig& config, const frontend::Tree& params,
                      const frontend::Tensor& tokens);

}  // namespace sharc::examples::lm
