/*
 * Copyright (c) 2026 The ompi-esp-sctp authors. All rights reserved.
 * SPDX-License-Identifier: BSD-3-Clause (see LICENSE)
 */
/*
 * btl sctp component: MCA parameters and their checks, init (open and close
 * are common/ebtl_mca's, progress the module's).
 * Modes conn and inet, each with style one-to-many (one module for all
 * peers) or one-to-one (one module per local interface).
 */
#include "btl_sctp.h"
#include "btl_sctp_hdr.h"
#include "btl_sctp_segs.h"

#include <opal/mca/base/mca_base_var.h>
#include <opal/util/proc.h>

#include "ebtl_help.h"
#include "ebtl_modex.h"
#include "ebtl_params.h"

#include <stdlib.h>
#include <string.h>

/* The values of btl_sctp_mode and btl_sctp_style: each names an operation
 * table of the transport (btl_sctp_mode.h, btl_sctp_style.h). */
static const bsctp_mode_t *const bsctp_modes[] = {&bsctp_mode_conn, &bsctp_mode_inet, NULL};
static const bsctp_style_t *const bsctp_styles[] = {&bsctp_style_one_to_one,
                                                    &bsctp_style_one_to_many, NULL};

/* Check every parameter once, with one message naming what is wrong. */
static bool bsctp_params_valid(void)
{
    char err[256];
    const char *mode_names[3], *style_names[3];
    for (size_t i = 0; i < 3; i++) {
        mode_names[i] = bsctp_modes[i] != NULL ? bsctp_modes[i]->name : NULL;
        style_names[i] = bsctp_styles[i] != NULL ? bsctp_styles[i]->name : NULL;
    }
    int mode = ebtl_param_keyword("btl_sctp_mode", mca_btl_sctp_component.mode_name, mode_names,
                                  err, sizeof(err));
    int style = mode < 0 ? -1
                         : ebtl_param_keyword("btl_sctp_style", mca_btl_sctp_component.style_name,
                                              style_names, err, sizeof(err));
    if (mode < 0 || style < 0) {
        ebtl_help_bad_param(err);
        return false;
    }
    mca_btl_sctp_component.mode = bsctp_modes[mode];
    mca_btl_sctp_component.style = bsctp_styles[style];
    /* the locality line says how far NICs are used (FAR_MODULE_SHARE) */
    mca_btl_sctp_component.base.ifaces.far_use =
        bsctp_styles[style]->module_per_interface
            ? "eager messages in turn and 1 % of the bulk (style one-to-one: ob1 weighs a "
              "module per NIC) by"
            : NULL;
    mca_btl_sctp_component_t *c = &mca_btl_sctp_component;
    mca_btl_base_module_t *t = &mca_btl_sctp_module_template.base.super;
    if (ebtl_param_check_range("btl_sctp_port", c->port, 1, 65535, err, sizeof(err)) != 0
        || ebtl_param_check_range("btl_sctp_rto_min", c->rto_min_ms, 1, 60000, err, sizeof(err)) != 0
        || ebtl_param_check_range("btl_sctp_rto_max", c->rto_max_ms, c->rto_min_ms, 600000, err,
                                 sizeof(err)) != 0
        || ebtl_param_check_range("btl_sctp_rto_init", c->rto_init_ms, c->rto_min_ms, c->rto_max_ms,
                                 err, sizeof(err)) != 0
        || ebtl_param_check_range("btl_sctp_sack_delay", c->sack_delay_ms, 0, 500, err,
                                 sizeof(err)) != 0
        || ebtl_param_check_range("btl_sctp_tail_probe", c->tail_probe_ms, 0, 60000, err,
                                  sizeof(err)) != 0
        || ebtl_param_check_range("btl_sctp_peer_timeout", c->peer_timeout_s, 1, 86400, err,
                                 sizeof(err)) != 0
        || ebtl_param_check_range("btl_sctp_heartbeat", c->heartbeat_ms, 0, 600000, err,
                                 sizeof(err)) != 0
        || ebtl_param_check_range("btl_sctp_cmt", c->cmt, 0, 1, err, sizeof(err)) != 0
        || ebtl_param_check_range("btl_sctp_path_max_retrans", c->path_max_retrans, 1, 65535, err,
                                 sizeof(err)) != 0
        || ebtl_param_check_range("btl_sctp_streams", c->streams, 1, 65535, err, sizeof(err)) != 0
        || ebtl_param_check_range("btl_sctp_stream_map", c->stream_map, 0, 1, err, sizeof(err)) != 0
        || ebtl_param_check_range("btl_sctp_sndbuf", c->sndbuf, 64 * 1024, 1 << 30, err,
                                 sizeof(err)) != 0
        || ebtl_param_check_range("btl_sctp_rcvbuf", c->rcvbuf, 64 * 1024, 1 << 30, err,
                                 sizeof(err)) != 0
        || ebtl_param_check_range("btl_sctp_sack_immediately", c->sack_immediately, 0, 1, err,
                                 sizeof(err)) != 0
        || ebtl_param_check_range("btl_sctp_crc32c", c->crc32c, 0, 1, err, sizeof(err)) != 0
        || ebtl_param_check_range("btl_sctp_yield_load", c->yield_load, 0, 100000, err,
                                  sizeof(err)) != 0
        || ebtl_param_check_range("btl_sctp_sack_freq", c->sack_freq, 1, 64, err, sizeof(err)) != 0
        || ebtl_param_check_range("btl_sctp_max_burst", c->max_burst, 0, 65535, err,
                                 sizeof(err)) != 0
        || ebtl_param_check_range("btl_sctp_gso", c->gso, 0, 1, err, sizeof(err)) != 0
        || ebtl_param_check_range("btl_sctp_gro", c->gro, 0, 1, err, sizeof(err)) != 0
        || ebtl_param_check_range("btl_sctp_test_drop_msg", c->test_drop_msg, 0, INT32_MAX, err,
                                 sizeof(err)) != 0
        || (c->packet != 0 && c->packet != -1
            && ebtl_param_check_range("btl_sctp_packet", c->packet, 1500, BSCTP_SEG_PACKET_MAX,
                                      err, sizeof(err)) != 0)
        || ebtl_param_check_range("btl_sctp_max_send_size", (long long) t->btl_max_send_size, 1024,
                                 64 << 20, err, sizeof(err)) != 0
        || ebtl_param_check_range("btl_sctp_eager_limit", (long long) t->btl_eager_limit, 64,
                                 (long long) t->btl_max_send_size, err, sizeof(err)) != 0) {
        ebtl_help_bad_param(err);
        return false;
    }
    /* A fragment goes into the send buffer whole (btl_sctp_assoc.c); one
     * larger than the buffer would wait for room forever. */
    size_t largest = sizeof(bsctp_wire_hdr_t) + t->btl_max_send_size;
    if ((size_t) c->sndbuf < largest) {
        EBTL_SHOW_HELP("sndbuf-below-fragment", c->sndbuf, largest, ebtl_help_host());
        return false;
    }
    if (c->base.faults.corrupt > 0 && c->crc32c == 0) {
        EBTL_SHOW_HELP("fault-needs-crc32c", ebtl_help_host());
        return false;
    }
    if (!ebtl_mca_faults_valid("sctp", &c->base.faults)) {
        return false;
    }
    const ebtl_mca_faults_t *f = &c->base.faults;
    if (!c->mode->btl_sockets && (f->drop > 0 || f->dup > 0 || f->reorder > 0 || f->corrupt > 0)) {
        /* The fault layer sits on the BTL's UDP sockets; usrsctp owns them in inet mode. */
        EBTL_SHOW_HELP("fault-needs-conn", ebtl_help_host());
        return false;
    }
    return true;
}

