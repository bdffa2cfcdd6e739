#!/usr/bin/env bash
# Copyright (c) 2026 The ompi-esp-sctp authors. All rights reserved.
# SPDX-License-Identifier: BSD-3-Clause (see LICENSE)
# Issue 19 part A: UDP+GSO/GRO against AF_PACKET (sendmmsg, rings) between
# two network namespaces joined by a veth pair. Root only. Everything it
# makes is named ethx-* and removed on every exit.
#
#   contrib/experiments/ethbench.sh [REPEATS] [SECS] [MODES] [MTUS]
# MODES: udp udp1 mmsg ring ring2 ring2b lib (streaming, see ethbench.c)
# and lat2 lat3 latlib latudp (ping-pong of 60-byte frames / 46-byte datagrams).
set -u
here=$(cd "$(dirname "$0")" && pwd)
reps=${1:-3} secs=${2:-3} modes=${3:-"udp udp1 mmsg ring ring2"} mtus=${4:-"1500 9000"}
bin=/tmp/ethx-bench
cc -O2 -Wall -I"$here/../../common" -o "$bin" "$here/ethbench.c" "$here/../../common/ebtl_eth.c" || exit 1
cleanup() {
    ip netns del ethx-A 2>/dev/null
    ip netns del ethx-B 2>/dev/null
    ip link del ethx-va 2>/dev/null
}
trap 'cleanup; rm -f "$bin" /tmp/ethx-rx.out' EXIT
trap 'exit 130' INT TERM HUP
cleanup
ip netns add ethx-A && ip netns add ethx-B || exit 1
ip link add ethx-va type veth peer name ethx-vb || exit 1
ip link set ethx-va netns ethx-A && ip link set ethx-vb netns ethx-B || exit 1
ip -n ethx-A addr add 10.77.19.1/24 dev ethx-va
ip -n ethx-B addr add 10.77.19.2/24 dev ethx-vb
for n in A B; do ip -n ethx-$n link set lo up; done
ip -n ethx-A link set ethx-va up; ip -n ethx-B link set ethx-vb up
macB=$(ip netns exec ethx-B cat /sys/class/net/ethx-vb/address)

busy() { awk '/^cpu /{print $2+$3+$4+$7+$8, $2+$3+$4+$5+$6+$7+$8}' /proc/stat; }
for mtu in $mtus; do
    ip -n ethx-A link set ethx-va mtu "$mtu"; ip -n ethx-B link set ethx-vb mtu "$mtu"
    for mode in $modes; do
        if [ "${mode#lat}" != "$mode" ]; then # ping-pong: lat2, lat3, latlib
            v=${mode#lat}
            pa=$(ip netns exec ethx-A cat /sys/class/net/ethx-va/address) pb=$macB
            [ "$v" = udp ] && pa=10.77.19.1 pb=10.77.19.2
            for r in $(seq "$reps"); do
                ip netns exec ethx-B timeout 30 "$bin" pong "$v" ethx-vb 5000 "$pa" >/dev/null &
                sleep 0.3
                echo "mtu=$mtu rep=$r $(ip netns exec ethx-A timeout 30 "$bin" ping "$v" ethx-va 5000 "$pb" | grep role)"
                wait
            done
            continue
        fi
        if [ "${mode#udp}" != "$mode" ]; then pay=$((mtu - 28)) peer=10.77.19.2; else pay=$mtu peer=$macB; fi
        for r in $(seq "$reps"); do
            rm -f /tmp/ethx-rx.out
            ip netns exec ethx-B "$bin" rx "$mode" ethx-vb "$pay" "$secs" >/tmp/ethx-rx.out &
            rxpid=$!
            for _ in $(seq 50); do grep -q ready /tmp/ethx-rx.out 2>/dev/null && break; sleep 0.1; done
            read -r b0 t0 < <(busy)
            tx=$(ip netns exec ethx-A "$bin" tx "$mode" ethx-va "$pay" "$secs" "$peer")
            read -r b1 t1 < <(busy)
            wait "$rxpid"
            rx=$(grep role=rx /tmp/ethx-rx.out)
            sys=$(awk -v b=$((b1 - b0)) -v t=$((t1 - t0)) 'BEGIN{printf "%.0f", t ? 200*b/t : 0}')
            echo "mtu=$mtu pay=$pay rep=$r sysbusy=$sys | $tx | $rx"
        done
    done
done
