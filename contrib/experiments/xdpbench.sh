#!/usr/bin/env bash
# Copyright (c) 2026 The ompi-esp-sctp authors. All rights reserved.
# SPDX-License-Identifier: BSD-3-Clause (see LICENSE)
# AF_XDP (xdpbench.c) against ethbench's best AF_PACKET ring modes and its
# UDP GSO+GRO mode, interleaved rep by rep so that all see the same load.
#   contrib/experiments/xdpbench.sh [REPS] [SECS]      (root)
set -u
here=$(cd "$(dirname "$0")" && pwd)
reps=${1:-3} secs=${2:-3}
cc -O2 -Wall -o /tmp/xdpbench "$here/xdpbench.c" || exit 1
for r in $(seq "$reps"); do
    echo "== rep $r $(date -u +%T)"
    /tmp/xdpbench 1 "$secs" 1500
    "$here/ethbench.sh" 1 "$secs" "udp ring ring2b lat2" 1500
done
