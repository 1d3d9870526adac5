"""Drop-in use: custom ops under torch.compile, CUDA graphs, replace_rmsnorm on real models."""

import copy
import inspect
import textwrap
import warnings

import pytest
import torch

import rmsnorm_kernels as rk
from rmsnorm_kernels import replace
from rmsnorm_kernels.reference import tolerance

from .conftest import DEVICE

OPS = torch.ops.rmsnorm_kernels


def _inputs(m=6, n=96, dtype=torch.float32):
    g = torch.Generator().manual_seed(3)
    make = lambda *s: torch.randn(*s, generator=g).to(dtype).to(DEVICE).requires_grad_()  # noqa: E731
    return make(m, n), make(m, n), make(n)


@pytest.mark.parametrize(
    "name", ["rms_norm", "rms_norm_noweight", "fused_add_rms_norm", "fused_add_noweight"]
)
def test_custom_ops_pass_opcheck(name):
    x, r, w = _inputs()
    w = None if name.endswith("noweight") else w
    if name.startswith("rms_norm"):
        op, args = OPS.rms_norm_fwd, (x, w, 1e-6)
    else:
        op, args = OPS.fused_add_rms_norm_fwd, (x, r, w, 1e-6)
    result = torch.library.opcheck(op, args)
    assert set(result.values()) == {"SUCCESS"}, result


def test_backward_op_passes_opcheck():
    x, _, w = _inputs()
    dy = torch.randn_like(x)
    _, rstd = OPS.rms_norm_fwd(x.detach(), w.detach(), 1e-6)
    for dres, compute_dw, dx_copy in ((None, True, False), (torch.randn_like(x), False, True)):
        args = (dy, x.detach(), w.detach(), rstd, dres, compute_dw, dx_copy)
        result = torch.library.opcheck(OPS.rms_norm_bwd, args)
        assert set(result.values()) == {"SUCCESS"}, result


def _model_fn(x, r, w):
    y = rk.rms_norm(x.view(2, -1, x.shape[-1]), w)
    out, s = rk.fused_add_rms_norm(y, r.view(2, -1, r.shape[-1]), w)
    return (out.float() ** 2).sum() + s.float().sum()


def test_compile_fullgraph_matches_eager():
    x, r, w = _inputs()
    compiled = torch.compile(_model_fn, fullgraph=True, backend="aot_eager")
    loss = compiled(x, r, w)
    loss.backward()
    got = [loss.detach()] + [t.grad.clone() for t in (x, r, w)]
    for t in (x, r, w):
        t.grad = None
    loss = _model_fn(x, r, w)
    loss.backward()
    expected = [loss.detach()] + [t.grad for t in (x, r, w)]
    for name, a, b in zip(["loss", "dx", "dresidual", "dweight"], got, expected, strict=True):
        torch.testing.assert_close(a, b, **tolerance(torch.float32), msg=name)


@pytest.mark.gpu("CUDA graphs")
def test_cuda_graph_capture_and_replay():
    x, r, w = _inputs(64, 4096, torch.bfloat16)
    static = [t.detach().clone().requires_grad_() for t in (x, r, w)]

    def step():
        for t in static:
            t.grad = None
        _model_fn(*static).backward()

    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        for _ in range(2):
            step()
    torch.cuda.current_stream().wait_stream(stream)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        step()
    with torch.no_grad():  # new inputs, same buffers
        for t, new in zip(static, _inputs(64, 4096, torch.bfloat16), strict=True):
            t.copy_(new.detach() * 0.5)
    graph.replay()
    got = [t.grad.clone() for t in static]
    eager = [t.detach().clone().requires_grad_() for t in static]
    _model_fn(*eager).backward()
    for a, t in zip(got, eager, strict=True):
        torch.testing.assert_close(a.float(), t.grad.float(), **tolerance(torch.bfloat16))


# ---------------------------------------------------------------------------------------------
# TorchScript: the modules script and trace on both host paths (CI runs this file on each)
# ---------------------------------------------------------------------------------------------

