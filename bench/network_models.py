#!/usr/bin/python3
"""Which model to tune a whole network with: the same network search guided by the shipped learned
model, by the analytical model, and by no model, at equal tuning time on this machine.

    bench/network_models.py [--only NAME,...] [--minutes M] [--checkpoints 1,3,5] [--seed S]
                            [--output runs/network_models] [--time-libraries ROUNDS] [--json]

Per network (default: resnet18, mobilenet_v2, bert_encoder_layer, efficientnet_b0, the program JSONs
of configs/programs/networks/), three campaigns that differ only in their model and strategy, run one
after the other so that a drift of the host spreads over all three:
  shipped     model "learned" (models/halide_cpu, the default) ranking simulated annealing's
              proposals, half of each round near the heuristic and the best measured (`perftune tune`'s default);
  analytical  the same strategy, ranked by the analytical (roofline) model of configs/hardware/host.json;
  none        no model: simulated annealing on measurements alone (measured_annealing).
Each is `perftune tune CAMPAIGN` with "budget": {"minutes": M}; a rerun resumes and stops at once when
the budget is spent. The figure compared is the network's estimated latency (the sum over its kernels
of their fastest measured schedule, times their instances) after C minutes of tuning, read from the
rounds of each run's network.json, and its speedup over every kernel's heuristic schedule.
With --time-libraries R, each network's shipped run is then exported (`perftune export`, the weights as
input buffers, all inputs zeros), built with its example's CMake and timed in R rounds alternating with PyTorch at
its best (bench/network_e2e.py's peer), each keeping its round with the lowest median of 20 runs.
Writes OUTPUT/results.json and prints a Markdown table.
"""
import argparse
import json
import os
import subprocess
import sys

import library_profile
import network_e2e

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
PERFTUNE = os.environ.get("PERFTUNE", os.path.join(ROOT, "build", "perftune"))
DEFAULT = ["resnet18", "mobilenet_v2", "bert_encoder_layer", "efficientnet_b0"]
ANCHORED = {"type": "annealing", "anchored": {"share": 0.5}}
MODELS = {
    "shipped": ({"type": "learned"}, ANCHORED),
    "analytical": ({"type": "analytical", "device": os.path.join(ROOT, "configs", "hardware", "host.json")}, ANCHORED),
    "none": ({"type": "none"}, {"type": "measured_annealing"}),
}


def campaign(network, way, minutes, seed, output):
    model, strategy = MODELS[way]
    return {"name": f"network_{network}_{way}",
            "description": f"{network} tuned live on this CPU for {minutes:g} minutes, model {way} (bench/network_models.py).",
            "source": {"network": os.path.join(ROOT, "configs", "programs", "networks", network + ".json")},
            "backend": {"type": "cpu"}, "model": model, "strategy": strategy,
            "budget": {"minutes": minutes}, "seed": seed, "output": output}


def latency_at(rounds, seconds):
    """The estimated latency after `seconds` of tuning: the last round done by then with every kernel measured."""
    best = None
    for r in rounds:
        if r["tuning_seconds"] <= seconds and r["latency_seconds"] is not None:
            best = r["latency_seconds"]
    return best


