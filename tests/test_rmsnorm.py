"""Correctness of rms_norm and fused_add_rms_norm: forward, direct backward and autograd.

One config matrix, CASES, drives the plain and the fused-add tests alike, so their coverage
cannot drift apart. Every result is compared with the single fp32 reference in
rmsnorm_kernels.reference.
"""

import contextlib
import functools
import itertools
import json
import os
import warnings
from dataclasses import dataclass
from pathlib import Path

import pytest
import torch
import torch.nn.functional as F
from torch.autograd import forward_ad

import rmsnorm_kernels as rk
from rmsnorm_kernels import _config, _extension, _kernels, _plan, ops
from rmsnorm_kernels.reference import (
    fused_add_rms_norm_reference,
    rms_norm_reference,
    tolerance,
)

from .conftest import DEVICE, GPU

BF16, F16, F32 = torch.bfloat16, torch.float16, torch.float32


@dataclass(frozen=True)
class Case:
    lead: tuple  # leading dims (their product is M)
    n: int
    dtype: torch.dtype
    weight_dtype: torch.dtype | None  # None: no weight

    @property
    def id(self):
        w = "noweight" if self.weight_dtype is None else f"w{str(self.weight_dtype)[6:]}"
        return f"{'x'.join(map(str, self.lead))}x{self.n}-{str(self.dtype)[6:]}-{w}"


# The one matrix for forward, direct backward and autograd, plain and fused-add alike.
CASES = [
    Case((4,), 64, F32, F32),  # several rows per program
    Case((1,), 4096, BF16, BF16),  # M = 1
    Case((0,), 512, F16, F16),  # M = 0 (empty)
    Case((9,), 1, F32, F32),  # N = 1
    Case((2, 3), 256, BF16, F32),  # 3-D input, fp32 weight on bf16 x (mixed precision)
    Case((37,), 96, F16, None),  # no weight; M not a multiple of the rows per program
    Case((3,), 3000, BF16, BF16),  # unaligned N, single block
    Case((2,), 5000, F16, F32),  # unaligned N, mixed weight dtype
    Case((2,), 40000, BF16, BF16),  # unaligned N past one block: split forward and backward
    Case((17,), 16400, BF16, F32),  # more rows than the split forward takes: chunked forward
    Case((3,), 20000, F32, F32),  # past one block in fp32
    Case((2,), 65536, BF16, F32),  # the largest N promised, mixed weight dtype
    Case((9,), 16400, BF16, F32),  # split rows, more rows than programs: dweight rows add up
    Case((3,), 24000, F16, None),  # split rows without a weight
]
IDS = [c.id for c in CASES]
OPS = ["rms_norm", "fused_add"]
EPS = 1e-6  # the direct backward tests call the launchers, which take a resolved eps


def make_inputs(case: Case, requires_grad=False, seed=0):
    g = torch.Generator().manual_seed(seed)
    shape = (*case.lead, case.n)
    x = torch.randn(shape, generator=g).to(case.dtype)
    residual = torch.randn(shape, generator=g).to(case.dtype)
    weight = None
    if case.weight_dtype is not None:
        weight = (1 + 0.1 * torch.randn(case.n, generator=g)).to(case.weight_dtype)
    dy = torch.randn(shape, generator=g).to(case.dtype)
    d_res = torch.randn(shape, generator=g).to(case.dtype)
    tensors = [t if t is None else t.to(DEVICE) for t in (x, residual, weight, dy, d_res)]
    if requires_grad:
        for t in tensors[:3]:
            if t is not None:
                t.requires_grad_()
    return tensors


def assert_close(actual, expected, dtype, what):
    tol = tolerance(dtype)
    if what == "dweight":
        # a sum over M rows: its rounding error scales with the largest entry, not each entry
        tol["atol"] *= max(1.0, expected.abs().max().item()) if expected.numel() else 1.0
    torch.testing.assert_close(
        actual.float().cpu(), expected.float().cpu(), **tol, msg=lambda m: f"{what}: {m}"
    )


def leaf_copies(*tensors):
    return [None if t is None else t.detach().clone().requires_grad_() for t in tensors]


def launches_in(fn) -> list:
    """The kernel launches (``_plan.KernelLaunch``) that ``fn()`` makes, caches cleared first,
    whichever host path runs it: Python launches (the Python path; CPU tensors on the compiled
    path) call the launch object; the compiled path's GPU launches compile their variant first."""
    taken = []
    real_call, real_compile = _plan.KernelLaunch.__call__, _extension.compiled_variant

    def call(self, *args, **kwargs):
        taken.append(self)
        return real_call(self, *args, **kwargs)

    def compile_variant(launch_id, *args):
        taken.append(_plan.LAUNCHES[launch_id])
        return real_compile(launch_id, *args)

    ops.clear_caches()
    _plan.KernelLaunch.__call__, _extension.compiled_variant = call, compile_variant
    try:
        fn()
    finally:
        _plan.KernelLaunch.__call__, _extension.compiled_variant = real_call, real_compile
    return taken


def device_key():
    return torch.empty(0, device=DEVICE).device  # cuda:0, the plans' key, not cuda


# ---------------------------------------------------------------------------------------------
# Forward
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_forward(case, op):
    x, residual, weight, _, _ = make_inputs(case)
    if op == "rms_norm":
        y = rk.rms_norm(x, weight)
        expected = rms_norm_reference(x, weight)
        # flash-attention's rule: at most about twice as far from fp32 as PyTorch's own result.
        # Triton's interpreter rounds fp32 -> bf16 toward zero (GPUs round to nearest), so
        # there the per-dtype tolerance below is the check.
        torch_y = F.rms_norm(x, (case.n,), weight)
        if case.lead[0] and not ops._INTERPRETING:
            ours = (y.float().cpu() - expected.cpu()).abs().max()
            theirs = (torch_y.float().cpu() - expected.cpu()).abs().max()
            assert ours <= 2 * theirs + 1e-6, f"error {ours} vs PyTorch's {theirs}"
    else:
        y, residual_out = rk.fused_add_rms_norm(x, residual, weight)
        expected, expected_residual = fused_add_rms_norm_reference(x, residual, weight)
        assert residual_out.dtype == x.dtype and residual_out.shape == x.shape
        # x + residual rounded to x's dtype: exact on a GPU, one ulp under the interpreter
        exact = tolerance(case.dtype) if ops._INTERPRETING else {"atol": 0, "rtol": 0}
        torch.testing.assert_close(residual_out.float(), expected_residual, **exact)
    assert y.dtype == x.dtype and y.shape == x.shape
    assert_close(y, expected, case.dtype, "out")


@pytest.mark.parametrize("op", OPS)
def test_forward_on_both_sides_of_the_few_rows_thresholds(op):
    """Each launch takes the rows the thresholds give it; the persistent one walks several
    row blocks per program (the last one partial) and every row is normalised."""
    plan = _plan.forward_plan(64, F16, F16, op == "fused_add", device_key())
    lo, hi = plan.few_min_m, plan.few_max_m
    assert 0 < lo < hi
    for m, expected in (
        (lo, plan.main),
        (lo + 1, plan.few),
        (hi - 3, plan.few),
        (hi + 1, plan.main),
    ):
        x, residual, weight, _, _ = make_inputs(Case((m,), 64, F16, F16))

        def check(x=x, residual=residual, weight=weight):
            if op == "rms_norm":
                assert_close(rk.rms_norm(x, weight), rms_norm_reference(x, weight), F16, "out")
            else:
                y, residual_out = rk.fused_add_rms_norm(x, residual, weight)
                expected_y, expected_residual = fused_add_rms_norm_reference(x, residual, weight)
                assert_close(y, expected_y, F16, "out")
                assert_close(residual_out, expected_residual, F16, "residual_out")

        assert launches_in(check) == [expected.launch], m


SPLIT_FORWARD_CASES = [Case((1,), 20000, BF16, BF16), Case((3,), 20001, F32, None),
                       Case((2,), 17000, F16, F32)]  # fmt: skip


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("case", SPLIT_FORWARD_CASES, ids=lambda c: c.id)
def test_split_forward_of_few_long_rows(monkeypatch, case, op):
    """With FORWARD_SPLIT_MAX_M set, up to that many rows past one block are split over
    segments (both host paths follow the plan): y, residual_out and rstd as the reference's;
    one row more takes the chunked forward."""
    m = case.lead[0]
    monkeypatch.setattr(_config, "FORWARD_SPLIT_MAX_M", m)
    monkeypatch.setattr(_config, "FORWARD_SPLIT_BLOCK_N", 1024)  # several chunks a segment
    ops.clear_caches()
    try:
        fused = op == "fused_add"
        plan = _plan.forward_plan(
            _plan.bucket_of(case.n), case.dtype, case.weight_dtype, fused, device_key()
        )
        assert plan.split is not None and plan.split.segments(m, case.n)[1] > 1
        x, residual, weight, _, _ = make_inputs(case)
        rows = (x.reshape(-1, case.n), residual.reshape(-1, case.n) if fused else None)

        def check():
            y, residual_out, rstd = ops.rms_norm_forward(rows[0], weight, EPS, residual=rows[1])
            if fused:
                expected, expected_residual = fused_add_rms_norm_reference(x, residual, weight)
                assert_close(residual_out.view(x.shape), expected_residual, case.dtype, "res")
                normed = residual_out.view(x.shape).float()  # the rows it normalised
            else:
                expected, normed = rms_norm_reference(x, weight), x.float()
                assert residual_out is None
            assert_close(y.view(x.shape), expected, case.dtype, "out")
            expected_rstd = torch.rsqrt(normed.square().mean(-1) + EPS).reshape(-1)
            torch.testing.assert_close(rstd.cpu(), expected_rstd.cpu(), rtol=1e-4, atol=1e-5)

        assert launches_in(check) == [plan.split.sum_sq, plan.split.scale]
        monkeypatch.setattr(_config, "FORWARD_SPLIT_MAX_M", m - 1)
        ops.clear_caches()
        plan = _plan.forward_plan(
            _plan.bucket_of(case.n), case.dtype, case.weight_dtype, fused, device_key()
        )
        assert launches_in(check) == [plan.main.launch]
    finally:
        monkeypatch.undo()
        ops.clear_caches()


