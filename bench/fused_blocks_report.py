"""The outputs of bench/fused_blocks.py: per-block speed ratios and their geometric means, the
markdown table and the gnuplot bar plot. A speed ratio is the peer's time over perftune's, as the
rest of the project reports them ("x library"): above 1, perftune is faster. Reads only the rows the
benchmark built (see row_ratios for their keys); runs nothing but gnuplot.
"""
import math
import os
import subprocess

# Tableau's first colours, as experiments/gnuplot.cpp's plot_color uses them.
kColors = ("#1f77b4", "#ff7f0e", "#2ca02c", "#8c564b", "#d62728", "#9467bd")
# The bars of the plot: (row key of a time in seconds, legend title); each bar is PyTorch best's time over that one.
kBars = (("perftune_seconds", "perftune tuned"), ("eager_seconds", "PyTorch eager"),
         ("frozen_seconds", "PyTorch frozen TorchScript"),
         ("pytorch_detected_best_seconds", "PyTorch best, OpenBLAS as detected"),
         ("autoscheduler_seconds", "best Halide autoscheduler"),
         ("library_seconds", "library (dots/convs alone)"))


def ratio(numerator, denominator):
    return numerator / denominator if numerator and denominator else None


# The speed ratios of a row: (key, row key of the peer's time in seconds).
kSpeedups = (("speedup_over_pytorch_best", "pytorch_best_seconds"), ("speedup_over_eager", "eager_seconds"),
             ("speedup_over_pytorch_detected", "pytorch_detected_best_seconds"), ("speedup_over_library", "library_seconds"),
             ("speedup_over_autoscheduler", "autoscheduler_seconds"))


def row_ratios(row):
    """Adds the row's PyTorch best and its speed ratios (the peer's seconds over perftune's: above 1,
    perftune is faster); drops the time ratios (perftune_over_*) an earlier version wrote."""
    ways = [(row[f"{way}_seconds"], f"{way}, {row.get(f'{way}_openblas_core') or 'no OpenBLAS'}")
            for way in ("eager", "frozen") if row.get(f"{way}_seconds")]
    row["pytorch_best_seconds"], row["pytorch_best"] = min(ways) if ways else (None, None)
    for key in [k for k in row if k.startswith("perftune_over_")]:
        del row[key]
    for key, peer in kSpeedups:
        row[key] = ratio(row.get(peer), row.get("perftune_seconds"))
    return row


def geometric_mean(values):
    values = [v for v in values if v]
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else None


def geometric_means(rows):
    """Geometric means of the speed ratios over the blocks that have both times, with how many blocks
    each covers."""
    return {key: {"value": geometric_mean([r.get(key) for r in rows]), "blocks": sum(1 for r in rows if r.get(key))}
            for key, _ in kSpeedups}


def _ms(seconds):
    return f"{seconds * 1e3:.3f}" if seconds else "—"


def format_ratio(value):
    return f"{value:.2f}x" if value else "—"


def _library_label(row):
    """The library's name, with OpenBLAS's kernels when it ran OpenBLAS (oneDNN picks its own)."""
    if "OpenBLAS" not in row["library"]:
        return row["library"]
    return f"{row['library']}, {row.get('library_openblas_coretype') or 'as detected'}"


