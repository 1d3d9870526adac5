"""The compiled host path: build the C++ operators (``csrc/rmsnorm.cpp``) once, load them, and
hand them the plans and compiled kernels they ask for; or say why not and use the Python path.

When: at the first import, with ``torch.utils.cpp_extension.load``, cached under torch's
extension folder (``TORCH_EXTENSIONS_DIR``, by default ``~/.cache/torch_extensions``) in a
folder named by a hash of the source, the torch version and install folder and the Python
version, which holds a copy of the source: a reinstall of the package (as asv makes for every
commit it measures) gives the source a new time stamp but not a new copy, so ninja does not
rebuild. Once a build has loaded, a stamp beside it names the library's size and time and the
compiler flags; a later process whose folder holds that same library imports it directly
(``_load_built``), without torch's builder (importing it, checking the compiler and ninja:
0.15-0.25 s a process on a 2-core CPU machine, each of asv's benchmark processes paying it). Not at
install: the package declares no torch dependency (installing it must never replace a
machine's torch), so it is built against whichever torch it runs with, and a torch upgrade
gets a build of its own instead of a stale binary. What it needs is what Triton needs at run
time: a C++ compiler (and ninja, which torch's builder drives). It links no CUDA library:
libcuda is opened at run time.

``RMSNORM_KERNELS_HOST`` chooses: ``cpp`` (fail if it cannot be built), ``python`` (never
build), unset (the compiled path where it can be had, else the Python path with one warning
naming the reason). ROCm takes the Python path until the compiled one is tested there.
"""

import hashlib
import importlib.util
import json
import os
import re
import shutil
import sys
import warnings
from pathlib import Path

import torch

from . import _config, _plan

HOST_VARIABLE = "RMSNORM_KERNELS_HOST"
SOURCE = Path(__file__).parent / "csrc" / "rmsnorm.cpp"


def load(interpreting: bool):
    """The loaded extension module, or None for the Python path (with a warning where the
    compiled path was wanted but cannot be had)."""
    choice = os.environ.get(HOST_VARIABLE, "").strip().lower()
    if choice not in ("", "cpp", "python"):
        raise ValueError(f"{HOST_VARIABLE}={choice!r}: expected 'cpp', 'python' or unset")
    if choice == "python":
        return None
    try:
        reason = _unsupported()
        if reason:
            raise RuntimeError(reason)
        module = _build()
    except Exception as error:  # a failed build must never make the package unusable
        if choice == "cpp":
            raise
        warnings.warn(
            f"rmsnorm_kernels: using the Python host path ({error}); "
            f"set {HOST_VARIABLE}=python to choose it without this warning",
            RuntimeWarning,
            stacklevel=3,
        )
        return None
    _configure(module, interpreting)
    return module


def _unsupported() -> str | None:
    if torch.version.hip:
        return "ROCm: the compiled host path is not tested there yet"
    compiler = os.environ.get("CXX", "c++")
    if not shutil.which(compiler):
        return f"no C++ compiler ({compiler}) on PATH"
    if not shutil.which("ninja"):
        try:
            import ninja  # noqa: F401  (the pip package puts the program on PATH when imported)
        except ImportError:
            return "ninja, which torch's extension builder needs, is not installed"
    return None


CFLAGS = ["-O2"]
STAMP = "loaded.json"  # beside the library: what was loaded (see _load_built)


def _build_root() -> Path:
    """torch's folder for extension builds: TORCH_EXTENSIONS_DIR, else torch_extensions under
    XDG_CACHE_HOME or ~/.cache (torch.utils.cpp_extension.get_default_build_root on Linux,
    named here so that the fast path need not import torch's builder)."""
    if os.environ.get("TORCH_EXTENSIONS_DIR"):
        return Path(os.environ["TORCH_EXTENSIONS_DIR"])
    cache = os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache")
    return Path(os.path.realpath(cache)) / "torch_extensions"


def _build():
    source = SOURCE.read_bytes()
    # torch's folder too: the build records its include paths, and two environments of one
    # torch version sharing a folder would each find the other's build stale and rebuild it
    versions = f"{torch.__version__} {Path(torch.__file__).parent} {sys.version}".encode()
    name = f"rmsnorm_kernels_host_{hashlib.sha256(source + versions).hexdigest()[:16]}"
    build = _build_root() / name
    module = _load_built(name, build)
    if module is not None:
        return module
    from torch.utils.cpp_extension import load as load_extension

    build.mkdir(parents=True, exist_ok=True)
    copy = build / SOURCE.name
    if not copy.is_file() or copy.read_bytes() != source:
        tmp = build / f".{SOURCE.name}.{os.getpid()}"
        tmp.write_bytes(source)
        tmp.replace(copy)  # whole, for a build running beside this one
    module = load_extension(
        name=name,
        sources=[str(copy)],
        build_directory=str(build),
        extra_cflags=CFLAGS,
        verbose=os.environ.get("RMSNORM_KERNELS_BUILD_VERBOSE") == "1",
    )
    _stamp(build / STAMP, Path(module.__file__))
    return module


