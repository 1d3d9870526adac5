"""replace_rmsnorm: swap a model's RMSNorm modules for this package's, in place."""

import warnings

import torch

from .modules import RMSNorm


class LlamaStyleRMSNorm(RMSNorm):
    """The replacement of a Hugging Face Llama-style RMSNorm (eps in ``variance_epsilon``).

    Those modules return ``weight * normalized.to(x.dtype)``, whose dtype is the promotion of
    the weight's and x's. Where the two dtypes agree this is rms_norm up to one rounding of
    the product; where they differ (an fp32 weight on bf16 activations gives an fp32 output)
    the original computation runs, so the output dtype and values never change.
    """

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.weight is not None and self.weight.dtype != x.dtype:
            xf = x.float()
            normalized = xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + self.eps)
            return self.weight * normalized.to(x.dtype)
        return super().forward(x)

    @property
    def variance_epsilon(self):  # the attribute name the replaced module's users read
        return self.eps


KERNEL_DTYPES = (torch.float32, torch.float16, torch.bfloat16)


def _replacement(module: torch.nn.Module):
    """A replacement sharing the module's weight Parameter, or None where semantics differ
    or the kernels cannot run it (a weight in another dtype, such as float64)."""
    if isinstance(module, RMSNorm):
        return None  # already ours
    weight = getattr(module, "weight", None)
    if isinstance(weight, torch.Tensor) and weight.dtype not in KERNEL_DTYPES:
        return None
    if isinstance(module, torch.nn.RMSNorm):
        new = RMSNorm(module.normalized_shape, module.eps, module.elementwise_affine)
    elif type(module).__name__.endswith("RMSNorm") and hasattr(module, "variance_epsilon"):
        weight = getattr(module, "weight", None)
        if not isinstance(weight, torch.nn.Parameter) or weight.dim() != 1:
            return None
        if any(name != "weight" for name, _ in module.named_parameters(recurse=False)):
            return None  # a bias or an offset: not this computation
        new = LlamaStyleRMSNorm(weight.shape[0], float(module.variance_epsilon))
    else:
        return None
    new.weight = module.weight  # the same Parameter object: optimizer state stays valid
    new.train(module.training)
    return new


def replace_rmsnorm(model: torch.nn.Module) -> int:
    """Replace, in place, every ``torch.nn.RMSNorm`` and Llama-style Hugging Face RMSNorm.

    Returns how many modules were replaced (one registered in several places counts once and
    is replaced in each by one module). Each keeps its weight Parameter. Modules named
    ``*RMSNorm`` whose computation differs (e.g. Gemma's ``x * (1 + weight)``, whose eps is
    ``eps``), and those whose weight is in a dtype the kernels do not take (float64), are
    left alone and named in a warning.
    """
    if _replacement(model) is not None:
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
            replacements[id(child)] = _replacement(child)
        new = replacements[id(child)]
        parent_path, _, name = path.rpartition(".")
        if new is not None:
            setattr(model.get_submodule(parent_path), name, new)
        elif type(child).__name__.endswith("RMSNorm") and not isinstance(child, RMSNorm):
            left.setdefault(id(child), f"{path} ({type(child).__name__})")
    replaced = sum(new is not None for new in replacements.values())
    left = list(left.values())
    if left:
        warnings.warn(
            f"replace_rmsnorm left {len(left)} module(s) alone, their computation differs from "
            f"RMSNorm's or their dtype is not float32, float16 or bfloat16: {', '.join(left)}",
            stacklevel=2,
        )
    return replaced
