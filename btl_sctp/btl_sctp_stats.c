/*
 * Copyright (c) 2026 The ompi-esp-sctp authors. All rights reserved.
 * SPDX-License-Identifier: BSD-3-Clause (see LICENSE)
 */
/*
 * Counters a tuner asks about (meanings in docs/counters.md): the BTL's and
 * the transport's own, the usrsctp stack's (usrsctp_get_stat: the whole
 * process's stack, which in MPI is this module's alone), the UDP sockets'.
 * Printed per process at finalize under btl_sctp_verbose 1 as three
 * "btl sctp stats rank N: name=value ..." lines (the third with the
 * test-only fault layer's), and readable while the job runs as MPI_T
 * performance variables btl_sctp_<name>.
 */
#include "btl_sctp.h"
#include "btl_sctp_segs.h"
#include "btl_sctp_endpoint.h"
#include "btl_sctp_frag.h"

#include <stdio.h>
#include <string.h>
#include <usrsctp.h>

#include <opal/util/proc.h>

#include "ebtl_stats.h"

/* In the order collect() fills in the values; the three groups are the
 * three printed lines. */
static const ebtl_counter_t counters[] = {
    /* the BTL and its transport */
    {"tx_msgs", "SCTP messages (one per fragment) handed to usrsctp"},
    {"tx_bytes", "Bytes of those messages, 8-byte header included"},
    {"tx_busy", "Sends refused because the SCTP send buffer was full (the fragment waited)"},
    {"tx_split", "Messages usrsctp took only the start of (its chunk queue was full): the BTL "
                 "kept the end and sent it before anything else to that peer"},
    {"rx_msgs", "Whole messages delivered to ob1"},
    {"rx_bytes", "Bytes of those messages"},
    {"rx_partial", "Pieces read before the end of their message"},
    {"assoc_up", "Associations that came up"},
    {"assoc_lost", "Associations lost (the job ends over one in use)"},
    {"assoc_rejected", "Associations aborted: another job, or not the process at that address"},
    {"rx_bad", "Datagrams shorter than an SCTP header, and malformed messages, dropped"},
    {"rx_unidentified", "Data that came before the peer's identification, dropped"},
    {"rx_unknown_src", "Datagrams from unknown senders that do not start an association, dropped"},
    {"assoc_unknown", "Changes (up, lost, ...) of an association no link names, not acted on"},
    {"links", "Peers usrsctp knows by UDP address"},
    {"path_downs", "Mode conn, several NICs: a peer's path left because the kernel refused it or it "
                   "went silent while another path of that peer answered"},
    {"path_ups", "Paths that answered again and were taken back"},
    {"probes_tx", "Probes sent on paths that carried data but heard nothing for 10 ms, or were "
                  "down"},
    {"probes_rx", "Answers to those probes"},
    {"rx_held", "Packets of DATA that came by one path ahead of packets sent before them by "
                "another, held until those came (at most 2 ms) so that usrsctp sees no false gap"},
    {"rx_hold_expired", "Holds that ended after 2 ms without the packets before them (lost)"},
    {"stall_kicks", "Peers whose unacknowledged data usrsctp held for 3 RTO.max (300 ms at "
                    "least) with no timer running "
                    "(a lost timer): usrsctp made to look again"},
    {"rescues", "Mode conn: those kicks that sent our own copies of the packets beyond the "
                "peer's acknowledgement (kept once a link lost a packet), for usrsctp sent "
                "none again"},
    {"rescued_pkts", "Packets those rescues sent"},
    {"tail_probes", "Mode conn: tail probes, our copies of the packets a quiet peer had not "
                    "reported sent again after btl_sctp_tail_probe ms (a lost last packet)"},
    {"tail_probe_pkts", "Packets those probes sent"},
    {"seg_tx", "Mode conn with btl_sctp_packet: SCTP packets larger than a datagram, sent in "
               "segments"},
    {"seg_rx", "Such packets put back together"},
    {"seg_lost", "Such packets that never came whole (a segment lost) or whose segments "
                 "disagreed, dropped"},
    {"seg_shrinks", "Peers sent back to packets of a frame because they reported lost "
                    "packets (a lost frame loses a whole larger packet)"},
    {"sacks_withheld", "SACKs without gaps kept from usrsctp during its fast recovery, so that "
                       "the next SACK ends it (usrsctp 0.9.5 stays in recovery otherwise)"},
    {"rx_lost", "Peers failed over a message lost between usrsctp and the BTL: a fragment "
                "number out of turn on its stream, or an idle audit's claim still missing"},
    {"audits_tx", "Idle audits sent: a peer's last fragment numbers per stream, after 0.5 s "
                  "without sending, with nothing unacknowledged"},
    {"audits_rx", "Idle audits read from peers"},
    {"audit_shorts", "Audits that found a stream short of the peer's claim (lost if still short "
                     "at its next audit)"},
    {"audit_pokes", "Receive-queue pokes after a short audit (a notification of our own that "
                    "makes usrsctp look at its read queue again)"},
    {"resend_asks", "Mode inet: a stream still short after the poke, asked for again from the "
                    "peer (RESEND)"},
    {"resent_tx", "Mode inet: fragments a peer never read, sent again from the copies kept of "
                  "the last few"},
    {"resent_rx", "Mode inet: such fragments read"},
    {"rx_dups", "Fragments read twice (the original came after its copy sent again), dropped"},
    {"test_dropped", "TESTING ONLY: fragments dropped by btl_sctp_test_drop_msg"},
    /* usrsctp's stack */
    {"packets_rx", "SCTP packets taken in by usrsctp"},
    {"data_chunks_tx", "DATA chunks sent"},
    {"data_chunks_rx", "DATA chunks received"},
    {"sacks_tx", "SACK chunks sent"},
    {"sacks_rx", "SACK chunks received"},
    {"retransmits", "DATA chunks sent again (timeouts and fast retransmits)"},
    {"fast_retransmits", "DATA chunks marked for fast retransmit"},
    {"timeouts", "T3 retransmission timer expiries"},
    {"duplicates", "DATA chunks received again and dropped"},
    {"corrupt", "Packets failing the CRC32c check, dropped (the BTL's check in conn mode, "
                "usrsctp's in inet mode)"},
    {"malformed", "Packets shorter than the SCTP header, dropped"},
    {"ootb", "Packets for no association"},
    {"bad_vtag", "Packets with a wrong verification tag"},
    {"rwnd_drops", "DATA chunks dropped because the receive window was full"},
    {"assoc_active", "Associations this process started"},
    {"assoc_passive", "Associations peers started"},
    {"aborted", "Associations aborted"},
    {"send_errors", "Packets the output callback refused"},
    /* the wire */
    {"udp_tx", "UDP datagrams sent (one SCTP packet each)"},
    {"udp_rx", "UDP datagrams received"},
    {"tx_errors", "Datagrams the kernel refused (SCTP sends them again)"},
    {"udp_tx_gso", "Sends that carried several datagrams at once (UDP GSO, mode conn)"},
    {"udp_rx_gro", "Reads that returned several datagrams at once (UDP GRO, mode conn)"},
    {"udp_rx_kernel_drops", "Datagrams the kernel dropped because a socket's receive buffer was full (mode conn)"},
};
#define NCOUNTERS (sizeof(counters) / sizeof(counters[0]))
#define N_BTL 31   /* tx_msgs .. test_dropped */
#define N_STACK 18 /* packets_rx .. send_errors */

