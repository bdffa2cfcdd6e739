# Copyright (c) 2026 The ompi-esp-sctp authors. All rights reserved.
# SPDX-License-Identifier: BSD-3-Clause (see LICENSE)
"""contrib/bench's link events (--kill-link, --restore-link): their parsing,
their timing during each bandwidth phase of a run (with `vcluster link`),
the parsing of what bench_failover.c prints (BWSTART, GAP, SPAN) and the
table of rates and gaps between the events."""

import argparse
import re
import statistics
import subprocess
import time

from bench_patterns import fmt_num, human_size, median_spread

MODES = ("admin", "carrier", "blackhole")


class LinkEvent:
    def __init__(self, secs, host, net, up, mode):
        self.secs, self.host, self.net, self.up, self.mode = secs, host, net, up, mode

    def link(self):
        return "%d:%d" % (self.host, self.net)

    def __str__(self):
        if self.up:
            return "%g s restore %s" % (self.secs, self.link())
        return "%g s kill %s (%s)" % (self.secs, self.link(), self.mode)


def parse_event(text, up):
    """HOST:NET@SECONDS, with :MODE after a kill (default blackhole)."""
    m = re.fullmatch(r"(\d+):(\d+)@(\d+(?:\.\d+)?)(?::(\w+))?", text)
    if not m or (up and m.group(4)) or (m.group(4) and m.group(4) not in MODES):
        raise argparse.ArgumentTypeError(
            "bad %r: HOST:NET@SECONDS%s" % (text, "" if up else "[:admin|carrier|blackhole]"))
    secs = float(m.group(3))
    if not 0 < secs < 3600:
        raise argparse.ArgumentTypeError("bad %r: SECONDS must be in (0, 3600)" % text)
    return LinkEvent(secs, int(m.group(1)), int(m.group(2)), up, m.group(4) or "blackhole")


def marks_of(events):
    """The distinct event times, sorted: bench -k."""
    return sorted({e.secs for e in events})


def span_label(marks, k):
    """The k-th span between the marks: 0-3 s, 3-5 s, 5 s-end."""
    a = "%g" % marks[k - 1] if k > 0 else "0"
    return "%s-%g s" % (a, marks[k]) if k < len(marks) else "%s s-end" % a


class LinkSchedule:
    """Watches one run's output (Runner.run's watch): each BWSTART starts the
    clock of the events; poll() runs those that are due; a GAP line ends
    the phase, and every link still down is restored so the next size
    starts with all links up; finish() does so after the run too."""

    def __init__(self, vcluster, cluster, events, log):
        self.vcluster, self.cluster, self.events, self.log = vcluster, cluster, events, log
        self.pending, self.base, self.down = [], None, set()
        self.lags = []  # seconds from an event's time to the end of its command

    def line(self, text):
        f = text.split()
        if len(f) == 3 and f[0] == "BWSTART":
            now = time.monotonic()
            t0 = float(f[2])
            # the ranks and this script share CLOCK_MONOTONIC (namespaces of
            # one machine); a line that seems to come from elsewhere is timed
            # from its arrival
            self.base = t0 if 0 <= now - t0 < 2 else now
            if self.base != t0:
                self.log("bench:   WARNING: BWSTART clock %.3f is %.3f s off this one's; "
                         "link events timed from the line's arrival" % (t0, now - t0))
            self.pending = sorted(self.events, key=lambda e: e.secs)
        elif len(f) >= 2 and f[0] == "GAP":
            for e in self.pending:
                self.log("bench:   %s: not reached, the phase ended at %s s" % (e, f[2]))
            self.pending = []
            self.restore_all()

    def poll(self):
        while self.pending and time.monotonic() >= self.base + self.pending[0].secs:
            e = self.pending.pop(0)
            self.toggle(e.host, e.net, e.up, e.mode)
            lag = time.monotonic() - (self.base + e.secs)
            self.lags.append(lag)
            self.log("bench:   %s: done %+.3f s after its time" % (e, lag))

    def finish(self):
        self.pending = []
        self.restore_all()

    def restore_all(self):
        for host, net in sorted(self.down):
            self.toggle(host, net, True, None)

    def toggle(self, host, net, up, mode):
        cmd = [self.vcluster, "link", "--name", self.cluster, str(host), str(net),
               "up" if up else "down"] + ([] if up else ["--mode", mode])
        try:
            r = subprocess.run(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True, timeout=30)
            ok, why = r.returncode == 0, r.stdout.strip()[-300:]
        except (OSError, subprocess.TimeoutExpired) as e:
            ok, why = False, str(e)
        if not ok:
            self.log("bench:   WARNING: %s failed: %s" % (" ".join(cmd[1:]), why))
        if up:
            self.down.discard((host, net))
        else:
            self.down.add((host, net))


