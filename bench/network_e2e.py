#!/usr/bin/python3
"""Whole networks end to end: perftune's exported library after some minutes of tuning on this
machine against PyTorch's CPU inference at its best, on the same input, with the same threads.

    bench/network_e2e.py [--only NAME,...] [--minutes M] [--checkpoints 0,1,5] [--threads 2]
                         [--runs 20] [--halide-peers WAY,...] [--output runs/network_e2e]

Per network (default: resnet18, mobilenet_v2, bert_encoder_layer, efficientnet_b0 at batch 1, as
scripts/models exports them to runs/models/NAME, random weights):
  1. `perftune tune model.onnx --budget-minutes M` (default 5; a rerun resumes and stops at once
     when the budget is spent), greedy fusion with the shipped model ranking annealing's proposals;
  2. for each checkpoint C minutes, `perftune export --at-minutes C`: the library the run had after
     C minutes (0: every kernel's heuristic schedule, untuned), built with its example's CMake, run
     on the export's input (test_data_set_0/input_0.pb), its output checked against torch's
     (output_0.pb, max relative error of the largest magnitude), timed R times a round (median, min, max);
  3. Halide's own schedules of the whole network, timed once each by `perftune measure` (the runner's
     median, its output checked against perftune's reference interpreter): unfused with the
     heuristic schedule (`--fusion none`), XLA-style greedy fusion with it (`--fusion greedy`), and
     Adams2019 on the whole network as one pipeline with Halide's generic machine parameters and this
     machine's, the faster kept, and its greedy search where the beam search outgrows the worker's memory
     (`--as-kernel --autoscheduler Adams2019`). --halide-peers picks which (Adams2019 on a whole network
     can search for half an hour); --halide-peers-only adds them to an earlier run's results.json
     without tuning or timing again;
  4. bench/torch_peer.py NAME: eager and frozen TorchScript, the faster kept, with OpenBLAS's
     kernels as detected and as SkylakeX on an AVX-512 CPU (OpenBLAS 0.3.21 takes a newer Intel
     CPU for a Prescott), the faster kept.
Timing is in K rounds (default 5), the libraries and PyTorch alternating; each keeps the round
with the lowest median.
Writes OUTPUT/results.json and prints a Markdown table. Needs build/perftune and Debian's
python3-torch, python3-torchvision and python3-onnx (scripts/models installs them).
"""
import argparse
import json
import os
import re
import subprocess
import sys

import numpy as np
import onnx
from onnx import numpy_helper

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
PERFTUNE = os.environ.get("PERFTUNE", os.path.join(ROOT, "build", "perftune"))
DEFAULT = ["resnet18", "mobilenet_v2", "bert_encoder_layer", "efficientnet_b0"]


def run(argv, **kwargs):
    result = subprocess.run(argv, capture_output=True, text=True, **kwargs)
    if result.returncode != 0:
        lines = [line for line in (result.stdout + result.stderr).splitlines() if line.strip()]  # the reason is stderr's last line
        raise RuntimeError(f"{os.path.basename(argv[0])} exited {result.returncode}: {lines[-1] if lines else ''}")
    return result.stdout


def tensor(path):
    proto = onnx.TensorProto()
    with open(path, "rb") as f:
        proto.ParseFromString(f.read())
    return numpy_helper.to_array(proto).astype(np.float32)


def build_example(lib):
    """An export's example/ built with CMake into lib/example_build (returned)."""
    build = os.path.join(lib, "example_build")
    run(["cmake", "-S", os.path.join(lib, "example"), "-B", build, "-DCMAKE_BUILD_TYPE=Release"])
    run(["cmake", "--build", build])
    return build


def build_library(name, model_dir, tune_dir, out_dir, minutes):
    """The library of `tune_dir` after `minutes` of tuning, built and run once: its example and
    its output's error against torch's."""
    lib = os.path.join(out_dir, f"lib_{minutes:g}min")
    tuning = json.loads(run([PERFTUNE, "export", tune_dir, "--output", lib, "--at-minutes", str(minutes), "--name", name, "--json"]))
    build = build_example(lib)
    data = os.path.join(lib, "data")
    os.makedirs(data, exist_ok=True)
    tensor(os.path.join(model_dir, "test_data_set_0", "input_0.pb")).tofile(os.path.join(data, "input_0.bin"))
    example = [os.path.join(build, "example"), data, data]
    run(example + ["1"])
    expected = tensor(os.path.join(model_dir, "test_data_set_0", "output_0.pb")).ravel()
    got = np.fromfile(os.path.join(data, "output_0.bin"), dtype=np.float32)
    error = float(np.max(np.abs(got - expected)) / max(float(np.max(np.abs(expected))), 1e-12)) if got.size == expected.size else None
    return {"minutes": minutes, "example": example, "max_relative_error": error, "untuned": len(tuning["untuned"]),
            "kernels": len(tuning["kernels"]), "measurements": tuning["measurements_used"],
            "estimated_seconds": tuning["estimated_latency_seconds"]}


