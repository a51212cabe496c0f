#!/usr/bin/python3
"""Fused blocks against PyTorch: is perftune's tuned block faster than PyTorch running the same
block at its best, on the same threads?

    bench/fused_blocks.py [--blocks NAME,NAME] [--budget N] [--output DIR] [--threads N]
                          [--runs R] [--rounds K] [--warmup W] [--openblas-coretypes LIST]
                          [--pytorch-only | --report-only] [--perftune BIN] [--programs DIR]

For each block of scripts/blocks_zoo.py (default: all), one after another so that nothing else of
the benchmark runs while one side measures:
 1. export   the PyTorch module to ONNX with its seeded weights and a test data set
             (scripts/models_export.py's export), into OUTPUT/NAME/;
 2. import   it with `perftune import` into PROGRAMS/NAME.json, checked unfused through Halide
             against torch's output (scripts/models_import.py's import_one);
 3. tune     its fusion placements live: configs/campaigns/cpu_fused_block.json with the block's
             program as its source and a budget of N measurements (default 20), from a fresh record
             log in OUTPUT/NAME/tune/; its --json summary gives the best measured seconds and the
             defaults it also measured (no fusion, XLA's greedy fusion, Halide's autoschedulers,
             the library on the block's dots/convolutions alone);
 4. PyTorch  eager and frozen TorchScript of the same block in a process of their own
             (bench/torch_block_peer.py: torch.set_num_threads(THREADS); K rounds (default 5) of R runs
             (default 50) after W warm-ups (default 10), the median of the fastest round kept; the frozen
             output checked against eager's), first with OpenBLAS's kernels as it detects the CPU,
             then with each OPENBLAS_CORETYPE of LIST (default "auto": SkylakeX when the CPU has
             AVX-512 and OpenBLAS fell back to older kernels, as 0.3.21 does on an Intel CPU newer
             than it knows); the fastest of them all is "PyTorch best". The campaign's library
             reference (torch too) runs on the first of LIST's kernels.
--pytorch-only times step 4 again for the run already in OUTPUT and rewrites its outputs;
--report-only times nothing: it rewrites the outputs of OUTPUT/summary.json's rows from their times.
Writes OUTPUT/summary.json (every row and the geometric means), OUTPUT/table.md, and
OUTPUT/speed.png (each way's speed relative to PyTorch best, per block: PyTorch best's time over
that way's; gnuplot, with its speed.gp and speed.dat). Ratios are speed ratios, "x peer": the
peer's time over perftune's, above 1 perftune is faster (summary.json's speedup_over_* keys).
OUTPUT defaults to runs/fused_blocks, PROGRAMS to configs/programs/blocks, THREADS to 2 (perftune's
backend runs on as many). Exits 1 when any block failed (the others still run and are reported),
2 on bad arguments. Needs /usr/bin/python3 with Debian's python3-torch and python3-onnx, a built
build/perftune and gnuplot.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import time

kBench = os.path.dirname(os.path.abspath(__file__))
kRoot = os.path.dirname(kBench)
sys.path.insert(0, os.path.join(kRoot, "scripts"))
try:
    import blocks_zoo  # noqa: E402
    import models_export  # noqa: E402
    import models_import  # noqa: E402
    import torch  # noqa: E402
except ImportError as error:
    sys.exit(f"bench/fused_blocks.py: {sys.executable} cannot import torch/onnx ({error}); run it with /usr/bin/python3 "
             "after scripts/models has installed python3-torch and python3-onnx")
import fused_blocks_report  # noqa: E402
import torch_block_peer  # noqa: E402

kTemplate = os.path.join(kRoot, "configs", "campaigns", "cpu_fused_block.json")


class StageError(Exception):
    """A block's stage failed: the stage's name and perftune's or torch's one-line reason."""

    def __init__(self, stage, reason):
        super().__init__(reason)
        self.stage = stage


def export(name, folder):
    block = blocks_zoo.BLOCKS[name]
    try:
        return models_export.export_module(blocks_zoo.build(name), blocks_zoo.example_inputs(name), block.input_names, folder)
    except Exception as error:  # noqa: BLE001 - any exporter failure is this block's
        raise StageError("export", f"{type(error).__name__}: {str(error).strip().splitlines()[0]}") from error


def campaign_for(name, program, budget, threads, tune_folder):
    """The template campaign with the block's program, the budget and the threads, every path
    absolute (the copy lives in another folder than the template)."""
    with open(kTemplate) as f:
        campaign = json.load(f)
    template_folder = os.path.dirname(kTemplate)
    campaign["name"] = f"cpu_fused_block_{name}"
    campaign["source"]["program"] = os.path.abspath(program)
    campaign["model"]["device"] = os.path.abspath(os.path.join(template_folder, campaign["model"]["device"]))
    campaign["budget"] = {"measurements": budget}
    campaign["backend"]["threads"] = threads
    campaign["output"] = os.path.abspath(tune_folder)
    return campaign


def tune(perftune, name, program, budget, threads, folder, coretypes):
    """Runs the block's campaign from a fresh record log; returns its --json summary. The library
    reference it measures runs torch too: with coretypes, on OpenBLAS's kernels of the first."""
    tune_folder = os.path.join(folder, "tune")
    shutil.rmtree(tune_folder, ignore_errors=True)  # a campaign resumes from its log: this run measures afresh
    os.makedirs(tune_folder)
    path = os.path.join(folder, "campaign.json")
    with open(path, "w") as f:
        json.dump(campaign_for(name, program, budget, threads, tune_folder), f, indent=1)
    with open(os.path.join(folder, "tune.log"), "w") as log:
        env = dict(os.environ, **({"OPENBLAS_CORETYPE": coretypes[0]} if coretypes else {}))
        run = subprocess.run([perftune, "tune", path, "--json"], stdout=subprocess.PIPE, stderr=log, text=True, cwd=kRoot, env=env)
    if run.returncode != 0:
        with open(os.path.join(folder, "tune.log")) as f:
            lines = [line.strip() for line in f if line.strip()]
        raise StageError("tune", lines[-1] if lines else f"perftune tune exited {run.returncode}")
    return json.loads(run.stdout)


