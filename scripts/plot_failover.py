#!/usr/bin/env python3
"""Plots the failover benchmark's series (tests/vm/bench_failover.sh).

Reads the `bench-series TAG MS SENDS0 SENDS1 HEALTH1 PEER_HEALTH1` and
`bench-cut TAG MS` lines of the consoles under OUT/boot-*/, and writes for
each cut OUT/failover-TAG.dat (seconds from the cut, sends per second on
rail 0 and rail 1, health of our rail-1 NI and of the peer's) and
OUT/failover-TAG.png (gnuplot): throughput per rail above, health below,
the cut at 0 s.
"""

import pathlib
import subprocess
import sys


def series(out):
    """{tag: (cut_ms, [(ms, s0, s1, h1, hp1)])} from the consoles."""
    points, cuts = {}, {}
    for log in sorted(out.rglob("boot-*/console-vm*.log")):
        for line in log.read_text(errors="replace").splitlines():
            f = line.split()
            try:
                if len(f) == 8 and f[:2] == ["lab:", "bench-series"]:
                    points.setdefault(f[2], []).append(tuple(int(x) for x in f[3:]))
                elif len(f) == 4 and f[:2] == ["lab:", "bench-cut"]:
                    cuts[f[2]] = int(f[3])
            except ValueError:
                continue
    return {t: (cuts[t], sorted(p)) for t, p in points.items() if t in cuts}


def rows(cut_ms, pts):
    """Seconds from the cut, sends per second on each rail (over the
    interval before each point), both health values."""
    out = []
    for (t0, a0, b0, _, _), (t1, a1, b1, h, hp) in zip(pts, pts[1:]):
        dt = (t1 - t0) / 1000
        if dt <= 0:
            continue
        out.append(((t1 - cut_ms) / 1000, (a1 - a0) / dt, (b1 - b0) / dt, h, hp))
    return out


def full_load_after(data, frac=0.9, span=2.0):
    """Seconds from the cut until rail 0 alone carries `frac` of the sends
    per second both rails carried before it (means over `span` s from
    there on, as single intervals are noisy); None if it never does."""
    before = [s0 + s1 for t, s0, s1, _, _ in data if t <= 0]
    after = [(t, s0) for t, s0, _, _, _ in data if t > 0]
    if not before:
        return None
    load = sum(before) / len(before)
    for i, (t, _) in enumerate(after):
        window = [r for u, r in after[i:] if u < t + span]
        if sum(window) / len(window) >= frac * load:
            return t
    return None


GNUPLOT = """\
set terminal png size 960,640
set output '{png}'
set multiplot layout 2,1 title '{title}'
set xlabel 'seconds from the cut'
set grid
set arrow from 0, graph 0 to 0, graph 1 nohead dashtype 2
set ylabel 'sends per second'
set yrange [0:*]
plot '{dat}' using 1:2 with lines lw 2 title 'rail 0 (our NI)', \\
     '' using 1:3 with lines lw 2 title 'rail 1 (our NI)'
set ylabel 'health'
set yrange [0:1050]
plot '{dat}' using 1:4 with lines lw 2 title 'our rail-1 NI', \\
     '' using 1:5 with lines lw 2 dashtype 3 title 'peer rail-1 NI'
unset multiplot
"""


def plot(dest, tag, cut_ms, pts, dat_dir=None):
    """Writes the cut's table and PNG under dest (the table under dat_dir
    if given); returns its rows and the PNG's path."""
    data = rows(cut_ms, pts)
    dat = (dat_dir or dest) / f"failover-{tag}.dat"
    png = dest / f"failover-{tag}.png"
    dat.write_text("".join(" ".join(f"{v:g}" for v in r) + "\n" for r in data))
    script = GNUPLOT.format(png=png, dat=dat, title=f"failover: {tag}")
    subprocess.run(["gnuplot"], input=script, text=True, check=True)
    return data, png


def main():
    out = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else "lab-out/perf")
    found = series(out)
    if not found:
        print("bench: no failover series to plot")
        return
    for tag, (cut_ms, pts) in sorted(found.items()):
        _, png = plot(out, tag, cut_ms, pts)
        print(f"bench: plot of {tag}: {png}")


if __name__ == "__main__":
    main()