def time_library(library, runs, threads):
    """One round of the library's example: median, min and max of `runs` calls after its first."""
    printed = run(library["example"] + [str(runs)], env=dict(os.environ, HL_NUM_THREADS=str(threads)))
    median, low, high = (float(v) / 1e3 for v in re.search(r"median ([\d.]+) ms over \d+ runs \(min ([\d.]+), max ([\d.]+)\)", printed).groups())
    return {"median_seconds": median, "min_seconds": low, "max_seconds": high}


def pytorch(name, threads, runs, coretypes):
    """torch_peer.py's best over its two ways and OpenBLAS's kernels as detected and as SkylakeX."""
    peer = os.path.join(ROOT, "bench", "torch_peer.py")
    best = None
    for coretype in coretypes:
        env = dict(os.environ, **({"OPENBLAS_CORETYPE": coretype} if coretype else {}))
        result = json.loads(run([sys.executable, peer, name, "--threads", str(threads), "--runs", str(runs)], env=env))
        for way in ("eager", "frozen"):
            row = dict(result[way], way=way, openblas_coretype=coretype or "detected")
            if best is None or row["median_seconds"] < best["median_seconds"]:
                best = row
    return best


HALIDE_PEERS = {"unfused_heuristic": ["--fusion", "none"], "greedy_fusion_heuristic": ["--fusion", "greedy"],
                "adams2019": ["--as-kernel", "--autoscheduler", "Adams2019", "--autoschedule-timeout", "600"]}


def halide_peer(model, way):
    """One of Halide's schedules of the whole network (a HALIDE_PEERS way): {"seconds": S, "settings": ...},
    or {"seconds": None, "message": why} where Halide cannot run it on this network."""
    print(f"[bench] {os.path.basename(os.path.dirname(model))}: {way}", file=sys.stderr, flush=True)
    try:
        result = json.loads(run([PERFTUNE, "measure", model, "--timeout", "600", "--json"] + HALIDE_PEERS[way]))
        result = result["results"][0] if "results" in result else result
        return {"seconds": result["seconds"], "settings": result.get("settings", "")}
    except RuntimeError as error:
        print(f"[bench]   {error}", file=sys.stderr, flush=True)
        return {"seconds": None, "message": str(error)}