def time_libraries(results, output, rounds):
    """results[network]["library"]: the shipped run's library against PyTorch at its best, timed side by side."""
    coretypes = [None, "SkylakeX"] if "avx512f" in open("/proc/cpuinfo").read() else [None]
    for network, row in results.items():
        run = os.path.abspath(os.path.join(output, network, "shipped", "run"))
        lib = os.path.join(run, "..", "library")
        tuning = json.loads(network_e2e.run([PERFTUNE, "export", run, "--output", lib, "--json"]))
        build = network_e2e.build_example(lib)
        inputs = os.path.join(lib, "zero_inputs")
        library_profile.zero_inputs(os.path.join(lib, tuning["entry_point"] + ".h"), inputs)
        library = {"example": [os.path.join(build, "example"), inputs, lib]}
        for _ in range(rounds):
            timed = network_e2e.time_library(library, 20, 2)
            if timed["median_seconds"] < library.get("median_seconds", float("inf")):
                library.update(timed)
            peer = network_e2e.pytorch(network, 2, 20, coretypes)
            if peer["median_seconds"] < row.get("pytorch", {}).get("median_seconds", float("inf")):
                row["pytorch"] = peer
        row["library"] = {"median_seconds": library["median_seconds"], "estimated_seconds": tuning["estimated_latency_seconds"]}
        print(f"[bench] {network}: library {library['median_seconds'] * 1e3:.2f} ms, PyTorch {row['pytorch']['median_seconds'] * 1e3:.2f} ms "
              f"({row['pytorch']['way']})", file=sys.stderr, flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--only", default=",".join(DEFAULT))
    parser.add_argument("--minutes", type=float, default=5)
    parser.add_argument("--checkpoints", default="1,3,5")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--output", default=os.path.join(ROOT, "runs", "network_models"))
    parser.add_argument("--time-libraries", type=int, default=0, metavar="ROUNDS",
                        help="then time each shipped run's library against PyTorch in this many alternating rounds")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    checkpoints = [float(c) for c in args.checkpoints.split(",") if float(c) <= args.minutes]
    results = {}
    for network in [n for n in args.only.split(",") if n]:
        results[network] = {}
        for way in MODELS:
            out = os.path.abspath(os.path.join(args.output, network, way))  # a campaign's paths are relative to its file
            os.makedirs(out, exist_ok=True)
            path = os.path.join(out, "campaign.json")
            with open(path, "w") as f:
                json.dump(campaign(network, way, args.minutes, args.seed, os.path.join(out, "run")), f, indent=1)
            print(f"[bench] {network}: {way}, {args.minutes:g} min", file=sys.stderr, flush=True)
            tuned = subprocess.run([PERFTUNE, "tune", path], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
            if tuned.returncode != 0:
                sys.exit(f"network_models: perftune tune {path} exited {tuned.returncode}: {tuned.stderr.strip().splitlines()[-1:]}")
            summary = json.load(open(os.path.join(out, "run", "network.json")))
            heuristic = summary["heuristic_latency_seconds"]
            results[network][way] = {
                "heuristic_seconds": heuristic, "measurements": summary["measurements"], "tuning_seconds": summary["tuning_seconds"],
                "latency_seconds": {f"{c:g}": latency_at(summary["rounds"], 60 * c) for c in checkpoints}}
            with open(os.path.join(args.output, "results.json"), "w") as f:
                json.dump(results, f, indent=1)
    if args.time_libraries:
        time_libraries(results, args.output, args.time_libraries)
        with open(os.path.join(args.output, "results.json"), "w") as f:
            json.dump(results, f, indent=1)
    if args.json:
        print(json.dumps(results, indent=1))
        return
    last = f"{checkpoints[-1]:g}"
    print("| network | heuristic | " + " | ".join(f"{way} @{c:g} min" for way in MODELS for c in checkpoints) +
          " | " + " | ".join(f"{way} x heuristic @{last}" for way in MODELS) + " |")
    print("|---" * (2 + len(MODELS) * (len(checkpoints) + 1)) + "|")
    for network, row in results.items():
        heuristic = row["shipped"]["heuristic_seconds"]
        cells = [f"{row[way]['latency_seconds'][f'{c:g}'] * 1e3:.2f}" if row[way]["latency_seconds"][f"{c:g}"] else "-"
                 for way in MODELS for c in checkpoints]
        gains = [f"{row[way]['heuristic_seconds'] / row[way]['latency_seconds'][last]:.3f}x ({row[way]['measurements']} meas.)"
                 if row[way]["latency_seconds"][last] else "-" for way in MODELS]
        print(f"| {network} | {heuristic * 1e3:.2f} | " + " | ".join(cells + gains) + " |")
    if args.time_libraries:
        print("\n| network | shipped run's estimate | its library | PyTorch at its best | library x PyTorch |\n|---|---|---|---|---|")
        for network, row in results.items():
            lib, peer = row["library"], row["pytorch"]
            print(f"| {network} | {lib['estimated_seconds'] * 1e3:.2f} ms | {lib['median_seconds'] * 1e3:.2f} ms | "
                  f"{peer['median_seconds'] * 1e3:.2f} ms ({peer['way']}) | {peer['median_seconds'] / lib['median_seconds']:.2f}x |")


if __name__ == "__main__":
    main()