def _stamp(path: Path, library: Path) -> None:
    """Name the library just loaded (size, time, flags), written whole."""
    stat = library.stat()
    facts = {"library": library.name, "size": stat.st_size, "mtime_ns": stat.st_mtime_ns}
    tmp = path.with_name(f".{path.name}.{os.getpid()}")
    tmp.write_text(json.dumps(dict(facts, cflags=CFLAGS)))
    tmp.replace(path)


def _load_built(name: str, build: Path):
    """The library in `build`, imported as a Python module, where the stamp names it as it is
    (same size and time, same flags) and no build is running there (torch's builder holds a
    lock file while it builds); else None, and torch's builder decides."""
    library = build / f"{name}.so"
    try:
        facts = json.loads((build / STAMP).read_text())
        stat = library.stat()
    except (OSError, ValueError):
        return None
    same = (facts.get("library"), facts.get("size"), facts.get("mtime_ns"), facts.get("cflags"))
    if same != (library.name, stat.st_size, stat.st_mtime_ns, CFLAGS) or (build / "lock").exists():
        return None
    spec = importlib.util.spec_from_file_location(name, library)
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
    except ImportError:
        return None
    return module


_interpreting = False


def _configure(module, interpreting: bool) -> None:
    global _interpreting
    _interpreting = interpreting
    constants = dict(
        max_single_block_n=_config.MAX_SINGLE_BLOCK_N,
        stream_min_n=_config.STREAM_MIN_N,
        dot_block_n=_config.DOT_BLOCK_N,
        dot_segments=_config.DOT_SEGMENTS,
        interpreting=interpreting,
    )
    # looked up per call, so that tests can watch them
    module.configure(
        constants,
        lambda *args: _forward_plan(*args),
        lambda *args: _backward_plan(*args),
        lambda *args: compiled_variant(*args),
        lambda *args: _launch(*args),
    )


# --------------------------------------------------------------------------------------------
# Callbacks from C++, each once per cache key or variant (the Python launch: per call, on
# CPU tensors under Triton's interpreter only).
# --------------------------------------------------------------------------------------------


def _forward_plan(x, weight, has_residual: bool) -> tuple:
    return _plan.of_call(_plan.forward_plan, x, weight, has_residual).native()


def _backward_plan(x, weight, compute_dw: bool, has_dres: bool) -> tuple:
    return _plan.of_call(_plan.backward_plan, x, weight, compute_dw, has_dres).native()


def _launch(launch_id: int, grid, args, align: int, flags: int) -> None:
    _plan.LAUNCHES[launch_id](grid, args, align, flags)


_PARAM = re.compile(r"\.param\s+\.(\w+)")


def compiled_variant(launch_id: int, grid, args, align: int, flags: int):
    """Compile the variant these arguments select (Triton's warmup: no launch) and return
    what C++ needs to launch it: (cubin, kernel name, threads per program, dynamic shared
    bytes, the kind of each parameter passed, trailing scratch parameters); or None where
    only Triton's own launcher can launch it (C++ then asks Python to launch each time)."""
    launch = _plan.LAUNCHES[launch_id]
    compiled = launch.kernel.warmup(*args, grid=grid, **launch.options(align, flags))
    metadata = compiled.metadata
    if "cubin" not in compiled.asm or getattr(metadata, "num_ctas", 1) != 1:
        return None
    if tuple(getattr(metadata, "cluster_dims", (1, 1, 1))) not in ((1, 1, 1), (1,), ()):
        return None
    if getattr(metadata, "global_scratch_size", 0) or getattr(metadata, "profile_scratch_size", 0):
        return None  # Triton would allocate scratch memory per launch
    kinds = parameter_kinds(compiled.asm["ptx"], args)
    if kinds is None:
        return None
    passed, extra = kinds
    return (compiled.asm["cubin"], metadata.name, 32 * metadata.num_warps, metadata.shared,
            passed, extra)  # fmt: skip


def parameter_kinds(ptx: str, args) -> tuple[str, int] | None:
    """Match the kernel's PTX parameters with the arguments: one letter per argument passed
    (p pointer, i 32-bit integer, l 64-bit integer, f float; None arguments are constexprs,
    not parameters), and how many pointer parameters Triton appended (scratch, passed as
    null). None where they do not match as expected."""
    entry = ptx[ptx.index(".entry") :]
    params = _PARAM.findall(entry[: entry.index(")")])
    passed = [a for a in args if a is not None]
    if len(params) < len(passed):
        return None
    kinds = []
    for arg, param in zip(passed, params[: len(passed)], strict=True):
        if isinstance(arg, torch.Tensor):
            kind = "p" if param in ("u64", "b64") else None
        elif isinstance(arg, bool) or not isinstance(arg, (int, float)):
            kind = None
        elif isinstance(arg, int):
            kind = {"u32": "i", "s32": "i", "b32": "i", "u64": "l", "s64": "l", "b64": "l"}.get(
                param
            )
        else:
            kind = "f" if param in ("f32", "b32") else None
        if kind is None:
            return None
        kinds.append(kind)
    extra = params[len(passed) :]
    if any(p not in ("u64", "b64") for p in extra):
        return None
    return "".join(kinds), len(extra)


def clear_caches(module) -> None:
    """Forget every plan and compiled variant, in Python and C++, and hand C++ the current
    values of _config's constants (a sweep changes them)."""
    _plan.clear_caches()
    if module is not None:
        module.clear_caches()
        _configure(module, _interpreting)
