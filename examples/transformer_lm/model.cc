#include "examples/transformer_lm/model.h"

#include <cmath>
#include <map>
#include <random>
#include <string>
#include <vector>

namespace sharc::examples::lm {
namespace fe = sharc::frontend;
using fe::Tensor;
using fe::Tree;

namespace {

hlo::Literal Normal(std::vector<int64_t> dims, double stddev, std::mt19937_64& rng) {
  hlo::Literal l(hlo::Shape(hlo::PrimitiveType::kF32, dims));
  std::normal_distribution<float> normal(0.0f, static_cast<float>(stddev));
  for (int64_t i = 0; i < l.num_elements(); ++i) l.data<float>()[i] = normal(rng);
  return l;
}

hlo::Literal Filled(std::vector<int64_t> dims, float value) {
  hlo::Literal l(hlo::Shape(hlo::PrimitiveType::kF32, dims));
  for (int64_t i = 0; i < l.num_elements(); ++i) l.data<float>()[i] = value;
  return l;
}

// x normalised over its last axis, then scaled and shifted per feature.
Tensor LayerNorm(const Tensor& x, const Tensor& scale, const Tensor& bias) {
  const int64_t last = x.rank() - 1;
  Tensor centred = x - fe::mean(x, {last}, /*keepdims=*/true);
  Tensor variance = fe::mean(centred * centred, {last}, /*keepdims=*/true);
  return centred * fe::rsqrt(variance + 1e-5) * scale + bias;
}

// Rows of `x` as probabilities over the last axis, minus the row maximum so
// exp cannot overflow.
Tensor LogSoftmax(const Tensor& x) {
  const int64_t last = x.rank() - 1;
  Tensor shifted = x - fe::max(x, {last}, /*keepdims=*/true);
  return shifted - fe::log(fe::sum(fe::exp(shifted), {last}, /*keepdims=*/true));
}

// s32[b, t] -> f32[b, t, vocab] with a 1 at each token.
Tensor OneHot(const Tensor& tokens, int64_t vocab) {
  std::vector<int64_t> dims = tokens.dims();
  dims.push_back(vocab);
  Tensor classes = fe::iota(dims, tokens.rank(), fe::s32);
  Tensor expanded = fe::expand_dims(tokens, tokens.rank());
  return fe::astype(fe::equal(fe::broadcast_to(expanded, dims), classes), fe::f32);
}

// Causal self-attention of h: f32[b, t, width] with `heads` heads.
Tensor Attention(const ModelConfig& c, const Tree& layer, const Tensor& h) {
  const int64_t b = h.dim(0), t = h.dim(1), head_width = c.width / c.heads;
  auto split_heads = [&](const Tensor& x) {  // [b,t,w] -> [b,heads,t,head_width]
    return fe::transpose(fe::reshape(x, {b, t, c.heads, head_width}), {0, 2, 1, 3});
  };
  Tensor q = split_heads(fe::einsum("btd,de->bte", h, layer["query"].leaf()));
  Tensor k = split_heads(fe::einsum("btd,de->bte", h, layer["key"].leaf()));
  Tensor v = split_heads(fe::einsum("btd,de->bte", h, layer["value"].leaf()));
  Tensor scores = fe::einsum("bhqd,bhkd->bhqk", q, k) * (1.0 / std::sqrt(double(head_width)));
  // Position q attends to positions k <= q only.
  Tensor causal = fe::iota({t, t}, 0) >= fe::iota({t, t}, 1);
  scores = fe::where(causal, scores, -1e9);
  Tensor weights = fe::exp(LogSoftmax(scores));
  Tensor context = fe::einsum("bhqk,bhkd->bhqd", weights, v);
  Tensor merged = fe::reshape(fe::transpose(context, {0, 2, 1, 3}), {b, t, c.width});
  return fe::einsum("btd,de->bte", merged, layer["out"].leaf());
}

Tensor Mlp(const Tree& layer, const Tensor& h) {
  Tensor hidden = fe::einsum("btd,dm->btm", h, layer["mlp_in"].leaf()) + layer["mlp_in_bias"].leaf();
  hidden = fe::maximum(hidden, 0.0);
  return fe::einsum("btm,md->btd", hidden, layer["mlp_out"].leaf()) + layer["mlp_out_bias"].leaf();
}

}  // namespace

fe::HostTree InitParams(const ModelConfig& c, uint64_t seed) {
  std::mt19937_64 rng(seed);
  const double scale = 1.0 / std::sqrt(static_cast<double>(c.width));
  std::vector<fe::HostTree> layers;
  for (int64_t i = 0; i < c.layers; ++i) {
    std::map<std::string, fe::HostTree> layer;
    layer.emplace("ln1_scale", Filled({c.width}, 1.0f));
    layer.emplace("ln1_bias", Filled({c.width}, 0.0f));
    layer.emplace("query", Normal({c.width, c.width}, scale, rng));
    layer.emplace("key", Normal({c.width, c.width}, scale, rng));
    layer.emplace("value", Normal({c.width, c.width}, scale, rng));
    layer.emplace("out", Normal({c.width, c.width}, scale, rng));
    layer.emplace("ln2_scale", Filled({c.width}, 1.0f));
    layer.emplace("ln2_bias", Filled({c.width}, 0.0f));
    layer.emplace("mlp_in", Normal({c.width, c.mlp_width}, scale, rng));
    layer.emplace("mlp_in_bias", Filled({c.mlp_width}, 0.0f));
    layer.emplace("mlp_out",
                  Normal({c.mlp_width, c.width}, 1.0 / std::sqrt(double(c.mlp_width)), rng));
    layer.emplace("mlp_out_bias", Filled({c.width}, 0.0f));
    layers.push_back(fe::HostTree::dict(std::move(layer)));
  }
  std::map<std::string, fe::HostTree> params;
  params.emplace("embed", Normal({c.vocab, c.width}, scale, rng));
  params.emplace("position", Normal({c.context, c.width}, scale, rng));
  params.emplace("layers", fe::HostTree::list(std::move(layers)));
  params.emplace("final_scale", Filled({c.width}, 1.0f));
  params.emplace("final_bias", Filled({c.width}, 0.0f));
  return fe::HostTree::dict(std::move(params));
}

int64_t CountParams(const fe::HostTree& params) {
  int64_t n = 0;
  for (const hlo::Literal& leaf : fe::Leaves(params)) n += leaf.num_elements();
  return n;
}

Tensor Loss(const ModelConfig& c, const Tree& params, const Tensor& tokens) {
  const int64_t b = tokens.dim(0), t = c.context;
  Tensor inputs = fe::slice(tokens, {0, 0}, {b, t});
  Tensor targets = fe::slice(tokens, {0, 1}, {b, t + 1});
  const Tensor& embed = params["embed"].leaf();
  Tensor h = fe::einsum("btv,vd->btd", OneHot(inputs, c.vocab), embed) + params["position"].leaf();
  for (const Tree& layer : params["layers"].elements()) {
    h = h + Attention(c, layer, LayerNorm(h, layer["ln1_scale"].leaf(), layer["ln1_bias"].leaf()));
    h = h + Mlp(layer, LayerNorm(h, layer["ln2_scale"].leaf(), layer["ln2_bias"].leaf()));
  }
  h = LayerNorm(h, params["final_scale"].leaf(), params["final_bias"].leaf());
  // The output layer is the token embedding, transposed (tied weights).
  Tensor log_probs = LogSoftmax(fe::einsum("btd,vd->btv", h, embed));
  return -fe::mean(fe::sum(log_probs * OneHot(targets, c.vocab), {2}));
}

}  // namespace sharc::examples::lm
