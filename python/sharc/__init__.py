"""sharc from Python: a sharding compiler for XLA's HLO, with NumPy arrays in and out.

Load or parse an HLO module whose values carry sharding annotations, look at
what propagation and partitioning make of it, compile it for a mesh of CPU
devices and run it on global NumPy arrays::

    import numpy as np
    import sharc

    module = sharc.load("examples/sharded_matmul.hlo")
    print(module.parameters)                  # names, shapes, dtypes, shardings
    exe = sharc.compile(module, 2)            # 2 devices (or a sharc.Mesh)
    out = exe(np.ones((8, 16), np.float32), np.ones((16, 4), np.float32))
    print(exe.report()["communication_bytes"])
    print(sharc.compare(module, 2))           # annotated vs unannotated

Every stage is the one the `sharc` command runs (same library, same
messages); errors are `sharc.Error` subclasses by kind (`ParseError`,
`VerifyError`, `PartitionError`, `TransformError`, `RuntimeError`,
`InternalError`). Inputs of the wrong dtype raise `TypeError`, of the wrong
shape `ValueError`, both naming the parameter. See docs/python.md.
"""

from __future__ import annotations

import atexit
import dataclasses
import json
import statistics
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple, Union

import numpy as np

from . import _sharc
from ._sharc import (  # noqa: F401  (re-exported)
    Error,
    InternalError,
    ParseError,
    PartitionError,
    RuntimeError,
    TransformError,
    VerifyError,
)

__version__: str = _sharc.__version__

__all__ = [
    "Error", "ParseError", "VerifyError", "PartitionError", "TransformError", "RuntimeError",
    "InternalError", "Mesh", "PartitionSpec", "P", "Value", "Module", "Executable", "Timing",
    "parse", "load", "compile", "compare", "propagate", "partition", "explain", "grad", "jvp",
    "transpose",
]

# A compile interrupted with Ctrl-C finishes in the background; the process
# waits for it at exit rather than tearing down under it.
atexit.register(_sharc._wait_for_abandoned_work)


class Mesh:
    """A named mesh of devices: ``Mesh(data=2, model=2)``, ``Mesh({"data": 2})``
    or ``Mesh("data=2,model=2")`` (the ``--mesh`` syntax). Axes are major to
    minor; devices are numbered row-major over them, as in JAX's
    ``Mesh(np.arange(n).reshape(...), names)``."""

    def __init__(self, axes: Union[None, str, Mapping[str, int]] = None, /, **sizes: int):
        parsed: Dict[str, int] = {}
        if isinstance(axes, str):
            for item in axes.strip().strip("{}").split(","):
                name, sep, size = item.partition("=")
                if not sep or not name.strip():
                    raise ValueError(f"mesh {axes!r}: write axes as name=size, e.g. data=2,model=2")
                parsed[name.strip()] = int(size)
        elif axes is not None:
            parsed.update(axes)
        parsed.update(sizes)
        if not parsed:
            raise ValueError("a mesh needs at least one axis, e.g. Mesh(data=2)")
        for name, size in parsed.items():
            if not isinstance(size, (int, np.integer)) or size < 1:
                raise ValueError(f"mesh axis {name!r} has size {size!r}; sizes are integers >= 1")
        self._axes: Dict[str, int] = {k: int(v) for k, v in parsed.items()}

    @property
    def axes(self) -> Dict[str, int]:
        """Axis name -> size, major to minor."""
        return dict(self._axes)

    @property
    def axis_names(self) -> Tuple[str, ...]:
        return tuple(self._axes)

    @property
    def shape(self) -> Tuple[int, ...]:
        return tuple(self._axes.values())

    @property
    def num_devices(self) -> int:
        return int(np.prod(self.shape))

    def __str__(self) -> str:
        return ",".join(f"{k}={v}" for k, v in self._axes.items())

    def __repr__(self) -> str:
        return "Mesh(" + ", ".join(f"{k}={v}" for k, v in self._axes.items()) + ")"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Mesh) and list(self._axes.items()) == list(other._axes.items())

    def __hash__(self) -> int:
        return hash(tuple(self._axes.items()))


SpecDim = Union[None, str, Tuple[str, ...]]