def markdown_table(rows, means):
    """One line per block (times in ms; "x peer" is the peer's time over perftune's, above 1 perftune
    is faster), then the geometric means. Eager and frozen are each at their best OpenBLAS kernels;
    "as detected" is PyTorch best with OpenBLAS's own choice of kernels; "autoscheduler" is Halide's
    fastest."""
    header = ("block", "perftune ms", "eager ms", "frozen ms", "PyTorch best", "x PyTorch best", "x eager",
              "as detected ms", "x as detected", "autoscheduler ms", "library ms", "x library")
    lines = ["| " + " | ".join(header) + " |", "| --- |" + " ---: |" * (len(header) - 1)]
    for r in rows:
        if r.get("error"):
            lines.append(f"| {r['block']} | failed at {r['failed_stage']}: {r['error'].replace('|', '/')} |" + " |" * (len(header) - 2))
            continue
        autoscheduler = f"{_ms(r.get('autoscheduler_seconds'))} ({r['autoscheduler']})" if r.get("autoscheduler") else "—"
        library = f"{_ms(r.get('library_seconds'))} ({_library_label(r)})" if r.get("library") else "—"
        detected = f"{_ms(r.get('pytorch_detected_best_seconds'))} ({r.get('pytorch_detected_openblas_core') or 'no OpenBLAS'})"
        lines.append(f"| {r['block']} | {_ms(r.get('perftune_seconds'))} | {_ms(r.get('eager_seconds'))} | "
                     f"{_ms(r.get('frozen_seconds'))} | {r.get('pytorch_best') or '—'} | "
                     f"**{format_ratio(r.get('speedup_over_pytorch_best'))}** | {format_ratio(r.get('speedup_over_eager'))} | "
                     f"{detected} | {format_ratio(r.get('speedup_over_pytorch_detected'))} | "
                     f"{autoscheduler} | {library} | {format_ratio(r.get('speedup_over_library'))} |")
    mean = {key: format_ratio(value["value"]) for key, value in means.items()}
    lines.append(f"| geometric mean | | | | | **{mean['speedup_over_pytorch_best']}** | {mean['speedup_over_eager']} | | "
                 f"{mean['speedup_over_pytorch_detected']} | | | {mean['speedup_over_library']} |")
    return "\n".join(lines) + "\n"


def _power_of_two_tics(low, high):
    """gnuplot's ytics at the powers of two from low to high ("0.25" 0.25, "0.5" 0.5, "1" 1, ...)."""
    exponents = range(math.ceil(math.log2(low)), math.floor(math.log2(high)) + 1)
    return ", ".join(f'"{2.0 ** e:g}" {2.0 ** e:g}' for e in exponents)


def write_plot(rows, folder, title):
    """folder/speed.png: per block, each way's speed relative to PyTorch best (PyTorch best's time over
    that way's; log scale, above 1 is faster than PyTorch best), from folder/speed.dat and
    folder/speed.gp (kept, to edit and re-render by hand). Returns the PNG's path; raises
    RuntimeError with gnuplot's message when it fails."""
    plotted = [r for r in rows if r.get("pytorch_best_seconds")]
    speeds = [[ratio(r["pytorch_best_seconds"], r.get(key)) for key, _ in kBars] for r in plotted]
    with open(os.path.join(folder, "speed.dat"), "w") as f:
        f.write("# block " + " ".join(key for key, _ in kBars) + "  (PyTorch best's time over each; NaN: not measured)\n")
        for r, values in zip(plotted, speeds):
            f.write(r["block"] + " " + " ".join(f"{v:.6g}" if v else "NaN" for v in values) + "\n")
    measured = [v for values in speeds for v in values if v] or [1.0]
    low, high = min(measured) / 1.25, max(max(measured), 1.0) * 1.25  # every bar's top inside the plot
    columns = ", ".join(f"'speed.dat' using {i + 2}:xtic(1) title \"{label}\" lc rgb \"{kColors[i]}\""
                        for i, (_, label) in enumerate(kBars))
    script = f"""set terminal pngcairo size 1100,600 font "sans,10"
set output 'speed.png'
set title "{title}"
set ylabel "speed relative to PyTorch best (log scale; above 1: faster than PyTorch best)"
set logscale y
set yrange [{low:.4g}:{high:.4g}]
set ytics ({_power_of_two_tics(low, high)})
set grid ytics
set style data histogram
set style histogram clustered gap 1
set style fill solid 0.85 border -1
set boxwidth 0.9
set xtics rotate by -20 left noenhanced
set key below horizontal maxrows 2 noenhanced
set arrow from graph 0, first 1 to graph 1, first 1 nohead dt 2 lw 1.5 lc rgb "black"
plot {columns}
"""
    with open(os.path.join(folder, "speed.gp"), "w") as f:
        f.write(script)
    run = subprocess.run(["gnuplot", "speed.gp"], cwd=folder, capture_output=True, text=True)
    if run.returncode != 0:
        raise RuntimeError(f"gnuplot failed: {(run.stderr.strip().splitlines() or ['no message'])[-1]}")
    return os.path.join(folder, "speed.png")
