#!/usr/bin/env python3
"""Plots the failover benchmark's series (tests/vm/bench_failover.sh).

Reads from the consoles under OUT/boot-*/ the `bench-rails TAG MS BYTES0
BYTES1` lines (bytes sent on eth0 and eth1, every 100 ms), the
`bench-series TAG MS SENDS0 SENDS1 HEALTH1 PEER_HEALTH1` lines (over LNet,
every 0.5 s) and the `bench-cut TAG MS` lines, and writes for each cut
OUT/failover-TAG.dat (seconds from the cut, MB/s sent on rail 0 and rail
1), OUT/failover-TAG-health.dat (seconds from the cut, health of our
rail-1 NI and of the peer's) and OUT/failover-TAG.png (gnuplot):
throughput per rail above, health below, the cut at 0 s.
"""

import pathlib
import subprocess
import sys


def series(out):
    """{tag: (cut_ms, rails [(ms, b0, b1)], health [(ms, s0, s1, h1, hp1)])}
    from the consoles."""
    rails, health, cuts = {}, {}, {}
    for log in sorted(out.rglob("boot-*/console-vm*.log")):
        for line in log.read_text(errors="replace").splitlines():
            f = line.split()
            try:
                if len(f) == 6 and f[:2] == ["lab:", "bench-rails"]:
                    rails.setdefault(f[2], []).append(tuple(int(x) for x in f[3:]))
                elif len(f) == 8 and f[:2] == ["lab:", "bench-series"]:
                    health.setdefault(f[2], []).append(tuple(int(x) for x in f[3:]))
                elif len(f) == 4 and f[:2] == ["lab:", "bench-cut"]:
                    cuts[f[2]] = int(f[3])
            except ValueError:
                continue
    return {t: (cuts[t], sorted(p), sorted(health.get(t, [])))
            for t, p in rails.items() if t in cuts}


def rows(cut_ms, pts):
    """Seconds from the cut, MB/s (10^6 bytes) sent on each rail over the
    interval before each point."""
    out = []
    for (t0, a0, b0), (t1, a1, b1) in zip(pts, pts[1:]):
        dt = (t1 - t0) / 1000
        if dt <= 0:
            continue
        out.append(((t1 - cut_ms) / 1000, (a1 - a0) / dt / 1e6, (b1 - b0) / dt / 1e6))
    return out


def health_rows(cut_ms, pts):
    """Seconds from the cut, health of our rail-1 NI and of the peer's."""
    return [((t - cut_ms) / 1000, h, hp) for t, _, _, h, hp in pts]


def full_load_after(data, frac=0.9, span=2.0):
    """Seconds from the cut until rail 0 alone carries `frac` of the MB/s
    both rails carried before it (means over `span` s from there on, as
    single intervals are noisy); None if it never does."""
    before = [r0 + r1 for t, r0, r1 in data if -4 <= t <= 0]
    after = [(t, r0) for t, r0, _ in data if t > 0]
    if not before:
        return None
    load = sum(before) / len(before)
    for i, (t, _) in enumerate(after):
        window = [r for u, r in after[i:] if u < t + span]
        if sum(window) / len(window) >= frac * load:
            return t
    return None


def below(data, frac=0.1):
    """The longest time after the cut in which both rails together carried
    less than `frac` of what they carried before it, until they carried
    more again, in seconds: the flow's stall as the wire saw it (the same
    measure for LNet and for MPTCP)."""
    before = [r0 + r1 for t, r0, r1 in data if -4 <= t <= 0]
    if not before:
        return None
    load = sum(before) / len(before)
    # A stall counts once the flow is back: the traffic's end is not one.
    longest, start, prev = 0.0, None, None
    for t, r0, r1 in data:
        if t > 0 and r0 + r1 < frac * load:
            start = prev if start is None else start
        elif start is not None:
            longest = max(longest, prev - start)
            start = None
        prev = t
    return longest


GNUPLOT = """\
set terminal png size 960,640
set output '{png}'
set multiplot layout 2,1 title '{title}'
set xlabel 'seconds from the cut'
set xrange [{x0:g}:{x1:g}]
set grid
set arrow from 0, graph 0 to 0, graph 1 nohead dashtype 2
set ylabel 'MB/s sent'
set yrange [0:*]
plot '{dat}' using 1:2 with lines lw 2 title 'rail 0 (eth0)', \\
     '' using 1:3 with lines lw 2 title 'rail 1 (eth1)'
set ylabel 'health'
set yrange [0:1050]
{health}
unset multiplot
"""

HEALTH = """plot '{dat}' using 1:2 with lines lw 2 title 'our rail-1 NI', \\
     '' using 1:3 with lines lw 2 dashtype 3 title 'peer rail-1 NI'"""

NO_HEALTH = """set label 'no health: MPTCP' at graph 0.5, graph 0.5 center
plot 1000 notitle lc rgb 'white'"""


def plot(dest, tag, cut_ms, rails, health, dat_dir=None):
    """Writes the cut's tables and PNG under dest (the tables under
    dat_dir if given); returns its rows, its health rows and the PNG's
    path."""
    data, hdata = rows(cut_ms, rails), health_rows(cut_ms, health)
    dat = (dat_dir or dest) / f"failover-{tag}.dat"
    hdat = (dat_dir or dest) / f"failover-{tag}-health.dat"
    png = dest / f"failover-{tag}.png"
    dat.write_text("".join(" ".join(f"{v:g}" for v in r) + "\n" for r in data))
    hdat.write_text("".join(" ".join(f"{v:g}" for v in r) + "\n" for r in hdata))
    # Both panels on the traffic's time axis.
    xs = [r[0] for r in data] or [0.0]
    script = GNUPLOT.format(png=png, dat=dat, title=f"failover: {tag}", x0=min(xs), x1=max(xs),
                            health=HEALTH.format(dat=hdat) if hdata else NO_HEALTH)
    subprocess.run(["gnuplot"], input=script, text=True, check=True)
    return data, hdata, png


def main():
    out = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else "lab-out/perf")
    found = series(out)
    if not found:
        print("bench: no failover series to plot")
        return
    for tag, (cut_ms, rails, health) in sorted(found.items()):
        _, _, png = plot(out, tag, cut_ms, rails, health)
        print(f"bench: plot of {tag}: {png}")


if __name__ == "__main__":
    main()
