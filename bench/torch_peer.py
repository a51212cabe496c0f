#!/usr/bin/python3
"""PyTorch's own inference times for one of scripts/models' networks: the peer perftune's tuned
networks are compared with.

    bench/torch_peer.py NAME [--threads N] [--runs R] [--warmup W] [--tolerance T]

NAME is one of scripts/models_zoo.py's networks (the same definitions, seeded weights and input as
the ONNX export), run at batch 1 in eval mode under torch.no_grad, two ways:
    eager    the module as written
    frozen   torch.jit.optimize_for_inference(torch.jit.freeze(torch.jit.script(model))), with
             torch.jit.trace instead of script when scripting fails (said on stderr and in the JSON)
Each is warmed up W times (default 5), then timed R times (default 20); the frozen one must match
eager's output to a relative error of T (default 1e-3, of the output's largest magnitude: the
freeze folds BatchNorm into convolutions and reorders sums). Prints one JSON object:
    {"model", "threads", "torch", "input_shape",
     "eager": {"median_seconds", "min_seconds", "max_seconds", "q1_seconds", "q3_seconds", "runs"},
     "frozen": {... the same, "method": "script"|"trace", "max_relative_error"}, "best": "eager"|"frozen"}
Exits 1 when the frozen output disagrees with eager's (the JSON is printed anyway), 2 on bad
arguments. Needs Debian's python3-torch and python3-torchvision (scripts/models installs them),
hence /usr/bin/python3: a pyenv python3 does not see them.
"""
import argparse
import json
import os
import statistics
import sys
import time
import warnings

try:
    import torch
    import torchvision  # noqa: F401 - models_zoo needs it; fail here with the same message
except ImportError as error:
    sys.exit(f"bench/torch_peer.py: {sys.executable} cannot import torch/torchvision ({error}); "
             "run it with /usr/bin/python3 after scripts/models has installed python3-torch")

# torch 1.13's scripting of TransformerEncoderLayer warns about a constant of its own class.
warnings.filterwarnings("ignore", message="'batch_first' was found in ScriptModule constants")

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "scripts"))
import models_zoo  # noqa: E402


def first_tensor(output):
    """The network's output tensor (a scripted GoogLeNet, for one, returns a named tuple)."""
    while isinstance(output, (tuple, list)):
        output = output[0]
    return output


def time_runs(function, x, warmup, runs):
    """Seconds of each of `runs` calls of function(x), after `warmup` untimed ones."""
    for _ in range(warmup):
        function(x)
    seconds = []
    for _ in range(runs):
        start = time.perf_counter()
        function(x)
        seconds.append(time.perf_counter() - start)
    return seconds


def summarize(seconds):
    quartiles = statistics.quantiles(seconds, n=4) if len(seconds) > 1 else [seconds[0]] * 3
    return {"median_seconds": statistics.median(seconds), "min_seconds": min(seconds),
            "max_seconds": max(seconds), "q1_seconds": quartiles[0], "q3_seconds": quartiles[2],
            "runs": len(seconds)}


def relative_error(actual, expected):
    """max |actual - expected| over max |expected|: one scale for the whole output, so that
    entries near zero do not dominate."""
    scale = expected.abs().max().item()
    return (actual - expected).abs().max().item() / (scale if scale > 0 else 1.0)


def freeze(model, x):
    """(the frozen, inference-optimized module, "script" | "trace", why script failed or None)."""
    try:
        compiled, method, reason = torch.jit.script(model), "script", None
    except Exception as error:  # noqa: BLE001 - any scripting failure: trace instead
        reason = f"{type(error).__name__}: {str(error).strip().splitlines()[0] if str(error).strip() else ''}"
        print(f"bench/torch_peer.py: torch.jit.script failed ({reason}); using torch.jit.trace",
              file=sys.stderr)
        compiled, method = torch.jit.trace(model, (x,)), "trace"
    return torch.jit.optimize_for_inference(torch.jit.freeze(compiled.eval())), method, reason


def set_threads(threads):
    """torch's intra- and inter-op threads. Before any parallel work: set_num_interop_threads fails
    once the inter-op pool has started."""
    torch.set_num_threads(threads)
    torch.set_num_interop_threads(threads)


def report(program, name, result, eager, frozen, freezing, tolerance):
    """Prints result (the caller's own fields) with "eager", "frozen" and "best" as one JSON object,
    frozen's figures with freeze's method, the frozen output's max_relative_error to eager's and,
    when scripting failed, its script_failure; freezing is (method, reason, that error). Returns
    the exit status: 1, said on stderr, when that error is over tolerance, else 0."""
    method, reason, frozen_error = freezing
    frozen.update({"method": method, "max_relative_error": frozen_error})
    if reason:
        frozen["script_failure"] = reason
    result.update({"eager": eager, "frozen": frozen,
                   "best": "frozen" if frozen["median_seconds"] < eager["median_seconds"] else "eager"})
    print(json.dumps(result, indent=1))
    if frozen_error > tolerance:
        print(f"{program}: {name}: frozen output differs from eager's by "
              f"{frozen_error:.2e} (relative), over the tolerance {tolerance:g}", file=sys.stderr)
        return 1
    return 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("model", help=f"one of: {', '.join(models_zoo.NAMES)}")
    parser.add_argument("--threads", type=int, default=1, help="intra- and inter-op threads (default 1)")
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--tolerance", type=float, default=1e-3)
    args = parser.parse_args()
    if args.model not in models_zoo.NAMES:
        parser.error(f"unknown model {args.model!r} (known: {', '.join(models_zoo.NAMES)})")
    if args.threads < 1 or args.runs < 1 or args.warmup < 0:
        parser.error("--threads and --runs must be at least 1, --warmup at least 0")
    set_threads(args.threads)

    model = models_zoo.build(args.model)
    x = models_zoo.example_input(args.model)
    with torch.no_grad():
        expected = first_tensor(model(x))
        eager = summarize(time_runs(model, x, args.warmup, args.runs))
        frozen_model, method, reason = freeze(model, x)
        frozen_error = relative_error(first_tensor(frozen_model(x)), expected)
        frozen = summarize(time_runs(frozen_model, x, args.warmup, args.runs))
    result = {"model": args.model, "threads": args.threads, "torch": torch.__version__, "input_shape": list(x.shape)}
    return report("bench/torch_peer.py", args.model, result, eager, frozen, (method, reason, frozen_error), args.tolerance)


if __name__ == "__main__":
    sys.exit(main())