MODULES = {
    "RMSNorm": lambda: rk.RMSNorm(8),
    "RMSNorm of two dims": lambda: rk.RMSNorm([3, 8], eps=1e-5),
    "RMSNorm without weight": lambda: rk.RMSNorm(8, elementwise_affine=False),
    "FusedAddRMSNorm": lambda: rk.FusedAddRMSNorm(8),
}


def _module_and_inputs(name):
    module = MODULES[name]()
    if module.weight is not None:
        with torch.no_grad():
            module.weight.uniform_(0.5, 1.5)
    g = torch.Generator().manual_seed(5)
    x = torch.randn(2, 3, 8, generator=g).to(DEVICE)
    args = (x, torch.randn(2, 3, 8, generator=g).to(DEVICE)) if "Fused" in name else (x,)
    return module.to(DEVICE), args


def _outputs_and_grads(module, args):
    leaves = [a.detach().clone().requires_grad_() for a in args]
    out = module(*leaves)
    out = out if isinstance(out, tuple) else (out,)
    sum((o.float() * (i + 1)).sum() for i, o in enumerate(out)).backward()
    storage = {leaf.grad.untyped_storage().data_ptr() for leaf in leaves}
    assert len(storage) == len(leaves), "two leaves' .grad share one buffer"
    grads = [leaf.grad for leaf in leaves] + [p.grad.clone() for p in module.parameters()]
    for p in module.parameters():
        p.grad = None
    return [o.detach() for o in out], grads


@pytest.mark.parametrize("how", ["script", "trace", "compile"])
@pytest.mark.parametrize("name", list(MODULES))
def test_modules_script_trace_and_compile_like_eager(name, how, tmp_path):
    # inputs of three dimensions, both leaves: a view of one would hide it from the backward,
    # which then gave x and residual one gradient buffer between them
    module, args = _module_and_inputs(name)
    expected = _outputs_and_grads(module, args)
    if how == "compile":
        jitted = torch.compile(module, backend="aot_eager", fullgraph=True)
    else:
        jitted = torch.jit.script(module) if how == "script" else torch.jit.trace(module, args)
    for got, want in zip(_outputs_and_grads(jitted, args), expected, strict=True):
        for a, b in zip(got, want, strict=True):
            torch.testing.assert_close(a, b, **tolerance(torch.float32))
    if how == "compile":
        return
    torch.jit.save(jitted, tmp_path / "module.pt")  # and it loads in a process with the ops
    loaded = torch.jit.load(tmp_path / "module.pt")
    for a, b in zip(_outputs_and_grads(loaded, args)[0], expected[0], strict=True):
        torch.testing.assert_close(a, b, **tolerance(torch.float32))


JIT_ERRORS = (torch.jit.Error, RuntimeError)  # how TorchScript raises what the code raised


def test_scripted_modules_refuse_what_eager_ones_refuse():
    scripted = torch.jit.script(rk.RMSNorm(8).to(DEVICE))
    for bad, problem in (
        (torch.randn(2, 7), r"trailing dims are \[8\], got \[2, 7\]"),
        # float64 x runs (torch's computation, as eager); an integer x is torch's to refuse
        (torch.ones(2, 8, dtype=torch.int64), "Long"),
    ):
        with pytest.raises((*JIT_ERRORS, NotImplementedError), match=problem):
            scripted(bad.to(DEVICE))
    fused = torch.jit.script(rk.FusedAddRMSNorm(8).to(DEVICE))
    with pytest.raises(JIT_ERRORS, match=r"residual has shape \[2, 4\]"):
        fused(torch.randn(2, 8, device=DEVICE), torch.randn(2, 4, device=DEVICE))
    negative = rk.RMSNorm(8, eps=-1.0).to(DEVICE)
    with pytest.raises(JIT_ERRORS, match="eps must be a non-negative number"):
        torch.jit.script(negative)(torch.randn(2, 8, device=DEVICE))