# OpenBLAS core types whose kernels use AVX-512; on a CPU with it, any other core type is a fallback.
kAvx512Cores = ("SkylakeX", "Cooperlake", "SapphireRapids")


def cpu_has_avx512():
    with open("/proc/cpuinfo") as f:
        return any(line.startswith("flags") and " avx512f" in line for line in f)


def pytorch_once(name, args, coretype):
    """bench/torch_block_peer.py's JSON for the block, with OPENBLAS_CORETYPE=coretype when given."""
    env = dict(os.environ, **({"OPENBLAS_CORETYPE": coretype} if coretype else {}))
    run = subprocess.run([sys.executable, os.path.join(kBench, "torch_block_peer.py"), name, "--threads", str(args.threads),
                          "--runs", str(args.runs), "--rounds", str(args.rounds), "--warmup", str(args.warmup)],
                         capture_output=True, text=True, env=env)
    if run.returncode != 0 or not run.stdout.strip():
        lines = [line for line in run.stderr.splitlines() if line.strip()]
        raise StageError("pytorch", lines[-1] if lines else f"torch_block_peer.py exited {run.returncode}")
    return json.loads(run.stdout)


def resolve_coretypes(requested):
    """--openblas-coretypes as a list of OPENBLAS_CORETYPE values; "auto" is SkylakeX when the CPU
    has AVX-512 and the OpenBLAS torch loaded here (for the export) fell back to older kernels
    (0.3.21 takes an Intel CPU newer than it knows for a Prescott), else nothing."""
    if requested != ["auto"]:
        return requested
    detected = torch_block_peer.openblas_core()
    return ["SkylakeX"] if detected and detected not in kAvx512Cores and cpu_has_avx512() else []


def pytorch(name, args):
    """PyTorch at its best: torch_block_peer.py with OpenBLAS's kernels as it detects the CPU, then
    with each of args.coretypes. Returns every run's JSON, the as-detected one first."""
    return [pytorch_once(name, args, None)] + [pytorch_once(name, args, coretype) for coretype in args.coretypes]


def pytorch_fields(row, runs):
    """The row's PyTorch times: eager's and frozen's best over the OpenBLAS kernels, and PyTorch
    best with OpenBLAS as it detected the CPU."""
    def best(way):
        run = min(runs, key=lambda r: r[way]["median_seconds"])
        return run[way]["median_seconds"], run.get("openblas_core")

    row.pop("pytorch", None)  # an earlier version's single run
    row["pytorch_runs"] = runs
    (row["eager_seconds"], row["eager_openblas_core"]), (row["frozen_seconds"], row["frozen_openblas_core"]) = best("eager"), best("frozen")
    row["pytorch_detected_best_seconds"] = min(runs[0]["eager"]["median_seconds"], runs[0]["frozen"]["median_seconds"])
    row["pytorch_detected_openblas_core"] = runs[0].get("openblas_core")


