"""The import stage of scripts/models (run it through that script).

    models_import.py --perftune BIN --out DIR --programs DIR [--only NAME,NAME] [--table-only]

Per network exported under --out (by models_export.py), runs
    BIN import DIR/NAME/model.onnx --output PROGRAMS/NAME.json --check DIR/NAME/test_data_set_0 --json
and keeps its JSON (ops, kernels, unique_kernels, import_seconds, peak_memory_mb, check) in
DIR/NAME/import.json. A failing import is one line (the network and perftune's reason) and the
others go on. Then prints the table of every exported network and writes it into
PROGRAMS/README.md between kTableBegin and kTableEnd. --table-only imports nothing: the table is
rebuilt from the import.json files already there. Exits 1 when any import failed.
"""
import argparse
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import models_zoo  # noqa: E402 - its NAMES order the table

kRoot = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
kTableBegin = "<!-- networks table -->"
kTableEnd = "<!-- end networks table -->"
kColumns = ("network", "opset", "ONNX nodes", "ops", "kernels", "unique kernels", "import s",
            "memory MB", "max relative error")


def _load(path):
    if not os.path.isfile(path):
        return None
    with open(path) as f:
        return json.load(f)


def _relative(path):
    """path from the repository's root when inside it: perftune's messages, which the README
    quotes, then name runs/models/..., not this checkout's location."""
    relative = os.path.relpath(os.path.abspath(path), kRoot)
    return path if relative.startswith("..") else relative


def import_one(perftune, name, out, programs, check=True):
    """Runs perftune import on one network, then the end-to-end check (the whole network unfused
    through Halide, bench/onnx_network_check, beside perftune in the build tree) on torch's data
    set; returns (the import's JSON with "check" added, None) or (None, the reason)."""
    directory = os.path.join(out, name)
    model = _relative(os.path.join(directory, "model.onnx"))
    args = [os.path.abspath(perftune), "import", model, "--output", _relative(os.path.join(programs, name + ".json")),
            "--name", name, "--json"]
    result, error = _run_json(args)
    if error:
        return None, error
    missing = [k for k in ("ops", "kernels", "unique_kernels", "import_seconds", "peak_memory_mb")
               if k not in result]
    if missing:
        return None, f"its --json output lacks {', '.join(missing)}"
    checker = os.path.join(os.path.dirname(os.path.abspath(perftune)), "bench", "onnx_network_check")
    if check and os.path.exists(checker):
        check, error = _run_json([checker, model, _relative(os.path.join(directory, "test_data_set_0"))])
        result["check"] = check if not error else {"error": error}
    return result, None


def _run_json(args):
    """Runs a command that prints JSON; returns (the JSON, None) or (None, its last error line)."""
    run = subprocess.run(args, capture_output=True, text=True, cwd=kRoot)
    if run.returncode != 0:
        lines = [l for l in (run.stderr + run.stdout).splitlines() if l.strip()]
        return None, (lines[-1].strip() if lines else f"exit status {run.returncode}, no message")
    try:
        return json.loads(run.stdout), None
    except json.JSONDecodeError as error:
        return None, f"its output is not JSON ({error})"


def _cell(value, digits=None):
    if value is None:
        return "—"
    if digits is not None:
        return f"{value:.{digits}f}"
    return str(value)


def table_rows(out, names):
    rows = []
    for name in names:
        export = _load(os.path.join(out, name, "export.json"))
        if export is None:
            continue
        imported = _load(os.path.join(out, name, "import.json")) or {}
        result = imported.get("result") or {}
        check = result.get("check")
        if imported.get("error"):
            error = "import failed: " + imported["error"].replace("|", "\\|")
        elif check and "max_relative_error" in check:
            error = f"{check['max_relative_error']:.2e}"
        elif check:
            error = "check failed: " + check.get("error", "?").replace("|", "\\|")
        else:
            error = "not checked" if result else "—"
        rows.append((name, str(export["opset"]), str(export["nodes"]), _cell(result.get("ops")),
                     _cell(result.get("kernels")), _cell(result.get("unique_kernels")),
                     _cell(result.get("import_seconds"), 2), _cell(result.get("peak_memory_mb"), 0),
                     error))
    return rows


def markdown(rows):
    lines = ["| " + " | ".join(kColumns) + " |",
             "| " + " | ".join("---" if i == 0 else "---:" for i in range(len(kColumns) - 1)) + " | --- |"]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


def write_readme(path, table):
    """Replaces what lies between the markers of the README at path (which must have them)."""
    with open(path) as f:
        text = f.read()
    begin, end = text.find(kTableBegin), text.find(kTableEnd)
    if begin < 0 or end < begin:
        raise SystemExit(f"scripts/models: {path} lacks the markers {kTableBegin} ... {kTableEnd}")
    text = text[:begin + len(kTableBegin)] + "\n" + table + "\n" + text[end:]
    with open(path, "w") as f:
        f.write(text)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--perftune", default="build/perftune")
    parser.add_argument("--out", required=True, help="the exports' folder (runs/models)")
    parser.add_argument("--programs", required=True, help="configs/programs/networks")
    parser.add_argument("--only", default="")
    parser.add_argument("--table-only", action="store_true")
    parser.add_argument("--no-check", action="store_true", help="import only: no end-to-end check")
    args = parser.parse_args()
    names = [n for n in args.only.split(",") if n] or models_zoo.NAMES
    os.makedirs(args.programs, exist_ok=True)
    failed = []
    for name in names if not args.table_only else []:
        if _load(os.path.join(args.out, name, "export.json")) is None:
            print(f"{name}: not imported: not exported", flush=True)
            failed.append(name)
            continue
        result, error = import_one(args.perftune, name, args.out, args.programs, not args.no_check)
        with open(os.path.join(args.out, name, "import.json"), "w") as f:
            json.dump({"result": result, "error": error}, f, indent=1)
        if error:
            print(f"{name}: import failed: {error}", flush=True)
            failed.append(name)
        else:
            check = result.get("check") or {}
            checked = (f", max relative error {check['max_relative_error']:.2e}" if "max_relative_error" in check
                       else f", check failed: {check['error']}" if "error" in check else "")
            print(f"{name}: {result['ops']} ops, {result['kernels']} kernels "
                  f"({result['unique_kernels']} unique), {result['import_seconds']:.2f} s{checked}",
                  flush=True)
    # The table covers every network exported, so a run with --only keeps the others' rows.
    rows = table_rows(args.out, models_zoo.NAMES)
    widths = [max(len(c), *(len(r[i]) for r in rows)) if rows else len(c) for i, c in enumerate(kColumns)]
    for row in [kColumns] + rows:
        print("  ".join(v.ljust(w) for v, w in zip(row, widths)).rstrip())
    write_readme(os.path.join(args.programs, "README.md"), markdown(rows))
    if failed:
        print(f"scripts/models: {len(failed)} import(s) failed: {', '.join(failed)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
