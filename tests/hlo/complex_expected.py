#!/usr/bin/python3
"""Prints the inputs and NumPy's answers that tests/hlo/complex_eval_test.cc
checks complex arithmetic and fft against (paste its output there). Complex
arrays print as interleaved (real, imag) doubles."""
import numpy as np

rng = np.random.default_rng(31)


def values(x):
    x = np.asarray(x)
    if np.iscomplexobj(x):
        x = np.stack([x.real, x.imag], axis=-1)
    return ", ".join(repr(float(v)) for v in x.ravel())


def quarter(shape):
    return np.round(rng.uniform(-2, 2, shape) * 4) / 4


def main():
    x = quarter((2, 3)) + 1j * quarter((2, 3))
    y = quarter((2, 3)) + 1j * quarter((2, 3))
    y[y == 0] = 1 + 1j
    x[0, 0] = 0  # sign(0) = 0
    print(f"constexpr double kX[] = {{{values(x)}}};")
    print(f"constexpr double kY[] = {{{values(y)}}};")
    sign = np.where(x == 0, 0, x / np.where(x == 0, 1, np.abs(x)))
    # Unary ops of y (no zeros); sign of x (one zero).
    unary = {"kNegate": -y, "kExp": np.exp(y), "kLog": np.log(y), "kSqrt": np.sqrt(y),
             "kSin": np.sin(y), "kCos": np.cos(y), "kTan": np.tan(y), "kTanh": np.tanh(y),
             "kExpm1": np.expm1(y), "kLog1p": np.log1p(y), "kLogistic": 1 / (1 + np.exp(-y)),
             "kRsqrt": 1 / np.sqrt(y)}
    binary = {"kAdd": x + y, "kSubtract": x - y, "kMultiply": x * y, "kDivide": x / y}
    print("const ComplexCase kUnaryCases[] = {")
    for op, r in unary.items():
        print(f"    {{Opcode::{op}, {{{values(r)}}}}},")
    print("};")
    print(f"constexpr double kSignX[] = {{{values(sign)}}};")
    print("const ComplexCase kBinaryCases[] = {")
    for op, r in binary.items():
        print(f"    {{Opcode::{op}, {{{values(r)}}}}},")
    print("};")
    print(f"constexpr double kAbsX[] = {{{values(np.abs(x))}}};")
    # power(y, x): x holds a zero exponent (y^0 = 1); y has no zero base.
    print(f"constexpr double kPowerYX[] = {{{values(y ** x)}}};")
    # On real values complex atan2 is the real one: atan2(re x, re y)
    # (+0.0 turns x's -0 into +0: the complex formula does not keep the
    # sign of a zero).
    ay, ax = x.real + 0.0, y.real + 0.0
    print(f"constexpr double kAtan2Y[] = {{{values(ay)}}};")
    print(f"constexpr double kAtan2X[] = {{{values(ax)}}};")
    print(f"constexpr double kAtan2Real[] = {{{values(np.arctan2(ay, ax))}}};")
    # Tiny arguments, where exp(z) - 1 and log(1 + z) cancel.
    tiny = np.array([1e-9 + 2e-9j, -3e-10 + 1e-12j])
    print(f"constexpr double kTiny[] = {{{values(tiny)}}};")
    print(f"constexpr double kExpm1Tiny[] = {{{values(np.expm1(tiny))}}};")
    print(f"constexpr double kLog1pTiny[] = {{{values(tiny - tiny**2 / 2 + tiny**3 / 3)}}};")
    print(f"constexpr double kProductX[] = {{{values(y.prod(axis=1))}}};")
    # A 1-D complex convolution (cross-correlation, as XLA's convolution):
    # y [1 batch, 1 feature, 3 wide] with x[0] as a [1, 1, 3] kernel, padded by 1.
    print(f"constexpr double kConvYX[] = {{{values(np.convolve(np.pad(y[0], 1), x[0][::-1], 'valid'))}}};")
    # Sorted lexicographically by (real, imag), as jnp.sort orders complex values.
    flat = np.concatenate([x.ravel(), y.ravel()])
    print(f"constexpr double kSortedXY[] = {{{values(np.sort(flat))}}};")
    # x [2,3] . y^T [3,2]: contracting x's dim 1 with y's dim 1.
    print(f"constexpr double kDotXY[] = {{{values(x @ y.T)}}};")
    print(f"constexpr double kSumX[] = {{{values(x.sum(axis=1))}}};")

    # fft: XLA's over the last len(fft_length) dims.
    z = quarter((2, 3, 4)) + 1j * quarter((2, 3, 4))
    r = quarter((2, 3, 4))
    print(f"constexpr double kZ[] = {{{values(z)}}};")
    print(f"constexpr double kR[] = {{{values(r)}}};")
    half = np.fft.rfftn(r, axes=(1, 2))  # [2, 3, 3]
    print(f"constexpr double kHalf[] = {{{values(half)}}};")
    cases = [
        ("FFT", "z", [4], np.fft.fft(z, axis=-1)),
        ("FFT", "z", [3, 4], np.fft.fftn(z, axes=(1, 2))),
        ("IFFT", "z", [2, 3, 4], np.fft.ifftn(z, axes=(0, 1, 2))),
        ("RFFT", "r", [4], np.fft.rfft(r, axis=-1)),
        ("RFFT", "r", [3, 4], np.fft.rfftn(r, axes=(1, 2))),
        ("IRFFT", "half", [3, 4], np.fft.irfftn(half, s=(3, 4), axes=(1, 2))),
    ]
    print("const FftCase kFftCases[] = {")
    for fft_type, src, lengths, out in cases:
        dims = ", ".join(str(d) for d in out.shape)
        lens = ", ".join(str(n) for n in lengths)
        print(f"    {{\"{fft_type}\", \"{src}\", {{{lens}}}, {{{dims}}},\n     {{{values(out)}}}}},")
    print("};")


if __name__ == "__main__":
    main()