def peer_times(defaults):
    """(the fastest Halide autoscheduler's name and seconds, the library's name and seconds) of a
    campaign summary's defaults; None for a peer not measured or failed."""
    schedulers = [(name, d["seconds"]) for name, d in defaults.items() if d.get("kind") == "scheduler" and d.get("seconds")]
    libraries = [(name, d["seconds"]) for name, d in defaults.items() if d.get("kind") == "library" and d.get("seconds")]
    return (min(schedulers, key=lambda p: p[1]) if schedulers else (None, None),
            min(libraries, key=lambda p: p[1]) if libraries else (None, None))


def run_block(name, args, programs):
    """One block end to end; returns its row (with "error" and "failed_stage" when a stage failed)."""
    folder = os.path.join(args.output, name)
    os.makedirs(folder, exist_ok=True)
    row = {"block": name, "source": blocks_zoo.BLOCKS[name].source}
    start = time.perf_counter()
    try:
        exported = export(name, folder)
        row["onnx_ops"] = exported["op_types"]
        imported, error = models_import.import_one(args.perftune, name, args.output, programs)
        if error:
            raise StageError("import", error)
        row["import"] = imported
        program = os.path.join(programs, name + ".json")
        summary = tune(args.perftune, name, program, args.budget, args.threads, folder, args.coretypes)
        row["library_openblas_coretype"] = args.coretypes[0] if args.coretypes else None
        row["perftune_seconds"] = summary.get("best_seconds")
        row["measurements"] = summary.get("measurements")
        row["best_config"] = summary.get("best_config")
        row["defaults"] = summary.get("defaults", {})
        (row["autoscheduler"], row["autoscheduler_seconds"]), (row["library"], row["library_seconds"]) = peer_times(row["defaults"])
        pytorch_fields(row, pytorch(name, args))
    except StageError as error:
        row["failed_stage"], row["error"] = error.stage, str(error)
    row["wall_seconds"] = time.perf_counter() - start
    return fused_blocks_report.row_ratios(row)


def _progress(row):
    if row.get("error"):
        return f"{row['block']}: failed at {row['failed_stage']}: {row['error']}"
    return (f"{row['block']}: perftune {row['perftune_seconds'] * 1e3:.3f} ms, eager {row['eager_seconds'] * 1e3:.3f} ms, "
            f"frozen {row['frozen_seconds'] * 1e3:.3f} ms; perftune at "
            f"{fused_blocks_report.format_ratio(row['speedup_over_pytorch_best'])} PyTorch best ({row['wall_seconds']:.0f} s)")


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--blocks", default="", help=f"comma-separated blocks (default: all: {', '.join(blocks_zoo.NAMES)})")
    parser.add_argument("--budget", type=int, default=20, help="measurements of each block's campaign (default 20)")
    parser.add_argument("--output", default=os.path.join(kRoot, "runs", "fused_blocks"), help="results folder")
    parser.add_argument("--programs", default=os.path.join(kRoot, "configs", "programs", "blocks"),
                        help="where the imported programs go (default configs/programs/blocks)")
    parser.add_argument("--threads", type=int, default=2, help="PyTorch's and perftune's threads (default 2)")
    parser.add_argument("--runs", type=int, default=50, help="PyTorch's timed runs per way (default 50)")
    parser.add_argument("--rounds", type=int, default=5, help="PyTorch's rounds of --runs per way, the fastest kept (default 5)")
    parser.add_argument("--warmup", type=int, default=10, help="PyTorch's untimed runs before each round (default 10)")
    parser.add_argument("--openblas-coretypes", default="auto",
                        help="OpenBLAS kernels PyTorch is also timed with, beside as detected: comma-separated "
                             "OPENBLAS_CORETYPE values, \"auto\" (SkylakeX where OpenBLAS fell back on an AVX-512 CPU) or \"\"")
    only = parser.add_mutually_exclusive_group()
    only.add_argument("--pytorch-only", action="store_true",
                      help="time PyTorch again for the run already in --output, keeping its perftune figures")
    only.add_argument("--report-only", action="store_true",
                      help="time nothing: rewrite --output's summary.json, table.md and plot from its saved times (all its blocks)")
    parser.add_argument("--perftune", default=os.path.join(kRoot, "build", "perftune"))
    args = parser.parse_args()
    args.names = [n for n in args.blocks.split(",") if n] or blocks_zoo.NAMES
    unknown = [n for n in args.names if n not in blocks_zoo.NAMES]
    if unknown:
        parser.error(f"unknown block {', '.join(unknown)} (known: {', '.join(blocks_zoo.NAMES)})")
    if min(args.budget, args.threads, args.runs, args.rounds) < 1 or args.warmup < 0:
        parser.error("--budget, --threads, --runs and --rounds must be at least 1, --warmup at least 0")
    args.output = os.path.abspath(args.output)
    args.openblas_coretypes = [c for c in args.openblas_coretypes.split(",") if c]
    return args


