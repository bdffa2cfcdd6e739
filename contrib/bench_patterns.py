# Copyright (c) 2026 The ompi-esp-sctp authors. All rights reserved.
# SPDX-License-Identifier: BSD-3-Clause (see LICENSE)
"""contrib/bench's traffic patterns beyond the two-rank ping-pong: incast,
pairs, cg and overlap (what contrib/bench_patterns.c runs and prints). For each: the
program's options, the parsing of one run's output, the retransmission
counters of the sending ranks, the medians over the repetitions, the table
and the CSV. Also the number formatting the ping-pong table shares."""

import csv
import os
import re
import statistics
import subprocess

SPREAD_WARN = 0.10  # flag a median whose reps deviate (MAD) by more than 10 % of it


# ---------------------------------------------------------------- formatting

def human_size(n):
    for unit, shift in (("MiB", 20), ("KiB", 10)):
        if n >= (1 << shift) and n % (1 << shift) == 0:
            return "%d %s" % (n >> shift, unit)
    return "%d B" % n


def short_size(n):
    for unit, shift in (("M", 20), ("K", 10)):
        if n >= (1 << shift) and n % (1 << shift) == 0:
            return "%d%s" % (n >> shift, unit)
    return str(n)


def fmt_num(v, width):
    if v is None:
        return "-".rjust(width)
    if v >= 1000:
        s = "%.0f" % v
    elif v >= 100:
        s = "%.1f" % v
    elif v >= 1:
        s = "%.2f" % v
    else:
        s = "%.3f" % v
    return s.rjust(width)


def fmt_ratio(a, b):
    if a is None or b is None or b == 0:
        return "-"
    r = a / b
    if r >= 100:
        return "x%.0f" % r
    if r >= 10:
        return "x%.1f" % r
    if r >= 0.1:
        return "x%.2f" % r
    return "x%.2g" % r


def median_spread(vals):
    """(median, noisy) of the values that are not None; (None, False) if none."""
    vals = [v for v in vals if v is not None]
    if not vals:
        return None, False
    m = statistics.median(vals)
    # robust spread: one outlier rep does not flag the point
    mad = statistics.median([abs(v - m) for v in vals])
    return m, len(vals) > 2 and m > 0 and mad / m > SPREAD_WARN


# ---------------------------------------------------------------- counters

def transport_of(btl):
    """The list's transport whose retransmissions are reported: its first of
    esp, sctp, tcp (None: none of them, or an exclusion list)."""
    if btl.startswith("^"):
        return None
    for name in btl.split(","):
        if name in ("esp", "sctp", "tcp"):
            return name
    return None


STATS_RE = re.compile(r"btl (esp|sctp) stats rank (\d+):((?: [A-Za-z_]+=\d+)+)")
# the counters of retransmitted and of all sent units, per component
STATS_KEYS = {"esp": ("retransmits", "segs_tx"), "sctp": ("retransmits", "data_chunks_tx")}


def parse_stats(err, comp):
    """{rank: (retransmitted, sent)} from the btl_<comp>_verbose lines that
    each process prints at finalize."""
    vals = {}
    for m in STATS_RE.finditer(err):
        if m.group(1) != comp:
            continue
        d = vals.setdefault(int(m.group(2)), {})
        for kv in m.group(3).split():
            k, v = kv.split("=", 1)
            d[k] = int(v)
    rkey, skey = STATS_KEYS[comp]
    return {r: (d[rkey], d[skey]) for r, d in vals.items() if rkey in d and skey in d}


def netns_tcp_counters(namespaces):
    """{ns: (RetransSegs, OutSegs)} of each network namespace's TCP (its own
    /proc/net/snmp); a namespace that cannot be read is left out."""
    out = {}
    for ns in namespaces:
        try:
            r = subprocess.run(["ip", "netns", "exec", ns, "cat", "/proc/net/snmp"],
                               stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                               stderr=subprocess.DEVNULL, text=True, timeout=10)
        except (OSError, subprocess.TimeoutExpired):
            continue
        rows = [l.split() for l in r.stdout.splitlines() if l.startswith("Tcp:")]
        if r.returncode != 0 or len(rows) < 2:
            continue
        d = dict(zip(rows[0][1:], rows[1][1:]))
        try:
            out[ns] = (int(d["RetransSegs"]), int(d["OutSegs"]))
        except (KeyError, ValueError):
            continue
    return out