class PartitionSpec(tuple):
    """How each dimension of an array is split over mesh axes, as in JAX:
    ``P("data", None)``, ``P(("data", "model"))``, ``P()``. Entry i names the
    axis (or axes, major to minor) dimension i is split over; None leaves it
    whole. ``str(spec)`` is the text sharc's other interfaces take."""

    def __new__(cls, *dims: SpecDim) -> "PartitionSpec":
        norm: List[SpecDim] = []
        for d in dims:
            if d is None or isinstance(d, str):
                norm.append(d)
            elif isinstance(d, (tuple, list)) and all(isinstance(a, str) for a in d):
                norm.append(tuple(d) if len(d) != 1 else d[0])
            else:
                raise TypeError(f"a PartitionSpec entry is None, an axis name or a tuple of "
                                f"names, not {d!r}")
        return super().__new__(cls, norm)

    def __str__(self) -> str:
        def one(d: SpecDim) -> str:
            if d is None:
                return "None"
            if isinstance(d, str):
                return d
            return "(" + ",".join(d) + ")"
        return "P(" + ", ".join(one(d) for d in self) + ")"

    def __repr__(self) -> str:
        return "PartitionSpec(" + ", ".join(repr(d) for d in self) + ")"


P = PartitionSpec


def _spec_from_axes(axes: Optional[List[List[str]]]) -> Optional[PartitionSpec]:
    if axes is None:
        return None
    return PartitionSpec(*[None if not a else (a[0] if len(a) == 1 else tuple(a)) for a in axes])


@dataclasses.dataclass(frozen=True)
class Value:
    """An entry parameter or the result of a module.

    ``shape`` and ``dtype`` are None for a tuple (``type`` has its text);
    ``sharding`` is the HLO sharding text (None if not annotated) and
    ``spec`` the same as a PartitionSpec over the module's mesh, where the
    module has a mesh and the sharding is one."""

    name: str
    dtype: Optional[str]
    shape: Optional[Tuple[int, ...]]
    type: str
    sharding: Optional[str]
    spec: Optional[PartitionSpec]
    index: Optional[int] = None

    @classmethod
    def _from(cls, d: Dict[str, Any], index: Optional[int] = None) -> "Value":
        return cls(name=d["name"], dtype=d["dtype"], shape=d["shape"], type=d["type"],
                   sharding=d["sharding"], spec=_spec_from_axes(d["spec"]), index=index)


Target = Union[None, int, str, Mesh]


def _resolve_target(target: Target, mesh: Union[None, str, Mesh],
                    devices: Optional[int]) -> Tuple[Optional[int], Optional[str]]:
    """(devices, mesh text) from `target` (a device count or a mesh) and the keywords."""
    if target is not None:
        if isinstance(target, bool):
            raise TypeError("the target is a device count or a sharc.Mesh, not a bool")
        if isinstance(target, (int, np.integer)):
            if devices is not None and devices != target:
                raise ValueError(f"devices given twice: {target} and devices={devices}")
            devices = int(target)
        elif isinstance(target, (str, Mesh)):
            if mesh is not None:
                raise ValueError("mesh given twice")
            mesh = target
        else:
            raise TypeError(f"the target is a device count or a sharc.Mesh, not {target!r}")
    mesh_text = None if mesh is None else str(Mesh(mesh) if isinstance(mesh, str) else mesh)
    return devices, mesh_text


def _sharding_text(sharding: Union[str, PartitionSpec]) -> str:
    return str(sharding)