def test_the_operators_check_their_inputs_on_both_host_paths():
    # TorchScript calls them directly: on the Python path they checked nothing, and a weight
    # of the wrong length was read past its end
    x = torch.randn(4, 8, device=DEVICE)
    with pytest.raises(ValueError, match=r"weight has shape \(7,\)"):
        OPS.rms_norm_fwd(x, torch.ones(7, device=DEVICE), 1e-6)
    with pytest.raises(ValueError, match="eps must be a non-negative number"):
        OPS.rms_norm_fwd(x, None, -1.0)
    with pytest.raises(ValueError, match="residual has shape"):
        OPS.fused_add_rms_norm_fwd(x, x[:2], None, 1e-6)
    strided = torch.randn(16, device=DEVICE)[::2]  # a weight read with its stride
    y, _ = OPS.rms_norm_fwd(x, strided, 1e-6)
    torch.testing.assert_close(y, torch.nn.functional.rms_norm(x, (8,), strided, 1e-6))


def test_scripted_default_eps_is_float32s():
    from rmsnorm_kernels import modules, ops

    assert modules._scripted_eps(None) == ops.F32_EPS == torch.finfo(torch.float32).eps


def test_replace_refuses_a_scripted_model_by_name():
    scripted = torch.jit.script(torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.RMSNorm(8)))
    with pytest.raises(TypeError, match="replace its norms first, then script it"):
        rk.replace_rmsnorm(scripted)


def test_a_model_with_replaced_norms_scripts():
    model = torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.RMSNorm(8), CopiedLlamaRMSNorm(8))
    x = torch.randn(3, 8)
    expected = model(x)
    assert rk.replace_rmsnorm(model) == 2
    scripted = torch.jit.script(model.to(DEVICE))
    torch.testing.assert_close(scripted(x.to(DEVICE)).cpu(), expected, **tolerance(torch.float32))


# ---------------------------------------------------------------------------------------------
# replace_rmsnorm
# ---------------------------------------------------------------------------------------------


class GemmaStyleRMSNorm(torch.nn.Module):
    """x * (1 + weight): named *RMSNorm but not the same computation."""

    def __init__(self, n, eps=1e-6):
        super().__init__()
        self.eps = eps
        self.weight = torch.nn.Parameter(torch.zeros(n))

    def forward(self, x):
        return torch.nn.functional.rms_norm(x, x.shape[-1:], eps=self.eps) * (1 + self.weight)


def test_replace_torch_rmsnorm_keeps_parameters():
    model = torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.RMSNorm(8, eps=1e-5))
    weight = model[1].weight
    optimizer = torch.optim.Adam(model.parameters())
    assert rk.replace_rmsnorm(model) == 1
    assert isinstance(model[1], rk.RMSNorm) and model[1].weight is weight
    assert model[1].eps == 1e-5
    assert any(p is weight for p in optimizer.param_groups[0]["params"])
    assert rk.replace_rmsnorm(model) == 0  # nothing left to replace


def test_replace_leaves_float64_norms_alone_and_names_them():
    model = torch.nn.Sequential(torch.nn.RMSNorm(8, dtype=torch.float64), torch.nn.RMSNorm(8))
    with pytest.warns(UserWarning, match=r"0 \(RMSNorm: its weight is torch.float64"):
        assert rk.replace_rmsnorm(model) == 1
    x = torch.randn(2, 8, dtype=torch.float64)
    torch.testing.assert_close(model[0](x), torch.nn.functional.rms_norm(x, (8,), model[0].weight))


def test_replace_leaves_different_semantics_alone_and_reports():
    model = torch.nn.Sequential(torch.nn.RMSNorm(8), GemmaStyleRMSNorm(8))
    with pytest.warns(UserWarning, match=r"left 1 module\(s\) alone.*1 \(GemmaStyleRMSNorm: "):
        assert rk.replace_rmsnorm(model) == 1
    assert type(model[1]) is GemmaStyleRMSNorm


