"""The peer adapters of the instrument (rmsnorm_bench.instrument), on the CPU.

quack and FlyDSL need GPUs (CUDA's CuTe DSL, ROCm), so their adapters are run here against
stand-in packages written to a temporary folder: the same module paths and signatures as the
real ones (quack-kernels 0.6.5's quack/rmsnorm.py; FlyDSL's kernels/norm/rmsnorm_kernel.py),
computing in torch. Each stand-in records how it was called, so the tests check argument
order, keywords and eps, and the suite's own validation checks what the adapter returns.
Where the real package is importable (a GPU machine with it installed), its signatures are
compared with the stand-in's, and Liger-Kernel's fused-add op is validated for real.
"""

import inspect
import os
import sys
import textwrap

import pytest
import torch

from rmsnorm_bench import instrument

from .conftest import GPU

SHAPES = [instrument.Shape(16, 1000, "f32"), instrument.Shape(3, 256, "bf16")]

QUACK_RMSNORM = '''
"""Stand-in for quack-kernels 0.6.5's quack/rmsnorm.py: rmsnorm's signature and results."""
import torch

CALLS = []


def rmsnorm(x, weight=None, bias=None, residual=None, out_dtype=None, residual_dtype=None,
            eps=1e-6, prenorm=False, weight_offset=0.0):
    CALLS.append(dict(x=x, weight=weight, bias=bias, residual=residual, out_dtype=out_dtype,
                      residual_dtype=residual_dtype, eps=eps, prenorm=prenorm,
                      weight_offset=weight_offset))
    s = x.float() if residual is None else x.float() + residual.float()
    out = s * torch.rsqrt(s.square().mean(-1, keepdim=True) + eps) * (weight.float() + weight_offset)
    out = out.to(out_dtype or x.dtype)
    if residual is None or not prenorm:
        return out
    return out, s.to(residual_dtype or residual.dtype)
'''

FLYDSL_RMSNORM_KERNEL = '''
"""Stand-in for FlyDSL's kernels/norm/rmsnorm_kernel.py: the public entry points."""
import torch

EPS = 1e-5
CALLS = []


def _norm(s, weight, eps):
    return s * torch.rsqrt(s.square().mean(-1, keepdim=True) + eps) * weight.float()


def rmsnorm(x, weight=None, eps=EPS):
    CALLS.append(("rmsnorm", x, weight, eps))
    assert weight is not None, "PR 1 rmsnorm requires an explicit weight"
    return _norm(x.float(), weight, eps).to(x.dtype)


def fused_add_rmsnorm(x, residual, weight, eps=EPS, prenorm=True):
    CALLS.append(("fused_add_rmsnorm", x, residual, weight, eps, prenorm))
    added = x + residual
    out = _norm(added.float(), weight, eps).to(x.dtype)
    return (out, added) if prenorm else out
'''


def write_package(root, files):
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    return root


@pytest.fixture
def isolated_imports(monkeypatch):
    """sys.path and the modules of the peers' package names are restored after the test."""
    monkeypatch.setattr(sys, "path", list(sys.path))
    names = ("quack", "kernels", "liger_kernel")
    for name in [m for m in sys.modules if m.split(".")[0] in names]:
        monkeypatch.delitem(sys.modules, name)
    yield
    for name in [m for m in sys.modules if m.split(".")[0] in names]:
        del sys.modules[name]


@pytest.fixture
def quack_standin(tmp_path, isolated_imports, monkeypatch):
    files = {
        "quack/__init__.py": '__version__ = "0.6.5"\nfrom quack.rmsnorm import rmsnorm\n',
        "quack/rmsnorm.py": QUACK_RMSNORM,
    }
    monkeypatch.syspath_prepend(str(write_package(tmp_path / "site", files)))
    import quack.rmsnorm  # noqa: F401

    # the module: `quack.rmsnorm` is the function, which quack/__init__.py imports over it
    return sys.modules["quack.rmsnorm"]