/* Put the selected addresses of one interface next to each other (in the
 * order interfaces first appear); returns how many interfaces there are
 * and the number of addresses of each in per_if. */
static size_t group_by_interface(ebtl_if_t *ifs, ebtl_nic_place_t *place, size_t n,
                                 size_t *per_if)
{
    size_t groups = 0, done = 0;
    while (done < n) {
        unsigned idx = ifs[done].ifindex;
        size_t k = done + 1;
        for (size_t j = done + 1; j < n; j++) {
            if (ifs[j].ifindex == idx) {
                ebtl_if_t t = ifs[j];
                memmove(&ifs[k + 1], &ifs[k], (j - k) * sizeof(*ifs));
                ifs[k] = t;
                if (place != NULL) {   /* each address's place moves with it */
                    ebtl_nic_place_t p = place[j];
                    memmove(&place[k + 1], &place[k], (j - k) * sizeof(*place));
                    place[k] = p;
                }
                k++;
            }
        }
        per_if[groups++] = k - done;
        done = k;
    }
    return groups;
}

/*
 * Style one-to-one and a bound process: ob1 chooses among a module per
 * NIC, and only its weights may say which NIC to prefer. A far NIC's
 * module reports 1/FAR_MODULE_SHARE of the bandwidth, so ob1 stripes
 * about 1 % of the bulk over it; its latency stays the same, so ob1 still
 * sends eager messages by every module in turn. A higher latency (what
 * usnic does) takes the far module out of ob1's eager list, and Open MPI
 * 4.1's ob1 then queues the rendezvous ACK of a message that arrived by
 * that module until some later send by another completes
 * (mca_pml_ob1_process_pending_packets, run from completion callbacks
 * only): at the end of a job there is none, and the job hung (about one
 * 4-rank flood in five across two hosts, ranks near different NICs).
 */
