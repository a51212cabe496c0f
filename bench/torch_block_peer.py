#!/usr/bin/python3
"""PyTorch's own times for one of scripts/blocks_zoo.py's fused blocks: bench/torch_peer.py's
measurement (the same timing, freezing and check, imported from it) for a block instead of a
whole network, in a process of its own so torch's thread pool is not alive while perftune measures.

    bench/torch_block_peer.py NAME [--threads N] [--runs R] [--rounds K] [--warmup W] [--tolerance T]

NAME is one of blocks_zoo.NAMES (the same definitions, seeded weights and inputs as the block's
ONNX export), at batch 1 in eval mode under torch.no_grad, eager and frozen
(torch.jit.optimize_for_inference(torch.jit.freeze(torch.jit.script(block)))), in K rounds
(default 5), the two ways alternating: each round warmed up W times (default 10), then timed R
times (default 50; a block runs in milliseconds, so more runs than torch_peer's 20 cost nothing).
Each way's figures are those of its round with the lowest median (timed_in_rounds says why).
Prints torch_peer's JSON object, with "block" for "model", "input_shapes" for "input_shape",
each way's "round_medians_seconds", and "openblas_core", the OpenBLAS kernels torch ran (set
OPENBLAS_CORETYPE to choose them; bench/fused_blocks.py does on a CPU OpenBLAS does not know). Exits 1 when the frozen output differs from eager's by more than
T (default 1e-3, relative to the output's largest magnitude), 2 on bad arguments.
"""
import argparse
import ctypes
import os
import statistics
import sys

import torch_peer  # noqa: E402 - exits with its one-line reason when torch is missing
import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "scripts"))
import blocks_zoo  # noqa: E402


def openblas_core():
    """The core type whose kernels the OpenBLAS torch loaded runs (openblas_get_corename), or None
    when torch has loaded no OpenBLAS. Its DYNAMIC_ARCH build picks them from the CPU's model
    number, or from OPENBLAS_CORETYPE when set: 0.3.21 takes a CPU newer than it knows for a
    Prescott (SSE3), several times slower on a GEMM than its AVX-512 SkylakeX kernels."""
    with open("/proc/self/maps") as maps:
        paths = {line.split()[-1] for line in maps if "blas" in line}
    for path in sorted(p for p in paths if p.startswith("/")):
        library = ctypes.CDLL(path)
        if hasattr(library, "openblas_get_corename"):
            library.openblas_get_corename.restype = ctypes.c_char_p
            return library.openblas_get_corename().decode()
    return None


def timed_in_rounds(functions, inputs, args):
    """Each function's summary over the round with the lowest median of args.rounds rounds of
    args.runs timed calls, the functions alternating round by round, each round after args.warmup
    untimed calls. On this shared 2-vCPU machine a 2-thread run at times goes at its one-thread
    speed for seconds (hardware/timing/parallel_guard.h); a disturbance only slows, so the
    fastest round is the one nearest the truth, as perftune's backend keeps the fastest of its
    disturbed attempts. Every round's median is listed too."""
    rounds = [[] for _ in functions]
    for _ in range(args.rounds):
        for kept, function in zip(rounds, functions):
            kept.append(torch_peer.time_runs(function, inputs, args.warmup, args.runs))
    summaries = []
    for kept in rounds:
        medians = [statistics.median(seconds) for seconds in kept]
        summary = torch_peer.summarize(kept[medians.index(min(medians))])
        summary["round_medians_seconds"] = medians
        summaries.append(summary)
    return summaries


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("block", help=f"one of: {', '.join(blocks_zoo.NAMES)}")
    parser.add_argument("--threads", type=int, default=2, help="intra- and inter-op threads (default 2)")
    parser.add_argument("--runs", type=int, default=50)
    parser.add_argument("--warmup", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=5, help="rounds of --runs calls per way; the fastest is kept (default 5)")
    parser.add_argument("--tolerance", type=float, default=1e-3)
    args = parser.parse_args()
    if args.block not in blocks_zoo.NAMES:
        parser.error(f"unknown block {args.block!r} (known: {', '.join(blocks_zoo.NAMES)})")
    if args.threads < 1 or args.runs < 1 or args.rounds < 1 or args.warmup < 0:
        parser.error("--threads, --runs and --rounds must be at least 1, --warmup at least 0")
    torch_peer.set_threads(args.threads)

    block = blocks_zoo.build(args.block)
    inputs = blocks_zoo.example_inputs(args.block)
    with torch.no_grad():
        expected = torch_peer.first_tensor(block(*inputs))
        # torch_peer.freeze traces one input when scripting fails; every block here scripts.
        frozen_block, method, reason = torch_peer.freeze(block, inputs[0])
        frozen_error = torch_peer.relative_error(torch_peer.first_tensor(frozen_block(*inputs)), expected)
        eager, frozen = timed_in_rounds([lambda xs: block(*xs), lambda xs: frozen_block(*xs)], inputs, args)
    result = {"block": args.block, "threads": args.threads, "torch": torch.__version__,
              "input_shapes": [list(x.shape) for x in inputs], "openblas_core": openblas_core(),
              "openblas_coretype_env": os.environ.get("OPENBLAS_CORETYPE")}
    return torch_peer.report("bench/torch_block_peer.py", args.block, result, eager, frozen, (method, reason, frozen_error),
                             args.tolerance)


if __name__ == "__main__":
    sys.exit(main())