def parse_failover(out):
    """{size: (seconds, max_gap_ms, gap_from_s, [(from, to, bytes, gap_ms, gap_from)])}
    from one run's GAP and SPAN lines (a size whose phase did not end has none)."""
    res, spans = {}, {}
    for line in out.splitlines():
        f = line.split()
        try:
            if len(f) == 6 and f[0] == "GAP":
                res[int(f[1])] = (float(f[2]), float(f[4]), float(f[5]))
            elif len(f) == 7 and f[0] == "SPAN":
                spans.setdefault(int(f[1]), []).append(tuple(float(x) for x in f[2:]))
        except ValueError:
            continue
    return {s: v + (spans.get(s, []),) for s, v in res.items()}


def print_failover(samples, failed, btls, sizes, events, seconds, lags, reps):
    """samples[btl][size]: parse_failover's values, one per rep that ended
    the phase; failed[btl]: why its runs failed."""
    marks = marks_of(events)
    nspan = len(marks) + 1
    lines = ["",
             "Link events in each size's bandwidth phase (%g s by the clock, every message "
             "checked): %s" % (seconds, "; ".join(str(e) for e in events)),
             "MB/s between the events, and the longest gap between completed messages "
             "(ms; a gap counts where it ended), median of %d rep%s"
             % (reps, "" if reps == 1 else "s")]
    lw = max(12, max(len(b) for b in btls) + 1)
    head1 = " " * (lw + 10)
    head2 = "%-*s%10s" % (lw, "list", "size")
    for k in range(nspan):
        head1 += " | " + span_label(marks, k).center(17)
        head2 += " | " + "MB/s".rjust(8) + "gap ms".rjust(9)
    head1 += " | whole phase"
    head2 += " | " + "gap ms".rjust(8) + " (worst, from s)".ljust(16) + "end s".rjust(7)
    lines += [head1.rstrip(), head2, "-" * len(head2)]
    for b in btls:
        for s in sizes:
            row = "%-*s%10s" % (lw, b, human_size(s))
            runs = samples[b][s]
            if not runs:
                lines.append(row + " | no measurement: %s" % (failed.get(b) or "no GAP line"))
                continue
            for k in range(nspan):
                rates, gaps = [], []
                for r in runs:
                    if k < len(r[3]):
                        a, z, nbytes, gap, _ = r[3][k]
                        rates.append(nbytes / (z - a) / 1e6 if z > a else None)
                        gaps.append(gap if nbytes > 0 else None)  # none ended there
                rate, _ = median_spread(rates)
                gap, _ = median_spread(gaps)
                row += " | " + fmt_num(rate, 8) + fmt_num(gap, 9)
            worst = max(runs, key=lambda r: r[1])
            row += " | " + fmt_num(statistics.median(r[1] for r in runs), 8) + \
                (" (%s, %.2f)" % (fmt_num(worst[1], 1).strip(), worst[2])).ljust(16) + \
                fmt_num(statistics.median(r[0] for r in runs), 7)
            if len(runs) < reps:
                row += "  (%d of %d reps; %s)" % (len(runs), reps, failed.get(b, "?"))
            lines.append(row)
    if lags:
        lines.append("each link event's `vcluster link` ended %.3f-%.3f s after its time "
                     "(its spans' borders are the nominal times)" % (min(lags), max(lags)))
    lines.append("gaps before the first event are normal operation: ob1 interleaves the "
                 "messages of a window, so big messages complete in bunches")
    print("\n".join(lines), flush=True)
