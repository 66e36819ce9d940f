#!/usr/bin/env python3
"""The benchmarks' report (scripts/bench.sh): reads what the bench_*
scenarios printed on their consoles under LAB_OUT (lab-out/perf) and the
host figures in REPORT_DIR/host.txt, and writes into REPORT_DIR
(lab-out/bench):

- figures.json: every figure line, every plotted point and each failover
  timeline, with the date, the machine and the commit;
- a PNG per plot (gnuplot): bandwidth against the count in flight
  (`bench-point bandwidth-*`), the message rate against the peers known
  (`bench-point scale-rate`), and per-rail throughput with health across
  each failover cut (scripts/plot_failover.py);
- report.md: the figures and the plots, for a reader.

    bench_report.py [LAB_OUT [REPORT_DIR]]
"""

import datetime
import json
import os
import pathlib
import platform
import subprocess
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import plot_failover  # noqa: E402


def console_lines(out):
    for log in sorted(out.rglob("boot-*/console-vm*.log")):
        for line in log.read_text(errors="replace").splitlines():
            yield line


def gather(out):
    """The figure lines and the plots' points ({plot: {series: [(x, y)]}})."""
    figures, plots = [], {}
    for line in console_lines(out):
        if line.startswith("lab: bench: "):
            figures.append(line[len("lab: bench: "):])
            continue
        f = line.split()
        if len(f) == 6 and f[:2] == ["lab:", "bench-point"]:
            try:
                x, y = float(f[4]), float(f[5])
            except ValueError:
                continue
            plots.setdefault(f[2], {}).setdefault(f[3], []).append((x, y))
    return figures, plots


# Axis labels of each plot, by name prefix.
AXES = {
    "bandwidth": ("in flight (LNet) / streams (raw TCP)", "MB/s", "logscale x 2"),
    "scale-rate": ("other peers configured", "PUTs per second", "logscale x 10"),
}


def peer_ratios(plots):
    """bench_peers' figure: lnet-rs over Lustre for each rail count."""
    peers = plots.get("peers-put", {})
    ours, theirs = dict(peers.get("lnet-rs", [])), dict(peers.get("Lustre", []))
    return [f"lnet-rs / Lustre, PUT of 1 MiB, 8 in flight, over {x:g} rail(s): "
            f"{ours[x]:.2f} / {theirs[x]:.2f} MB/s = {ours[x] / theirs[x]:.2f} (goal >= 1.0)"
            for x in sorted(ours) if theirs.get(x)]


def draw(name, series, png, dat_dir):
    xlabel, ylabel, scale = next(
        (v for k, v in AXES.items() if name.startswith(k)), ("x", "y", ""))
    plots = []
    for label, pts in sorted(series.items()):
        dat = dat_dir / f"{name}-{label}.dat"
        dat.write_text("".join(f"{x:g} {y:g}\n" for x, y in sorted(pts)))
        plots.append(f"'{dat}' using 1:2 with linespoints lw 2 title '{label.replace('-', ' ')}'")
    script = "\n".join([
        "set terminal png size 800,480",
        f"set output '{png}'",
        f"set title '{name}'",
        f"set xlabel '{xlabel}'",
        f"set ylabel '{ylabel}'",
        "set grid",
        "set yrange [0:*]",
        "set key bottom right",
        f"set {scale}" if scale else "",
        "plot " + ", ".join(plots),
    ])
    subprocess.run(["gnuplot"], input=script, text=True, check=True)


def machine():
    cpu = next((line.split(":", 1)[1].strip()
                for line in pathlib.Path("/proc/cpuinfo").read_text().splitlines()
                if line.startswith("model name")), platform.processor())
    mem = next((int(line.split()[1]) // (1024 * 1024)
                for line in pathlib.Path("/proc/meminfo").read_text().splitlines()
                if line.startswith("MemTotal:")), 0)
    return f"{os.cpu_count()} x {cpu}, {mem} GiB, host kernel {platform.release()}; VMs under qemu TCG"


def main():
    out = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else "lab-out/perf")
    rep = pathlib.Path(sys.argv[2] if len(sys.argv) > 2 else "lab-out/bench")
    rep.mkdir(parents=True, exist_ok=True)
    dat_dir = rep / "data"
    dat_dir.mkdir(exist_ok=True)
    figures, plots = gather(out)
    figures += peer_ratios(plots)
    host = rep / "host.txt"
    if host.exists():
        figures = [line.removeprefix("bench: ") for line in host.read_text().splitlines()
                   if line.startswith("bench: ")] + figures
    commit = subprocess.run(["git", "describe", "--always", "--dirty"],
                            capture_output=True, text=True).stdout.strip()
    when = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    pngs = []
    for name, series in sorted(plots.items()):
        png = rep / f"{name}.png"
        draw(name, series, png, dat_dir)
        pngs.append((name, png))
    failover = {}
    for tag, (cut_ms, rails, health) in sorted(plot_failover.series(out).items()):
        data, hdata, png = plot_failover.plot(rep, tag, cut_ms, rails, health, dat_dir)
        failover[tag] = {"rails": data, "health": hdata}
        full = plot_failover.full_load_after(data)
        low = plot_failover.below(data)
        figures.append(f"failover, {tag}: rail 0 alone carries 90% of the MB/s both rails "
                       "carried before the cut " + (f"from {full:.1f} s after it" if full is not None
                                                    else "at no time after it")
                       + (f"; both rails below 10% of it for at most {low:.1f} s"
                          if low is not None else ""))
        pngs.append((f"failover: {tag}", png))
    (rep / "figures.json").write_text(json.dumps({
        "date": when,
        "machine": machine(),
        "commit": commit,
        "figures": figures,
        "plots": {n: {s: sorted(p) for s, p in ss.items()} for n, ss in plots.items()},
        "failover": failover,
    }, indent=1) + "\n")
    md = [
        "# lnet-rs benchmarks",
        "",
        f"Taken {when} at {commit} on {machine()}; the perf lab kernel",
        "(no KASAN, lockdep or kmemleak). Every figure is a ratio against a",
        "baseline measured in the same run (tests/vm/bench_*.sh say how).",
        "",
        "## Figures",
        "",
    ] + [f"- {f}" for f in figures] + ["", "## Plots", ""]
    md += [f"### {n}\n\n![{n}]({p.name})\n" for n, p in pngs]
    (rep / "report.md").write_text("\n".join(md) + "\n")
    print(f"bench: report {rep / 'report.md'} ({len(figures)} figures, {len(pngs)} plots)")


if __name__ == "__main__":
    main()