/* Every counter's value now, in the order of counters[]; 0 without a
 * module. Also the fault layer's, summed over the sockets. */
static void collect(const mca_btl_sctp_module_t *m, uint64_t v[NCOUNTERS], ebtl_fault_stats_t *faults)
{
    memset(v, 0, NCOUNTERS * sizeof(v[0]));
    if (m == NULL) {
        return;
    }
    const bsctp_stack_stats_t *s = &m->stack.stats;
    struct sctpstat u;
    memset(&u, 0, sizeof(u));
    if (m->stack_open) {
        usrsctp_get_stat(&u);
    }
    uint64_t tx = 0, rx = 0, tx_err = 0, gso = 0, gro = 0, drops = 0;
    for (size_t i = 0; i < m->stack.num_socks; i++) {
        const ebtl_dgram_sock_t *d = &m->stack.socks[i];
        tx += d->stats.tx_datagrams;
        rx += d->stats.rx_datagrams;
        tx_err += d->stats.tx_errors;
        gso += d->stats.tx_gso;
        gro += d->stats.rx_gro;
        drops += ebtl_dgram_kernel_drops(d);
        if (faults != NULL) {
            ebtl_fault_stats_add(faults, d->fault);
        }
    }
    const uint64_t all[] = {
        s->tx_msgs, s->tx_bytes, s->tx_busy, s->tx_split, s->rx_msgs, s->rx_bytes, s->rx_partial,
        s->assoc_up, s->assoc_lost, s->assoc_rejected, s->rx_bad, s->rx_unidentified,
        s->rx_unknown_src, s->assoc_unknown, m->stack.num_links, s->path_downs, s->path_ups,
        s->probes_tx, s->probes_rx, s->rx_held, s->rx_hold_expired, s->stall_kicks, s->rescues,
        s->rescued_pkts, s->tail_probes, s->tail_probe_pkts, s->seg_tx, s->seg_rx,
        m->stack.segs != NULL ? m->stack.segs->lost + m->stack.segs->bad : 0, s->seg_shrinks,
        s->sacks_withheld, s->rx_lost, s->audits_tx, s->audits_rx, s->audit_shorts,
        s->audit_pokes, s->resend_asks, s->resent_tx, s->resent_rx, s->rx_dups, s->test_dropped,
        u.sctps_inpackets, u.sctps_senddata, u.sctps_recvdata, u.sctps_sendsacks,
        u.sctps_recvsacks, u.sctps_sendretransdata, u.sctps_sendfastretrans, u.sctps_timodata,
        u.sctps_recvdupdata, u.sctps_badsum + s->rx_badsum, u.sctps_hdrops, u.sctps_outoftheblue,
        u.sctps_badvtag, u.sctps_datadroprwnd, u.sctps_activeestab, u.sctps_passiveestab,
        u.sctps_aborted, u.sctps_senderrors,
        tx, rx, tx_err, gso, gro, drops,
    };
    _Static_assert(sizeof(all) / sizeof(all[0]) == NCOUNTERS, "a value for every counter");
    memcpy(v, all, sizeof(all));
}

