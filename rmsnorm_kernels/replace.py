"""replace_rmsnorm: swap a model's RMSNorm modules for this package's, in place.

A module is replaced only where its computation is known to be the one the replacement
makes: its forward is ``torch.nn.RMSNorm``'s, or the very code of Hugging Face's
``LlamaRMSNorm.forward`` (compared as compiled code, which its many copies in other models
share), and no class of its own adds anything that could compute (an override, an extra
method, a property); nor does the instance (hooks, a forward of its own, parameters,
buffers or submodules beyond the weight). Construction (``__init__``), text
(``extra_repr``, ``__repr__``) and plain class data are harmless: what ``__init__`` sets is
read from the instance, as the module's own forward reads it. Everything else is left alone
and named, with the reason, in one warning.
"""

import inspect
import math
import warnings

import torch

from .modules import RMSNorm, _is_scripting, _scripted_rms_norm


class LlamaStyleRMSNorm(RMSNorm):
    """The replacement of a Hugging Face Llama-style RMSNorm (eps in ``variance_epsilon``).

    Those modules return ``weight * normalized.to(x.dtype)``, whose dtype is the promotion of
    the weight's and x's. Where the two dtypes agree this is rms_norm up to one rounding of
    the product; where they differ (an fp32 weight on bf16 activations gives an fp32 output)
    the original computation runs, so the output dtype and values never change.
    """

    # an attribute for eager code: TorchScript compiles no property setter (its forward reads
    # self.eps)
    __jit_unused_properties__ = ["variance_epsilon"]

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.weight is not None and self.weight.dtype != x.dtype:
            xf = x.float()
            normalized = xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + self.eps)
            return self.weight * normalized.to(x.dtype)
        if _is_scripting():  # TorchScript compiles no super()
            return _scripted_rms_norm(
                x, self.weight, self.normalized_shape, self.eps, self.kernels_take_cpu
            )
        return super().forward(x)

    @property
    def variance_epsilon(self):  # the attribute name the replaced module's users read and set
        return self.eps

    @variance_epsilon.setter
    def variance_epsilon(self, eps):
        self.eps = eps


KERNEL_DTYPES = (torch.float32, torch.float16, torch.bfloat16)


def _llama_forward(self, hidden_states):
    # transformers' LlamaRMSNorm.forward, statement for statement: a module's forward is
    # taken for Llama's only where it compiles to this same code
    input_dtype = hidden_states.dtype
    hidden_states = hidden_states.to(torch.float32)
    variance = hidden_states.pow(2).mean(-1, keepdim=True)
    hidden_states = hidden_states * torch.rsqrt(variance + self.variance_epsilon)
    return self.weight * hidden_states.to(input_dtype)


def _code(fn):
    """What a function computes, as compiled code: instructions, the names and constants they
    use (a docstring aside) and the arguments; local variables by position, not by name."""
    code = fn.__code__
    consts = list(code.co_consts)
    if consts and isinstance(consts[0], str) and consts[0] == fn.__doc__:
        consts[0] = None  # the docstring's slot (None in a function without one)
    args = (code.co_argcount, code.co_posonlyargcount, code.co_kwonlyargcount, code.co_flags)
    return code.co_code, code.co_names, tuple(consts), args


def _is_llama_forward(fn) -> bool:
    return (
        inspect.isfunction(fn)
        and fn.__closure__ is None
        and fn.__defaults__ is None
        and fn.__globals__.get("torch") is torch
        and _code(fn) == _code(_llama_forward)
    )


# what a class may define and still compute as the class it derives from
# (transformers' hub-kernel decorator adds kernel_condition, which only its `kernelize` reads:
# a kernelized class's forward is no longer Llama's, and is then refused for that)
HARMLESS = {"__init__", "extra_repr", "__repr__", "kernel_condition"}
CLASS_DATA = {
    "__module__", "__qualname__", "__doc__", "__dict__", "__weakref__", "__annotations__",
    "__annotate__", "__firstlineno__", "__static_attributes__", "__orig_bases__",
    "__parameters__", "__classcell__", "__constants__",
}  # fmt: skip
HOOKS = (
    "_forward_hooks", "_forward_pre_hooks", "_backward_hooks", "_backward_pre_hooks",
    "_state_dict_hooks", "_state_dict_pre_hooks", "_load_state_dict_pre_hooks",
    "_load_state_dict_post_hooks",
)  # fmt: skip


def _additions(cls, base) -> list[str]:
    """What the classes of `cls`'s MRO below torch.nn.Module define that could compute:
    methods, properties and other descriptors, beyond construction and text (a class's plain
    data is read through the instance, as the module's own forward reads it). `base` is the
    class whose computation is proven: torch.nn.RMSNorm, whose members are torch's own, or
    the class whose forward is Llama's, of which only that forward is. Mixins anywhere in the
    MRO are looked at too: a `__call__` or `_norm` of theirs would change the output."""
    found = []
    for klass in cls.__mro__[: cls.__mro__.index(torch.nn.Module)]:
        if klass is torch.nn.RMSNorm:
            continue
        for name, value in vars(klass).items():
            if name in HARMLESS or name in CLASS_DATA or (klass is base and name == "forward"):
                continue
            if callable(value) or hasattr(type(value), "__get__"):
                found.append(f"{klass.__name__}.{name}")
    return found