class Module:
    """An HLO module: the global program with its sharding annotations.

    Made by `sharc.parse` or `sharc.load`. Modules are values: every method
    that changes something returns a new Module. ``str(module)`` is the
    canonical text (``sharc fmt``)."""

    def __init__(self, handle: "_sharc._Module"):
        if not isinstance(handle, _sharc._Module):
            raise TypeError("make a Module with sharc.parse(text) or sharc.load(path)")
        self._handle = handle

    # -- looking at it
    def __str__(self) -> str:
        return self._handle.text()

    def __repr__(self) -> str:
        mesh = f", mesh={self.mesh!r}" if self.mesh is not None else ""
        return (f"<sharc.Module {self.name!r}: {len(self.parameters)} parameter(s), "
                f"num_partitions={self.num_partitions}{mesh}>")

    @property
    def name(self) -> str:
        return self._handle.name

    @property
    def num_partitions(self) -> int:
        """The header's num_partitions: the device count the module is annotated for."""
        return self._handle.num_partitions

    @property
    def mesh(self) -> Optional[Mesh]:
        """The header's named mesh, if any."""
        text = self._handle.mesh
        return None if text is None else Mesh(text)

    @property
    def parameters(self) -> List[Value]:
        """The entry computation's parameters, in order."""
        return [Value._from(d, i) for i, d in enumerate(self._handle.parameters())]

    @property
    def result(self) -> Value:
        """The entry computation's root."""
        return Value._from(self._handle.result())

    def verify(self) -> None:
        """Runs the verifier; raises VerifyError naming the instruction at fault."""
        self._handle.verify()

    # -- annotating it
    def with_mesh(self, mesh: Union[str, Mesh]) -> "Module":
        """A copy whose header names `mesh` (and num_partitions its device count);
        partition specs resolve against it."""
        copy = self._handle.clone()
        copy.set_mesh(str(Mesh(mesh) if isinstance(mesh, str) else mesh))
        return Module(copy)

    def with_sharding(self, value: Union[int, str],
                      sharding: Union[str, PartitionSpec]) -> "Module":
        """A copy with a value of the entry computation annotated: an entry
        parameter by number, or any value (parameter or instruction) by name,
        as a sharding constraint inside the program would. The sharding is HLO
        text such as ``"{devices=[2,1]0,1}"`` or ``"{devices=[4,1]<=[4]}"``, or a
        PartitionSpec over the module's mesh."""
        copy = self._handle.clone()
        if isinstance(value, str):
            copy.set_value_sharding(value.lstrip("%"), _sharding_text(sharding))
        else:
            copy.set_parameter_sharding(int(value), _sharding_text(sharding))
        return Module(copy)

    def with_result_sharding(self, sharding: Union[str, PartitionSpec]) -> "Module":
        """A copy with the entry's root annotated (a tuple takes ``{{...}, {...}}``)."""
        copy = self._handle.clone()
        copy.set_result_sharding(_sharding_text(sharding))
        return Module(copy)

    # -- compiling stages (each returns a new module)
    def propagate(self, mesh: Union[None, str, Mesh] = None, *, devices: Optional[int] = None,
                  mapreduce_mode: str = "annotated") -> "Module":
        """Every value with the sharding GSPMD's propagation infers (``sharc propagate``).
        `mesh` or `devices` override the header; MapReduce blocks are lowered in
        `mapreduce_mode` ("annotated", "ns" or "loop") first."""
        devices, mesh_text = _resolve_target(None, mesh, devices)
        return Module(self._handle.propagate(devices, mesh_text, mapreduce_mode))

    def explain(self, name: str, mesh: Union[None, str, Mesh] = None, *,
                devices: Optional[int] = None, mapreduce_mode: str = "annotated") -> Dict[str, Any]:
        """Where value `name`'s propagated sharding came from (``sharc propagate
        --explain``), as data: ``{"name", "sharding", "steps": [{"value", "how",
        "priority", "from"}, ...], "text", "plan"}``, the steps leading back to an
        annotation; "plan" is how the partitioner then splits it (``sharc
        partition --explain``): the plans considered, the bytes each would
        send per device, and why one won. KeyError if no instruction has that
        name."""
        devices, mesh_text = _resolve_target(None, mesh, devices)
        return self._handle.explain(name.lstrip("%"), devices, mesh_text, mapreduce_mode)

    def partition(self, mesh: Union[None, str, Mesh] = None, *, devices: Optional[int] = None,
                  mapreduce_mode: str = "annotated", propagate: bool = True,
                  stop_after: str = "localize") -> "Module":
        """The per-device program with its collectives (``sharc partition``).
        `stop_after` is "insert-reshards", "reshard-to-collectives" or "localize";
        with propagate=False unannotated values are replicated."""
        devices, mesh_text = _resolve_target(None, mesh, devices)
        return Module(self._handle.partition(devices, mesh_text, mapreduce_mode, propagate,
                                             stop_after))

    def grad(self, wrt: Optional[Sequence[int]] = None) -> "Module":
        """The gradient module of a scalar-valued entry (``sharc grad``): same
        parameters, result the tuple of gradients with respect to `wrt`
        (default: every floating-point parameter)."""
        return Module(self._handle.grad(list(wrt or [])))

    def jvp(self) -> "Module":
        """The forward-mode module (``sharc jvp``): (primals..., tangents...) ->
        (outputs, output tangents)."""
        return Module(self._handle.jvp())

    def transpose(self, num_linear: Optional[int] = None) -> "Module":
        """The transpose of a linear function (``sharc transpose``); the first
        `num_linear` parameters are linear (default: every floating-point one)."""
        return Module(self._handle.transpose(-1 if num_linear is None else int(num_linear)))

    def compile(self, target: Target = None, **options: Any) -> "Executable":
        """Same as sharc.compile(self, target, ...)."""
        return compile(self, target, **options)