def _compiled_copy(fn):
    """`fn` compiled again from its source, as a module of its own that imports torch: another
    code object from another file, as each model of transformers has its own copy of
    LlamaRMSNorm.forward (replace_rmsnorm must take such a copy for the original). The import
    matters: Python compiles `torch.rsqrt(...)` otherwise where `torch` is no imported name."""
    source = "import torch\n\n" + textwrap.dedent(inspect.getsource(fn))
    namespace, where = {}, f"<a copy of {fn.__module__}.{fn.__qualname__}>"
    exec(compile(source, where, "exec"), namespace)
    return namespace[fn.__name__]


class CopiedLlamaRMSNorm(torch.nn.Module):
    """transformers' LlamaRMSNorm, as its copies in other models have it (names aside)."""

    def __init__(self, hidden_size, eps=1e-6):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.ones(hidden_size))
        self.variance_epsilon = eps

    forward = _compiled_copy(replace._llama_forward)

    def extra_repr(self):
        return f"{tuple(self.weight.shape)}, eps={self.variance_epsilon}"


class Olmo2StyleRMSNorm(CopiedLlamaRMSNorm):
    """The product in float32, cast once: Llama's code but for the last line."""

    def forward(self, hidden_states):
        input_dtype = hidden_states.dtype
        hidden_states = hidden_states.to(torch.float32)
        variance = hidden_states.pow(2).mean(-1, keepdim=True)
        hidden_states = hidden_states * torch.rsqrt(variance + self.variance_epsilon)
        return (self.weight * hidden_states).to(input_dtype)


class Doubled(torch.nn.RMSNorm):  # the example: no "RMSNorm" in its name
    def forward(self, x):
        return super().forward(x) * 2


class WithNorm(torch.nn.RMSNorm):  # a method forward does not call may still be called
    def _norm(self, x):
        return x * 2


class WithCall(torch.nn.RMSNorm):
    def __call__(self, x):
        return super().__call__(x) * 2


class Described(torch.nn.RMSNorm):  # construction and text only: the same computation
    def __init__(self, n, eps=None):
        super().__init__(n, eps)
        self.note = "mine"

    def extra_repr(self):
        return "described"


class LlamaWithCall(CopiedLlamaRMSNorm):  # Llama's forward, a __call__ beside it
    pass


LlamaWithCall.__call__ = lambda self, x: torch.nn.Module.__call__(self, x) * 2


class Doubling:  # a mixin: anywhere in the MRO, its __call__ changes the output
    def __call__(self, x):
        return super().__call__(x) * 2


class MixedLlama(Doubling, CopiedLlamaRMSNorm):
    pass


class LlamaCodeWithCall(torch.nn.Module):  # the class that owns Llama's forward adds more
    def __init__(self, hidden_size, eps=1e-6):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.ones(hidden_size))
        self.variance_epsilon = eps

    forward = CopiedLlamaRMSNorm.forward

    def __call__(self, x):
        return super().__call__(x) * 2


def _left_alone(model, why):
    """replace_rmsnorm replaces nothing, names the module and why, and the output stays."""
    x = torch.randn(3, 8)
    expected = model(x)
    with pytest.warns(UserWarning, match=why):
        assert rk.replace_rmsnorm(model) == 0
    torch.testing.assert_close(model(x), expected)


@pytest.mark.parametrize(
    "norm,why",
    [
        (Doubled(8), r"0 \(Doubled: Doubled.forward may change"),
        (WithNorm(8), r"WithNorm._norm may change"),
        (WithCall(8), r"WithCall.__call__ may change"),
        (Olmo2StyleRMSNorm(8), r"Olmo2StyleRMSNorm: its forward is not torch.nn.RMSNorm's"),
        (LlamaWithCall(8), r"LlamaWithCall.__call__ may change"),
        (MixedLlama(8), r"Doubling.__call__ may change"),
        (LlamaCodeWithCall(8), r"LlamaCodeWithCall.__call__ may change"),
    ],
)
def test_replace_leaves_subclasses_that_compute_otherwise_alone(norm, why):
    with torch.no_grad():
        norm.weight.uniform_(0.5, 1.5)
    _left_alone(torch.nn.Sequential(norm), why)