def parse_hosts(out):
    return {int(m.group(1)): m.group(2)
            for m in re.finditer(r"^HOST (\d+) (\S+)$", out, re.M)}


def retrans_of_run(btl, out, err, tcp_before, tcp_after, senders):
    """{rank: (retransmitted, sent)} for the sending ranks, and the number of
    sending ranks that share a host (tcp's counters are the host's)."""
    comp = transport_of(btl)
    if comp in STATS_KEYS:
        st = parse_stats(err, comp)
        return {r: st[r] for r in senders if r in st}, 0
    if comp == "tcp" and tcp_before and tcp_after:
        hosts = parse_hosts(out)
        res, per_host = {}, {}
        for r in senders:
            ns = hosts.get(r)
            if ns in tcp_before and ns in tcp_after:
                b, a = tcp_before[ns], tcp_after[ns]
                res[r] = (a[0] - b[0], a[1] - b[1])
                per_host[ns] = per_host.get(ns, 0) + 1
        return res, sum(n for n in per_host.values() if n > 1)
    return {}, 0


def fmt_retrans(v):
    if v is None:
        return "-"
    r, s = v
    r, s = int(round(r)), int(round(s))
    return "%d/%d (%s%%)" % (r, s, ("%.2f" % (100.0 * r / s)) if s else "-")


def sum_retrans(d, ranks):
    have = [d[r] for r in ranks if r in d]
    if not have or len(have) != len(ranks):
        return None
    return (sum(v[0] for v in have), sum(v[1] for v in have))


def median_pair(pairs):
    pairs = [p for p in pairs if p is not None]
    if not pairs:
        return None
    return (statistics.median(p[0] for p in pairs), statistics.median(p[1] for p in pairs))


# ---------------------------------------------------------------- patterns

class Pattern:
    """What the driver needs from a pattern (PingPong in contrib/bench is
    the other one)."""
    name = ""
    host_counters = True   # read the hosts' TCP counters around each run
    events = ()            # link events: the ping-pong's only

    def __init__(self, args, sizes, btls, np_):
        self.args, self.sizes, self.btls, self.np = args, sizes, btls, np_
        self.samples = {b: {s: [] for s in sizes} for b in btls}

    def prog(self):
        a = self.args
        p = ["-p", self.name, "-s", ",".join(str(s) for s in self.sizes)]
        if a.corrupt_test:
            p.append("-X")
        return p

    def extra_mca(self, btl):
        """The counters' printing at finalize for the list's transport."""
        comp = transport_of(btl)
        return [("btl_%s_verbose" % comp, "1")] if comp in STATS_KEYS else []

    def senders(self):
        return list(range(self.np))

    def parse(self, btl, out, err, tcp_before, tcp_after, label=None):
        """One run: ({size: sample}, missing sizes)."""
        raise NotImplementedError

    def add(self, btl, res):
        for s, v in res.items():
            if s in self.samples[btl]:
                self.samples[btl][s].append(v)

    def failed(self, btl, rep, why):
        """A run of btl failed (the driver reports it already)."""

    def retrans_note(self, shared):
        comp_units = "esp: segments, sctp: DATA chunks, tcp: the sender's host's TCP segments"
        note = ("retransmitted/sent: over the whole run, warm-up and every size included "
                "(%s; '-' when not available: tcp needs --hosts)" % comp_units)
        if shared:
            note += "; tcp: ranks sharing a host show that host's figures"
        return note