# ---------------------------------------------------------------------------------------------
# Direct backward: the launchers, without autograd
# ---------------------------------------------------------------------------------------------


def reference_grads(op, x, residual, weight, dy, d_res, eps=None):
    """(dx, dresidual or None, dweight or None) of the fp32 reference."""
    x, residual, weight = leaf_copies(x, residual, weight)
    if op == "rms_norm":
        rms_norm_reference(x, weight, eps).backward(dy.float())
        return x.grad, None, None if weight is None else weight.grad
    out, residual_out = fused_add_rms_norm_reference(x, residual, weight, eps)
    grads = [dy.float()] if d_res is None else [dy.float(), d_res.float()]
    torch.autograd.backward([out, residual_out][: len(grads)], grads)
    return x.grad, residual.grad, None if weight is None else weight.grad


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_backward_direct(case, op):
    check_backward_direct(case, op)


def check_backward_direct(case, op):
    x, residual, weight, dy, d_res = make_inputs(case)
    n = case.n
    if op == "rms_norm":
        _, _, rstd = ops.rms_norm_forward(x.reshape(-1, n), weight, EPS)
        dx, dw, _ = ops.rms_norm_backward(dy.reshape(-1, n), x.reshape(-1, n), weight, rstd)
        expected_dx, _, expected_dw = reference_grads(op, x, residual, weight, dy, None, EPS)
        assert_close(dx.view(x.shape), expected_dx, case.dtype, "dx")
    else:
        _, residual_out, rstd = ops.rms_norm_forward(
            x.reshape(-1, n), weight, EPS, residual=residual.reshape(-1, n)
        )
        # the first case without a d(residual_out), the second with one
        for d_residual_out in (None, d_res):
            dres2 = None if d_residual_out is None else d_residual_out.reshape(-1, n)
            # the second with dx written twice too, as for x and residual that are both leaves
            dx_copy = d_residual_out is not None
            dx, dw, dr = ops.rms_norm_backward(
                dy.reshape(-1, n), residual_out, weight, rstd, dres2, dx_copy=dx_copy
            )
            expected_dx, expected_dr, expected_dw = reference_grads(
                op, x, residual, weight, dy, d_residual_out, EPS
            )
            assert_close(dx.view(x.shape), expected_dx, case.dtype, "dx")
            if dx_copy:
                assert dr is not dx and (dr.data_ptr() != dx.data_ptr() or dx.numel() == 0)
            else:
                assert dr is None
                dr = dx
            assert_close(dr.view(x.shape), expected_dr, case.dtype, "dresidual")
    if weight is None:
        assert dw is None
    else:
        assert dw.dtype == weight.dtype and dw.shape == weight.shape
        assert_close(dw, expected_dw, case.dtype, "dweight")