def test_replace_leaves_hooks_parametrizations_and_patched_forwards_alone():
    hooked = torch.nn.RMSNorm(8)
    hooked.register_forward_hook(lambda module, args, out: out * 3)
    _left_alone(torch.nn.Sequential(hooked), r"it has hooks \(forward_hooks\)")

    class Scaled(torch.nn.Module):
        def forward(self, w):
            return w * 2

    parametrized = torch.nn.RMSNorm(8)
    torch.nn.utils.parametrize.register_parametrization(parametrized, "weight", Scaled())
    _left_alone(torch.nn.Sequential(parametrized), r"ParametrizedRMSNorm.weight may change")

    patched = torch.nn.RMSNorm(8)
    patched.forward = lambda x: x * 4
    _left_alone(torch.nn.Sequential(patched), "its instance has a forward of its own")

    extra = CopiedLlamaRMSNorm(8)
    extra.register_buffer("scale", torch.ones(8))
    _left_alone(torch.nn.Sequential(extra), "it holds scale beyond its weight")

    tensor_eps = CopiedLlamaRMSNorm(8)
    tensor_eps.variance_epsilon = torch.tensor(1e-6)
    _left_alone(torch.nn.Sequential(tensor_eps), r"its eps \(tensor\(.*\)\) is not a number")


def test_a_replaced_llama_norms_eps_can_be_set_as_the_original_s():
    model = torch.nn.Sequential(CopiedLlamaRMSNorm(8, eps=1e-6))
    assert rk.replace_rmsnorm(model) == 1
    model[0].variance_epsilon = 1e-5  # before: AttributeError, the property had no setter
    assert model[0].eps == model[0].variance_epsilon == 1e-5


def test_the_fused_module_is_initialised_again_after_a_meta_build(device):
    # before: no reset_parameters, so to_empty left memory as it was (FSDP's default init)
    fused = rk.FusedAddRMSNorm(8, device="meta").to_empty(device=device)
    fused.reset_parameters()
    torch.testing.assert_close(fused.weight.detach(), torch.ones(8, device=device))


def test_the_module_takes_an_empty_normalized_shape_as_torchs(device):
    x = torch.randn(3, 4, 0, device=device)
    ours, torchs = rk.RMSNorm((4, 0), device=device), torch.nn.RMSNorm((4, 0), device=device)
    assert ours(x).shape == torchs(x).shape == (3, 4, 0)
    assert torch.jit.script(ours)(x).shape == (3, 4, 0)  # the scripted forward as the eager


def test_a_scripted_module_takes_an_inference_mode_input_with_a_weight_that_trains(device):
    # the Python path's operator saved the inference tensor itself, which autograd refuses
    with torch.inference_mode():
        x = torch.randn(4, 16, device=device)
    scripted = torch.jit.script(rk.RMSNorm(16, device=device))
    scripted(x).sum().backward()
    reference = torch.nn.RMSNorm(16, device=device)
    reference(x.clone()).sum().backward()
    torch.testing.assert_close(scripted.weight.grad, reference.weight.grad)


def test_replace_takes_subclasses_that_only_describe_themselves_and_copies_of_llamas(device):
    model = torch.nn.Sequential(Described(8, eps=1e-5), CopiedLlamaRMSNorm(8, eps=1e-5))
    model = model.to(device)  # the replacements run our kernels: on the GPU where there is one
    with torch.no_grad():
        for norm in model:
            norm.weight.uniform_(0.5, 1.5)
    x = torch.randn(3, 8, device=device)
    expected = model(x)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert rk.replace_rmsnorm(model) == 2
    assert isinstance(model[0], rk.RMSNorm) and model[0].eps == 1e-5
    assert model[1].variance_epsilon == 1e-5
    torch.testing.assert_close(model(x), expected, **tolerance(torch.float32))