@dataclasses.dataclass(frozen=True)
class Timing:
    """Wall times of repeated runs of a compiled program, in seconds: the
    executable alone (inputs split once; no compilation counted)."""

    seconds: Tuple[float, ...]

    @property
    def median(self) -> float:
        return statistics.median(self.seconds)

    @property
    def min(self) -> float:
        return min(self.seconds)

    @property
    def mean(self) -> float:
        return statistics.fmean(self.seconds)


def _random_inputs(parameters: List[Value], seed: int) -> List[np.ndarray]:
    rng = np.random.default_rng(seed)
    arrays = []
    for p in parameters:
        if p.shape is None:
            raise TypeError(f"parameter %{p.name} is a tuple ({p.type}); pass inputs explicitly")
        if p.dtype == "pred":
            arrays.append(rng.integers(0, 2, p.shape).astype(np.bool_))
        elif p.dtype in ("f16", "f32", "f64"):
            arrays.append(rng.uniform(-1, 1, p.shape).astype({"f16": np.float16, "f32": np.float32,
                                                               "f64": np.float64}[p.dtype]))
        elif p.dtype == "bf16":
            bits = rng.uniform(-1, 1, p.shape).astype(np.float32).view(np.uint32) >> 16
            arrays.append(bits.astype(np.uint16))
        else:
            arrays.append(rng.integers(0, 8, p.shape).astype(np.dtype(p.dtype.replace("s", "int")
                                                                      .replace("u", "uint"))))
    return arrays


class Executable:
    """A module compiled once for a mesh of CPU devices (threads of this
    process); call it on global NumPy arrays, as many times as you like.

    Inputs are split by the entry parameters' shardings and outputs assembled
    into global arrays, like ``sharc run``. bf16 values travel as uint16 bit
    patterns (NumPy has no bfloat16); an ml_dtypes bfloat16 array is taken
    too."""

    def __init__(self, handle: "_sharc._Executable"):
        self._handle = handle
        self._last_args: Optional[Tuple[Any, ...]] = None

    def __call__(self, *args: Any) -> Any:
        """Runs on global arrays, one per entry parameter; returns an array, or a
        tuple of them for a tuple result. The GIL is released while it runs."""
        out = self._handle(*args)
        self._last_args = args
        return out

    def __repr__(self) -> str:
        backend = "halide" if self.uses_halide else "interpreter"
        return f"<sharc.Executable on {self.num_devices} device(s), {backend} kernels>"

    @property
    def num_devices(self) -> int:
        return self._handle.num_devices

    @property
    def uses_halide(self) -> bool:
        """True if Halide kernels run the program, False for the interpreter's."""
        return self._handle.uses_halide

    @property
    def notes(self) -> str:
        """What compiling had to tell (e.g. why the interpreter runs); "" if nothing."""
        return self._handle.notes

    @property
    def pass_timings(self) -> str:
        """Compiled with ``pass_timings=True``: each compiler pass's wall time as
        ``--pass-timings`` prints it ("Total runtime (ms) of HLO passes: T",
        "Pass name, num runs, time (ms)", one line per pass, longest first);
        "" otherwise."""
        return self._handle.pass_timings

    @property
    def parameters(self) -> List[Value]:
        return [Value._from(d, i) for i, d in enumerate(self._handle.parameters())]

    def text(self, stage: str = "per_device") -> str:
        """The program as HLO text: "prepared" (global, MapReduce blocks and
        shard_maps lowered), "propagated" (every value sharded) or "per_device"."""
        return self._handle.text(stage)

    def report(self) -> Dict[str, Any]:
        """The per-device cost report, the schema of ``sharc report --json``:
        flops, "bytes accessed", peak_memory_in_bytes, communication_bytes,
        collectives by kind, largest_buffers, ... and "schema_version"."""
        return json.loads(self._handle.report())

    def profile(self, iterations: int = 5, args: Optional[Sequence[Any]] = None, *,
                trace: Optional[str] = None, seed: int = 0) -> Dict[str, Any]:
        """Where the time goes (``sharc run --profile``): runs `iterations` times
        with every kernel and collective timed. Returns the profile as a dict
        (``sharc run --profile-json``'s schema: "entries", longest first, each
        with "name", "kind", "instructions", "calls", "seconds", "flops",
        "bytes", "fraction_of_limit" and "limit"; "limits" holds the machine's
        measured FMA peak and memory bandwidth) plus "text", the table. With
        `trace`, also writes the last run as a Chrome trace to that path.
        Inputs as for time()."""
        if args is None:
            args = self._last_args
        if args is None:
            args = _random_inputs(self.parameters, seed)
        data, text, chrome = self._handle.profile(list(args), int(iterations))
        result = json.loads(data)
        result["text"] = text
        if trace is not None:
            with open(trace, "w") as f:
                f.write(chrome)
        return result

    def stats(self) -> List[Dict[str, int]]:
        """Per device, what the runtime counted in the last call: kernel_launches,
        collectives, peak_live_bytes. Empty before the first call (and for
        programs the interpreter runs)."""
        return self._handle.last_run_stats()

    def time(self, iterations: int = 10, args: Optional[Sequence[Any]] = None, *,
             seed: int = 0) -> Timing:
        """Runs `iterations` times and returns the wall times. Inputs: `args`, else
        those of the last call, else random ones (seeded like ``--random-inputs``)."""
        if args is None:
            args = self._last_args
        if args is None:
            args = _random_inputs(self.parameters, seed)
        return Timing(tuple(self._handle.time(list(args), int(iterations))))