@pytest.mark.parametrize("op", OPS)
def test_backward_on_both_sides_of_the_few_rows_threshold(monkeypatch, op):
    # the interpreter's few-rows threshold is under the small backward's: that one off here
    monkeypatch.setattr(_config, "SMALL_MAX_ELEMENTS", 0)
    ops.clear_caches()
    try:
        plan = _plan.backward_plan(2048, BF16, BF16, True, device_key(), False)
        assert plan.few is not None and plan.small is None
        for m, expected in ((plan.few_max_m, plan.few), (plan.few_max_m + 1, plan.main)):
            case = Case((m,), 2048, BF16, BF16)
            taken = launches_in(lambda case=case: check_backward_direct(case, op))
            kernels = {t for t in taken if t.kernel is _kernels._rms_norm_bwd_kernel}
            assert kernels == {expected.launch}
    finally:
        ops.clear_caches()


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize(
    "n, dtype, w_dtype", [(128, BF16, BF16), (1000, F32, F32), (96, BF16, F32)]
)
def test_backward_on_both_sides_of_the_small_threshold(op, n, dtype, w_dtype):
    """Up to small.max_m rows the backward is one launch: one row program that writes dweight
    itself, or row and column programs (the column programs' dweight over several of their
    row steps at the threshold); past it the persistent backward. All are right."""
    plan = _plan.backward_plan(_plan.bucket_of(n), dtype, w_dtype, True, device_key(), False)
    small = plan.small
    assert small is not None and small.max_m > 1
    # one row program alone (it writes dweight), several with column programs, then past it
    one_block = small.block_m
    assert small.grid(one_block, n) == (1, 1, n, 1)
    column_programs = -(-n // small.dw_block_n)
    assert small.grid(one_block + 1, n) == (2 + column_programs, 2, n, 1)
    edges = ((1, True), (one_block, True), (one_block + 1, True), (small.max_m, True))
    for m, is_small in (*edges, (small.max_m + 1, False)):
        case = Case((m,), n, dtype, w_dtype)
        taken = launches_in(lambda case=case: check_backward_direct(case, op))
        backward = [t for t in taken if t.kernel is not _kernels._rms_norm_fwd_kernel]
        if is_small:
            assert set(backward) == {small.launch}, m  # one launch a call, dweight included
        else:
            assert small.launch not in backward, m


BACKWARD_KERNELS = (
    _kernels._rms_norm_bwd_kernel,
    _kernels._rms_norm_bwd_small_kernel,
    _kernels._rms_norm_bwd_walk_kernel,
    _kernels._row_dot_kernel,
    _kernels._sum_partials_kernel,
)


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize(
    "n, dtype, w_dtype", [(12000, BF16, BF16), (16384, F32, F32), (9000, F16, None)]
)
def test_backward_of_few_split_rows_is_one_segmented_launch(monkeypatch, op, n, dtype, w_dtype):
    """Up to SEGMENT_MAX_M rows past one block the backward is one launch: each row over
    segments (the last one short where N is not a multiple of the segment), each segment
    summing g * x over its whole row; one row over several segments, several rows over fewer,
    then one segment a row; past it the split backward. All are right. The one-block widths
    are set to 8,192 so that rows of 9,000-16,384 are split rows here."""
    monkeypatch.setattr(_config, "SEGMENT_MAX_M", 9)
    monkeypatch.setattr(_config, "SPLIT_BACKWARD_ABOVE_N", 8192)
    monkeypatch.setattr(_config, "SPLIT_PLAIN_BACKWARD_ABOVE_N", 8192)
    if DEVICE == "cpu":
        monkeypatch.setattr(_config, "INTERPRETER_PROGRAMS", 8)
    ops.clear_caches()
    try:
        plan = _plan.backward_plan(_plan.bucket_of(n), dtype, w_dtype, True, device_key(), False)
        small = plan.small
        assert plan.split_row and small is not None and small.segment_block_n
        assert small.max_m == 9 and small.dw_block_n == (_config.SMALL_DW_BLOCK_N if w_dtype else 0)
        seen = set()
        for m in (1, 3, 9, 10):
            _, row_programs, segment_n, segments = small.grid(m, n)
            assert row_programs == m * segments and segment_n * segments >= n
            assert segment_n % small.segment_block_n == 0
            seen.add(segments)
            case = Case((m,), n, dtype, w_dtype)
            taken = launches_in(lambda case=case: check_backward_direct(case, op))
            backward = [t for t in taken if t.kernel in BACKWARD_KERNELS]
            if m <= small.max_m:
                assert set(backward) == {small.launch}, m
            else:
                assert small.launch not in backward and plan.row_dot in backward, m
        if DEVICE == "cpu":  # 8 programs: 3 segments for one row, 1 for 9 rows
            assert max(seen) > 2 and 1 in seen
        # rows past one block keep the split backward, unless SEGMENT_LONG_ROWS
        assert _plan.backward_plan(0, dtype, w_dtype, True, device_key(), False).small is None
        monkeypatch.setattr(_config, "SEGMENT_LONG_ROWS", True)
        ops.clear_caches()
        long_rows = _plan.backward_plan(0, dtype, w_dtype, True, device_key(), False).small
        assert long_rows is not None and long_rows.segment_block_n
        case = Case((3,), 20000, dtype, w_dtype)
        taken = launches_in(lambda: check_backward_direct(case, op))
        assert {t for t in taken if t.kernel in BACKWARD_KERNELS} == {long_rows.launch}
    finally:
        monkeypatch.undo()
        ops.clear_caches()


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("n, dtype, w_dtype", [(20000, BF16, F32), (9000, F32, None)])
def test_the_row_walk_backward_with_more_rows_than_programs(monkeypatch, op, n, dtype, w_dtype):
    """Past SEGMENT_MAX_M split rows, programs walk the rows one at a time (rows p, p + P,
    ...), each adding its dweight share to its own partial row: with more rows than programs
    a program adds to its partial, with fewer some programs are idle. All are right. The
    one-block widths are set to 8,192 so that rows of 9,000 are split rows here."""
    monkeypatch.setattr(_config, "SEGMENT_MAX_M", 1)
    monkeypatch.setattr(_config, "SPLIT_BACKWARD_ABOVE_N", 8192)
    monkeypatch.setattr(_config, "SPLIT_PLAIN_BACKWARD_ABOVE_N", 8192)
    monkeypatch.setattr(_config, "WALK_BACKWARD", True)  # off by default: it measured slower
    if DEVICE == "cpu":
        monkeypatch.setattr(_config, "INTERPRETER_PROGRAMS", 3)
    ops.clear_caches()
    try:
        plan = _plan.backward_plan(_plan.bucket_of(n), dtype, w_dtype, True, device_key(), False)
        programs = plan.walk.programs
        for m in (2, programs + 2) if DEVICE == "cpu" else (2, programs + 2, 3 * programs):
            assert plan.walk_for(m) is plan.walk and plan.walk.grid(m) == min(m, programs)
            case = Case((m,), n, dtype, w_dtype)
            taken = launches_in(lambda case=case: check_backward_direct(case, op))
            assert plan.walk.launch in taken and plan.row_dot not in taken, m
    finally:
        monkeypatch.undo()
        ops.clear_caches()


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("first_above_n", [0, 1 << 30], ids=["dweight first", "dweight after dx"])
@pytest.mark.parametrize("n, dtype, w_dtype", [(1000, BF16, BF16), (3000, F32, F32),
                                               (20000, BF16, F32)])  # fmt: skip
def test_the_main_backward_adds_dweight_before_or_after_dx_alike(
    monkeypatch, op, first_above_n, n, dtype, w_dtype
):
    """BACKWARD_DW_FIRST_ABOVE_N sets where the main backward adds dweight's share, before dx
    or after it (from dx's xhat): each launch carries the order it is given, and both orders
    give the same gradients, in one-block rows and split rows (20,000 columns)."""
    monkeypatch.setattr(_config, "BACKWARD_DW_FIRST_ABOVE_N", first_above_n)
    monkeypatch.setattr(_config, "SEGMENT_MAX_M", 0)  # the main tile, not the one-launch form
    ops.clear_caches()
    try:
        plan = _plan.backward_plan(_plan.bucket_of(n), dtype, w_dtype, True, device_key(), False)
        options = plan.main.launch.options(16)
        assert options["DW_FIRST"] is (first_above_n == 0), options
        m = max(plan.small.max_m if plan.small else 0, plan.few_max_m) + 1
        case = Case((m,), n, dtype, w_dtype)
        taken = launches_in(lambda: check_backward_direct(case, op))
        assert plan.main.launch in taken
    finally:
        monkeypatch.undo()
        ops.clear_caches()


def test_few_split_rows_too_long_for_their_blocks_take_the_main_tile():
    """Column blocks of SPLIT_FEW_BLOCK_N would pass a grid's 65,535 in rows of more than
    134M elements, which the main tile's 8,192 still hold (up to ops.MAX_ROW_ELEMENTS)."""
    plan = _plan.backward_plan(0, BF16, BF16, True, device_key(), False)
    few_n = _config.MAX_GRID_Y * _config.SPLIT_FEW_BLOCK_N
    assert plan.for_rows(4, few_n) is plan.few
    assert plan.for_rows(4, few_n + 1) is plan.main
    assert -(-ops.MAX_ROW_ELEMENTS // plan.main.block_n) <= _config.MAX_GRID_Y


@pytest.mark.parametrize("few_max_m", [0, 64], ids=["column blocks", "few rows' blocks"])
def test_split_row_backward_with_several_row_groups(monkeypatch, few_max_m):
    """Rows past one block are split over column blocks and groups of rows; with several
    groups the dweight partials of every group are summed (on a GPU the matrix's long-row
    cases take several groups anyway; the interpreter's small grid needs more programs).
    Up to SPLIT_FEW_MAX_M rows, the column blocks are the narrower SPLIT_FEW_BLOCK_N."""
    monkeypatch.setattr(_config, "SPLIT_FEW_MAX_M", few_max_m)
    monkeypatch.setattr(_config, "SEGMENT_MAX_M", 0)  # 21 rows: else the one-launch backward
    monkeypatch.setattr(_config, "WALK_BACKWARD", False)  # and past it the row walk
    if DEVICE == "cpu":  # 3 groups of 4 row blocks; 4 groups of 10 narrow column blocks
        monkeypatch.setattr(_config, "INTERPRETER_PROGRAMS", 48 if few_max_m else 16)
    ops.clear_caches()
    case = Case((21,), 20000, BF16, F32)
    x, residual, weight, dy, d_res = make_inputs(case)
    plan = _plan.backward_plan(0, x.dtype, weight.dtype, True, x.device, False)
    tile = plan.for_rows(21, case.n)
    assert tile is (plan.few if few_max_m else plan.main)
    assert tile.block_n == (_config.SPLIT_FEW_BLOCK_N if few_max_m else _config.SPLIT_BLOCK_N)
    groups, blocks = plan.grid(tile, 21, case.n)
    assert plan.split_row and groups > 1 and blocks > 1
    _, residual_out, rstd = ops.rms_norm_forward(x, weight, EPS, residual=residual)
    dx, dw, dr = ops.rms_norm_backward(dy, residual_out, weight, rstd, d_res, dx_copy=True)
    expected_dx, _, expected_dw = reference_grads("fused_add", x, residual, weight, dy, d_res, EPS)
    assert_close(dx, expected_dx, case.dtype, "dx")
    assert_close(dr, expected_dx, case.dtype, "dx's copy")
    assert_close(dw, expected_dw, case.dtype, "dweight")
    ops.clear_caches()


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("n, dtype, w_dtype", [(12000, BF16, BF16), (16384, F16, F32)])
def test_rows_of_up_to_16384_take_the_one_block_backward_by_default(op, n, dtype, w_dtype):
    """With the default constants, bf16/f16 rows of 8,192-16,384 columns past the one-launch
    backward (SEGMENT_MAX_M rows) take the long-row one-block backward, no row-dot pass, and
    are right."""
    m = _config.SEGMENT_MAX_M + 4
    for has_dres in (True, False):
        key = (_plan.bucket_of(n), dtype, w_dtype, True, device_key(), has_dres)
        plan = _plan.backward_plan(*key)
        assert not plan.split_row and plan.small_for(m) is None
    taken = launches_in(lambda: check_backward_direct(Case((m,), n, dtype, w_dtype), op))
    assert not any(t.kernel is _kernels._row_dot_kernel for t in taken)
    assert any(t.kernel is _kernels._rms_norm_bwd_kernel for t in taken)


def test_a_one_block_backward_prefetches_only_blocks_of_up_to_its_bytes(monkeypatch):
    """BACKWARD_PREFETCH_MAX_BYTES: the next row block is prefetched where the block's rows
    (x, dy and, fused, d_residual_out) fit it: not in the fused backward of float32 rows of
    8,192 columns (3 x 32 KB), which spilled with it, but in the plain one (2 x 32 KB), in
    bf16 rows, and in split rows, which hold no row sum."""
    monkeypatch.setattr(_config, "BACKWARD_PREFETCH", True)
    monkeypatch.setattr(_config, "BACKWARD_PREFETCH_MAX_BYTES", 65536)
    monkeypatch.setattr(_config, "SPLIT_F32_BACKWARD_ABOVE_N", 8192)
    ops.clear_caches()
    try:
        for n, dtype, has_dres, prefetch in (
            (8192, F32, True, False), (8192, F32, False, True), (4096, F32, True, True),
            (8192, BF16, True, True), (16384, F32, True, True),  # split rows
        ):  # fmt: skip
            plan = _plan.backward_plan(n, dtype, F32, True, device_key(), has_dres)
            assert plan.split_row is (n > 8192)
            assert plan.main.launch.options(16)["PREFETCH"] is prefetch, (n, dtype, has_dres)
        # long rows (past LONG_ROW_N) follow their own setting, whatever their bytes
        for long_prefetch in (True, False):
            monkeypatch.setattr(_config, "LONG_ROW_BACKWARD_PREFETCH", long_prefetch)
            ops.clear_caches()
            plan = _plan.backward_plan(16384, BF16, F32, True, device_key(), True)
            assert not plan.split_row
            assert plan.main.launch.options(16)["PREFETCH"] is long_prefetch
        monkeypatch.setattr(_config, "BACKWARD_PREFETCH_MAX_BYTES", 1 << 20)
        ops.clear_caches()
        plan = _plan.backward_plan(8192, F32, F32, True, device_key(), True)
        assert plan.main.launch.options(16)["PREFETCH"] is True
    finally:
        monkeypatch.undo()
        ops.clear_caches()


def test_float32_rows_take_the_segmented_backward_for_fewer_rows(monkeypatch):
    """SEGMENT_F32_MAX_M caps the segmented one-launch backward's rows for float32 rows (the
    wider SEGMENT_MAX_M was measured on 2-byte rows), split or one-block, fused or plain;
    the smaller of the two wins."""
    monkeypatch.setattr(_config, "SEGMENT_MAX_M", 448)
    monkeypatch.setattr(_config, "SEGMENT_F32_MAX_M", 256)
    ops.clear_caches()
    try:
        for has_dres, w_dtype in itertools.product((True, False), (F32, None)):
            n = 16384  # the one bucket it takes (rows of 8,193-16,384 columns)
            for dtype, max_m in ((F32, 256), (BF16, 448), (F16, 448)):
                key = (_plan.bucket_of(n), dtype, w_dtype, True, device_key(), has_dres)
                plan = _plan.backward_plan(*key)
                assert plan.small.max_m == max_m, key
                assert plan.small_for(max_m) is plan.small and plan.small_for(max_m + 1) is None
        monkeypatch.setattr(_config, "SEGMENT_MAX_M", 100)
        ops.clear_caches()
        assert _plan.backward_plan(16384, F32, F32, True, device_key(), True).small.max_m == 100
    finally:
        monkeypatch.undo()
        ops.clear_caches()


def test_float32_rows_keep_the_split_backward_past_their_own_width(monkeypatch):
    """SPLIT_F32_BACKWARD_ABOVE_N caps the one-block width of float32 rows (one block of
    16,384 of them spills), for the fused and the plain backward; 2-byte rows keep theirs."""
    monkeypatch.setattr(_config, "SPLIT_BACKWARD_ABOVE_N", 16384)
    monkeypatch.setattr(_config, "SPLIT_PLAIN_BACKWARD_ABOVE_N", 16384)
    monkeypatch.setattr(_config, "SPLIT_F32_BACKWARD_ABOVE_N", 8192)
    ops.clear_caches()
    try:
        for has_dres in (True, False):
            for n, dtype, split in ((16384, F32, True), (8192, F32, False), (16384, BF16, False),
                                    (16384, F16, False)):  # fmt: skip
                plan = _plan.backward_plan(n, dtype, F32, True, device_key(), has_dres)
                assert plan.split_row is split, (n, dtype, has_dres)
        # the narrower of the two wins
        monkeypatch.setattr(_config, "SPLIT_PLAIN_BACKWARD_ABOVE_N", 4096)
        ops.clear_caches()
        assert _plan.backward_plan(8192, F32, F32, True, device_key(), False).split_row
        assert not _plan.backward_plan(8192, F32, F32, True, device_key(), True).split_row
    finally:
        monkeypatch.undo()
        ops.clear_caches()


@pytest.mark.parametrize("op", OPS)
def test_rows_past_the_one_block_backwards_width_take_the_split_backward(monkeypatch, op):
    """SPLIT_BACKWARD_ABOVE_N (the backward with a d_residual_out) and
    SPLIT_PLAIN_BACKWARD_ABOVE_N (without one) move rows that fit one block to the split
    backward: each call takes its own plan, in both host paths (those just past its width are
    split, those at it are not), and all are right."""
    monkeypatch.setattr(_config, "SPLIT_BACKWARD_ABOVE_N", 1024)
    monkeypatch.setattr(_config, "SPLIT_PLAIN_BACKWARD_ABOVE_N", 2048)
    monkeypatch.setattr(_config, "SEGMENT_MAX_M", 0)  # 5 rows: else the one-launch backward
    monkeypatch.setattr(_config, "WALK_BACKWARD", False)  # and past it the row walk
    ops.clear_caches()
    try:
        for n in (1024, 1100, 2048, 2100):
            key = (_plan.bucket_of(n), BF16, BF16, True, device_key())
            for has_dres, above in ((True, 1024), (False, 2048)):
                assert _plan.backward_plan(*key, has_dres).split_row is (n > above), n
            x, residual, weight, dy, d_res = make_inputs(Case((5,), n, BF16, BF16))
            rows = residual if op == "fused_add" else None
            _, residual_out, rstd = ops.rms_norm_forward(x, weight, EPS, residual=rows)
            x_in = x if residual_out is None else residual_out
            # each call alone, so that one's launches cannot stand for the other's
            for d_residual_out in (None, d_res) if op == "fused_add" else (None,):
                call = (ops.rms_norm_backward, dy, x_in, weight, rstd, d_residual_out)
                taken = launches_in(functools.partial(*call))
                split = n > (2048 if d_residual_out is None else 1024)
                row_dot = any(t.kernel is _kernels._row_dot_kernel for t in taken)
                assert row_dot is split, (n, d_residual_out is not None)
            check_backward_direct(Case((5,), n, BF16, BF16), op)
    finally:
        monkeypatch.undo()
        ops.clear_caches()


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize(
    "prefetch, weight_per_block, per_warp",
    [(True, False, 32), (False, True, 1024), (False, False, 2048)],
    ids=["prefetch", "weight per block", "wide warps"],
)
def test_long_rows_in_one_block_with_the_long_row_constants(
    monkeypatch, op, prefetch, weight_per_block, per_warp
):
    """Rows past LONG_ROW_N that fit one block take the long-row constants of the one-block
    backward (warps, prefetch, the weight loaded per row block), in its few-rows tile too;
    rows at it do not. Each program walks several row blocks (one row each), so the
    prefetched block and the weight loaded again are used: every gradient is right."""
    monkeypatch.setattr(_config, "LONG_ROW_N", 512)
    monkeypatch.setattr(_config, "SMALL_MAX_ELEMENTS", 0)  # else the one-launch backward
    monkeypatch.setattr(_config, "BACKWARD_TILE_BYTES", 2048)  # one bf16 row of 1,024 a block
    monkeypatch.setattr(_config, "LONG_ROW_BACKWARD_PREFETCH", prefetch)
    monkeypatch.setattr(_config, "LONG_ROW_BACKWARD_WEIGHT_PER_BLOCK", weight_per_block)
    monkeypatch.setattr(_config, "LONG_ROW_BACKWARD_ELEMENTS_PER_WARP", per_warp)
    if DEVICE == "cpu":
        monkeypatch.setattr(_config, "INTERPRETER_PROGRAMS", 3)
    ops.clear_caches()
    try:
        for n, long in ((512, False), (1000, True)):
            plan = _plan.backward_plan(_plan.bucket_of(n), BF16, F32, True, device_key(), False)
            assert not plan.split_row, n
            for tile in {plan.main, plan.few or plan.main}:
                launch = tile.launch
                if long:
                    warps = min(_config.LONG_ROW_MAX_WARPS, tile.block_m * tile.block_n // per_warp)
                    warps = min(warps, 16) if torch.version.hip else warps
                    assert launch.num_warps == max(1, warps), n
                constexprs = dict(launch.constexprs)
                assert constexprs["WEIGHT_PER_BLOCK"] is (long and weight_per_block), n
                assert constexprs["PREFETCH"] is (prefetch if long else _config.BACKWARD_PREFETCH)
            m = 2 * plan.max_programs + 3  # past the few rows' tile, if any
            main = plan.for_rows(m, n)
            assert main is plan.main and (main.block_m == 1 or not long), n
            assert plan.grid(main, m, n)[0] < -(-m // main.block_m), n  # several blocks each
            for w_dtype in (F32, None):
                case = Case((m,), n, BF16, w_dtype)
                taken = launches_in(lambda case=case: check_backward_direct(case, op))
                backward = {t for t in taken if t.kernel in BACKWARD_KERNELS}
                # the launch of this tile (a new object: launches_in clears the plans first)
                form = lambda t: (t.num_warps, *(  # noqa: E731
                    dict(t.constexprs).get(k) for k in ("PREFETCH", "WEIGHT_PER_BLOCK", "BLOCK_M")
                ))  # fmt: skip
                assert form(main.launch) in {form(t) for t in backward}, n
                kernels = {t.kernel for t in backward} - {_kernels._sum_partials_kernel}
                assert kernels == {_kernels._rms_norm_bwd_kernel}, n
    finally:
        monkeypatch.undo()
        ops.clear_caches()


def test_long_rows_take_at_most_16_warps_on_rocm(monkeypatch):
    """A ROCm block holds at most 1,024 threads, 16 wavefronts of 64: past LONG_ROW_N, where
    up to LONG_ROW_MAX_WARPS = 32 is allowed, ROCm's builds stop at 16."""
    monkeypatch.setattr(_config, "LONG_ROW_N", 512)
    monkeypatch.setattr(_config, "LONG_ROW_BACKWARD_ELEMENTS_PER_WARP", 32)
    try:
        for hip, warps in ((None, 32), ("6.4.0", 16)):
            monkeypatch.setattr(torch.version, "hip", hip)
            ops.clear_caches()
            plan = _plan.backward_plan(1024, BF16, BF16, True, torch.device("cpu"), False)
            assert plan.main.launch.num_warps == warps, hip
    finally:
        monkeypatch.undo()
        ops.clear_caches()


# ---------------------------------------------------------------------------------------------
# Autograd: the public functions, every gradient
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_autograd(case, op):
    x, residual, weight, dy, d_res = make_inputs(case, requires_grad=True)
    expected = reference_grads(op, x, residual, weight, dy, d_res)
    if op == "rms_norm":
        rk.rms_norm(x, weight).backward(dy)
        got = (x.grad, None, None if weight is None else weight.grad)
    else:
        out, residual_out = rk.fused_add_rms_norm(x, residual, weight)
        torch.autograd.backward([out, residual_out], [dy, d_res])
        got = (x.grad, residual.grad, None if weight is None else weight.grad)
    # dweight sums products of x-dtype values: its error follows x's dtype, whatever w's is
    for name, g, e in zip(("dx", "dresidual", "dweight"), got, expected, strict=True):
        if e is None:
            assert g is None, name
        else:
            assert g is not None, name
            assert_close(g, e, case.dtype, name)
    assert x.grad.dtype == x.dtype
    if weight is not None:
        assert weight.grad.dtype == weight.dtype


def test_fused_add_backward_with_only_one_output_used():
    x, residual, weight, dy, d_res = make_inputs(Case((5,), 128, F32, F32), requires_grad=True)
    _, residual_out = rk.fused_add_rms_norm(x, residual, weight)
    residual_out.backward(d_res)
    assert_close(x.grad, d_res, F32, "dx")
    assert_close(residual.grad, d_res, F32, "dresidual")
    assert weight.grad is None


def test_weight_gradient_skipped_when_frozen():
    x, _, weight, dy, _ = make_inputs(Case((4,), 64, F32, F32))
    x.requires_grad_()
    rk.rms_norm(x, weight).backward(dy)
    expected_dx, _, _ = reference_grads("rms_norm", x, None, weight, dy, None)
    assert_close(x.grad, expected_dx, F32, "dx")
    assert weight.grad is None


# ---------------------------------------------------------------------------------------------
# Launcher cache: a new M or a d(residual_out) reuses the compiled callable
# ---------------------------------------------------------------------------------------------


def test_fused_backward_reuses_the_plan():
    """The backward with a d(residual_out) and the one without each build their plan once
    (the first may leave one block at narrower rows); a new M builds none."""
    case = Case((6,), 3000, BF16, BF16)
    x, residual, weight, dy, d_res = make_inputs(case)
    _, residual_out, rstd = ops.rms_norm_forward(x, weight, 1e-6, residual=residual)
    ops.clear_caches()
    ops.rms_norm_backward(dy, residual_out, weight, rstd, None)
    ops.rms_norm_backward(dy, residual_out, weight, rstd, d_res)
    ops.rms_norm_backward(dy[:2], residual_out[:2], weight, rstd[:2], d_res[:2])
    ops.rms_norm_backward(dy[:3], residual_out[:3], weight, rstd[:3], None)
    assert _plan.backward_plan.cache_info().misses == 2


def test_long_rows_stream_from_stream_min_n_on():
    """The chunked forward's L2 hint is keyed by N: rows past one block but short of
    STREAM_MIN_N keep Triton's default policy, longer ones stream their last touches (rows
    enough that the forward is not split)."""
    streams = []
    rows = _config.FORWARD_SPLIT_MAX_M + 1
    for n in (4096, 20000, _config.STREAM_MIN_N):
        x, residual, weight, *_ = make_inputs(Case((rows,), n, BF16, BF16))
        (launch,) = launches_in(lambda x=x, r=residual, w=weight: rk.fused_add_rms_norm(x, r, w))
        streams.append(launch.options(16)["STREAM"])
    assert streams == ["", "", "evict_first"]


def test_new_m_does_not_build_another_plan():
    ops.clear_caches()
    for m in (3, 17, 1):
        x, residual, weight, dy, _ = make_inputs(Case((m,), 768, F16, F16), requires_grad=True)
        y, _ = rk.fused_add_rms_norm(x, residual, weight)
        y.backward(dy)
        rk.rms_norm(x, weight).backward(dy)
    # one forward plan each for plain and fused; one backward plan, shared (only y is used,
    # so the fused backward has no d(residual_out))
    assert _plan.forward_plan.cache_info().misses == 2
    assert _plan.backward_plan.cache_info().misses == 1


@pytest.mark.gpu("the interpreter compiles nothing")
def test_triton_compiles_once_per_variant_on_gpu():
    from rmsnorm_kernels._kernels import _rms_norm_bwd_kernel, _rms_norm_fwd_kernel

    def compiled():
        caches = [
            k.device_caches[torch.cuda.current_device()][0]
            for k in (_rms_norm_fwd_kernel, _rms_norm_bwd_kernel)
        ]
        return sum(len(c) for c in caches)

    def step(m, with_dres):
        x, residual, weight, dy, d_res = make_inputs(
            Case((m,), 4096, BF16, BF16), requires_grad=True
        )
        out, s = rk.fused_add_rms_norm(x, residual, weight)
        torch.autograd.backward(
            [out, s] if with_dres else [out], [dy, d_res] if with_dres else [dy]
        )

    # 64 rows take the few-rows backward, 4096 the other one; with and without a gradient of
    # residual_out (a constexpr flag): compile all four first
    for m, with_dres in itertools.product((64, 4096), (False, True)):
        step(m, with_dres)
    before = compiled()
    step(64, True)
    step(4096, False)
    step(2048, False)
    step(100, True)
    assert compiled() == before


@pytest.mark.gpu("the interpreter launches no compiled kernels")
def test_a_variant_is_compiled_once_per_specialisation(monkeypatch):
    """A new M reuses the variant (integers are unspecialised); a pointer 2 bytes off 16-byte
    alignment is a variant of its own, compiled once; results are right in every case."""
    compiled = []
    real = _extension.compiled_variant

    def count(launch_id, *args):
        compiled.append(_plan.LAUNCHES[launch_id].kernel.__name__)
        return real(launch_id, *args)

    monkeypatch.setattr(_extension, "compiled_variant", count)
    ops.clear_caches()
    g = torch.Generator().manual_seed(5)
    w = (1 + 0.1 * torch.randn(4096, generator=g)).to(BF16).to(DEVICE)

    def check(x, label):
        x = x.detach().requires_grad_()
        wl = w.detach().clone().requires_grad_()
        dy = torch.randn(x.shape, generator=g).to(BF16).to(DEVICE)
        out = rk.rms_norm(x, wl)
        out.backward(dy)
        xr, wr = leaf_copies(x.detach(), w)
        expected = rms_norm_reference(xr, wr)
        expected.backward(dy)
        assert_close(out, expected, BF16, f"{label}: out")
        assert_close(x.grad, xr.grad, BF16, f"{label}: dx")
        assert_close(wl.grad, wr.grad, BF16, "dweight")

    # past the one-launch backward of few rows and the few-rows tile (4 row blocks a program:
    # 1,056 rows on an H100's 132 SMs, 32 under the interpreter), so that every M takes the
    # main tile on a full persistent grid: row groups, partials, then their sum
    plan = _plan.backward_plan(4096, BF16, BF16, True, torch.device(DEVICE), False)
    first = max(plan.small.max_m if plan.small else 63, plan.few_max_m) + 1
    rows = (first, first + 136, first + 36)
    assert all(plan.for_rows(m, 4096) is plan.main and not plan.small_for(m) for m in rows)
    assert all(plan.grid(plan.main, m, 4096)[0] == plan.max_programs for m in rows)
    for m in rows:
        check(torch.randn(m, 4096, generator=g).to(BF16).to(DEVICE), f"M={m}")
    assert sorted(compiled) == sorted(
        ["_rms_norm_fwd_kernel", "_rms_norm_bwd_kernel", "_sum_partials_kernel"]
    )
    flat = torch.randn(first * 4096 + 8, generator=g).to(BF16).to(DEVICE)
    check(flat[8:].view(first, 4096), "16 bytes in")  # aligned: the same variants
    assert len(compiled) == 3
    for _ in range(2):  # 2 bytes in: other variants, compiled once
        check(flat[1 : 1 + first * 4096].view(first, 4096), "2 bytes in")
    assert len(compiled) == 5  # the forward and the backward (dweight's sum reads fresh memory)
    ops.clear_caches()


# ---------------------------------------------------------------------------------------------
# Numerics and layouts
# ---------------------------------------------------------------------------------------------


def test_dweight_is_deterministic():
    case = Case((300,), 200, BF16, F32)
    runs = []
    for _ in range(3):
        x, residual, weight, dy, _ = make_inputs(case, requires_grad=True)
        out, _ = rk.fused_add_rms_norm(x, residual, weight)
        out.backward(dy)
        runs.append(weight.grad.clone())
    assert all(torch.equal(runs[0], r) for r in runs[1:])


@pytest.mark.parametrize("dtype", [F32, F16, BF16], ids=str)
def test_eps_none_matches_torch(dtype):
    # small inputs make eps visible: finfo(bf16).eps would move the result by percents
    x = (0.01 * torch.randn(8, 256, generator=torch.Generator().manual_seed(1))).to(dtype)
    expected = F.rms_norm(x, (256,))
    assert_close(rk.rms_norm(x.to(DEVICE)), expected, dtype, "out")


def test_noncontiguous_inputs():
    base = torch.randn(6, 512, generator=torch.Generator().manual_seed(2)).to(DEVICE)
    x = base[::2, 128:384]  # row stride 1024, read in place
    w = torch.randn(256).to(DEVICE)
    assert_close(rk.rms_norm(x, w), rms_norm_reference(x, w), F32, "strided rows")
    xt = torch.randn(256, 6).to(DEVICE).t()  # last dim not contiguous: copied first
    assert_close(rk.rms_norm(xt, w), rms_norm_reference(xt, w), F32, "transposed")
    # an expanded (stride 0) dy, as from out.sum().backward()
    x = x.clone().requires_grad_()
    rk.rms_norm(x, w).sum().backward()
    xr = x.detach().clone().requires_grad_()
    rms_norm_reference(xr, w).sum().backward()
    assert_close(x.grad, xr.grad, F32, "dx from expanded dy")


def test_row_alignment_is_the_power_of_two_dividing_n_and_every_stride():
    assert _config.row_alignment(4096, 4096) == 16  # capped: Triton knows 16 itself
    assert _config.row_alignment(3000, 3000) == 8  # 16-byte rows of bf16
    assert _config.row_alignment(3000, 3004, 3000) == 4
    assert _config.row_alignment(3000, 3001) == 1
    assert _config.row_alignment(96, 0) == 16  # a stride of 0 (one row, or expanded)


@pytest.mark.parametrize("op", OPS)
def test_unaligned_n_with_row_strides_of_other_alignments(op):
    # N = 3000 (a multiple of 8); x's rows 3004 apart (ALIGN 4), the residual's 3001 (ALIGN 1)
    g = torch.Generator().manual_seed(4)
    bases = [torch.randn(5, width, generator=g).to(BF16) for width in (3004, 3001)]
    w = (1 + 0.1 * torch.randn(3000, generator=g)).to(BF16)
    dy = torch.randn(5, 3000, generator=g).to(BF16).to(DEVICE)

    def grads(fn):
        leaves = leaf_copies(*[t.to(DEVICE) for t in (*bases, w)])
        x, residual = (b[:, :3000] for b in leaves[:2])  # strided views of the leaves
        assert (x.stride(0), residual.stride(0)) == (3004, 3001)
        out = fn(x, leaves[2], EPS) if op == "rms_norm" else fn(x, residual, leaves[2], EPS)[0]
        out.backward(dy.to(out.dtype))
        return [out.detach()] + [t.grad for t in leaves]

    if op == "rms_norm":
        got, expected = grads(rk.rms_norm), grads(rms_norm_reference)
    else:
        got = grads(rk.fused_add_rms_norm)
        expected = grads(fused_add_rms_norm_reference)
    for name, a, b in zip(["out", "dx", "dresidual", "dweight"], got, expected, strict=True):
        assert (a is None) == (b is None), name
        if a is not None:
            assert_close(a, b, BF16, name)


def test_no_grad_path_matches_autograd_path():
    x, residual, weight, _, _ = make_inputs(Case((5,), 300, BF16, BF16), requires_grad=True)
    out, s = rk.fused_add_rms_norm(x, residual, weight)
    with torch.no_grad():
        out2, s2 = rk.fused_add_rms_norm(x, residual, weight)
    assert torch.equal(out, out2) and torch.equal(s, s2)
    assert out.requires_grad and not out2.requires_grad


@pytest.mark.parametrize("lead", [(6,), (2, 3)], ids=["2-D", "3-D"])
def test_autograd_graph_is_one_node(lead):
    """Host time: the public calls record one autograd node, straight onto the leaves (no view
    nodes around it)."""
    x, residual, weight, _, _ = make_inputs(Case(lead, 64, F32, F32), requires_grad=True)
    for out in (rk.rms_norm(x, weight), *rk.fused_add_rms_norm(x, residual, weight)):
        nexts = [type(f).__name__ for f, _ in out.grad_fn.next_functions if f is not None]
        assert nexts and set(nexts) == {"AccumulateGrad"}, nexts


def test_fused_gradients_accumulate_into_separate_buffers():
    """x and residual get the same gradient; as leaves their .grad must not share memory, or a
    second backward would add each increment twice."""
    case = Case((4,), 64, F32, F32)
    x, residual, weight, dy, d_res = make_inputs(case, requires_grad=True)
    xr, rr, wr = leaf_copies(x, residual, weight)
    for _ in range(2):
        out, s = rk.fused_add_rms_norm(x, residual, weight)
        torch.autograd.backward([out, s], [dy, d_res])
        out, s = fused_add_rms_norm_reference(xr, rr, wr)
        torch.autograd.backward([out, s], [dy, d_res])
    assert x.grad.data_ptr() != residual.grad.data_ptr()
    for name, got, expected in (("dx", x.grad, xr.grad), ("dresidual", residual.grad, rr.grad),
                                ("dweight", weight.grad, wr.grad)):  # fmt: skip
        assert_close(got, expected, F32, name)


@pytest.mark.parametrize("inputs", ["leaves", "activations", "leaves with a .grad"])
def test_fused_backward_gives_two_leaves_a_buffer_each(inputs):
    """Where x and residual are both leaves with no .grad yet, the kernel writes their gradient
    twice (autograd would otherwise copy it for one of them); where they are activations, or
    a .grad exists (an in-place add takes it), one tensor serves both (no extra write)."""
    case = Case((5,), 300, BF16, F32)
    x, residual, weight, dy, d_res = make_inputs(case, requires_grad=True)
    leaves = inputs == "leaves"
    if inputs == "activations":
        x, residual = x * 1, residual * 1
    elif inputs == "leaves with a .grad":
        x.grad, residual.grad = torch.zeros_like(x), torch.zeros_like(residual)
    received = {}
    for name, t in (("x", x), ("residual", residual)):
        t.register_hook(lambda g, name=name: received.setdefault(name, g))
    out, s = rk.fused_add_rms_norm(x, residual, weight, EPS)
    torch.autograd.backward([out, s], [dy, d_res])
    gx, gr = received["x"], received["residual"]
    assert (gx.data_ptr() != gr.data_ptr()) == leaves
    expected_dx, _, _ = reference_grads("fused_add", x, residual, weight, dy, d_res, EPS)
    assert_close(gx, expected_dx, case.dtype, "dx")
    assert_close(gr, expected_dx, case.dtype, "dresidual")


@pytest.mark.parametrize("op", OPS)
def test_a_weight_that_is_no_tensor_is_named(op):
    x = torch.randn(2, 8, device=DEVICE)
    call = (lambda w: rk.rms_norm(x, w)) if op == "rms_norm" else (
        lambda w: rk.fused_add_rms_norm(x, x.clone(), w)
    )  # fmt: skip
    for weight in (1.0, [1.0] * 8):
        with pytest.raises(TypeError, match="weight must be a torch.Tensor or None, got"):
            call(weight)


@pytest.mark.filterwarnings("ignore:Sparse CSR tensor support is in beta")
def test_unsupported_dtypes_and_layouts_are_named_as_python_names_them():
    with pytest.raises(TypeError, match=r"dtype torch\.complex64; expected float32"):
        rk.rms_norm(torch.randn(2, 8, dtype=torch.complex64, device=DEVICE))
    for sparse in (torch.randn(4, 8).to_sparse(), torch.randn(4, 8).to_sparse_csr()):
        with pytest.raises(TypeError, match="dense"):
            rk.rms_norm(sparse)


def test_an_inference_mode_input_takes_a_weight_gradient():
    """As F.rms_norm: an input made under torch.inference_mode, a weight that trains."""
    with torch.inference_mode():
        x = torch.randn(4, 64, device=DEVICE)
    weight = torch.randn(64, device=DEVICE, requires_grad=True)
    rk.rms_norm(x, weight, EPS).sum().backward()
    reference = weight.detach().clone().requires_grad_()
    F.rms_norm(x.clone(), (64,), reference, EPS).sum().backward()
    torch.testing.assert_close(weight.grad, reference.grad, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("op", OPS)
def test_double_backward_is_refused(op):
    x, residual, weight, _, _ = make_inputs(Case((2,), 64, F32, F32), requires_grad=True)
    out = (
        rk.rms_norm(x, weight)
        if op == "rms_norm"
        else rk.fused_add_rms_norm(x, residual, weight)[0]
    )
    # both host paths refuse at the first grad that asks for a graph
    with pytest.raises(RuntimeError, match="double backward"):
        torch.autograd.grad(out.pow(2).sum(), x, create_graph=True)
    # a loss linear in the output too (its dy needs no gradient; x, saved, does): the Python
    # path's gradient was silently cut from the graph, and the second derivative came out wrong
    out = rk.rms_norm(x, weight) if op == "rms_norm" else rk.fused_add_rms_norm(x, residual)[0]
    with pytest.raises(RuntimeError, match="double backward"):
        torch.autograd.grad((out * torch.arange(64.0).to(out)).sum(), x, create_graph=True)
    if op == "fused_add":  # where only residual_out is used, no kernel runs: x + residual's
        # gradient passes through, and its second derivative is right (2, of sum(r ** 2))
        residual_out = rk.fused_add_rms_norm(x, residual, weight)[1]
        (gx,) = torch.autograd.grad(residual_out.pow(2).sum(), x, create_graph=True)
        (ggx,) = torch.autograd.grad(gx.sum(), x)
        torch.testing.assert_close(ggx, torch.full_like(x, 2.0))
    # without create_graph, the same gradients are given
    out = rk.rms_norm(x, weight) if op == "rms_norm" else rk.fused_add_rms_norm(x, residual)[0]
    (gx,) = torch.autograd.grad((out * torch.arange(64.0).to(out)).sum(), x)
    assert not gx.requires_grad and torch.isfinite(gx).all()


def test_forward_mode_ad_is_refused_not_dropped():
    # before, the Python path ran its no-grad branch on a dual tensor: the tangent came back
    # None, a derivative of zero with no error
    x, tangent = torch.randn(2, 8, device=DEVICE), torch.randn(2, 8, device=DEVICE)
    weight = torch.ones(8, device=DEVICE)
    with forward_ad.dual_level():
        dual = forward_ad.make_dual(x, tangent)
        with pytest.raises((NotImplementedError, RuntimeError), match="forward-mode AD|jvp"):
            rk.rms_norm(dual, weight)
        with pytest.raises((NotImplementedError, RuntimeError), match="forward-mode AD|jvp"):
            rk.fused_add_rms_norm(dual, x.clone(), weight)


@pytest.mark.parametrize("compiled", [False, True], ids=["eager", "compiled"])
def test_residual_out_needs_no_gradient_where_only_the_weight_does(compiled):
    # as torch's x + residual; before, it required one, and its backward gave the weight none
    x, residual = torch.randn(2, 8, device=DEVICE), torch.randn(2, 8, device=DEVICE)
    weight = torch.ones(8, device=DEVICE, requires_grad=True)
    fused = rk.fused_add_rms_norm
    if compiled:
        fused = torch.compile(fused, fullgraph=True, backend="aot_eager")
    out, residual_out = fused(x, residual, weight)
    assert out.requires_grad and not residual_out.requires_grad
    out.sum().backward()
    assert weight.grad is not None
    x.requires_grad_()
    out, residual_out = fused(x, residual, weight)
    assert residual_out.requires_grad
    (gx,) = torch.autograd.grad(residual_out.sum(), x)
    torch.testing.assert_close(gx, torch.ones_like(x))


def test_an_inference_mode_input_is_copied_only_where_a_backward_can_follow():
    # the compiled path copied x (M x N read and written) on every call that reached its
    # autograd node, a weight that trains under torch.no_grad, or a frozen weight, included
    with torch.inference_mode():
        x = torch.randn(8, 64, device=DEVICE)
    trained = torch.nn.Parameter(torch.ones(64, device=DEVICE))
    for grad, weight in ((False, trained), (True, trained.detach())):
        with torch.set_grad_enabled(grad), torch.profiler.profile() as prof:
            rk.rms_norm(x, weight)
        assert not [e.name for e in prof.events() if e.name == "aten::clone"]


def _under_autocast(kind, dtype, fn):
    """fn() under kind's autocast to dtype (set directly: torch.autocast("cuda") turns itself
    off where no CUDA device is present, and fake CUDA tensors need none)."""
    before = torch.get_autocast_dtype(kind)
    torch.set_autocast_dtype(kind, dtype)
    torch.set_autocast_enabled(kind, True)  # what torch.autocast(kind, dtype) sets
    try:
        return fn()
    finally:
        torch.set_autocast_enabled(kind, False)
        torch.set_autocast_dtype(kind, before)


def _assert_autocast_matches_torchs(x, residual, weight, autocast_dtype, values=True):
    """Ours against torch under x's device's autocast: F.rms_norm for the norm, x + residual
    for residual_out; dtypes always, values where the tensors are real. The fused norm adds
    in float32 where the norm runs in float32 (the sum is rounded to x's dtype only in
    residual_out), so there its reference is F.rms_norm of that sum; elsewhere of x + residual."""
    n = x.shape[-1]

    def ours():
        return rk.rms_norm(x, weight), rk.fused_add_rms_norm(x, residual, weight)

    def torchs():
        y = F.rms_norm(x, (n,), weight)
        wide = y.dtype == torch.float32
        s = x.float() + residual.float() if wide else x + residual
        return y, F.rms_norm(s, (n,), weight), x + residual

    kind = x.device.type
    (y, fused), expected = (_under_autocast(kind, autocast_dtype, f) for f in (ours, torchs))
    case = f"x {x.dtype}, weight {None if weight is None else weight.dtype}, to {autocast_dtype}"
    assert [t.dtype for t in (y, *fused)] == [t.dtype for t in expected], case
    if values:
        assert_close(y, expected[0], y.dtype, case)
        assert_close(fused[0], expected[1], y.dtype, case)
        torch.testing.assert_close(fused[1], expected[2])
    return y.dtype


_AUTOCAST_CASES = [
    (x_dtype, weight_dtype, autocast_dtype)
    for x_dtype in (torch.float32, torch.bfloat16)
    for weight_dtype in (None, x_dtype, torch.float32)
    for autocast_dtype in (torch.bfloat16, torch.float16)
    if weight_dtype != x_dtype or x_dtype != torch.float32
]


def _autocast_inputs(x_dtype, weight_dtype, device):
    x = torch.randn(4, 64, device=device, dtype=x_dtype)
    weight = None if weight_dtype is None else torch.rand(64, device=device, dtype=weight_dtype)
    return x, torch.randn_like(x), weight


def test_autocast_runs_the_norm_in_the_dtype_torch_runs_it_in():
    # the dtype is the installed torch's, never one assumed: torch 2.11 leaves F.rms_norm in
    # bfloat16 under CUDA autocast, later versions run it in float32. Real tensors on this
    # device (the CPU under Triton's interpreter, or the GPU), both host paths
    ops.clear_caches()
    for x_dtype, weight_dtype, autocast_dtype in _AUTOCAST_CASES:
        inputs = _autocast_inputs(x_dtype, weight_dtype, DEVICE)
        _assert_autocast_matches_torchs(*inputs, autocast_dtype)


def test_autocast_under_torch_compile_asks_torch_inside_the_graph():
    # the question is part of what torch.compile traces (fullgraph: no break around it)
    ops.clear_caches()
    x, residual, weight = _autocast_inputs(torch.bfloat16, torch.float32, DEVICE)
    ours = torch.compile(rk.rms_norm, backend="eager", fullgraph=True)
    y, expected = _under_autocast(
        DEVICE,
        torch.bfloat16,
        lambda: (ours(x, weight), F.rms_norm(x, (x.shape[-1],), weight)),
    )
    assert y.dtype == expected.dtype
    assert_close(y, expected, y.dtype, "compiled")


@pytest.mark.parametrize("rule", ["float32", "autocast dtype"])
def test_autocast_follows_torch_where_its_rule_casts_the_norm(rule):
    # a torch whose rule for this device runs rms_norm in float32 (CUDA's in some versions)
    # or in autocast's own dtype, made here for the CPU's autocast: ours must cast as it does,
    # with real kernels and values (torch's own CPU rule leaves the norm in x's dtype)
    if DEVICE != "cpu":
        pytest.skip("the rule is changed for the CPU's autocast; the GPU's is torch's own")

    def ruled(x, normalized_shape, weight=None, eps=None):
        dtype = torch.float32 if rule == "float32" else torch.get_autocast_dtype("cpu")
        with torch.autocast("cpu", enabled=False):
            weight = None if weight is None else weight.to(dtype)
            return torch.rms_norm(x.to(dtype), normalized_shape, weight, eps)

    ops.clear_caches()  # what was asked of torch before the change is forgotten
    try:
        with torch.library._scoped_library("aten", "IMPL") as lib:
            lib.impl("rms_norm", ruled, "AutocastCPU")
            found = {
                (to, _assert_autocast_matches_torchs(*_autocast_inputs(x, w, DEVICE), to))
                for x, w, to in _AUTOCAST_CASES
            }
        # the changed rule was the one followed
        assert found == {(to, torch.float32 if rule == "float32" else to) for to, _ in found}
    finally:
        ops.clear_caches()


@pytest.mark.skipif(ops.HOST_PATH != "cpp", reason="fake CUDA tensors reach only the operators")
def test_cuda_autocast_runs_the_norm_in_the_dtype_torch_runs_it_in():
    # on a GPU with real tensors, and without one with fake CUDA tensors: the compiled
    # operators' AutocastCUDA kernels against torch's own CUDA rule (dtypes; values on a GPU)
    from torch._subclasses.fake_tensor import FakeTensorMode

    ops.clear_caches()
    mode = contextlib.nullcontext() if GPU else FakeTensorMode(allow_non_fake_inputs=True)
    with mode:
        for x_dtype, weight_dtype, autocast_dtype in _AUTOCAST_CASES:
            inputs = _autocast_inputs(x_dtype, weight_dtype, "cuda")
            _assert_autocast_matches_torchs(*inputs, autocast_dtype, values=GPU)
    ops.clear_caches()  # fake tensors' answers are torch's too, but leave none behind


def test_vmap_is_refused_with_a_clear_error():
    with pytest.raises((NotImplementedError, RuntimeError), match="vmap"):
        torch.vmap(lambda t: rk.rms_norm(t))(torch.randn(3, 4, 8).to(DEVICE))


def test_eps_may_be_any_real_number():
    import numpy as np

    x = torch.randn(2, 8).to(DEVICE)
    for eps in (np.float32(1e-2), np.float64(1e-2), 1e-2, 1):
        assert_close(rk.rms_norm(x, eps=eps), rms_norm_reference(x, eps=float(eps)), F32, str(eps))
    with pytest.raises(TypeError, match="eps must be a float"):
        rk.rms_norm(x, eps="1e-6")
    # before: OverflowError, not the documented ValueError
    for call in (
        lambda: rk.rms_norm(x, eps=10**400),
        lambda: rk.fused_add_rms_norm(x, x, eps=10**400),
    ):
        with pytest.raises(ValueError, match="eps must be a number a float can hold"):
            call()


# ---------------------------------------------------------------------------------------------
# Bad input: a clear error that names the problem
# ---------------------------------------------------------------------------------------------


def _t(*shape, dtype=F32):
    return torch.randn(shape).to(dtype).to(DEVICE)


BAD_INPUTS = [
    ("weight shape", lambda: rk.rms_norm(_t(2, 8), _t(7)), ValueError, r"weight has shape \(7,\)"),
    ("weight 2-D", lambda: rk.rms_norm(_t(2, 8), _t(1, 8)), ValueError, r"expected \(8,\)"),
    ("weight dtype", lambda: rk.rms_norm(_t(2, 8, dtype=BF16), _t(8, dtype=F16)), TypeError, r"weight has dtype torch.float16; expected torch.bfloat16 \(x's\) or float32"),
    ("weight dtype, f32 x", lambda: rk.rms_norm(_t(2, 8), _t(8, dtype=F16)), TypeError, r"expected torch.float32 \(x's\)$"),
    ("integer x", lambda: rk.rms_norm(torch.ones(2, 8, dtype=torch.int32)), TypeError, "x has dtype torch.int32"),
    ("not a tensor", lambda: rk.rms_norm([1.0, 2.0]), TypeError, "x must be a torch.Tensor"),
    ("scalar x", lambda: rk.rms_norm(_t()), ValueError, "at least one dimension"),
    ("empty last dim", lambda: rk.rms_norm(_t(3, 0)), ValueError, "empty last dimension"),
    ("negative eps", lambda: rk.rms_norm(_t(2, 8), eps=-1e-5), ValueError, "eps must be a non-negative"),
    ("nan eps", lambda: rk.rms_norm(_t(2, 8), eps=float("nan")), ValueError, "eps must be a non-negative"),
    ("residual shape", lambda: rk.fused_add_rms_norm(_t(2, 8), _t(2, 9)), ValueError, r"residual has shape \(2, 9\)"),
    ("residual dtype", lambda: rk.fused_add_rms_norm(_t(2, 8), _t(2, 8, dtype=F16)), TypeError, "residual has dtype torch.float16"),
    ("integer residual", lambda: rk.fused_add_rms_norm(_t(2, 8), torch.ones(2, 8, dtype=torch.int64)), TypeError, "residual has dtype torch.int64"),
    ("module input", lambda: rk.RMSNorm([4, 8]).to(DEVICE)(_t(2, 8)), ValueError, r"trailing dims are \(4, 8\)"),
    ("module of no dims", lambda: rk.RMSNorm([]).to(DEVICE)(_t(3)), ValueError, "normalized_shape is empty"),
    # the backward op, called directly with a gradient of another dtype (either host path)
    ("gradient dtype", lambda: ops.rms_norm_backward(_t(2, 8), _t(2, 8, dtype=BF16), None, _t(2)), ValueError, r"output gradient has shape \(2, 8\) and dtype torch.float32"),
    ("d_residual_out dtype", lambda: ops.rms_norm_backward(_t(2, 8), _t(2, 8), None, _t(2), _t(2, 8, dtype=F16)), TypeError, "residual has dtype torch.float16"),
]  # fmt: skip


@pytest.mark.parametrize(
    "make, error, message", [b[1:] for b in BAD_INPUTS], ids=[b[0] for b in BAD_INPUTS]
)
def test_bad_input_names_the_problem(make, error, message):
    with pytest.raises(error, match=message):
        make()


@pytest.mark.gpu("to put tensors on two devices")
def test_tensors_on_different_devices():
    with pytest.raises(ValueError, match="weight is on cpu but x is on cuda"):
        rk.rms_norm(_t(2, 8), torch.ones(8))
    with pytest.raises(ValueError, match="residual is on cpu but x is on cuda"):
        rk.fused_add_rms_norm(_t(2, 8), torch.ones(2, 8))


def test_cpu_tensors_without_interpreter(monkeypatch):
    """A CPU tensor where Triton's interpreter is off: so on a GPU machine; made so for both
    host paths otherwise."""
    turned_off = ops._INTERPRETING
    if turned_off:
        monkeypatch.setattr(ops, "_INTERPRETING", False)
        if ops._native is not None:
            _extension._configure(ops._native, interpreting=False)
    try:
        with pytest.raises(ValueError, match="x is a CPU tensor but Triton's interpreter is off"):
            rk.rms_norm(torch.randn(2, 8))
        # the drop-in module takes what torch's takes: a model moved to the CPU to be evaluated
        x = torch.randn(2, 8)
        torch.testing.assert_close(rk.RMSNorm(8, eps=1e-5)(x), torch.nn.RMSNorm(8, eps=1e-5)(x))
    finally:
        if turned_off and ops._native is not None:
            _extension._configure(ops._native, interpreting=True)


@pytest.mark.interpreter("on a GPU machine the CPU tensor x is refused first")
def test_tensors_on_different_devices_cpu_and_meta():
    with pytest.raises(ValueError, match="weight is on meta but x is on cpu"):
        rk.rms_norm(_t(2, 8), torch.ones(8, device="meta"))


# ---------------------------------------------------------------------------------------------
# Modules
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("shape", [16, [3, 8]], ids=["1d", "2d"])
@pytest.mark.parametrize("affine", [True, False])
def test_rmsnorm_module_is_a_drop_in(shape, affine):
    ours = rk.RMSNorm(shape, eps=1e-5, elementwise_affine=affine, device=DEVICE)
    theirs = torch.nn.RMSNorm(shape, eps=1e-5, elementwise_affine=affine, device=DEVICE)
    assert isinstance(ours, torch.nn.RMSNorm)
    assert ours.state_dict().keys() == theirs.state_dict().keys()
    if affine:
        with torch.no_grad():
            theirs.weight.copy_(torch.randn_like(theirs.weight))
        ours.load_state_dict(theirs.state_dict())
        theirs.load_state_dict(ours.state_dict())
    trailing = [shape] if isinstance(shape, int) else shape
    x = torch.randn(2, 5, *trailing, device=DEVICE)
    assert_close(ours(x), theirs(x), F32, "module output")


@pytest.mark.parametrize(
    "x_dtype, weight_dtype",
    [(BF16, F16), (F16, BF16), (F32, BF16), (BF16, torch.float64), (torch.float64, F32)],
    ids=lambda d: str(d).removeprefix("torch."),
)
def test_rmsnorm_module_takes_the_dtypes_torch_takes(x_dtype, weight_dtype):
    """A weight in neither x's dtype nor f32, or x in float64: torch's module runs, so ours
    does (replace_rmsnorm swaps such modules), with torch's output dtype and gradients."""
    theirs = torch.nn.RMSNorm(16, dtype=weight_dtype, device=DEVICE)
    with torch.no_grad():
        theirs.weight.copy_(torch.randn_like(theirs.weight))
    ours = rk.RMSNorm(16, dtype=weight_dtype, device=DEVICE)
    ours.load_state_dict(theirs.state_dict())
    x = torch.randn(4, 16, device=DEVICE).to(x_dtype)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch: "Mismatch dtype between input and weight"
        expected = theirs(x)
    y = ours(x)
    assert y.dtype == expected.dtype == x_dtype
    assert torch.equal(torch.jit.script(ours)(x), y)  # TorchScript's branch does the same
    # one rounding to x's dtype apart at most (the weight's product is formed in f32)
    torch.testing.assert_close(y.float(), expected.float(), rtol=1e-2, atol=2e-2)
    y.float().sum().backward()
    assert ours.weight.grad.dtype == weight_dtype and torch.isfinite(ours.weight.grad).all()


def test_rmsnorm_module_defaults_behave_like_torch():
    """Default-constructed, both modules give the same result on small inputs, where the
    default eps decides it."""
    ours, theirs = rk.RMSNorm(8).to(DEVICE), torch.nn.RMSNorm(8).to(DEVICE)
    x = 1e-3 * torch.randn(3, 8, generator=torch.Generator().manual_seed(3)).to(DEVICE)
    assert_close(ours(x), theirs(x), F32, "default module")


def test_fused_add_module():
    module = rk.FusedAddRMSNorm(32, eps=1e-6, device=DEVICE)
    with torch.no_grad():
        module.weight.copy_(1 + 0.1 * torch.randn(32))
    assert list(module.state_dict()) == ["weight"]
    x, residual = torch.randn(2, 3, 32, device=DEVICE), torch.randn(2, 3, 32, device=DEVICE)
    out, residual_out = module(x, residual)
    w = module.weight.detach().clone().requires_grad_()
    expected, expected_residual = fused_add_rms_norm_reference(x, residual, w, 1e-6)
    assert_close(out, expected, F32, "out")
    assert_close(residual_out, expected_residual, F32, "residual_out")
    out.sum().backward()
    expected.sum().backward()
    assert_close(module.weight.grad, w.grad, F32, "dweight")


# A thread whose first CUDA work is ours: in a fresh process, the autograd engine's device
# thread runs our backward first, and a thread of the user's own runs our forward first
FIRST_ON_A_THREAD = """
import ctypes, threading, torch
import rmsnorm_kernels as rk
from rmsnorm_kernels.reference import rms_norm_reference
assert rk.ops.HOST_PATH == "cpp", rk.ops.HOST_PATH
libcuda = ctypes.CDLL("libcuda.so.1")
x = torch.randn(8, 1024, device="cuda", dtype=torch.bfloat16, requires_grad=True)
w = torch.randn(1024, device="cuda", dtype=torch.bfloat16, requires_grad=True)
g = torch.randn(8, 1024, device="cuda", dtype=torch.bfloat16)
spare = [torch.empty_like(x) for _ in range(4)]
del spare  # the backward's buffers come from the allocator's cache: no runtime call there
y = rk.rms_norm(x, w, 1e-6)
y.backward(g)
x2, w2 = x.detach().clone(), w.detach().clone()
x2.requires_grad_(), w2.requires_grad_()
rms_norm_reference(x2, w2, 1e-6).backward(g.float())
wide = torch.randn(4, 3000, device="cuda", dtype=torch.float16)
got = {}
def first_on_a_thread():
    context = ctypes.c_void_p()
    assert libcuda.cuCtxGetCurrent(ctypes.byref(context)) == 0
    got["context before"] = context.value  # None: a new thread has no current context
    got["y"] = rk.rms_norm(wide, None, 1e-6)
thread = threading.Thread(target=first_on_a_thread)
thread.start()
thread.join()
torch.cuda.synchronize()
assert got["context before"] is None, "the thread had a context: this test tests nothing"
torch.testing.assert_close(x.grad.float(), x2.grad.float(), atol=2e-2, rtol=2e-2)
torch.testing.assert_close(w.grad.float(), w2.grad.float(), atol=2e-1, rtol=2e-2)
torch.testing.assert_close(got["y"].float(), rms_norm_reference(wide, None, 1e-6).float(),
                           atol=1e-2, rtol=1e-2)
print("ok")
"""


@pytest.mark.gpu("a thread without a CUDA context exists only where CUDA does")
@pytest.mark.skipif(ops._native is None, reason="the compiled host path is not in use here")
def test_a_thread_whose_first_cuda_work_is_ours():
    """The compiled path makes the primary context current itself: the driver API, unlike the
    runtime's, fails on a thread that has none ("invalid device context", seen on an H200 at a
    process's first backward)."""
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "-c", FIRST_ON_A_THREAD], capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0 and done.stdout.strip().endswith("ok"), done.stderr[-3000:]


# ---------------------------------------------------------------------------------------------
# The seed's opt-in comparison with PyTorch (prints the table; the asv suites track it)
# ---------------------------------------------------------------------------------------------


@pytest.mark.skipif(
    os.environ.get("RMSNORM_COMPARE_TORCH") != "1", reason="opt-in: set RMSNORM_COMPARE_TORCH=1"
)
def test_rmsnorm_backward_torch_benchmark():
    """Public autograd backward vs public autograd backward, gradients checked first.

    Shapes from RMSNORM_BWD_BENCH_SHAPES="M,N,dtype;..." (default: the suite's matrix).
    """
    from rmsnorm_bench import instrument as common
    from rmsnorm_bench.report import seed_table

    rows = []
    for shape in common.shapes_for("backward"):
        for op in ("rms_norm", "fused_add"):
            figures = {}
            for backend in ("triton", "torch"):
                m = common.measure_case(op, "backward", shape, backend, common.device_contract())
                assert not m.failed, m.failed
                figures[backend] = common.median(m.time)
            name = "rmsnorm_bwd" if op == "rms_norm" else "fused_add_bwd"
            rows.append((name, shape, figures["triton"], figures["torch"]))
    print("\n" + seed_table(rows))


@pytest.mark.skipif(ops._native is None, reason="the compiled host path is not in use here")
def test_a_reinstalled_source_reuses_the_build(tmp_path, monkeypatch):
    # asv reinstalls the package for each commit it measures: the source gets a new time
    # stamp, same bytes; the build (a copy of the source beside it) must not be redone
    copy = tmp_path / "csrc" / _extension.SOURCE.name
    copy.parent.mkdir()
    copy.write_bytes(_extension.SOURCE.read_bytes())
    monkeypatch.setattr(_extension, "SOURCE", copy)
    _extension._build()  # the build of this source, wherever the package's own came from
    from torch.utils.cpp_extension import get_default_build_root

    root = os.environ.get("TORCH_EXTENSIONS_DIR") or get_default_build_root()
    name = ops._native.__name__
    library = Path(root) / name / f"{name}.so"
    built = library.stat().st_mtime_ns
    os.utime(copy)  # "reinstalled"
    assert _extension._build().__name__ == ops._native.__name__
    assert library.stat().st_mtime_ns == built
    assert _extension._build_root() == Path(root)  # where the fast path looks, torch's folder


@pytest.mark.skipif(ops._native is None, reason="the compiled host path is not in use here")
def test_a_stamped_build_loads_without_torchs_builder(monkeypatch):
    import torch.utils.cpp_extension

    built = []
    real = torch.utils.cpp_extension.load
    monkeypatch.setattr(
        torch.utils.cpp_extension, "load", lambda **kw: built.append(1) or real(**kw)
    )
    assert _extension._build().__name__ == ops._native.__name__
    assert not built  # the import made the stamp; this load read it
    library = Path(ops._native.__file__)
    stamp = library.parent / _extension.STAMP
    facts = json.loads(stamp.read_text())
    try:  # a library that is not the one stamped (rebuilt beside this run): the builder decides
        stamp.write_text(json.dumps(dict(facts, size=facts["size"] + 1)))
        assert _extension._build().__name__ == ops._native.__name__
        assert built == [1]
        assert json.loads(stamp.read_text()) == facts  # stamped again after the builder's load
        (library.parent / "lock").touch()  # a build under way there: the builder waits for it
        try:
            monkeypatch.setattr(
                torch.utils.cpp_extension, "load", lambda **kw: built.append(2) or ops._native
            )
            _extension._build()
            assert built == [1, 2]
        finally:
            (library.parent / "lock").unlink()
    finally:
        stamp.write_text(json.dumps(facts))