class FlowPattern(Pattern):
    """Streams from senders to receivers: incast and pairs."""

    def prog(self):
        return super().prog() + ["-t", str(self.time), "-w", str(self.window)]

    def parse(self, btl, out, err, tcp_before, tcp_after, label=None):
        flows, totals = {}, {}
        for line in out.splitlines():
            f = line.split()
            try:
                if len(f) >= 9 and f[0] == "FLOW" and f[1] == self.name:
                    s = int(f[2])
                    flows.setdefault(s, []).append(
                        (int(f[3]), int(f[4]), float(f[5]), float(f[6]), float(f[7]), int(f[8])))
                elif len(f) >= 7 and f[0] == "TOTAL" and f[1] == self.name:
                    totals[int(f[2])] = (float(f[3]), float(f[4]), float(f[5]), int(f[6]))
            except ValueError:
                continue
        rt, shared = retrans_of_run(btl, out, err, tcp_before, tcp_after, self.senders())
        self.shared = getattr(self, "shared", 0) or shared
        res = {}
        for s, (bytes_, msgs, secs, w) in totals.items():
            fl = flows.get(s, [])
            if secs <= 0 or len(fl) != self.nflows():
                continue
            rates = {(src, dst): (b / sec / 1e6 if sec > 0 else 0.0, m / sec if sec > 0 else 0.0)
                     for src, dst, b, m, sec, _ in fl}
            mbs = [v[0] for v in rates.values()]
            mean = sum(mbs) / len(mbs)
            sq = sum(x * x for x in mbs)
            res[s] = {"agg": bytes_ / secs / 1e6, "rate": msgs / secs, "window": w,
                      "flows": rates,
                      "jain": (sum(mbs) ** 2 / (len(mbs) * sq)) if sq > 0 else None,
                      "maxdev": (max(abs(x - mean) for x in mbs) / mean * 100) if mean > 0 else None,
                      "retrans": rt}
        return res, [s for s in self.sizes if s not in res]

    def brief(self, res):
        return "  ".join("%s:%s MB/s" % (short_size(s), fmt_num(v["agg"], 1).strip())
                         for s, v in sorted(res.items()))

    def medians(self):
        med = {}
        for b in self.btls:
            for s in self.sizes:
                reps = self.samples[b][s]
                m = {}
                for key in ("agg", "rate", "jain", "maxdev"):
                    m[key], m[key + "_noisy"] = median_spread([r[key] for r in reps])
                keys = sorted({k for r in reps for k in r["flows"]})
                m["flows"] = {k: tuple(median_spread([r["flows"][k][i] for r in reps
                                                      if k in r["flows"]])[0] for i in (0, 1))
                              for k in keys}
                m["retrans"] = {r: median_pair([rep["retrans"].get(r) for rep in reps])
                                for r in self.senders()}
                m["retrans_all"] = median_pair([sum_retrans(rep["retrans"], self.senders())
                                                for rep in reps])
                m["window"] = reps[0]["window"] if reps else self.window
                m["reps"] = len(reps)
                med[b, s] = m
        return med

    def flow_label(self, k):
        return "r%d" % k[0] if self.name == "incast" else "%d>%d" % k

    def report(self, setup):
        med = self.medians()
        ref = self.btls[-1]
        a = self.args
        lw = max(14, max(len(b) for b in self.btls))
        lines = ["Open MPI BTL benchmark, pattern %s: %s, pml ob1, %d ranks, %s; median of %d rep%s"
                 % (self.name, self.describe(), self.np, setup, a.reps, "" if a.reps == 1 else "s")]
        lines.append("goodput MB/s (1 MB = 1e6 B) from a common start to each flow's last window; "
                     "every byte checked; Jain = Jain's fairness index of the flows (1 = equal), "
                     "max dev = largest deviation of a flow from their mean")
        rate_col = self.name == "pairs"
        head = "%10s %-*s | %9s%s %8s %8s %6s %8s | %-22s" % (
            "size", lw, "list", "aggregate", " %10s" % "msg/s" if rate_col else "",
            "slowest", "fastest", "Jain", "max dev", "retransmitted/sent")
        if len(self.btls) > 1:
            head += " | vs %s" % ref
        lines += [head.rstrip(), "-" * len(head.rstrip())]
        any_noisy = False
        for s in self.sizes:
            for b in self.btls:
                m = med[b, s]
                fl = [v[0] for v in m["flows"].values() if v[0] is not None]
                mark = "*" if m["agg_noisy"] else " "
                any_noisy |= m["agg_noisy"]
                row = "%10s %-*s | %8s%s%s %8s %8s %6s %8s | %-22s" % (
                    human_size(s), lw, b, fmt_num(m["agg"], 8).strip().rjust(8), mark,
                    " %10s" % fmt_num(m["rate"], 10).strip() if rate_col else "",
                    fmt_num(min(fl), 8) if fl else "-", fmt_num(max(fl), 8) if fl else "-",
                    "-" if m["jain"] is None else "%.3f" % m["jain"],
                    "-" if m["maxdev"] is None else "%.1f%%" % m["maxdev"],
                    fmt_retrans(m["retrans_all"]))
                if len(self.btls) > 1 and b != ref:
                    row += " | %s" % fmt_ratio(m["agg"], med[ref, s]["agg"])
                elif len(self.btls) > 1:
                    row += " |"
                lines.append(row.rstrip())
        if len(self.btls) > 1:
            lines.append("ratios: aggregate of this list / %s's (above 1 = faster)" % ref)
        if any_noisy:
            lines.append("* noisy: the repetitions deviate from their median by more than "
                         "%d%% (median absolute deviation)" % round(SPREAD_WARN * 100))
        # per flow: goodput (and message rate for pairs), then retransmissions
        keys = sorted({k for m in med.values() for k in m["flows"]})
        if keys:
            cw = max(9, max(len(self.flow_label(k)) for k in keys) + 1)
            tables = [("per %s, MB/s:" % self.flow_noun, 0)]
            if rate_col:
                tables.append(("per %s, messages/s:" % self.flow_noun, 1))
            for title, idx in tables:
                lines.append(title)
                lines.append(("%10s %-*s |" % ("size", lw, "list")
                              + "".join(self.flow_label(k).rjust(cw) for k in keys)).rstrip())
                for s in self.sizes:
                    for b in self.btls:
                        fl = med[b, s]["flows"]
                        lines.append(("%10s %-*s |" % (human_size(s), lw, b) + "".join(
                            fmt_num(fl[k][idx] if k in fl else None, cw) for k in keys)).rstrip())
        snd = self.senders()
        rw = max(16, max((len(fmt_retrans(med[b, self.sizes[0]]["retrans"].get(r)))
                          for b in self.btls for r in snd), default=0) + 2)
        lines.append("per sending rank, retransmitted/sent:")
        lines.append(("%-*s |" % (lw + 11, "list") + "".join(("rank %d" % r).rjust(rw)
                                                               for r in snd)).rstrip())
        for b in self.btls:
            rt = med[b, self.sizes[0]]["retrans"]
            lines.append(("%-*s |" % (lw + 11, b) + "".join(fmt_retrans(rt.get(r)).rjust(rw)
                                                            for r in snd)).rstrip())
        lines.append(self.retrans_note(getattr(self, "shared", 0)))
        if any(m["agg"] is None for m in med.values()):
            lines.append("- missing (every run of that point failed)")
        print("\n".join(lines), flush=True)

    def write_csv(self, path):
        med = self.medians()
        with open(path, "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["btl", "pattern", "size_bytes", "flow", "src", "dst", "MBps", "msgs_per_s",
                        "jain", "max_dev_pct", "retransmitted", "sent"])
            num = lambda v, fmt="%.4f": "" if v is None else fmt % v
            for b in self.btls:
                for s in self.sizes:
                    m = med[b, s]
                    ra = m["retrans_all"]
                    w.writerow([b, self.name, s, "all", "", "", num(m["agg"]), num(m["rate"]),
                                num(m["jain"]), num(m["maxdev"]),
                                num(ra and ra[0], "%.0f"), num(ra and ra[1], "%.0f")])
                    for k in sorted(m["flows"]):
                        v = m["flows"][k]
                        rt = m["retrans"].get(k[0])
                        w.writerow([b, self.name, s, self.flow_label(k), k[0], k[1], num(v[0]),
                                    num(v[1]), "", "", num(rt and rt[0], "%.0f"),
                                    num(rt and rt[1], "%.0f")])