#define FAR_MODULE_SHARE 100

/* Init failed: close the modules made so far; returns NULL (no modules). */
static mca_btl_base_module_t **drop_modules(mca_btl_sctp_component_t *c,
                                            mca_btl_base_module_t **btls)
{
    for (size_t j = 0; j < c->num_modules; j++) {
        bsctp_stack_close(&c->modules[j]->stack);
        free(c->modules[j]);
    }
    c->num_modules = 0;
    free(btls);
    return NULL;
}

/* One module for every selected address (the module's own set-up is
 * btl_sctp_module.c). */
static mca_btl_base_module_t **bsctp_make_modules(int *num_btls)
{
    mca_btl_sctp_component_t *c = &mca_btl_sctp_component;
    /* one-to-many: one module over every address; one-to-one: one module
     * per interface (over that interface's addresses: lo's 127.0.0.1 and
     * ::1 are one wire), each its own stack, SCTP port btl_sctp_port + its
     * index (the process's usrsctp holds all their listeners). */
    bool per_if = c->style->module_per_interface;
    bool far_weighted = per_if && c->base.ifaces.prefer_near;
    size_t addrs_of[EBTL_MODEX_MAX_ADDRS];
    if (c->base.ifaces.count > EBTL_MODEX_MAX_ADDRS) {
        c->base.ifaces.count = EBTL_MODEX_MAX_ADDRS;   /* the modex record holds no more */
    }
    size_t nmod = per_if ? group_by_interface(c->base.ifaces.selected, c->base.ifaces.place,
                                              c->base.ifaces.count, addrs_of)
                         : 1;
    if (!per_if) {
        addrs_of[0] = c->base.ifaces.count;
    }
    if (per_if && (size_t) c->port + nmod - 1 > 65535) {
        char err[256];
        snprintf(err, sizeof(err), "style one-to-one uses SCTP ports btl_sctp_port .. "
                 "btl_sctp_port + %zu (one per interface): lower btl_sctp_port (now %d)",
                 nmod - 1, c->port);
        ebtl_help_bad_param(err);
        return NULL;
    }
    mca_btl_base_module_t **btls = calloc(nmod, sizeof(*btls));
    if (btls == NULL) {
        return NULL;
    }
    ebtl_yield_init(&c->yield, c->yield_load);
    c->num_modules = 0;
    for (size_t k = 0, first = 0; k < nmod; first += addrs_of[k++]) {
        mca_btl_sctp_module_t *m = calloc(1, sizeof(*m));
        if (m == NULL
            || mca_btl_sctp_module_init(m, &c->base.ifaces.selected[first], addrs_of[k],
                                        (uint16_t) (c->port + (int) k)) != OPAL_SUCCESS) {
            if (m != NULL && m->stack_open) {
                bsctp_stack_close(&m->stack);
            }
            free(m);
            return drop_modules(c, btls);
        }
        /* The fault layer under usrsctp: no datagram has arrived yet (the
         * associations start at the first send, after add_procs). */
        for (size_t i = 0; i < m->stack.num_socks; i++) {
            ebtl_dgram_sock_t *s = &m->stack.socks[i];
            s->fault = ebtl_mca_faults_create(&c->base.faults, EBTL_MODEX_MAX_ADDRS,
                                             (unsigned) (first + i), s->rx_buf_size);
        }
        c->modules[c->num_modules++] = m;
        btls[k] = &m->base.super;
        if (far_weighted && c->base.ifaces.place[first] == EBTL_NIC_FAR) {
            uint32_t bw = m->base.super.btl_bandwidth / FAR_MODULE_SHARE;
            m->base.super.btl_bandwidth = bw > 0 ? bw : 1;
        }
    }
    int rc = mca_btl_sctp_modex_send();
    if (rc != OPAL_SUCCESS) {
        EBTL_SHOW_HELP("modex-send-failed", "sctp", rc, "sctp", ebtl_help_host());
        return drop_modules(c, btls);
    }
    c->module = c->modules[0];
    if (c->verbose >= 1) {
        opal_output(0, "btl sctp rank %u: interfaces: %s", OPAL_PROC_MY_NAME.vpid,
                    c->base.ifaces.locality);
    }
    if (per_if && nmod > 1 && OPAL_PROC_MY_NAME.vpid == 0) {
        EBTL_SHOW_HELP("one-to-one-no-failover", nmod, ebtl_help_host());
    }
    bsctp_stats_register_pvars();
    *num_btls = (int) nmod;
    return btls;
}