def _llama_base(cls):
    """The class of `cls`'s MRO that defines forward, where that forward is Llama's."""
    owner = next((k for k in cls.__mro__ if "forward" in vars(k)), None)
    if owner is None or owner is torch.nn.Module or not _is_llama_forward(vars(owner)["forward"]):
        return None
    return owner


def _instance_problem(module: torch.nn.Module) -> str | None:
    """What the instance adds to its class's computation, or None."""
    hooks = [name.strip("_") for name in HOOKS if getattr(module, name, None)]
    if hooks:
        return f"it has hooks ({', '.join(hooks)})"
    if "forward" in vars(module):
        return "its instance has a forward of its own"
    extra = [n for n, _ in module.named_parameters(recurse=False) if n != "weight"]
    extra += [n for n, _ in module.named_buffers(recurse=False)]
    extra += [n for n, _ in module.named_children()]
    if extra:
        return f"it holds {', '.join(extra)} beyond its weight"
    weight = getattr(module, "weight", None)
    if weight is not None and not isinstance(weight, torch.nn.Parameter):
        return "its weight is not a Parameter"
    if isinstance(weight, torch.Tensor) and weight.dtype not in KERNEL_DTYPES:
        return f"its weight is {weight.dtype}, not float32, float16 or bfloat16"
    return None


def _is_eps(eps, none_ok: bool) -> bool:
    if eps is None:
        return none_ok
    return isinstance(eps, (int, float)) and not isinstance(eps, bool) and 0 <= eps < math.inf


def _replacement(module: torch.nn.Module):
    """(a replacement sharing the module's weight Parameter, None) where the module's
    computation is proven to be the replacement's; (None, why not) otherwise; (None, None)
    for a module that is no RMSNorm, or ours already."""
    if isinstance(module, RMSNorm):
        return None, None  # already ours
    cls = type(module)
    if isinstance(module, torch.nn.RMSNorm):
        base = torch.nn.RMSNorm
    else:
        base = _llama_base(cls)
        if base is None:
            is_norm = "rmsnorm" in cls.__name__.lower()
            return None, "its forward is not torch.nn.RMSNorm's or Llama's" if is_norm else None
    added = _additions(cls, base)
    if added:
        return None, f"{', '.join(added)} may change what it computes"
    problem = _instance_problem(module)
    if problem:
        return None, problem
    eps = module.eps if base is torch.nn.RMSNorm else getattr(module, "variance_epsilon", None)
    if not _is_eps(eps, none_ok=base is torch.nn.RMSNorm):
        return None, f"its eps ({eps!r}) is not a number >= 0"
    if base is torch.nn.RMSNorm:
        new = RMSNorm(module.normalized_shape, eps, module.elementwise_affine)
    else:
        weight = getattr(module, "weight", None)
        if not isinstance(weight, torch.nn.Parameter) or weight.dim() != 1:
            return None, "its weight is not a Parameter of one dimension"
        new = LlamaStyleRMSNorm(weight.shape[0], float(eps))
    new.weight = module.weight  # the same Parameter object: optimizer state stays valid
    new.train(module.training)
    return new, None


def replace_rmsnorm(model: torch.nn.Module) -> int:
    """Replace, in place, every ``torch.nn.RMSNorm`` and Llama-style Hugging Face RMSNorm
    whose computation is known to be the replacement's (see this module's docstring).

    Returns how many modules were replaced (one registered in several places counts once and
    is replaced in each by one module). Each keeps its weight Parameter. Every other module
    that is, or is named like, an RMSNorm (a subclass that overrides forward or adds a
    method, Gemma's ``x * (1 + weight)``, one with hooks, a float64 weight) is left alone and
    named in a warning, with the reason.
    """
    if isinstance(model, torch.jit.ScriptModule):
        raise TypeError(
            "replace_rmsnorm changes Python modules; this model is compiled by TorchScript "
            "(a ScriptModule): replace its norms first, then script it"
        )
    if _replacement(model)[0] is not None:
        warnings.warn(
            f"replace_rmsnorm replaces the modules inside a model, not the model itself (a "
            f"{type(model).__name__}); use rmsnorm_kernels.RMSNorm in its place",
            stacklevel=2,
        )
    replacements, left = {}, {}  # by module: one shared in several places stays shared
    # every place a module is registered, repeats included (named_children lists a module
    # registered twice under one parent once)
    for path, child in list(model.named_modules(remove_duplicate=False)):
        if not path:
            continue  # the model itself
        if id(child) not in replacements:
            replacements[id(child)], why = _replacement(child)
            if why:
                left[id(child)] = f"{path} ({type(child).__name__}: {why})"
        new = replacements[id(child)]
        if new is not None:
            parent_path, _, name = path.rpartition(".")
            setattr(model.get_submodule(parent_path), name, new)
    replaced = sum(new is not None for new in replacements.values())
    if left:
        warnings.warn(
            f"replace_rmsnorm left {len(left)} module(s) alone, not proven to compute what "
            f"RMSNorm's kernels do: {'; '.join(left.values())}",
            stacklevel=2,
        )
    return replaced