def parse(text: str, filename: str = "<string>") -> Module:
    """Parses and verifies HLO text (XLA's syntax). ParseError names
    FILENAME:LINE:COL with the line and a caret; VerifyError the instruction."""
    return Module(_sharc.parse(text, filename))


def load(path: str) -> Module:
    """Reads, parses and verifies an HLO text file (FileNotFoundError if missing)."""
    return Module(_sharc.load(str(path)))


def compile(module: Module, target: Target = None, *, mesh: Union[None, str, Mesh] = None,
            devices: Optional[int] = None, backend: str = "default",
            mapreduce_mode: str = "annotated", collective_timeout: float = 60.0,
            pass_timings: bool = False) -> Executable:
    """Compiles `module` for a mesh of CPU devices: MapReduce and shard_map
    lowering, sharding propagation, SPMD partitioning, Halide kernels.

    `target` is a device count or a sharc.Mesh (or pass `mesh=` / `devices=`);
    without one the module's num_partitions counts. `backend` is "halide"
    (an error naming the op Halide cannot run), "interpreter", or "default"
    (Halide, else the interpreter with a note). The GIL is released while
    compiling, and Ctrl-C interrupts it. With `pass_timings`, every
    compiler pass is timed (``--pass-timings``): see Executable.pass_timings.
    Raises PartitionError if the program does not fit the mesh."""
    if not isinstance(module, Module):
        raise TypeError(f"compile takes a sharc.Module, not {type(module).__name__}")
    devices, mesh_text = _resolve_target(target, mesh, devices)
    return Executable(_sharc.compile(module._handle, devices, mesh_text, backend, mapreduce_mode,
                                     float(collective_timeout), bool(pass_timings)))


def compare(module: Module, target: Target = None, *, mesh: Union[None, str, Mesh] = None,
            devices: Optional[int] = None) -> List[Dict[str, Any]]:
    """``sharc compare`` as data: one dict per variant, the first the baseline.

    A module with MapReduce blocks gives "annotated", "ns" and "loop" (its
    three lowerings); any other "annotated" and "unannotated" (only the entry
    parameters and the root keep their shardings). Each dict is the variant's
    per-device cost report (the schema of Executable.report()) with a
    "variant" key first -- ready for ``pandas.DataFrame(rows)``."""
    devices, mesh_text = _resolve_target(target, mesh, devices)
    rows = []
    for label, report in module._handle.compare(devices, mesh_text):
        row: Dict[str, Any] = {"variant": label}
        row.update(json.loads(report))
        rows.append(row)
    return rows


def propagate(module: Module, mesh: Union[None, str, Mesh] = None, **options: Any) -> Module:
    """Same as module.propagate(...)."""
    return module.propagate(mesh, **options)


def partition(module: Module, mesh: Union[None, str, Mesh] = None, **options: Any) -> Module:
    """Same as module.partition(...)."""
    return module.partition(mesh, **options)


def explain(module: Module, name: str, mesh: Union[None, str, Mesh] = None,
            **options: Any) -> Dict[str, Any]:
    """Same as module.explain(name, ...)."""
    return module.explain(name, mesh, **options)


def grad(module: Module, wrt: Optional[Sequence[int]] = None) -> Module:
    """Same as module.grad(wrt)."""
    return module.grad(wrt)


def jvp(module: Module) -> Module:
    """Same as module.jvp()."""
    return module.jvp()


def transpose(module: Module, num_linear: Optional[int] = None) -> Module:
    """Same as module.transpose(num_linear)."""
    return module.transpose(num_linear)