def test_replace_tells_transformers_norms_apart_by_their_code():
    pytest.importorskip("transformers")
    # Mistral's is a copy of Llama's; Olmo2's casts after the product
    from transformers.models.mistral.modeling_mistral import MistralRMSNorm
    from transformers.models.olmo2.modeling_olmo2 import Olmo2RMSNorm

    model = torch.nn.Sequential(MistralRMSNorm(8), Olmo2RMSNorm(8))
    with pytest.warns(UserWarning, match=r"1 \(Olmo2RMSNorm: its forward is not"):
        assert rk.replace_rmsnorm(model) == 1
    assert isinstance(model[0], rk.RMSNorm) and type(model[1]) is Olmo2RMSNorm


def test_replace_reaches_every_place_a_shared_norm_is_registered(device):
    shared = torch.nn.RMSNorm(8, device=device)
    model = torch.nn.Sequential(shared, shared, torch.nn.Sequential(shared))
    x = torch.randn(3, 8, device=device)
    expected = model(x)
    assert rk.replace_rmsnorm(model) == 1  # one module, in three places
    assert model[0] is model[1] is model[2][0]
    assert isinstance(model[0], rk.RMSNorm) and model[0].weight is shared.weight
    torch.testing.assert_close(model(x), expected)


def test_replace_says_it_cannot_replace_the_model_itself():
    norm = torch.nn.RMSNorm(8)
    with pytest.warns(UserWarning, match="not the model itself"):
        assert rk.replace_rmsnorm(norm) == 0


def test_replaced_llama_trains_like_the_original():
    transformers = pytest.importorskip("transformers")
    config = transformers.LlamaConfig(
        vocab_size=64,
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=32,
    )
    torch.manual_seed(0)
    original = transformers.LlamaForCausalLM(config).to(DEVICE)
    ours = copy.deepcopy(original)
    norms = [m for m in original.modules() if type(m).__name__ == "LlamaRMSNorm"]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # nothing may be left alone in a Llama
        assert rk.replace_rmsnorm(ours) == len(norms) == 2 * 2 + 1
    assert not any(type(m).__name__ == "LlamaRMSNorm" for m in ours.modules())

    # SGD: Adam would turn rounding-level differences of near-zero gradients into full steps
    optimizers = [torch.optim.SGD(m.parameters(), lr=0.5, momentum=0.9) for m in (original, ours)]
    g = torch.Generator().manual_seed(1)
    for step in range(3):
        ids = torch.randint(0, 64, (2, 12), generator=g).to(DEVICE)
        losses = []
        for model, optimizer in zip((original, ours), optimizers, strict=True):
            optimizer.zero_grad()
            loss = model(input_ids=ids, labels=ids).loss
            loss.backward()
            losses.append(loss.detach())
        torch.testing.assert_close(losses[1], losses[0], rtol=1e-5, atol=1e-5, msg=f"step {step}")
        named = dict(ours.named_parameters())
        for name, p in original.named_parameters():
            torch.testing.assert_close(
                named[name].grad, p.grad, rtol=1e-4, atol=1e-5, msg=f"step {step}: {name}"
            )
        for optimizer in optimizers:
            optimizer.step()


# ---------------------------------------------------------------------------------------------
# Several GPUs of one host
# ---------------------------------------------------------------------------------------------


