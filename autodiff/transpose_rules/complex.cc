// Transpose rules of the ops that build, take apart and transform complex
// numbers, after JAX (jax/_src/lax/lax.py: real_p, imag_p, complex_p;
// jax/_src/lax/fft.py: _fft_transpose_rule). They are transposes, not
// adjoints: a complex cotangent ct pairs with a tangent t as Re(sum(ct t)),
// so for C-linear ops (FFT, IFFT) the transpose is the plain one, and
//
//   real(z)       -> complex(ct, 0)         (ct itself when z is real)
//   imag(z)       -> complex(0, -ct)        (nothing when z is real)
//   complex(x, y) -> (real(ct), -imag(ct))
//   fft FFT, IFFT -> the same fft of ct (the DFT matrix is symmetric)
//   fft RFFT      -> real(FFT(ct zero-padded to fft_length)), the transpose
//                    of RFFT = slice(FFT(convert(x)))
//   fft IRFFT     -> conj(RFFT(ct) * mask / prod(fft_length)), mask 2 on
//                    the bins whose mirror image the half spectrum leaves
//                    out, 1 on the DC bin (and the Nyquist bin, n even)
#include "absl/strings/str_cat.h"
#include "autodiff/transpose_rule.h"
#include "hlo/ir/literal.h"
#include "hlo/ops/op_util.h"

namespace sharc::autodiff {
namespace {

using Cotangents = absl::StatusOr<std::vector<Cotangent>>;

// An fft of `x` like `inst` but of type `fft_type` (same fft_length).
Instruction* FftLike(Emitter& e, const Instruction& inst, Instruction* x, const std::string& fft_type,
                     const Shape& shape) {
  return e.Add(Opcode::kFft, shape, {x},
               {{"fft_type", fft_type}, {"fft_length", inst.attr_ints("fft_length")}});
}

// RFFT's operand is real [..., n]; ct is its half spectrum [..., n/2+1].
Instruction* RfftTranspose(Emitter& e, const Instruction& inst, Instruction* ct) {
  const Shape& operand = inst.operand(0)->shape();
  const int64_t last = operand.rank() - 1;
  hlo::IntListList padding(static_cast<size_t>(operand.rank()), std::vector<int64_t>{0, 0, 0});
  padding.back()[1] = operand.dim(last) - ct->shape().dim(last);
  const Shape full(ct->shape().type(), operand.dims());
  Instruction* padded = e.Add(Opcode::kPad, full, {ct, ScalarOf(e, full.type(), 0.0)},
                              {{"padding", std::move(padding)}});
  return RealPart(e, FftLike(e, inst, padded, "FFT", full));
}

// IRFFT's operand is a half spectrum [..., n/2+1]; ct is real [..., n].
Instruction* IrfftTranspose(Emitter& e, const Instruction& inst, Instruction* ct) {
  const hlo::IntList& lengths = inst.attr_ints("fft_length");
  const Shape& operand = inst.operand(0)->shape();
  const int64_t n = lengths.back();
  const int64_t bins = operand.dim(operand.rank() - 1);
  double scale = 1;
  for (int64_t length : lengths) scale /= static_cast<double>(length);
  hlo::Literal mask(Shape(operand.type(), {bins}));
  for (int64_t k = 0; k < bins; ++k) {
    const bool mirrored = k > 0 && 2 * k != n;  // the DC and Nyquist bins have no mirror
    mask.SetFromDouble(k, (mirrored ? 2.0 : 1.0) * scale);
  }
  Instruction* weights = e.Add(Instruction::CreateConstant("irfft.mask", std::move(mask)));
  Instruction* spectrum = FftLike(e, inst, ct, "RFFT", operand);
  return Conj(e, Mul(e, spectrum, BroadcastInDim(e, weights, operand, {operand.rank() - 1})));
}

Cotangents FftTranspose(const Instruction& inst, const Cotangent& ct, TransposeContext& ctx) {
  Emitter& e = ctx.emitter();
  const std::string& type = inst.attr_string("fft_type");
  if (type == "RFFT") return std::vector<Cotangent>{Cotangent::Of(RfftTranspose(e, inst, ct.value))};
  if (type == "IRFFT") {
    return std::vector<Cotangent>{Cotangent::Of(IrfftTranspose(e, inst, ct.value))};
  }
  return std::vector<Cotangent>{
      Cotangent::Of(FftLike(e, inst, ct.value, type, inst.operand(0)->shape()))};
}

}  // namespace

void RegisterComplexTransposeRules(TransposeRuleRegistry& r) {
  r.Register(Opcode::kReal, [](const Instruction& inst, const Cotangent& ct,
                               TransposeContext& ctx) -> Cotangents {
    if (!hlo::IsComplex(inst.operand(0)->shape().type())) return std::vector<Cotangent>{ct};
    Emitter& e = ctx.emitter();
    return std::vector<Cotangent>{
        Cotangent::Of(MakeComplex(e, ct.value, Zeros(e, ct.value->shape())))};
  });
  r.Register(Opcode::kImag, [](const Instruction& inst, const Cotangent& ct,
                               TransposeContext& ctx) -> Cotangents {
    if (!hlo::IsComplex(inst.operand(0)->shape().type())) return NoCotangents(inst);
    Emitter& e = ctx.emitter();
    return std::vector<Cotangent>{
        Cotangent::Of(MakeComplex(e, Zeros(e, ct.value->shape()), Neg(e, ct.value)))};
  });
  r.Register(Opcode::kComplex, [](const Instruction&, const Cotangent& ct,
                                  TransposeContext& ctx) -> Cotangents {
    Emitter& e = ctx.emitter();
    return std::vector<Cotangent>{Cotangent::Of(RealPart(e, ct.value)),
                                  Cotangent::Of(Neg(e, ImagPart(e, ct.value)))};
  });
  r.Register(Opcode::kFft, FftTranspose);
}

}  // namespace sharc::autodiff
