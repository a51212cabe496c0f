#!/usr/bin/env python3
"""An example runner for perftune's CommandBackend (protocol in hardware/README.md).

It reads one request from stdin and answers one result per config on stdout. This one measures
on the machine it runs on by calling `perftune measure` (so it works on any host that has a
perftune build: run it over ssh to use another machine as a device):

    perftune_cpu_runner.py [PERFTUNE_BINARY]

On an accelerator host, replace `measure_config` with your own compile-and-time code (e.g.
build the program with JAX/XLA, apply the config's tile sizes, time it) and keep the rest.
"""
import json
import os
import subprocess
import sys
import tempfile
import time

PERFTUNE = sys.argv[1] if len(sys.argv) > 1 else os.environ.get("PERFTUNE_BIN", "perftune")


def measure_config(program_path, knobs, config):
    """Returns one result object of the protocol for one config."""
    args = [PERFTUNE, "measure", program_path, "--config", json.dumps(config), "--json"]
    if not any(k["name"].startswith("fuse.") for k in knobs):
        args.append("--as-kernel")  # a tile space: the program is one fused kernel
    start = time.time()
    run = subprocess.run(args, capture_output=True, text=True)
    if run.returncode != 0:
        return {"status": "runtime_error", "cost": time.time() - start,
                "message": (run.stderr.strip().splitlines() or ["perftune measure failed"])[-1]}
    result = json.loads(run.stdout)["results"][0]
    out = {"status": result["status"], "cost": result["cost"], "message": result["message"]}
    if result["status"] == "ok":
        out.update(seconds=result["seconds"], spread=result["spread"], repeats=result["repeats"])
    return out


def main():
    request = json.load(sys.stdin)
    if request.get("protocol") != "perftune-runner" or request.get("version") != 1:
        sys.exit("expected a perftune-runner version 1 request")
    with tempfile.TemporaryDirectory() as folder:
        program_path = os.path.join(folder, "kernel.json")
        with open(program_path, "w") as f:
            json.dump(request["kernel"]["program"], f)
        results = [measure_config(program_path, request["knobs"], c) for c in request["configs"]]
    json.dump({"results": results}, sys.stdout)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