static int bsctp_component_register(void)
{
    mca_btl_sctp_component_t *k = &mca_btl_sctp_component;
    const ebtl_mca_param_t params[] = {
        EBTL_PARAM_STR("mode", OPAL_INFO_LVL_4, &k->mode_name, "conn",
            "How usrsctp is driven: conn (AF_CONN over the BTL's own UDP sockets, no stack "
            "threads, fastest, one path per association) or inet (threaded usrsctp over UDP "
            "encapsulation; needed for multihoming failover and CMT)"),
        EBTL_PARAM_STR("style", OPAL_INFO_LVL_4, &k->style_name, "one-to-many",
            "SCTP socket style: one-to-one (a socket per peer, one module per NIC, the BML "
            "stripes across NICs) or one-to-many (one socket and one module for all peers; "
            "with mode inet, multihoming and CMT stripe across NICs)"),
        EBTL_PARAM_INT("port", OPAL_INFO_LVL_5, &k->port, 5000,
            "SCTP port inside the UDP datagrams in mode conn (each rank has its own usrsctp "
            "stack, so all ranks may use the same one); mode inet binds the number of its UDP "
            "encapsulation port instead, unique on the host"),
        EBTL_PARAM_INT("rto_min", OPAL_INFO_LVL_5, &k->rto_min_ms, 20,
            "Least SCTP retransmission timeout, ms (thesis LAN value 20; below the links' "
            "queueing delay it causes false retransmissions)"),
        EBTL_PARAM_INT("rto_max", OPAL_INFO_LVL_5, &k->rto_max_ms, 100,
            "Largest SCTP retransmission timeout, ms (thesis LAN value 100)"),
        EBTL_PARAM_INT("rto_init", OPAL_INFO_LVL_5, &k->rto_init_ms, 50,
            "Initial SCTP retransmission timeout, ms"),
        EBTL_PARAM_INT("sack_delay", OPAL_INFO_LVL_5, &k->sack_delay_ms, 2,
            "Delayed-SACK timer, ms (usrsctp's default 200): how long a SACK waits for a "
            "packet to ride on or for sack_freq packets. Short, so that a sender whose window "
            "is smaller than sack_freq packets (after a timeout under loss) waits little"),
        EBTL_PARAM_INT("tail_probe", OPAL_INFO_LVL_5, &k->tail_probe_ms, 3,
            "Mode conn: after a link lost a packet, packets the peer has not reported "
            "receiving are sent again when neither usrsctp sent nor the peer's SACKs moved "
            "for this many ms (usrsctp's own timer waits its RTO, 20-60 ms on a LAN): the "
            "lost last packet of an exchange costs that, not the RTO. Raised to sack_delay + 1 "
            "if below (a tail's SACK may wait sack_delay); 0: off"),
        EBTL_PARAM_INT("sack_freq", OPAL_INFO_LVL_5, &k->sack_freq, 4,
            "Packets received that make the receiver send a SACK at once (SCTP_DELAYED_SACK "
            "sack_freq; usrsctp's default 2). With 4, a message of up to 4 packets answered at "
            "once carries its SACK on the answer: 4 KiB over 1 Gbit/s 27.7 -> 18.8 us (tcp "
            "17.8). Higher stalls windows smaller than that many packets on sack_delay"),
        EBTL_PARAM_INT("sack_immediately", OPAL_INFO_LVL_5, &k->sack_immediately, 0,
            "1: a message of one packet asks the receiver for an immediate SACK (the thesis's "
            "I-bit; costs the receiver a packet per message); 0: the SACK rides on the "
            "receiver's next packet, such as an MPI reply (8-byte ping-pong 30 % faster, "
            "measured)"),
        EBTL_PARAM_INT("peer_timeout", OPAL_INFO_LVL_5, &k->peer_timeout_s, 60,
            "Seconds of retransmissions to a peer that does not answer before its association "
            "is declared lost and the job ends (in conn mode a peer's stack runs only inside "
            "its MPI calls)"),
        EBTL_PARAM_INT("heartbeat", OPAL_INFO_LVL_5, &k->heartbeat_ms, 100,
            "Mode inet: SCTP heartbeat interval on idle paths, ms (0: off); usrsctp's threads "
            "answer them even while a rank computes outside MPI. Mode conn sends none (a peer's "
            "stack runs only inside its MPI calls)"),
        EBTL_PARAM_INT("cmt", OPAL_INFO_LVL_5, &k->cmt, 0,
            "Mode inet: 1: SCTP's concurrent multipath transfer (usrsctp's CMT), new data by "
            "every address of a peer at once; 0: by its primary address, the others for "
            "failover. Mode conn spreads each association over every NIC itself"),
        EBTL_PARAM_INT("path_max_retrans", OPAL_INFO_LVL_5, &k->path_max_retrans, 2,
            "Mode inet: timeouts on one of a peer's addresses, unanswered, before the "
            "association marks that path failed and sends by another of the peer's addresses "
            "(usrsctp's default 5; with rto_min..rto_max 20..100 ms, 2 leaves a dead NIC in a "
            "few hundred ms). Mode conn has one path per association: peer_timeout applies"),
        EBTL_PARAM_INT("streams", OPAL_INFO_LVL_5, &k->streams, 16,
            "SCTP streams asked for in each direction (SCTP_INITMSG)"),
        EBTL_PARAM_INT("stream_map", OPAL_INFO_LVL_5, &k->stream_map, 1,
            "1: put each ob1 match or rendezvous header on a stream chosen from its "
            "(communicator, tag) and ob1's other headers on streams of their own, so a loss on "
            "one stream does not stall the others; 0: every fragment on stream 0 "
            "(docs/sctp-streams.md)"),
        EBTL_PARAM_INT("sndbuf", OPAL_INFO_LVL_5, &k->sndbuf, 512 * 1024,
            "Bytes the SCTP socket's send buffer holds (data not yet acknowledged included). "
            "Measured on loopback: 512 KiB keeps the copies usrsctp makes in cache and gives "
            "the most bandwidth; raise it for links whose bandwidth-delay product is larger "
            "(docs/sctp-modes.md)"),
        EBTL_PARAM_INT("rcvbuf", OPAL_INFO_LVL_5, &k->rcvbuf, 8 * 1024 * 1024,
            "Bytes the SCTP socket's receive buffer holds: the window the peer may send into"),
        EBTL_PARAM_INT("yield_load", OPAL_INFO_LVL_5, &k->yield_load, 150,
            "Percent: while the host's runnable threads average more than this share of its "
            "CPUs (ranks or other jobs share cores Open MPI cannot see: containers, "
            "namespaces), a progress pass that found nothing to do yields the CPU, as "
            "mpi_yield_when_idle does, so that a rank with work runs. 0: never"),
        EBTL_PARAM_INT("crc32c", OPAL_INFO_LVL_5, &k->crc32c, 1,
            "1: SCTP's CRC32c on every packet, computed and checked by the BTL with the CPU's "
            "CRC instruction (usrsctp's own is always off); 0: skip it, for links that already "
            "check every frame (docs/sctp-modes.md has its measured cost). A rank with 0 sends "
            "checksum 0, which ranks with 1 accept"),
        EBTL_PARAM_INT("max_burst", OPAL_INFO_LVL_5, &k->max_burst, 0,
            "Packets one output pass of usrsctp may send (SCTP_MAX_BURST); 0: only the "
            "congestion window limits. usrsctp's default, 4, also shrinks the window of an "
            "association that paused to 4 packets above what is in flight, so that a message "
            "after a pause grows its window again, a round trip per SACK (16 KiB over "
            "1 Gbit/s up to 96 us against 70 with sack_freq 4)"),
        EBTL_PARAM_INT("gso", OPAL_INFO_LVL_6, &k->gso, 1,
            "Mode conn: 1: the packets usrsctp emits during one send or poll leave as one "
            "UDP GSO send per run of equal-sized packets to a peer (where the kernel has UDP "
            "GSO); 0: one datagram each (still batched by sendmmsg)"),
        EBTL_PARAM_INT("gro", OPAL_INFO_LVL_6, &k->gro, 1,
            "Mode conn: 1: read with UDP GRO, several packets a read (where the kernel has it); "
            "0: one datagram a read (batched by recvmmsg)"),
        EBTL_PARAM_INT("packet", OPAL_INFO_LVL_5, &k->packet, -1,
            "Mode conn: the largest SCTP packet usrsctp builds, bytes (1500..16384; 0: what one "
            "frame of the NICs carries; -1: 16384 where a frame carries at most a quarter of "
            "that, such as MTU 1500, else a frame's). Larger packets go as several datagrams "
            "and are put back together by the peer: less of usrsctp's per-chunk work on fast "
            "links with small frames. A lost frame loses the whole packet, so a peer that "
            "reports lost packets (3 holes in 256 packets) gets packets of a frame from then on"),
        EBTL_PARAM_INT("free_list_max", OPAL_INFO_LVL_5, &k->free_list_max, -1,
            "Most fragment descriptors of each size (-1: no limit)"),
        EBTL_PARAM_INT("verbose", OPAL_INFO_LVL_5, &k->verbose, 0,
            "1: print the counters of each process at finalize (messages, bytes, associations, "
            "usrsctp's retransmissions and checksum errors, the fault layer's); 2: also each "
            "path of a peer going down or up, and why (mode conn with several NICs)"),
        EBTL_PARAM_INT("test_drop_msg", OPAL_INFO_LVL_9, &k->test_drop_msg, 0,
            "TESTING ONLY: each process drops the n-th BTL fragment it reads from usrsctp, as "
            "if usrsctp had lost it, so that tests can check the job then ends with a message "
            "naming the lost message (docs/sctp-modes.md, \"Lost messages\"); 0: off"),
    };
    static const ebtl_defaults_t defaults = {
        .exclusivity = MCA_BTL_EXCLUSIVITY_LOW + 50,
        .eager_limit = 64 * 1024,
        .max_send_size = 128 * 1024,
        .rdma_pipeline_send_length = 128 * 1024,   /* unused: no PUT */
        .rdma_pipeline_frag_size = 1024 * 1024,
        .flags = MCA_BTL_FLAGS_SEND,
    };
    return ebtl_mca_register(&k->base, params, sizeof(params) / sizeof(params[0]), &defaults,
                             &mca_btl_sctp_module_template.base.super);
}

/* Mode conn: the BTL's UDP sockets, for the progress thread to sleep on
 * (mode inet: usrsctp's own threads read; the thread ticks). */
static int bsctp_wait_fds(int *out, int max)
{
    mca_btl_sctp_component_t *c = &mca_btl_sctp_component;
    int n = 0;
    for (size_t i = 0; i < c->num_modules; i++) {
        const mca_btl_sctp_module_t *m = c->modules[i];
        for (size_t k = 0; m->stack.mode->btl_sockets && k < m->stack.num_socks && n < max; k++) {
            out[n++] = m->stack.socks[k].fd;
        }
    }
    return n;
}

mca_btl_sctp_component_t mca_btl_sctp_component = {
    .base = EBTL_COMPONENT("sctp", bsctp_component_register, mca_btl_sctp_progress,
                           bsctp_params_valid, bsctp_make_modules, NULL,
                           bsctp_wait_fds),
};
