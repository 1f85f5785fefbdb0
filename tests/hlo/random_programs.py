#!/usr/bin/python3
"""Generates random HLO programs together with their results computed by NumPy.

The interpreter test (interpreter_random_test.cc) evaluates each program with
sharc's reference interpreter and compares with NumPy's answer: two independent
implementations of the same semantics. Usage:
  random_programs.py OUT_DIR COUNT SEED
writes OUT_DIR/prog_<i>.hlo, prog_<i>_arg_<j>.npy and prog_<i>_out_<k>.npy.
"""
import math
import os
import sys

import numpy as np


def hlo_shape(a):
    t = {np.dtype("float32"): "f32", np.dtype("int32"): "s32", np.dtype("bool"): "pred",
         np.dtype("float64"): "f64"}[a.dtype]
    return f"{t}[{','.join(str(d) for d in a.shape)}]"


def literal(a):
    if a.ndim == 0:
        v = a.item()
        if isinstance(v, bool):
            return "true" if v else "false"
        return repr(float(v)) if a.dtype.kind == "f" else str(int(v))
    return "{" + ", ".join(literal(x) for x in a) + "}"


class Program:
    def __init__(self, rng):
        self.rng = rng
        self.lines = []
        self.values = []  # (name, array)
        self.params = []
        self.counter = 0

    def emit(self, text, value):
        name = f"v{self.counter}"
        self.counter += 1
        value = np.asarray(value)
        self.lines.append(f"  %{name} = {hlo_shape(value)} {text}")
        self.values.append((name, value))
        return name, value

    def param(self, shape):
        a = self.rng.integers(-4, 5, size=shape).astype(np.float32) * np.float32(0.5)
        name, _ = self.emit(f"parameter({len(self.params)})", a)
        self.params.append(a)
        return name, a

    def pick(self, pred=lambda a: True):
        cands = [v for v in self.values if v[1].dtype == np.float32 and pred(v[1])]
        return cands[self.rng.integers(len(cands))] if cands else None

    def rand_shape(self, max_rank=3):
        rank = int(self.rng.integers(0, max_rank + 1))
        return tuple(int(self.rng.integers(1, 5)) for _ in range(rank))


UNARY = {
    "negate": np.negative, "abs": np.abs, "tanh": np.tanh, "sine": np.sin,
    "cosine": np.cos, "floor": np.floor, "ceil": np.ceil, "sign": np.sign,
    "logistic": lambda x: (1 / (1 + np.exp(-x.astype(np.float64)))).astype(np.float32),
    "round-nearest-even": np.rint,
    "asinh": np.arcsinh,
    "erf": lambda x: np.vectorize(math.erf)(x.astype(np.float64)).astype(np.float32),
}
BINARY = {
    "add": np.add, "subtract": np.subtract, "multiply": np.multiply,
    "maximum": np.maximum, "minimum": np.minimum,
}


