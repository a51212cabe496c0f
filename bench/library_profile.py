#!/usr/bin/python3
"""Where an exported network's time goes: each kernel's time per call inside the library against
the time tuning measured for it alone.

    bench/library_profile.py RUN_DIR --output DIR [--at-minutes C] [--inputs DIR] [--runs 300] [--threads 2] [--json]

1. `perftune export RUN_DIR --output DIR --profile`: every kernel built with Halide's profiler;
2. the export's example built with CMake and run RUNS times on INPUT_DIR's input_K.bin (default:
   zeros of the right size, which time the same as data for these dense f32 kernels);
3. Halide's report (printed by the example at exit) parsed per kernel, joined with tuning.json.

Prints a table, slowest kernel first: calls per run, milliseconds per run in the library, what
tuning measured for the same calls alone, and their ratio, then the example's own median against
the sum of the kernels' library times (the time between kernels) and the estimate. With the
profiler's sampling the library's figures are within a few percent, not exact.
"""
import argparse
import json
import os
import re
import subprocess
import sys

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
PERFTUNE = os.environ.get("PERFTUNE", os.path.join(ROOT, "build", "perftune"))

# Halide 14's report: the pipeline's name on a line, then " total time: T ms  samples: S  runs: R  time/run: U ms".
REPORT = re.compile(r"^(\S+)\n\s*total time: ([\d.]+) ms\s+samples: \d+\s+runs: (\d+)\s+time/run: ([\d.]+) ms", re.M)


def run(argv, **kwargs):
    result = subprocess.run(argv, capture_output=True, text=True, **kwargs)
    if result.returncode != 0:
        lines = [line for line in (result.stdout + result.stderr).splitlines() if line.strip()]
        sys.exit(f"library_profile: {os.path.basename(argv[0])} exited {result.returncode}: {lines[-1] if lines else ''}")
    return result


def zero_inputs(header, folder):
    """input_K.bin of zeros for every input the header declares."""
    text = open(header).read()
    inputs = int(re.search(r"_INPUTS (\d+)", text).group(1))
    shapes = re.search(r"_argument_shapes\[\]\[8\] = \{(.*)\};", text).group(1)
    os.makedirs(folder, exist_ok=True)
    for k, shape in enumerate(re.findall(r"\{([^}]*)\}", shapes)[:inputs]):
        count = 1
        for extent in shape.split(","):
            count *= max(int(extent), 1)
        with open(os.path.join(folder, f"input_{k}.bin"), "wb") as f:
            f.write(bytes(4 * count))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("run_dir")
    parser.add_argument("--output", required=True)
    parser.add_argument("--at-minutes", type=float)
    parser.add_argument("--inputs", help="folder of input_K.bin (default: zeros)")
    parser.add_argument("--runs", type=int, default=300, help="the profiler samples every millisecond: short kernels need many runs")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()

    export = [PERFTUNE, "export", args.run_dir, "--output", args.output, "--profile", "--json"]
    if args.at_minutes is not None:
        export += ["--at-minutes", str(args.at_minutes)]
    tuning = json.loads(run(export).stdout)
    build = os.path.join(args.output, "example_build")
    run(["cmake", "-S", os.path.join(args.output, "example"), "-B", build, "-DCMAKE_BUILD_TYPE=Release"])
    run(["cmake", "--build", build])
    inputs = args.inputs or os.path.join(args.output, "zero_inputs")
    if not args.inputs:
        zero_inputs(os.path.join(args.output, tuning["entry_point"] + ".h"), inputs)
    printed = run([os.path.join(build, "example"), inputs, args.output, str(args.runs)],
                  env=dict(os.environ, HL_NUM_THREADS=str(args.threads)))
    median = float(re.search(r"median ([\d.]+) ms", printed.stdout).group(1))
    calls = args.runs + 1  # the example's first call writes the outputs, then RUNS timed calls
    library = {name: float(total) / calls for name, total, _, _ in REPORT.findall(printed.stdout + printed.stderr)}
    if not library:
        sys.exit("library_profile: the example printed no Halide profiler report")

    rows = []
    for kernel in tuning["kernels"]:
        measured = kernel["measured_seconds"]
        rows.append({"function": kernel["function"], "kernel": kernel["kernel"], "calls": len(kernel["instances"]),
                     "library_ms": library.get(kernel["function"], 0.0),
                     "alone_ms": None if measured is None else 1e3 * measured * len(kernel["instances"])})
    rows.sort(key=lambda r: -r["library_ms"])
    in_kernels = sum(r["library_ms"] for r in rows)
    estimate = tuning["estimated_latency_seconds"]
    result = {"run": args.run_dir, "example_median_ms": median, "kernels_in_library_ms": in_kernels,
              "estimate_ms": None if estimate is None else 1e3 * estimate, "kernels": rows}
    if args.json:
        print(json.dumps(result, indent=1))
        return
    print("| function | kernel | calls | library ms/run | alone ms/run | library / alone |")
    print("| --- | --- | ---: | ---: | ---: | ---: |")
    for r in rows:
        ratio = f"{r['library_ms'] / r['alone_ms']:.2f}x" if r["alone_ms"] else "-"
        alone = f"{r['alone_ms']:.3f}" if r["alone_ms"] is not None else "untuned"
        print(f"| {r['function']} | {r['kernel']} | {r['calls']} | {r['library_ms']:.3f} | {alone} | {ratio} |")
    print(f"\nexample median {median:.3f} ms; kernels inside the library {in_kernels:.3f} ms; "
          f"between kernels {median - in_kernels:.3f} ms; estimate (kernels alone) "
          f"{'-' if estimate is None else f'{1e3 * estimate:.3f}'} ms")


if __name__ == "__main__":
    main()