def plot(row, path):
    """Latency against minutes of tuning: the estimate after every round, the exported libraries,
    PyTorch at its best, Adams2019 on the whole network (gnuplot, PNG)."""
    data = path + ".dat"
    with open(data, "w") as f:
        for r in row["network_json"]:
            if r["latency_seconds"] is not None:
                f.write(f"{r['tuning_seconds'] / 60} {r['latency_seconds'] * 1e3}\n")
        f.write("\n\n")
        for lib in row["libraries"]:
            f.write(f"{lib['minutes']} {lib['median_seconds'] * 1e3} {lib['min_seconds'] * 1e3} {lib['max_seconds'] * 1e3}\n")
    torch_ms = row["pytorch"]["median_seconds"] * 1e3
    script = (f"set terminal pngcairo size 800,500; set output '{path}.png'; set title '{row['network']}: latency vs tuning time (2 threads)' noenhanced;"
              f"set xlabel 'minutes of tuning'; set ylabel 'ms (batch 1)'; set yrange [0:*]; set key bottom left;"
              f"plot '{data}' index 0 with lines title 'estimate (sum of kernels)',"
              f" '{data}' index 1 with yerrorbars pt 7 title 'exported library (median, min-max)',"
              f" {torch_ms} with lines dt 2 title 'PyTorch at its best ({row['pytorch']['way']})'")
    adams = row.get("halide_peers", {}).get("adams2019", {}).get("seconds")
    if adams:
        script += f", {adams * 1e3} with lines dt 3 title 'Adams2019, whole network'"
    subprocess.run(["gnuplot", "-e", script], check=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--only", default=",".join(DEFAULT))
    parser.add_argument("--minutes", type=float, default=5)
    parser.add_argument("--checkpoints", default="0,1,5", help="minutes of tuning to export at (0: heuristic)")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=5,
                        help="timing rounds, the libraries and PyTorch alternating; each keeps its round with the lowest median")
    parser.add_argument("--halide-peers", default=",".join(HALIDE_PEERS),
                        help=f"Halide's own schedules to time, of {','.join(HALIDE_PEERS)} ('' for none)")
    parser.add_argument("--halide-peers-only", action="store_true",
                        help="add the --halide-peers to OUTPUT/results.json, without tuning or timing again")
    parser.add_argument("--models", default=os.path.join(ROOT, "runs", "models"))
    parser.add_argument("--output", default=os.path.join(ROOT, "runs", "network_e2e"))
    args = parser.parse_args()
    names = [n for n in args.only.split(",") if n]
    peer_ways = [w for w in args.halide_peers.split(",") if w]
    unknown = [w for w in peer_ways if w not in HALIDE_PEERS]
    if unknown:
        parser.error(f"--halide-peers: unknown {','.join(unknown)}; expected some of {','.join(HALIDE_PEERS)}")
    missing = [n for n in names if not os.path.exists(os.path.join(args.models, n, "model.onnx"))]
    if missing:
        run([os.path.join(ROOT, "scripts", "models"), "--export-only", "--only", ",".join(missing), "--out", args.models])
    results_path = os.path.join(args.output, "results.json")
    results = json.load(open(results_path)) if os.path.exists(results_path) else {}
    def save():
        os.makedirs(args.output, exist_ok=True)
        with open(results_path, "w") as f:
            json.dump(results, f, indent=1)

    def time_halide_peers(name):  # saved after each: Adams2019 can take half an hour on a network
        for way in peer_ways:
            results[name].setdefault("halide_peers", {})[way] = halide_peer(os.path.join(args.models, name, "model.onnx"), way)
            save()

    for name in names:
        model_dir = os.path.join(args.models, name)
        if args.halide_peers_only:
            if name not in results:
                sys.exit(f"{results_path}: no {name}; run without --halide-peers-only first")
            time_halide_peers(name)
            continue
        out_dir = os.path.join(args.output, name)
        tune_dir = os.path.join(out_dir, "tune")
        print(f"[bench] {name}: tuning {args.minutes:g} min", file=sys.stderr, flush=True)
        subprocess.run([PERFTUNE, "tune", os.path.join(model_dir, "model.onnx"), "--output", tune_dir,
                        "--budget-minutes", str(args.minutes)], check=True, stdout=subprocess.DEVNULL)
        row = {"network": name, "threads": args.threads, "tuned_minutes": args.minutes, "libraries": []}
        for minutes in (float(c) for c in args.checkpoints.split(",")):
            if minutes <= args.minutes:
                row["libraries"].append(build_library(name, model_dir, tune_dir, out_dir, minutes))
        # On a shared 2-vCPU machine a 2-thread run at times goes at one thread's speed for seconds:
        # a disturbance only slows, so each keeps its fastest round (bench/torch_block_peer.py does the same).
        coretypes = [None, "SkylakeX"] if "avx512f" in open("/proc/cpuinfo").read() else [None]
        for _ in range(args.rounds):
            for library in row["libraries"]:
                timed = time_library(library, args.runs, args.threads)
                library.setdefault("round_medians_seconds", []).append(timed["median_seconds"])
                if timed["median_seconds"] < library.get("median_seconds", float("inf")):
                    library.update(timed)
            timed = pytorch(name, args.threads, args.runs, coretypes)
            medians = row.get("pytorch", {}).get("round_medians_seconds", []) + [timed["median_seconds"]]
            if timed["median_seconds"] < row.get("pytorch", {}).get("median_seconds", float("inf")):
                row["pytorch"] = timed
            row["pytorch"]["round_medians_seconds"] = medians
        row["network_json"] = json.load(open(os.path.join(tune_dir, "network.json")))["rounds"]
        results[name] = row
        save()
        time_halide_peers(name)
    for name in names:
        plot(results[name], os.path.join(args.output, name))
    def ms(seconds):
        return f"{seconds * 1e3:.2f} ms" if seconds else "—"

    print("| network | " + " | ".join(f"perftune {c} min" for c in args.checkpoints.split(",")) +
          " | unfused heuristic | Adams2019 | PyTorch best | perftune / PyTorch | perftune / Adams2019 | max rel. error |")
    print("|---" * (len(args.checkpoints.split(",")) + 7) + "|")
    for name in names:
        row = results[name]
        libs = row["libraries"]
        cells = [f"{l['median_seconds'] * 1e3:.2f} ms ({l['min_seconds'] * 1e3:.2f}-{l['max_seconds'] * 1e3:.2f})" for l in libs]
        peers = row.get("halide_peers", {})
        unfused, adams = (peers.get(way, {}).get("seconds") for way in ("unfused_heuristic", "adams2019"))
        torch_s = row["pytorch"]["median_seconds"]
        final = libs[-1]["median_seconds"]
        errors = max((l["max_relative_error"] or float("inf")) for l in libs)
        print(f"| {name} | " + " | ".join(cells) + f" | {ms(unfused)} | {ms(adams)} | {torch_s * 1e3:.2f} ms ({row['pytorch']['way']}) |"
              f" {torch_s / final:.2f}x | {f'{adams / final:.2f}x' if adams else '—'} | {errors:.1e} |")

if __name__ == "__main__":
    main()