def retime_pytorch(args):
    """--pytorch-only: the rows of the run already in OUTPUT, their PyTorch side timed again (the
    perftune side, which takes minutes of tuning per block, kept as measured)."""
    path = os.path.join(args.output, "summary.json")
    if not os.path.isfile(path):
        raise SystemExit(f"bench/fused_blocks.py: --pytorch-only needs an earlier run's {path}")
    with open(path) as f:
        summary = json.load(f)
    rows = [r for r in summary["blocks"] if r["block"] in args.names]
    for row in rows:
        if not row.get("error"):
            try:
                pytorch_fields(row, pytorch(row["block"], args))
            except StageError as error:
                row["failed_stage"], row["error"] = error.stage, str(error)
            fused_blocks_report.row_ratios(row)
        print(_progress(row), flush=True)
    return summary, rows


def rerender(args):
    """--report-only: the run already in OUTPUT, every row's ratios computed again from its times."""
    path = os.path.join(args.output, "summary.json")
    if not os.path.isfile(path):
        raise SystemExit(f"bench/fused_blocks.py: --report-only needs an earlier run's {path}")
    with open(path) as f:
        summary = json.load(f)
    return summary, [fused_blocks_report.row_ratios(row) for row in summary["blocks"]]


def write_outputs(summary, rows, args):
    """summary.json, table.md and speed.png in OUTPUT; returns the process's exit status."""
    means = fused_blocks_report.geometric_means([r for r in rows if not r.get("error")])
    summary.update({"blocks": rows, "geometric_means": means})
    with open(os.path.join(args.output, "summary.json"), "w") as f:
        json.dump(summary, f, indent=1)
    table = fused_blocks_report.markdown_table(rows, means)
    with open(os.path.join(args.output, "table.md"), "w") as f:
        f.write(table)
    print(table, end="")
    try:
        fused_blocks_report.write_plot(rows, args.output, f"Fused blocks: speed relative to PyTorch best, perftune tuned "
                                                          f"({summary['budget']} measurements), {summary['threads']} threads, batch 1")
    except RuntimeError as error:
        print(f"bench/fused_blocks.py: {error}", file=sys.stderr)
        return 1
    print(f"results in {args.output} ({summary.get('pytorch_wall_seconds', summary['wall_seconds']):.0f} s)")
    failed = [r["block"] for r in rows if r.get("error")]
    if failed:
        print(f"bench/fused_blocks.py: {len(failed)} block(s) failed: {', '.join(failed)} (see {args.output}/summary.json)",
              file=sys.stderr)
        return 1
    return 0


def main():
    args = parse_args()
    if args.report_only:
        return write_outputs(*rerender(args), args)
    start = time.perf_counter()
    args.coretypes = resolve_coretypes(args.openblas_coretypes)
    pytorch_settings = {"runs": args.runs, "rounds": args.rounds, "warmup": args.warmup, "openblas_coretypes": args.coretypes,
                        "openblas_detected": torch_block_peer.openblas_core(), "torch": torch.__version__}
    if args.pytorch_only:
        summary, rows = retime_pytorch(args)
        summary.update(pytorch_settings, pytorch_command=" ".join(sys.argv), pytorch_wall_seconds=time.perf_counter() - start)
        return write_outputs(summary, rows, args)
    probe = subprocess.run([args.perftune, "tune", "--help"], capture_output=True) if os.access(args.perftune, os.X_OK) else None
    if probe is None or probe.returncode != 0:
        print(f"bench/fused_blocks.py: {args.perftune} is missing or has no 'tune' command (build it with scripts/build)", file=sys.stderr)
        return 1
    torch.set_num_threads(1)  # only the export runs torch here; the timed PyTorch runs in its own process
    os.makedirs(args.output, exist_ok=True)
    rows = []
    for name in args.names:
        rows.append(run_block(name, args, os.path.abspath(args.programs)))
        print(_progress(rows[-1]), flush=True)
    summary = {"budget": args.budget, "threads": args.threads, **pytorch_settings,
               "wall_seconds": time.perf_counter() - start, "command": " ".join(sys.argv)}
    return write_outputs(summary, rows, args)


if __name__ == "__main__":
    sys.exit(main())
