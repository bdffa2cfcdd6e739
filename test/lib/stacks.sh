# Copyright (c) 2026 The ompi-esp-sctp authors. All rights reserved.
# SPDX-License-Identifier: BSD-3-Clause (see LICENSE)
# test/lib/stacks.sh - the stacks of a run about to time out, sourced by
# test/mpi/run and test/app/hpcc. A hang seen once (in CI, say) is then
# diagnosed from its report. Needs gdb and ptrace; without gdb it says so.

# stacks_descendants PID: every live descendant of PID.
stacks_descendants() {
    ps -eo pid=,ppid=,stat= 2>/dev/null | awk -v root="$1" '
        $3 !~ /^Z/ { parent[$1] = $2 }
        END {
            n = 1; want[root] = 1
            while (n > 0) {
                n = 0
                for (p in parent) if (!(p in want) && (parent[p] in want)) { want[p] = 1; n++ }
            }
            for (p in want) if (p != root) print p
        }'
}

# stacks_tagged TAG: every process whose environment holds
# MPITEST_RUN_TAG=TAG. Ranks on an emulated host are children of an orted
# that daemonized (its parent is init), not descendants of mpirun.
stacks_tagged() {
    [[ -n $1 ]] || return 0
    local f
    for f in /proc/[0-9]*/environ; do
        grep -qzxF "MPITEST_RUN_TAG=$1" "$f" 2>/dev/null && { f=${f#/proc/}; echo "${f%/environ}"; }
    done
}

# stacks_dump PROG PID...: full stacks of those processes named PROG, on
# stdout. gdb then calls btl sctp's mca_btl_sctp_dump_state(2), which
# prints the BTL's state on the rank's stderr (the run's log); in a process
# without btl sctp the call fails harmlessly.
stacks_dump() {
    local prog=${1:0:15} pid
    shift
    command -v gdb >/dev/null 2>&1 || { echo "(gdb not installed: no stacks)"; return; }
    for pid in "$@"; do
        [[ $(cat "/proc/$pid/comm" 2>/dev/null) == "$prog" ]] || continue
        echo "== pid $pid"
        timeout 20 gdb -p "$pid" -batch -nx -ex "set unwindonsignal on" \
            -ex "thread apply all bt 25" \
            -ex "call (void) mca_btl_sctp_dump_state(2)" </dev/null 2>&1 |
            grep -E '^(Thread|#)' | sed -E 's/ \(([^()]|\([^()]*\))*\) at / at /'
    done
}

# stacks_summary FILE: per rank and thread, the frames of MPI, Open MPI,
# the BTLs and usrsctp, innermost first (a library's name for frames
# without symbols).
stacks_summary() {
    awk '/^== pid/ { if (out != "") print out; print "    " $0; out = ""; next }
         /^Thread/ { if (out != "") print out; out = ""; th = $2; next }
         /^#/ && /(MPI_|ompi_|opal_progress|mca_pml|mca_btl|sctp|esp_| main )/ {
             f = $0; sub(/^#[0-9]+ +(0x[0-9a-f]+ in )?/, "", f); sub(/ .*/, "", f)
             if (f == "??" && match($0, /from [^ ]+$/)) {
                 f = substr($0, RSTART + 5); sub(/.*\//, "", f); f = "?@" f }
             out = out (out == "" ? "      thread " th ": " : " < ") f }
         END { if (out != "") print out }' "$1" 2>/dev/null
}

# stacks_watch TIMEOUT PROG PID OUTFILE [TAG]: in the background, 30 s
# before TIMEOUT (when above 40 s), dump the stacks of the processes named
# PROG that descend from PID or carry TAG (stacks_tagged) into OUTFILE.
# Sets stacks_watcher; stacks_unwatch ends it.
stacks_watch() {
    stacks_watcher=
    rm -f "$4"
    [[ $1 -gt 40 ]] || return 0
    (sleep $(($1 - 30)) &&
        stacks_dump "$2" $( (stacks_descendants "$3"; stacks_tagged "${5:-}") | sort -un) >"$4"
    ) 2>/dev/null &
    stacks_watcher=$!
}

stacks_unwatch() {
    [[ -n ${stacks_watcher:-} ]] || return 0
    pkill -P "$stacks_watcher" 2>/dev/null   # its sleep
    kill "$stacks_watcher" 2>/dev/null
    wait "$stacks_watcher" 2>/dev/null
    stacks_watcher=
}

# stacks_log FILE: the run's log without btl sctp's state lines, which
# stacks_report shows apart.
stacks_log() { grep -av '^btl sctp state' "$1" 2>/dev/null; }

# stacks_report STACKFILE LOG: what a FAIL report shows of them.
stacks_report() {
    [[ -s $1 ]] || return 0
    echo "    stacks 30 s before the timeout (full: $1):"
    stacks_summary "$1"
    grep -a '^btl sctp state' "$2" 2>/dev/null | sed 's/^/    /'
}