/* The first module's, for MPI_T. */
static void collect_first(uint64_t *v)
{
    collect(mca_btl_sctp_component.module, v, NULL);
}

static const ebtl_stats_t stats = {counters, NCOUNTERS, sizeof(counters[0]), collect_first};

void bsctp_stats_register_pvars(void)
{
    ebtl_stats_register_pvars(&mca_btl_sctp_component.base.super.btl_version, &stats);
}

void bsctp_stats_report(mca_btl_sctp_module_t *m)
{
    if (mca_btl_sctp_component.verbose < 1 || !m->stack_open) {
        return;
    }
    uint64_t v[NCOUNTERS];
    ebtl_fault_stats_t faults = {0};
    collect(m, v, &faults);
    char fline[256];
    ebtl_stats_print("sctp", &stats, v, 0, N_BTL, NULL);
    ebtl_stats_print("sctp", &stats, v, N_BTL, N_STACK, NULL);
    ebtl_stats_print("sctp", &stats, v, N_BTL + N_STACK, NCOUNTERS - N_BTL - N_STACK,
                     ebtl_fault_stats_format(&faults, fline, sizeof(fline)));
    if (m == mca_btl_sctp_component.modules[0]) {
        const ebtl_yield_t *y = &mca_btl_sctp_component.yield;
        opal_output(0, "btl sctp stats rank %u: %s busy_yields=%llu runnable=%.1f",
                    (unsigned) OPAL_PROC_MY_NAME.vpid,
                    ebtl_thread_format(&mca_btl_sctp_component.base.thread, fline, sizeof(fline)),
                    (unsigned long long) y->yields, y->runnable_x16 / 16.0);
    }
    /* Each path of a peer with several (mode conn). */
    const bsctp_stack_t *st = &m->stack;
    for (uint32_t i = 0; i < st->num_links; i++) {
        const bsctp_link_t *l = &st->links[i];
        for (int k = 0; l->num_paths > 1 && k < l->num_paths; k++) {
            const bsctp_path_t *p = &l->paths[k];
            char a[64];
            opal_output(0, "btl sctp path rank %u: peer %u path %d %s -> %s: tx_packets=%llu "
                        "tx_bytes=%llu rx_packets=%llu rx_bytes=%llu downs=%llu ups=%llu "
                        "probes=%llu nic_rate_MBps=%llu %s%s", (unsigned) OPAL_PROC_MY_NAME.vpid,
                        l->vpid, k,
                        m->ifaces[p->nic].name, ebtl_sockaddr_format(&p->udp, a, sizeof(a)),
                        (unsigned long long) p->tx_packets, (unsigned long long) p->tx_bytes,
                        (unsigned long long) p->rx_packets, (unsigned long long) p->rx_bytes,
                        (unsigned long long) p->downs, (unsigned long long) p->ups,
                        (unsigned long long) p->probes,
                        st->nic_load != NULL
                            ? (unsigned long long) (st->nic_load[p->nic].rate / 1000000u) : 0ull,
                        p->down ? "down" : "up", p->standby ? " standby" : "");
        }
    }
}