def step(p):
    rng = p.rng
    kind = rng.choice(["unary", "binary", "divide", "sqrt", "compare_select", "broadcast",
                       "transpose", "reshape", "slice", "pad", "concat", "reverse", "reduce",
                       "dot", "iota", "constant", "convert", "dynamic_slice", "clamp", "exp",
                       "ragged_dot"])
    f32 = np.float32
    if kind == "unary":
        n, a = p.pick()
        op = rng.choice(list(UNARY))
        p.emit(f"{op}(%{n})", UNARY[op](a).astype(f32))
    elif kind == "exp":
        n, a = p.pick()
        t, ta = p.emit(f"tanh(%{n})", np.tanh(a).astype(f32))
        p.emit(f"exponential(%{t})", np.exp(ta).astype(f32))
    elif kind == "binary":
        n, a = p.pick()
        m, b = p.pick(lambda x: x.shape == a.shape)
        op = rng.choice(list(BINARY))
        p.emit(f"{op}(%{n}, %{m})", BINARY[op](a, b).astype(f32))
    elif kind == "divide":
        n, a = p.pick()
        m, b = p.pick(lambda x: x.shape == a.shape)
        ab, abv = p.emit(f"abs(%{m})", np.abs(b))
        one, onev = p.emit(f"constant({literal(np.ones(a.shape, f32))})", np.ones(a.shape, f32))
        d, dv = p.emit(f"add(%{ab}, %{one})", abv + onev)
        p.emit(f"divide(%{n}, %{d})", (a / dv).astype(f32))
    elif kind == "sqrt":
        n, a = p.pick()
        ab, abv = p.emit(f"abs(%{n})", np.abs(a))
        p.emit(f"sqrt(%{ab})", np.sqrt(abv).astype(f32))
    elif kind == "compare_select":
        n, a = p.pick()
        m, b = p.pick(lambda x: x.shape == a.shape)
        d = rng.choice(["LT", "LE", "GT", "GE", "EQ", "NE"])
        fn = {"LT": np.less, "LE": np.less_equal, "GT": np.greater, "GE": np.greater_equal,
              "EQ": np.equal, "NE": np.not_equal}[d]
        c, cv = p.emit(f"compare(%{n}, %{m}), direction={d}", fn(a, b))
        p.emit(f"select(%{c}, %{n}, %{m})", np.where(cv, a, b))
    elif kind == "broadcast":
        n, a = p.pick(lambda x: x.ndim < 4)
        pos = int(rng.integers(0, a.ndim + 1))
        size = int(rng.integers(1, 4))
        out_shape = a.shape[:pos] + (size,) + a.shape[pos:]
        dims = [i if i < pos else i + 1 for i in range(a.ndim)]
        val = np.broadcast_to(np.expand_dims(a, pos), out_shape).astype(f32)
        p.emit(f"broadcast(%{n}), dimensions={{{','.join(map(str, dims))}}}", val)
    elif kind == "transpose":
        n, a = p.pick()
        perm = [int(x) for x in rng.permutation(a.ndim)]
        p.emit(f"transpose(%{n}), dimensions={{{','.join(map(str, perm))}}}",
               np.transpose(a, perm).copy())
    elif kind == "reshape":
        n, a = p.pick()
        size = a.size
        divisors = [d for d in range(1, size + 1) if size % d == 0]
        d0 = int(rng.choice(divisors))
        shape = (d0, size // d0) if rng.integers(2) else (size,)
        p.emit(f"reshape(%{n})", a.reshape(shape))
    elif kind == "slice":
        n, a = p.pick(lambda x: x.ndim > 0)
        specs, sl = [], []
        for d in a.shape:
            start = int(rng.integers(0, d))
            limit = int(rng.integers(start + 1, d + 1))
            stride = int(rng.integers(1, 3))
            specs.append(f"[{start}:{limit}:{stride}]")
            sl.append(slice(start, limit, stride))
        p.emit(f"slice(%{n}), slice={{{', '.join(specs)}}}", a[tuple(sl)].copy())
    elif kind == "pad":
        n, a = p.pick(lambda x: x.ndim > 0)
        cfg, out = [], a
        for axis, d in enumerate(a.shape):
            lo, hi, interior = int(rng.integers(-1, 3)), int(rng.integers(-1, 3)), int(rng.integers(0, 2))
            # NumPy reference: interior padding, then edge padding, then cropping.
            if interior:
                idx = np.arange(out.shape[axis])
                newlen = out.shape[axis] + (out.shape[axis] - 1) * interior
                shape = list(out.shape)
                shape[axis] = newlen
                grown = np.full(shape, -1.5, f32)
                sel = [slice(None)] * out.ndim
                sel[axis] = idx * (interior + 1)
                grown[tuple(sel)] = out
                out = grown
            widths = [(0, 0)] * out.ndim
            widths[axis] = (max(lo, 0), max(hi, 0))
            out = np.pad(out, widths, constant_values=f32(-1.5))
            sel = [slice(None)] * out.ndim
            sel[axis] = slice(-min(lo, 0), out.shape[axis] + min(hi, 0))
            out = out[tuple(sel)]
            cfg.append(f"{lo}_{hi}_{interior}" if interior else f"{lo}_{hi}")
        if 0 in out.shape:
            return
        c, _ = p.emit("constant(-1.5)", np.array(-1.5, f32))
        p.emit(f"pad(%{n}, %{c}), padding={'x'.join(cfg)}", out.astype(f32))
    elif kind == "concat":
        n, a = p.pick(lambda x: x.ndim > 0)
        axis = int(rng.integers(0, a.ndim))
        m, b = p.pick(lambda x: x.ndim == a.ndim and all(
            x.shape[i] == a.shape[i] for i in range(a.ndim) if i != axis))
        p.emit(f"concatenate(%{n}, %{m}), dimensions={{{axis}}}", np.concatenate([a, b], axis))
    elif kind == "reverse":
        n, a = p.pick(lambda x: x.ndim > 0)
        dims = sorted(int(d) for d in rng.choice(a.ndim, size=int(rng.integers(1, a.ndim + 1)),
                                                   replace=False))
        p.emit(f"reverse(%{n}), dimensions={{{','.join(map(str, dims))}}}",
               np.flip(a, dims).copy())
    elif kind == "reduce":
        n, a = p.pick(lambda x: x.ndim > 0)
        dims = sorted(int(d) for d in rng.choice(a.ndim, size=int(rng.integers(1, a.ndim + 1)),
                                                   replace=False))
        which = rng.choice(["add", "max"])
        init = "0" if which == "add" else "-inf"
        c, _ = p.emit(f"constant({init})", np.array(0 if which == "add" else -np.inf, f32))
        val = (np.sum(a.astype(np.float64), axis=tuple(dims)) if which == "add"
               else np.max(a, axis=tuple(dims))).astype(f32)
        p.emit(f"reduce(%{n}, %{c}), dimensions={{{','.join(map(str, dims))}}}, "
               f"to_apply=%{which}_f32", val)
    elif kind == "dot":
        n, a = p.pick(lambda x: 1 <= x.ndim <= 3)
        m, b = p.pick(lambda x: 1 <= x.ndim <= 3 and any(s in a.shape for s in x.shape))
        # One contracting pair with equal sizes, optionally one batch pair.
        pairs = [(i, j) for i in range(a.ndim) for j in range(b.ndim) if a.shape[i] == b.shape[j]]
        ci, cj = pairs[int(rng.integers(len(pairs)))]
        batch = [(i, j) for (i, j) in pairs if i != ci and j != cj]
        bi, bj = (batch[0] if batch and rng.integers(2) else (None, None))
        lb = [bi] if bi is not None else []
        rb = [bj] if bj is not None else []
        a64, b64 = a.astype(np.float64), b.astype(np.float64)
        la = [d for d in range(a.ndim) if d not in lb + [ci]]
        ra = [d for d in range(b.ndim) if d not in rb + [cj]]
        at = np.transpose(a64, lb + la + [ci])
        bt = np.transpose(b64, rb + ra + [cj])
        if lb:
            res = np.stack([np.tensordot(at[k], bt[k], axes=([at.ndim - 2], [bt.ndim - 2]))
                            for k in range(at.shape[0])])
        else:
            res = np.tensordot(at, bt, axes=([at.ndim - 1], [bt.ndim - 1]))
        attrs = f"lhs_contracting_dims={{{ci}}}, rhs_contracting_dims={{{cj}}}"
        if lb:
            attrs = f"lhs_batch_dims={{{bi}}}, rhs_batch_dims={{{bj}}}, " + attrs
        p.emit(f"dot(%{n}, %{m}), {attrs}", res.astype(f32))
    elif kind == "iota":
        shape = p.rand_shape()
        if not shape:
            return
        dim = int(rng.integers(0, len(shape)))
        val = np.broadcast_to(
            np.arange(shape[dim], dtype=f32).reshape([-1 if i == dim else 1 for i in range(len(shape))]),
            shape).copy()
        p.emit(f"iota(), iota_dimension={dim}", val)
    elif kind == "constant":
        val = (p.rng.integers(-6, 7, size=p.rand_shape()) * 0.25).astype(f32)
        p.emit(f"constant({literal(val)})", val)
    elif kind == "convert":
        # Bounded first: converting out-of-range floats to s32 saturates in
        # sharc (as in XLA) but is undefined in NumPy.
        n, a = p.pick()
        lo, _ = p.emit("constant(-1000)", np.array(-1000, f32))
        hi, _ = p.emit("constant(1000)", np.array(1000, f32))
        cl, clv = p.emit(f"clamp(%{lo}, %{n}, %{hi})", np.clip(a, -1000, 1000).astype(f32))
        fl, flv = p.emit(f"floor(%{cl})", np.floor(clv))
        i, iv = p.emit(f"convert(%{fl})", flv.astype(np.int32))
        p.emit(f"convert(%{i})", iv.astype(f32))
    elif kind == "dynamic_slice":
        n, a = p.pick(lambda x: x.ndim > 0)
        sizes = [int(rng.integers(1, d + 1)) for d in a.shape]
        starts = [int(rng.integers(-2, d + 2)) for d in a.shape]
        idx_names, sl = [], []
        # XLA's older form: the start indices as one vector.
        as_vector = a.ndim > 1 and rng.integers(2)
        if as_vector:
            c, _ = p.emit(f"constant({literal(np.array(starts, np.int32))})",
                          np.array(starts, np.int32))
            idx_names.append(f"%{c}")
        for s, size, d in zip(starts, sizes, a.shape):
            if not as_vector:
                c, _ = p.emit(f"constant({s})", np.array(s, np.int32))
                idx_names.append(f"%{c}")
            st = min(max(s, 0), d - size)
            sl.append(slice(st, st + size))
        p.emit(f"dynamic-slice(%{n}, {', '.join(idx_names)}), "
               f"dynamic_slice_sizes={{{','.join(map(str, sizes))}}}", a[tuple(sl)].copy())
    elif kind == "ragged_dot":
        # Non-contracting mode: row i of [m,k] uses the group holding it;
        # rows past the groups' total are zero.
        n, a = p.pick(lambda x: x.ndim == 2)
        m, k = a.shape
        groups, cols = int(rng.integers(1, 4)), int(rng.integers(1, 4))
        w = (rng.integers(-4, 5, size=(groups, k, cols)) * 0.25).astype(f32)
        wn, _ = p.emit(f"constant({literal(w)})", w)
        sizes = rng.multinomial(int(rng.integers(0, m + 1)), [1.0 / groups] * groups).astype(np.int32)
        sn, _ = p.emit(f"constant({literal(sizes)})", sizes)
        res = np.zeros((m, cols), np.float64)
        ends = np.cumsum(sizes)
        for i in range(m):
            j = int(np.searchsorted(ends, i, side="right"))
            if j < groups:
                res[i] = a[i].astype(np.float64) @ w[j].astype(np.float64)
        p.emit(f"ragged-dot(%{n}, %{wn}, %{sn}), lhs_contracting_dims={{1}}, "
               "rhs_contracting_dims={1}, lhs_ragged_dims={0}, rhs_group_dims={0}",
               res.astype(f32))
    elif kind == "clamp":
        n, a = p.pick()
        lo, _ = p.emit("constant(-1)", np.array(-1, f32))
        hi, _ = p.emit("constant(1.5)", np.array(1.5, f32))
        p.emit(f"clamp(%{lo}, %{n}, %{hi})", np.clip(a, -1, 1.5).astype(f32))


HEADER = """HloModule random_{i}

%add_f32 (a: f32[], b: f32[]) -> f32[] {{
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %s = f32[] add(%a, %b)
}}

%max_f32 (a: f32[], b: f32[]) -> f32[] {{
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %m = f32[] maximum(%a, %b)
}}

ENTRY %main {{
"""


def generate(out_dir, index, rng):
    p = Program(rng)
    for _ in range(int(rng.integers(1, 4))):
        p.param(p.rand_shape())
    for _ in range(int(rng.integers(3, 12))):
        try:
            step(p)
        except (TypeError, ValueError):
            pass  # the chosen op found no suitable operand: try another
    outs = [v for v in p.values[-2:] if v[1].dtype == np.float32]
    names = ", ".join(f"%{n}" for n, _ in outs)
    shapes = ", ".join(hlo_shape(v) for _, v in outs)
    p.lines.append(f"  ROOT %result = ({shapes}) tuple({names})")
    with open(os.path.join(out_dir, f"prog_{index}.hlo"), "w") as f:
        f.write(HEADER.format(i=index) + "\n".join(p.lines) + "\n}\n")
    for j, a in enumerate(p.params):
        np.save(os.path.join(out_dir, f"prog_{index}_arg_{j}.npy"), np.asarray(a).copy(order="C"))
    for k, (_, v) in enumerate(outs):
        np.save(os.path.join(out_dir, f"prog_{index}_out_{k}.npy"), np.asarray(v).copy(order="C"))


def main():
    out_dir, count, seed = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    os.makedirs(out_dir, exist_ok=True)
    rng = np.random.default_rng(seed)
    for i in range(count):
        generate(out_dir, i, rng)


if __name__ == "__main__":
    main()