@pytest.fixture
def flydsl_root(tmp_path, isolated_imports, monkeypatch):
    files = {
        "kernels/__init__.py": "",
        "kernels/norm/__init__.py": "",
        "kernels/norm/rmsnorm_kernel.py": FLYDSL_RMSNORM_KERNEL,
    }
    root = write_package(tmp_path / "FlyDSL", files)
    monkeypatch.setenv("FLYDSL_ROOT", str(root))
    return root


def validated(fn, op):
    for shape in SHAPES:
        instrument.validate(fn, instrument.make_problem(op, shape))


@pytest.mark.parametrize("op", instrument.OPS)
def test_quack_adapter_calls_rmsnorm_as_its_api_says(quack_standin, op):
    fn = instrument.backends.quack.make(op)
    validated(fn, op)  # outputs and gradients against the fp32 reference
    p = instrument.make_problem(op, SHAPES[0])
    quack_standin.CALLS.clear()
    instrument.run_forward(fn, p)
    (call,) = quack_standin.CALLS
    assert call["x"] is p.x and call["weight"] is p.weight and call["eps"] == instrument.EPS
    assert call["bias"] is None and call["weight_offset"] == 0.0
    assert call["out_dtype"] is None and call["residual_dtype"] is None  # x's dtype
    if op == "fused_add":  # the pre-norm form: (out, x + residual) back
        assert call["residual"] is p.residual and call["prenorm"] is True
    else:
        assert call["residual"] is None and call["prenorm"] is False


def test_quack_without_residual_support_skips_fused_add(tmp_path, isolated_imports, monkeypatch):
    files = {
        "quack/__init__.py": "",
        "quack/rmsnorm.py": "def rmsnorm(x, weight=None, bias=None, eps=1e-6):\n    pass\n",
    }
    monkeypatch.syspath_prepend(str(write_package(tmp_path / "old", files)))
    assert callable(instrument.backends.quack.make("rms_norm"))
    with pytest.raises(instrument.Unavailable, match="no residual"):
        instrument.backends.quack.make("fused_add")


def test_quack_absent_is_skipped_with_the_reason(tmp_path, isolated_imports, monkeypatch):
    # a quack whose import fails as it does without cutlass (nvidia-cutlass-dsl), also on a
    # machine that has cutlass
    missing = "raise ModuleNotFoundError(\"No module named 'cutlass'\", name='cutlass')\n"
    files = {"quack/__init__.py": missing}
    monkeypatch.syspath_prepend(str(write_package(tmp_path / "broken", files)))
    with pytest.raises(instrument.Unavailable, match="quack .* not installed.*cutlass"):
        instrument.backends.quack.make("rms_norm")


@pytest.mark.parametrize("op", instrument.OPS)
def test_flydsl_adapter_calls_its_public_entry_points(flydsl_root, op):
    fn = instrument.backends.flydsl.make(op)
    validated(fn, op)
    fly = sys.modules["kernels.norm.rmsnorm_kernel"]
    assert fly.__file__.startswith(str(flydsl_root))
    p = instrument.make_problem(op, SHAPES[0])
    fly.CALLS.clear()
    instrument.run_forward(fn, p)
    (call,) = fly.CALLS
    if op == "rms_norm":
        assert call == ("rmsnorm", p.x, p.weight, instrument.EPS)
    else:  # eps and prenorm passed, not FlyDSL's defaults (eps 1e-5)
        assert call == ("fused_add_rmsnorm", p.x, p.residual, p.weight, instrument.EPS, True)


def test_flydsl_absent_is_skipped_with_the_reason(tmp_path, isolated_imports, monkeypatch):
    monkeypatch.delenv("FLYDSL_ROOT", raising=False)
    with pytest.raises(instrument.Unavailable, match="FLYDSL_ROOT"):
        instrument.backends.flydsl.make("rms_norm")
    # a checkout without the module (or without the `flydsl` package it imports)
    empty = write_package(tmp_path / "empty", {"kernels/__init__.py": ""})
    monkeypatch.setenv("FLYDSL_ROOT", str(empty))
    with pytest.raises(instrument.Unavailable, match="could not be imported.*kernels.norm"):
        instrument.backends.flydsl.make("fused_add")