@pytest.mark.skipif(
    torch.cuda.device_count() < 2,
    reason=f"needs two GPUs; this machine has {torch.cuda.device_count()}",
)
def test_two_gpus_alternating_calls_are_correct_and_compile_once():
    from rmsnorm_kernels import _plan, ops
    from rmsnorm_kernels._kernels import _rms_norm_bwd_kernel, _rms_norm_fwd_kernel

    def compiled(device_index):
        return sum(
            len(k.device_caches[device_index][0]) if device_index in k.device_caches else 0
            for k in (_rms_norm_fwd_kernel, _rms_norm_bwd_kernel)
        )

    def step(device, m):
        g = torch.Generator().manual_seed(m)
        x, r, dy = (torch.randn(m, 4096, generator=g).to(device, torch.bfloat16) for _ in range(3))
        w = torch.randn(4096, generator=g).to(device, torch.bfloat16)
        x, r, w = (t.requires_grad_() for t in (x, r, w))
        out, s = rk.fused_add_rms_norm(x, r, w)
        out.backward(dy)
        assert out.device == x.grad.device == w.grad.device == torch.device(device)
        leaves = [t.detach().cpu().float().requires_grad_() for t in (x, r, w)]
        expected, _ = rk.reference.fused_add_rms_norm_reference(*leaves)
        expected.backward(dy.cpu().float())
        for got, ref in zip(
            (out, x.grad, w.grad), (expected, leaves[0].grad, leaves[2].grad), strict=True
        ):
            torch.testing.assert_close(got.float().cpu(), ref, atol=5e-2, rtol=5e-2)

    ops.clear_caches()
    for current, other in ((0, 1), (1, 0)):  # tensors on the GPU that is not current
        with torch.cuda.device(current):
            step(f"cuda:{other}", 64)
    counts = (compiled(0), compiled(1))
    for i in range(6):  # alternating devices, new M each call: nothing compiles again
        step(f"cuda:{i % 2}", 32 + 7 * i)
    assert (compiled(0), compiled(1)) == counts
    # one plan per device (the fused forward; its backward, without a d(residual_out))
    assert _plan.forward_plan.cache_info().misses == 2
    assert _plan.backward_plan.cache_info().misses == 2


def test_a_meta_tensor_gets_torchs_computation_where_the_kernels_take_cpu_tensors():
    # before: under Triton's interpreter (kernels on CPU tensors) a meta tensor went to the
    # kernels: "x is on meta", where torch.nn.RMSNorm (and ours on a GPU) gives a meta result
    x = torch.empty(3, 5, 8, device="meta")
    for shape in (8, (5, 8)):
        ours, torchs = rk.RMSNorm(shape, device="meta"), torch.nn.RMSNorm(shape, device="meta")
        assert ours(x).device.type == "meta" and ours(x).shape == torchs(x).shape
        assert torch.jit.script(ours)(x).shape == x.shape
    fused = rk.FusedAddRMSNorm(8, device="meta")
    y, s = fused(x, x)
    assert y.device.type == s.device.type == "meta" and y.shape == s.shape == x.shape


def test_the_fused_module_takes_one_hidden_size_and_a_weight_of_another_dtype(device):
    # before: a tuple was accepted and failed in forward; a bf16 module on f32 input raised,
    # where rk.RMSNorm uses its weight in float32
    for bad, error in (((2, 8), TypeError), (8.0, TypeError), (True, TypeError), (0, ValueError)):
        with pytest.raises(error, match="hidden_size"):
            rk.FusedAddRMSNorm(bad)
    fused = rk.FusedAddRMSNorm(8, eps=1e-6, device=device)
    with torch.no_grad():
        fused.weight.copy_(torch.linspace(0.5, 2.0, 8))
    fused = fused.bfloat16()
    x, r = torch.randn(4, 8, device=device), torch.randn(4, 8, device=device)
    y, s = fused(x, r)
    expected = torch.nn.functional.rms_norm(x + r, (8,), fused.weight.float(), 1e-6)
    assert y.dtype == s.dtype == torch.float32
    torch.testing.assert_close(s, x + r)
    torch.testing.assert_close(y, expected, **tolerance(torch.float32))


def test_rows_past_the_kernels_limit_are_refused_by_name(device):
    # before: no limit checked; the split kernels' column start went negative past ~2.2e9
    # elements a row, and the split backward would not launch past 536,862,720 on a GPU
    from rmsnorm_kernels import _config, ops

    assert ops.MAX_ROW_ELEMENTS == 65_535 * _config.SPLIT_BLOCK_N < 2**31
    long_row = torch.zeros(1, device=device).expand(2, ops.MAX_ROW_ELEMENTS + 1)  # no memory
    with pytest.raises(ValueError, match=r"rows of 536862721 elements; .* at most 536,862,720"):
        rk.rms_norm(long_row)
    with pytest.raises(ValueError, match="at most 536,862,720 a row"):
        rk.fused_add_rms_norm(long_row, long_row)
