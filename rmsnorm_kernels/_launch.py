"""Launching compiled kernel variants directly, without Triton's per-call work.

``kernel[grid](*args, **constexprs)`` binds the arguments, derives their specialisation
(pointer alignment, integer width and divisibility), builds a cache key, finds the compiled
variant and only then launches it. On an H200 host that is 23.5 us per launch against 13.1 us
through the compiled kernel (scripts/profile-host, 1x4096 bf16), and the public backward pays
it twice on the autograd thread, where it measured 59 + 28 us at 16384x4096.

A ``Variants`` object remembers, per key, the variant that Triton compiled for the first call
with that key, and launches it directly afterwards (through the C function of Triton's CUDA
launcher where its Python wrapper has nothing to do: about 1 us less per launch there).
That is only correct when the key decides the variant, so:
- the kernels take every integer argument unspecialised (``do_not_specialize``): the integer
  values then decide only the argument width (32 or 64 bits), and callers go the direct way
  only when every integer fits in 32 bits;
- pointer alignment does decide the variant (16-byte aligned pointers allow vector loads):
  callers go the direct way only when every pointer is 16-byte aligned, as fresh allocations
  are; the others take Triton's own path every time;
- the key holds every constexpr and launch option that varies, and the element types;
- launch hooks (profilers such as proton) see every launch: while one is set, launches take
  Triton's path.
Where this Triton build does not launch variants the way 3.x does, or runs kernels in its
interpreter, every launch takes Triton's path.
"""

try:
    from triton import knobs
except ImportError:  # a Triton before 3.4: no direct launches
    knobs = None

INT32_LIMIT = 2**31


class Variants:
    """The compiled variants of one kernel, keyed by what decides them."""

    # False (for all kernels) once a direct launch is refused, or on a Triton without knobs
    direct_launch_works = knobs is not None

    def __init__(self, kernel):
        self.kernel = kernel
        self.variants = {}  # key -> _Variant, or None where no direct launch is possible

    def launch(self, key, grid, args, options, direct: bool) -> None:
        """Launch ``kernel[grid](*args, **options())``; ``options`` returns the constexprs
        and launch options, which ``key`` must determine. ``direct``: the caller checked
        that the arguments specialise like the first call with this key (see above)."""
        if direct and Variants.direct_launch_works:
            variant = self.variants.get(key)
            if variant is not None and not _hooks_set():
                try:
                    variant.launch(grid, args)
                    return
                except TypeError:  # a launcher with another calling convention: it
                    Variants.direct_launch_works = False  # rejects the arguments unlaunched
        compiled = self.kernel[grid](*args, **options())
        if direct and key not in self.variants:
            self.variants[key] = _Variant.of(self.kernel, compiled, options(), len(args))


def _hooks_set() -> bool:
    """Whether a launch hook is set: Triton 3.6's hooks are chains, empty unless one is added
    (Triton's own path calls even an empty chain twice per launch); older ones None or a
    function."""
    for hook in (knobs.runtime.launch_enter_hook, knobs.runtime.launch_exit_hook):
        if hook is not None and getattr(hook, "calls", True):
            return True
    return False


class _Variant:
    __slots__ = ("call", "head", "constexprs", "device", "stream")

    @classmethod
    def of(cls, kernel, compiled, options: dict, n_args: int):
        """The direct launch of ``compiled``, or None where this Triton has no such thing."""
        try:
            import torch
            from triton.runtime import driver

            names = kernel.arg_names
            tail = names[n_args:]  # the constexprs follow the run-time arguments
            if sorted(tail) != sorted(n for n in options if n in names):
                return None
            v = cls()
            run = compiled.run  # loads the binary on this device
            v.call, v.head = run, (compiled.function, compiled.packed_metadata, None, None, None)
            if _plain_cuda_launcher(run):  # its C function, without the Python frame around it
                v.call = run.launch
                v.head = (compiled.function, run.launch_cooperative_grid, run.launch_pdl, None)
                v.head += (None, compiled.packed_metadata, None, None, None)
            v.constexprs = tuple(options[n] for n in tail)
            v.device = getattr(torch._C, "_cuda_getDevice", driver.active.get_current_device)
            v.stream = driver.active.get_current_stream
            return v
        except (AttributeError, TypeError):  # interpreter, or another Triton
            return None

    def launch(self, grid, args) -> None:
        stream = self.stream(self.device())
        g1 = grid[1] if len(grid) > 1 else 1
        self.call(grid[0], g1, 1, stream, *self.head, *args, *self.constexprs)


def _plain_cuda_launcher(run) -> bool:
    """Whether ``run`` is Triton 3.6's CUDA launcher with nothing to do in Python: no scratch
    memory to allocate before its C function launches."""
    attributes = ("launch", "launch_cooperative_grid", "launch_pdl")
    return (
        type(run).__name__ == "CudaLauncher"
        and all(hasattr(run, a) for a in attributes)
        and not getattr(run, "global_scratch_size", 1)
        and not getattr(run, "profile_scratch_size", 1)
    )