def test_flydsl_shadowed_by_another_kernels_package(flydsl_root, tmp_path, monkeypatch):
    other = write_package(tmp_path / "hf", {"kernels/__init__.py": ""})
    monkeypatch.syspath_prepend(str(other))
    import kernels  # noqa: F401  # imported first, as by another library

    with pytest.raises(instrument.Unavailable, match="not from FLYDSL_ROOT"):
        instrument.backends.flydsl.make("rms_norm")


def test_gpu_only_peers_are_skipped_with_reasons_on_the_cpu(flydsl_root, smoke_mode, monkeypatch):
    # the CPU smoke mode (made so by hand on a GPU machine): refused before any import
    monkeypatch.delenv(instrument.BACKENDS_VAR, raising=False)
    for name in ("torch_compile", "liger", "quack", "flydsl"):
        with pytest.raises(instrument.Unavailable, match="GPUs only"):
            instrument.make_backend(name, "fused_add")
    assert not [m for m in sys.modules if m.split(".")[0] in ("quack", "liger_kernel", "kernels")]
    # on a CUDA machine FlyDSL is skipped before anything is imported
    monkeypatch.setattr(instrument.matrix, "DEVICE", "cuda")
    monkeypatch.setattr(torch.version, "hip", None)
    with pytest.raises(instrument.Unavailable, match="ROCm"):
        instrument.make_backend("flydsl", "rms_norm")
    assert "kernels" not in sys.modules


LIGER_FUSED_ADD = '''
"""Stand-in for liger_kernel/ops/fused_add_rms_norm.py (Liger-Kernel 0.8.5)."""
import torch

CALLS = []


class LigerFusedAddRMSNormFunction:
    @staticmethod
    def apply(X, R, W, eps, offset=0.0, casting_mode="llama", in_place=False):
        CALLS.append((X, R, W, eps, offset, casting_mode, in_place))
        S = X + R
        Sf = S.float()
        Y = (Sf * torch.rsqrt(Sf.square().mean(-1, keepdim=True) + eps)).to(S.dtype) * (offset + W)
        return Y.to(S.dtype), S
'''


def test_liger_fused_add_adapter_matches_its_function(tmp_path, isolated_imports, monkeypatch):
    files = {
        "liger_kernel/__init__.py": "",
        "liger_kernel/ops/__init__.py": "",
        "liger_kernel/ops/fused_add_rms_norm.py": LIGER_FUSED_ADD,
    }
    monkeypatch.syspath_prepend(str(write_package(tmp_path / "site", files)))
    fn = instrument.backends.liger.make("fused_add")
    validated(fn, "fused_add")  # the llama casting mode computes our function
    from liger_kernel.ops import fused_add_rms_norm as liger

    p = instrument.make_problem("fused_add", SHAPES[0])
    liger.CALLS.clear()
    instrument.run_forward(fn, p)
    # LigerFusedAddRMSNorm's defaults: offset 0, "llama", in_place False
    assert liger.CALLS == [(p.x, p.residual, p.weight, instrument.EPS, 0.0, "llama", False)]


def liger_beside_peft(tmp_path, monkeypatch, utils: str):
    """The Liger adapter's fused-add op, made from a stand-in Liger whose utils are `utils`,
    with a stand-in peft importable beside it (not imported yet)."""
    files = {
        "liger_kernel/__init__.py": "",
        "liger_kernel/utils.py": utils,
        "liger_kernel/ops/__init__.py": "import liger_kernel.utils\n",
        "liger_kernel/ops/fused_add_rms_norm.py": LIGER_FUSED_ADD,
        "peft/__init__.py": "",
    }
    monkeypatch.syspath_prepend(str(write_package(tmp_path / "site", files)))
    monkeypatch.delitem(sys.modules, "peft", raising=False)
    return instrument.backends.liger.make("fused_add")