/* ------------------------------------------------ state of a hung job */

/* Print on fd the state of every module, each line starting "btl sctp
 * state rank N:": counters, the fragments waiting for send-buffer room,
 * each peer's association. For a run that hangs: the test runners call it
 * from gdb (test/lib/stacks.sh) while the process is stopped. So it takes
 * no lock (a stopped thread may hold one), does not allocate, and bounds
 * every walk (a list may be half-changed). */
void mca_btl_sctp_dump_state(int fd)
{
    const mca_btl_sctp_component_t *c = &mca_btl_sctp_component;
    unsigned rank = (unsigned) OPAL_PROC_MY_NAME.vpid;
    dprintf(fd, "btl sctp state rank %u: %zu module(s), mode %s, style %s\n", rank,
            c->num_modules, c->mode != NULL ? c->mode->name : "?",
            c->style != NULL ? c->style->name : "?");
    for (size_t i = 0; i < c->num_modules && i < EBTL_MODEX_MAX_ADDRS; i++) {
        mca_btl_sctp_module_t *m = c->modules[i];
        if (m == NULL) {
            continue;
        }
        uint64_t v[NCOUNTERS];
        collect(m, v, NULL);
        dprintf(fd, "btl sctp state rank %u: module %zu open=%d failed=%d pending=%zu", rank, i,
                (int) m->stack_open, m->base.failed, opal_list_get_size(&m->pending));
        for (size_t k = 0; k < NCOUNTERS; k++) {
            if (v[k] != 0) {
                dprintf(fd, " %s=%llu", counters[k].name, (unsigned long long) v[k]);
            }
        }
        char style[256];
        if (m->stack_open && m->stack.style != NULL && m->stack.style->describe != NULL) {
            m->stack.style->describe(&m->stack, style, sizeof(style));
            dprintf(fd, "%s", style);
        }
        dprintf(fd, "\n");
        const bsctp_stack_t *st = &m->stack;
        for (uint32_t l = 0; l < st->num_links && l < 4096; l++) {
            const bsctp_link_t *k = &st->links[l];
            if (!k->in_use) {
                continue;
            }
            unsigned waiting = 0;
            opal_list_item_t *it = opal_list_get_first(&m->pending);
            for (int n = 0; n < 100000 && it != opal_list_get_end(&m->pending);
                 n++, it = opal_list_get_next(it)) {
                const mca_btl_sctp_frag_t *f = (const mca_btl_sctp_frag_t *) it;
                waiting += f->super.endpoint != NULL && f->super.endpoint->link == l;
            }
            dprintf(fd, "btl sctp state rank %u:   link %u vpid %u assoc %u ident tx=%d rx=%d "
                    "failed=%d stranger=%d out_streams=%u waiting=%u\n", rank, l, k->vpid,
                    k->assoc_id, (int) k->ident_tx, (int) k->ident_rx, (int) k->failed,
                    (int) k->stranger, k->out_streams, waiting);
            /* Each used stream's numbers (btl_sctp_seq.h): last sent, last
             * delivered; a hang shows which message is missing. */
            const bsctp_seq_t *q = &k->seq;
            if (q->s != NULL) {
                dprintf(fd, "btl sctp state rank %u:   link %u numbers (stream:sent/delivered)",
                        rank, l);
                for (uint16_t i = 0; i < q->n && i < 1024; i++) {
                    if (q->s[i].tx_last != 0 || q->s[i].rx_last != 0) {
                        dprintf(fd, " %u:%u/%u", i, q->s[i].tx_last, q->s[i].rx_last);
                    }
                }
                dprintf(fd, " audits idle_ticks=%u sent=%u\n", q->idle_ticks, q->audits);
            }
            char usr[256];
            bsctp_assoc_describe(&m->stack, l, usr, sizeof(usr));
            if (usr[0] != '\0') {
                dprintf(fd, "btl sctp state rank %u:   link %u usrsctp %s\n", rank, l, usr);
            }
        }
    }
}