class Incast(FlowPattern):
    name = "incast"
    flow_noun = "sender"
    default_sizes = [1 << 20]
    default_time = 5.0
    default_window = 8
    default_np = 4

    def __init__(self, args, sizes, btls, np_):
        super().__init__(args, sizes, btls, np_)
        self.time = args.time if args.time is not None else self.default_time
        self.window = args.window or self.default_window

    def nflows(self):
        return self.np - 1

    def senders(self):
        return list(range(1, self.np))

    def describe(self):
        return ("ranks 1-%d each stream to rank 0 (window %d, %g s per size)"
                % (self.np - 1, self.window, self.time))


class Pairs(FlowPattern):
    name = "pairs"
    flow_noun = "pair"
    default_sizes = [8, 65536, 1 << 20]
    default_time = 2.0
    default_window = 64
    default_np = 4

    def __init__(self, args, sizes, btls, np_):
        super().__init__(args, sizes, btls, np_)
        self.time = args.time if args.time is not None else self.default_time
        self.window = args.window or self.default_window

    def nflows(self):
        return self.np // 2

    def senders(self):
        return list(range(self.np // 2))

    def describe(self):
        return ("rank i streams to rank i+%d, %d pairs at once (window %d, fewer above 64 MiB "
                "in flight; %g s per size)" % (self.np // 2, self.np // 2, self.window, self.time))


class Cg(Pattern):
    name = "cg"
    default_sizes = [56 << 10]
    default_np = 2
    default_time = None
    default_window = None

    def prog(self):
        return super().prog() + ["-n", str(self.args.iters), "-c", "%g" % self.args.compute]

    def parse(self, btl, out, err, tcp_before, tcp_after, label=None):
        rt, shared = retrans_of_run(btl, out, err, tcp_before, tcp_after, self.senders())
        self.shared = getattr(self, "shared", 0) or shared
        res = {}
        for m in re.finditer(r"^CG (\d+) (\d+) (\S+)$", out, re.M):
            try:
                s, n, t = int(m.group(1)), int(m.group(2)), float(m.group(3))
            except ValueError:
                continue
            if n > 0 and t > 0:
                res[s] = {"us": t / n * 1e6, "total": t, "retrans": rt}
        return res, [s for s in self.sizes if s not in res]

    def brief(self, res):
        return "  ".join("%s:%s µs/iter" % (short_size(s), fmt_num(v["us"], 1).strip())
                         for s, v in sorted(res.items()))

    def medians(self):
        med = {}
        for b in self.btls:
            for s in self.sizes:
                reps = self.samples[b][s]
                us, noisy = median_spread([r["us"] for r in reps])
                total, _ = median_spread([r["total"] for r in reps])
                med[b, s] = {"us": us, "noisy": noisy, "total": total,
                             "retrans": median_pair([sum_retrans(r["retrans"], self.senders())
                                                     for r in reps])}
        return med

    def report(self, setup):
        med = self.medians()
        ref = self.btls[-1]
        a = self.args
        lw = max(14, max(len(b) for b in self.btls))
        lines = ["Open MPI BTL benchmark, pattern cg: a solver step per iteration, pml ob1, "
                 "%d ranks, %s; median of %d rep%s" % (self.np, setup, a.reps,
                                                       "" if a.reps == 1 else "s")]
        lines.append("iteration: rank r and r^1 exchange SIZE bytes both ways at once (Irecv, "
                     "Isend, Waitall), %g µs of compute, two 8-byte MPI_Allreduce; %d iterations "
                     "timed; every byte and sum checked" % (a.compute, a.iters))
        head = "%10s %-*s | %10s %9s | %-22s" % ("size", lw, "list", "µs/iter", "total s",
                                                  "retransmitted/sent")
        if len(self.btls) > 1:
            head += " | vs %s" % ref
        lines += [head.rstrip(), "-" * len(head.rstrip())]
        any_noisy = False
        for s in self.sizes:
            for b in self.btls:
                m = med[b, s]
                any_noisy |= m["noisy"]
                row = "%10s %-*s | %9s%s %9s | %-22s" % (
                    human_size(s), lw, b, fmt_num(m["us"], 9), "*" if m["noisy"] else " ",
                    "-" if m["total"] is None else "%.3f" % m["total"], fmt_retrans(m["retrans"]))
                if len(self.btls) > 1 and b != ref:
                    row += " | %s" % fmt_ratio(m["us"], med[ref, s]["us"])
                elif len(self.btls) > 1:
                    row += " |"
                lines.append(row.rstrip())
        if len(self.btls) > 1:
            lines.append("ratios: time per iteration of this list / %s's (below 1 = faster)" % ref)
        if any_noisy:
            lines.append("* noisy: the repetitions deviate from their median by more than "
                         "%d%% (median absolute deviation)" % round(SPREAD_WARN * 100))
        lines.append(self.retrans_note(getattr(self, "shared", 0)) + "; summed over all ranks")
        if any(m["us"] is None for m in med.values()):
            lines.append("- missing (every run of that point failed)")
        print("\n".join(lines), flush=True)

    def write_csv(self, path):
        med = self.medians()
        with open(path, "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["btl", "pattern", "size_bytes", "iterations", "us_per_iter", "total_s",
                        "retransmitted", "sent"])
            for b in self.btls:
                for s in self.sizes:
                    m = med[b, s]
                    rt = m["retrans"]
                    w.writerow([b, self.name, s, self.args.iters,
                                "" if m["us"] is None else "%.4f" % m["us"],
                                "" if m["total"] is None else "%.6f" % m["total"],
                                "" if rt is None else "%.0f" % rt[0],
                                "" if rt is None else "%.0f" % rt[1]])


def overlap_fraction(wait, t0):
    """1 - wait / T0, clamped to [0, 1] (1: the transfer entirely hidden
    behind the compute); None without a positive T0."""
    if wait is None or t0 is None or t0 <= 0:
        return None
    return min(1.0, max(0.0, 1.0 - wait / t0))


class Overlap(Pattern):
    """Communication behind computation: rank 0 sends N messages to rank 1,
    both post everything, compute --compute µs without any MPI call, then
    wait; the time inside MPI_Waitall against T0, the same transfer waited
    for at once."""
    name = "overlap"
    default_sizes = [8, 64 << 10, 1 << 20, 4 << 20, 16 << 20]
    default_np = 2
    default_time = None
    default_window = None
    default_compute = 1e6
    host_counters = False
    SIDES = ((0, "sender"), (1, "receiver"))
    KEYS = ("t0", "post", "wait", "compute", "overlap")

    def prog(self):
        return super().prog() + ["-c", "%g" % self.args.compute]

    def extra_mca(self, btl):
        return []   # no retransmission counters: the table has no room for them

    def senders(self):
        return [0]

    def parse(self, btl, out, err, tcp_before, tcp_after, label=None):
        got = {}
        for m in re.finditer(r"^OVERLAP (\d+) (\d+) ([01]) (\S+) (\S+) (\S+) (\S+)$", out, re.M):
            try:
                s, n, r = int(m.group(1)), int(m.group(2)), int(m.group(3))
                t0, post, wait, comp = (float(m.group(i)) for i in (4, 5, 6, 7))
            except ValueError:
                continue
            if t0 <= 0 or wait < 0:
                continue
            got.setdefault(s, {"n": n, "sides": {}})["sides"][r] = {
                "t0": t0 * 1e3, "post": post * 1e3, "wait": wait * 1e3, "compute": comp * 1e3,
                "overlap": overlap_fraction(wait, t0)}
        res = {s: v for s, v in got.items() if len(v["sides"]) == 2}
        return res, [s for s in self.sizes if s not in res]

    def brief(self, res):
        return "  ".join("%s: T0 %.2f ms, wait %.2f/%.2f ms" % (
            short_size(s), v["sides"][0]["t0"], v["sides"][0]["wait"], v["sides"][1]["wait"])
            for s, v in sorted(res.items()))

    def medians(self):
        """med[btl, size] = {"n", "reps", side: {key: (median, noisy)}}; the
        overlap fraction is each repetition's, then their median."""
        med = {}
        for b in self.btls:
            for s in self.sizes:
                reps = self.samples[b][s]
                m = {"n": reps[0]["n"] if reps else None, "reps": len(reps)}
                for r, _ in self.SIDES:
                    m[r] = {k: median_spread([rep["sides"][r][k] for rep in reps])
                            for k in self.KEYS}
                med[b, s] = m
        return med

    def report(self, setup):
        med = self.medians()
        ref = self.btls[-1]
        a = self.args
        lw = max(14, max(len(b) for b in self.btls))
        lines = ["Open MPI BTL benchmark, pattern overlap: communication behind %g ms of compute, "
                 "pml ob1, 2 ranks, %s; median of %d rep%s"
                 % (a.compute / 1e3, setup, a.reps, "" if a.reps == 1 else "s")]
        lines.append("rank 0 posts N Isends, rank 1 N Irecvs (all at once), both compute %g ms "
                     "(no MPI call), then MPI_Waitall; every byte checked" % (a.compute / 1e3))
        lines.append("T0 = the same transfer without compute, post to completion (ms; the median "
                     "of 3 phases in each run); post = "
                     "posting the N operations (ms); wait = time inside MPI_Waitall after "
                     "computing (ms);")
        lines.append("overlap = 1 - wait/T0, in [0, 1] (1: the transfer entirely hidden behind "
                     "the compute, 0: none of it)")

        def cell(v, w, fmt=None):
            val, noisy = v
            if val is None:
                return "-".rjust(w) + " "
            return (fmt % val if fmt else fmt_num(val, w).strip()).rjust(w) + ("*" if noisy else " ")

        side_w = 4 * 9
        head = "%10s %-*s %5s |" % ("size", lw, "list", "N")
        head += "".join((" %s" % name).ljust(side_w + 1) + "|" for _, name in self.SIDES)
        if len(self.btls) > 1:
            head += " T0 vs %s" % ref
        sub = "%10s %-*s %5s |" % ("", lw, "", "")
        sub += ("%9s%9s%9s%9s |" % ("T0 ms", "post ms", "wait ms", "overlap")) * len(self.SIDES)
        lines += [head.rstrip(), sub.rstrip(), "-" * len(head.rstrip())]
        any_noisy = short = posted = False
        for s in self.sizes:
            for b in self.btls:
                m = med[b, s]
                row = "%10s %-*s %5s |" % (human_size(s), lw, b, "-" if m["n"] is None else m["n"])
                for r, _ in self.SIDES:
                    d = m[r]
                    any_noisy |= any(d[k][1] for k in ("t0", "wait"))
                    row += "".join(cell(d[k], 8) for k in ("t0", "post", "wait"))
                    # the transfer mostly done while posting, before the compute
                    p = (d["post"][0] is not None and d["t0"][0] is not None
                         and d["post"][0] >= 0.5 * d["t0"][0])
                    posted |= p
                    ov = d["overlap"][0]
                    row += ("-" if ov is None else "%.2f" % ov).rjust(8) + ("p" if p else " ") + "|"
                    short |= d["t0"][0] is not None and d["t0"][0] > a.compute / 1e3
                if len(self.btls) > 1 and b != ref:
                    row += " %s" % fmt_ratio(m[0]["t0"][0], med[ref, s][0]["t0"][0])
                lines.append(row.rstrip())
        if len(self.btls) > 1:
            lines.append("T0 vs %s: the sender's T0 of this list / %s's (below 1 = faster "
                         "transfer); the other figures are raw (a ratio of near-zero waits "
                         "says nothing)" % (ref, ref))
        lines.append("overlap is each repetition's 1 - wait/T0, then their median")
        if posted:
            lines.append("p: posting took half of T0 or more: much of the transfer happened "
                         "inside MPI_Isend, before the compute, not behind it")
        if short:
            lines.append("note: some T0 exceed the compute (%g ms): overlap can then reach only "
                         "about compute/T0" % (a.compute / 1e3))
        if any_noisy:
            lines.append("* noisy: the repetitions deviate from their median by more than "
                         "%d%% (median absolute deviation)" % round(SPREAD_WARN * 100))
        if any(med[b, s][0]["t0"][0] is None for b in self.btls for s in self.sizes):
            lines.append("- missing (every run of that point failed)")
        print("\n".join(lines), flush=True)

    def write_csv(self, path):
        med = self.medians()
        with open(path, "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["btl", "pattern", "size_bytes", "messages", "side", "compute_ms",
                        "t0_ms", "post_ms", "wait_ms", "overlap"])
            num = lambda v: "" if v is None else "%.6f" % v
            for b in self.btls:
                for s in self.sizes:
                    m = med[b, s]
                    for r, name in self.SIDES:
                        d = m[r]
                        w.writerow([b, self.name, s, "" if m["n"] is None else m["n"], name,
                                    num(d["compute"][0]), num(d["t0"][0]), num(d["post"][0]),
                                    num(d["wait"][0]), num(d["overlap"][0])])


PATTERNS = {"incast": Incast, "pairs": Pairs, "cg": Cg, "overlap": Overlap}
