"""One training step of a Llama (random weights, from a config) with and without our norms.

usage: python -m rmsnorm_bench.training_step [--layers N] [--hidden N] [--seq N] [--batch N]
                                             [--no-compile]

Side by side in one run, on one GPU: the original model eager, the model after
replace_rmsnorm eager, and torch.compile of each. Each step is forward + loss + backward +
SGD step in bf16; the loss of every variant is checked against the original's on the same
batch before timing, then 10 steps are timed with CUDA events after 3 warm-ups.
"""

import copy
import sys
import time

from . import argument_parser, require_gpu


def llama(args):
    """The original model, its copy with our norms, the count of norms swapped, and a batch."""
    import torch
    import transformers

    import rmsnorm_kernels as rk

    config = transformers.LlamaConfig(
        vocab_size=32000,
        hidden_size=args.hidden,
        intermediate_size=int(args.hidden * 2.6875),
        num_hidden_layers=args.layers,
        num_attention_heads=args.hidden // 128,
        num_key_value_heads=max(1, args.hidden // 512),
        max_position_embeddings=args.seq,
    )
    torch.manual_seed(0)
    original = transformers.LlamaForCausalLM(config).to("cuda", torch.bfloat16)
    ours = copy.deepcopy(original)
    replaced = rk.replace_rmsnorm(ours)
    ids = torch.randint(0, config.vocab_size, (args.batch, args.seq), device="cuda")
    return original, ours, replaced, ids


def step(model, optimizer, ids):
    optimizer.zero_grad(set_to_none=True)
    loss = model(input_ids=ids, labels=ids).loss
    loss.backward()
    optimizer.step()
    return loss


def time_steps(name, model, ids, reference) -> float:
    """Median milliseconds per step, after checking the loss against the original's."""
    import torch

    t0 = time.perf_counter()
    with torch.no_grad():
        loss = model(input_ids=ids, labels=ids).loss.float()
    torch.testing.assert_close(loss, reference, rtol=2e-2, atol=2e-2, msg=name)
    # lr 0: the weights stay as they are, so every variant steps the same model
    optimizer = torch.optim.SGD(model.parameters(), lr=0.0)
    for _ in range(3):
        step(model, optimizer, ids)
    torch.cuda.synchronize()
    warm = time.perf_counter() - t0
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    times = []
    for _ in range(10):
        start.record()
        step(model, optimizer, ids)
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    ms = sorted(times)[len(times) // 2]
    detail = f"median of 10; loss {loss.item():.4f}; warm-up incl. compile {warm:.0f} s"
    print(f"{name:32} {ms:8.2f} ms/step ({detail})", flush=True)
    return ms


def main(argv=None) -> int:
    ap = argument_parser(__spec__.name, __doc__)
    ap.add_argument("--layers", type=int, default=4)
    ap.add_argument("--hidden", type=int, default=4096)
    ap.add_argument("--seq", type=int, default=2048)
    ap.add_argument("--batch", type=int, default=2)
    ap.add_argument("--no-compile", action="store_true")
    args = ap.parse_args(argv)
    require_gpu(ap, instrument=False)  # no instrument here: RMSNORM_BENCH_DEVICE is not read
    import torch

    original, ours, replaced, ids = llama(args)
    variants = {"original eager": original, "rmsnorm_kernels eager": ours}
    if not args.no_compile:
        variants["original torch.compile"] = torch.compile(original)
        variants["rmsnorm_kernels torch.compile"] = torch.compile(ours)
    shape = f"batch {args.batch} x seq {args.seq}"
    print(
        f"Llama: {args.layers} layers, hidden {args.hidden}, {shape}, bf16; "
        f"{replaced} norms swapped"
    )
    with torch.no_grad():
        reference = original(input_ids=ids, labels=ids).loss.float()
    results = {name: time_steps(name, model, ids, reference) for name, model in variants.items()}
    base = results["original eager"]
    for name, ms in results.items():
        print(f"{name:32} {base / ms:5.3f}x the original eager step")
    return 0


if __name__ == "__main__":
    sys.exit(main())