def test_liger_is_imported_without_its_peft_probe(tmp_path, isolated_imports, monkeypatch):
    """Liger's utils import peft if they can (its LoRA support); the adapter hides it for
    that import only: peft is still importable afterwards, and Liger's function is the same."""
    utils = "try:\n    import peft\n    PEFT = True\nexcept ImportError:\n    PEFT = False\n"
    fn = liger_beside_peft(tmp_path, monkeypatch, utils)
    import liger_kernel.utils

    assert liger_kernel.utils.PEFT is False and "peft" not in sys.modules
    import peft

    assert peft.__file__.startswith(str(tmp_path))
    monkeypatch.delitem(sys.modules, "peft")
    validated(fn, "fused_add")


def test_a_liger_that_needs_peft_is_imported_with_it(tmp_path, isolated_imports, monkeypatch):
    fn = liger_beside_peft(tmp_path, monkeypatch, "import peft\n")  # no probe: peft required
    assert sys.modules["peft"].__file__.startswith(str(tmp_path))
    monkeypatch.delitem(sys.modules, "peft")
    validated(fn, "fused_add")


# --- the real packages, where they are installed ---------------------------------------------


def parameters(fn):
    """Names, kinds and defaults of fn's parameters (annotations aside)."""
    return [(p.name, p.kind, p.default) for p in inspect.signature(fn).parameters.values()]


def standin_parameters(text, name):
    namespace = {}
    exec(textwrap.dedent(text), namespace)
    return parameters(namespace[name])


def test_quack_standin_has_the_real_signature():
    try:
        from quack.rmsnorm import rmsnorm
    except (ImportError, OSError, RuntimeError) as e:
        pytest.skip(f"quack is not installed here ({e})")
    assert parameters(rmsnorm) == standin_parameters(QUACK_RMSNORM, "rmsnorm")


def test_flydsl_standin_has_the_real_signatures(monkeypatch):
    if not os.environ.get("FLYDSL_ROOT"):
        pytest.skip("FLYDSL_ROOT names no FlyDSL checkout here")
    monkeypatch.setattr(sys, "path", [os.environ["FLYDSL_ROOT"], *sys.path])
    try:
        from kernels.norm import rmsnorm_kernel as fly
    except ImportError as e:
        pytest.skip(f"FlyDSL does not import here ({e})")
    for name in ("rmsnorm", "fused_add_rmsnorm"):
        # the same names, order and defaults (EPS: the module's 1e-5 in both)
        assert parameters(getattr(fly, name)) == standin_parameters(FLYDSL_RMSNORM_KERNEL, name)


def test_liger_fused_add_passes_validation_for_real(monkeypatch):
    """Liger-Kernel's own kernels through the suite's validation: on a GPU where it is
    installed, or on the CPU with liger_kernel importable (f32 and f16 only: Triton's
    interpreter does not emulate Liger's bf16 arithmetic; two interpreter gaps are patched)."""
    pytest.importorskip("liger_kernel.ops.fused_add_rms_norm")
    from liger_kernel.ops import fused_add_rms_norm as liger

    shapes = [*SHAPES, instrument.Shape(4, 4096, "bf16")]
    if not GPU:  # Triton's interpreter
        import triton.language as tl
        from triton.runtime import interpreter

        # the interpreter passes float arguments as Python floats (Liger calls eps.to(...))
        # and has no libdevice: give it fp32 scalars and tl.math.rsqrt
        cvt = interpreter._implicit_cvt

        def float_as_fp32(arg):
            if isinstance(arg, float):
                handle = interpreter.TensorHandle(torch.tensor([arg]).numpy(), tl.float32)
                return tl.tensor(handle, tl.float32)
            return cvt(arg)

        monkeypatch.setattr(interpreter, "_implicit_cvt", float_as_fp32)
        monkeypatch.setattr(liger, "rsqrt", lambda v: tl.math.rsqrt(v), raising=False)
        shapes = [instrument.Shape(16, 1000, "f32"), instrument.Shape(4, 512, "f16")]
    fn = instrument.backends.liger.make("fused_add")
    for shape in shapes:
        instrument.validate(fn, instrument.make_problem("fused_add", shape))
