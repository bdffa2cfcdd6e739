/*
 * Copyright (c) 2026 The ompi-esp-sctp authors. All rights reserved.
 * SPDX-License-Identifier: BSD-3-Clause (see LICENSE)
 */
/*
 * btl sctp module: one module and one stack for all peers, or (a style
 * with a module per interface: one-to-one) one per local interface, which
 * the BML stripes. The functions ob1 calls that are sctp's own (send,
 * sendi, finalize; add_procs, alloc, free and prepare_src are
 * common/ebtl_base's and ebtl_frag's, with sctp's add_one_proc and its
 * in-place policy), the transport's callbacks into ob1 (deliver, peer
 * lost, a peer that introduced itself), and progress.
 * usrsctp_sendv copies, so every send completes at once unless the socket's
 * send buffer is full; those wait, in order, in the pending list.
 * A large contiguous payload is not packed: usrsctp copies it from the
 * user's buffer, behind ob1's header, as pieces of one SCTP message.
 */
#include "btl_sctp.h"
#include "btl_sctp_endpoint.h"
#include "btl_sctp_frag.h"

#include <errno.h>
#include <sched.h>
#include <string.h>
#include <sys/uio.h>

#include <opal/datatype/opal_convertor.h>
#include <opal/util/proc.h>

#include "ebtl_help.h"
#include "ebtl_modex.h"
#include "ebtl_route.h"

/* Socket buffers of the UDP socket under usrsctp (the SCTP socket's are
 * btl_sctp_sndbuf / btl_sctp_rcvbuf). */
#define UDP_RCVBUF (16u << 20)
#define UDP_SNDBUF (8u << 20)

/* ------------------------------------------------- transport callbacks */

static void on_deliver(void *ctx, void *peer_user, uint8_t tag, const void *data, size_t len)
{
    ebtl_module_deliver(ctx, peer_user, tag, data, len);
}

static void on_peer_failed(void *ctx, void *peer_user, uint32_t link, const char *why,
                           bool never_up)
{
    mca_btl_sctp_module_t *m = ctx;
    mca_btl_sctp_endpoint_t *ep = peer_user;
    ebtl_module_peer_failed(&m->base, ep ? ep->proc : NULL, link, why,
                            mca_btl_sctp_component.peer_timeout_s, never_up);
}

/* A peer ob1 has not added yet (lazy add_procs) made an association to us. */
static int on_identify(void *ctx, uint32_t link, const ebtl_sockaddr_t *from, uint32_t jobid,
                       uint32_t vpid, void **peer_user)
{
    mca_btl_sctp_module_t *m = ctx;
    opal_process_name_t name = {.jobid = (opal_jobid_t) jobid, .vpid = (opal_vpid_t) vpid};
    opal_proc_t *proc = opal_proc_for_name(name);
    mca_btl_sctp_endpoint_t *ep;
    char a[64];
    (void) link;
    if (proc == NULL || ebtl_module_add_proc(&m->base, proc, &ep) != OPAL_SUCCESS) {
        EBTL_VERBOSE(10, "btl sctp: an association from %s claims to be %u.%u, which is not a "
                    "process we can reach; aborted", ebtl_sockaddr_format(from, a, sizeof(a)),
                    jobid, vpid);
        return -1;
    }
    *peer_user = ep;
    return 0;
}

/* ------------------------------------------------------------ set-up */

int mca_btl_sctp_modex_send(void)
{
    ebtl_modex_addr_t addrs[EBTL_MODEX_MAX_ADDRS];
    size_t n = 0;
    mca_btl_sctp_component_t *c = &mca_btl_sctp_component;
    for (size_t k = 0; k < c->num_modules; k++) {
        const mca_btl_sctp_module_t *m = c->modules[k];
        for (size_t i = 0; i < bsctp_stack_num_addrs(&m->stack) && n < EBTL_MODEX_MAX_ADDRS; i++, n++) {
            const ebtl_if_t *ifa = &m->ifaces[i];
            memset(&addrs[n], 0, sizeof(addrs[n]));
            addrs[n].family = ifa->family == AF_INET ? 4 : 6;
            addrs[n].prefixlen = (uint8_t) ifa->prefixlen;
            addrs[n].mtu = bsctp_stack_addr_mtu(&m->stack, i);
            addrs[n].net_id = (uint16_t) n;
            addrs[n].port = bsctp_stack_udp_port(&m->stack, i);   /* where datagrams go */
            addrs[n].port2 = m->stack.cfg.sctp_port;              /* the SCTP port inside */
            memcpy(addrs[n].addr, ifa->addr, sizeof(addrs[n].addr));
        }
    }
    if (c->num_modules == 0) {
        return OPAL_ERR_NOT_AVAILABLE;
    }
    uint8_t buf[256 + EBTL_MODEX_MAX_ADDRS * sizeof(ebtl_modex_wire_addr_t)];
    size_t len = ebtl_modex_encode(EBTL_MODEX_KIND_SCTP, c->modules[0]->base.epoch, addrs, n,
                                   buf, sizeof(buf));
    return ebtl_modex_send(&mca_btl_sctp_component.base.super.btl_version, buf, len);
}

static int add_one_proc(ebtl_module_t *base, opal_proc_t *proc, const ebtl_modex_addr_t *addrs,
                        int n, uint64_t epoch, struct mca_btl_base_endpoint_t **out);

/* Payloads from this size on are sent from the user's buffer where the
 * transport takes a message in pieces. */
#define BSCTP_INPLACE_MIN (32u * 1024u)

int mca_btl_sctp_module_init(mca_btl_sctp_module_t *m, ebtl_if_t *ifaces, size_t count,
                             uint16_t sctp_port)
{
    mca_btl_sctp_component_t *c = &mca_btl_sctp_component;
    *m = mca_btl_sctp_module_template;
    m->ifaces = ifaces;
    m->num_ifaces = count;
    OBJ_CONSTRUCT(&m->pending, opal_list_t);
    mca_btl_base_module_t *b = &m->base.super;
    m->scratch = malloc(sizeof(bsctp_wire_hdr_t) + b->btl_eager_limit);
    /* Each descriptor has room for the message header before ob1's bytes. */
    if (m->scratch == NULL
        || ebtl_module_construct(&m->base, EBTL_MODEX_KIND_SCTP, add_one_proc,
                                 sizeof(mca_btl_sctp_frag_t), sizeof(bsctp_wire_hdr_t),
                                 c->free_list_max) != OPAL_SUCCESS) {
        return OPAL_ERR_OUT_OF_RESOURCE;
    }

    opal_process_name_t me = OPAL_PROC_MY_NAME;
    size_t max_msg = b->btl_max_send_size > b->btl_eager_limit ? b->btl_max_send_size
                                                               : b->btl_eager_limit;
    bsctp_stack_config_t cfg = {
        .ifaces = ifaces,
        .num_ifaces = count,
        .sctp_port = sctp_port,
        .udp_rcvbuf = UDP_RCVBUF,
        .udp_sndbuf = UDP_SNDBUF,
        .so_rcvbuf = (size_t) c->rcvbuf,
        /* Per NIC: an association spread over k links keeps k links' worth
         * of data in flight (2 x 1 Gbit/s, 4 MiB: 238.5 MB/s with 512 KiB,
         * 239.0 with 1 MiB); loopback's one NIC keeps the cache-sized
         * 512 KiB. */
        .so_sndbuf = (size_t) c->sndbuf * count,
        .max_msg = sizeof(bsctp_wire_hdr_t) + max_msg,
        .rto_min_ms = (uint32_t) c->rto_min_ms,
        .rto_max_ms = (uint32_t) c->rto_max_ms,
        .rto_init_ms = (uint32_t) c->rto_init_ms,
        .peer_timeout_ms = (uint32_t) c->peer_timeout_s * 1000u,
        .streams = (uint16_t) c->streams,
        .sack_delay_ms = (uint32_t) c->sack_delay_ms,
        /* a tail's SACK may wait sack_delay: no probe before it could come */
        .tail_probe_ms = (uint32_t) (c->tail_probe_ms == 0 ? 0
                                     : c->tail_probe_ms > c->sack_delay_ms ? c->tail_probe_ms
                                                                           : c->sack_delay_ms + 1),
        .sack_freq = (uint32_t) c->sack_freq,
        .sack_immediately = c->sack_immediately != 0,
        .jobid = me.jobid,
        .vpid = me.vpid,
        /* Every job one mpirun launched (a job family) may talk to the others. */
        .job_key = ((uint64_t) (me.jobid >> 16) * 0x9E3779B97F4A7C15ull) ^ 0x534354505f4b4559ull,
        .crc32c = c->crc32c != 0,
        .stream_map = c->stream_map != 0,
        .mode = c->mode,
        .style = c->style,
        .heartbeat_ms = (uint32_t) c->heartbeat_ms,   /* where the mode has heartbeats */
        .path_max_retrans = (uint16_t) c->path_max_retrans,   /* ... and several paths */
        .cmt = c->cmt != 0,
        .max_burst = (uint32_t) c->max_burst,
        .gso = c->gso != 0,
        .gro = c->gro != 0,
        .trace_paths = c->verbose >= 2,
        .packet = c->packet < 0 ? BSCTP_PACKET_AUTO : (uint32_t) c->packet,
        .test_drop_msg = (uint64_t) c->test_drop_msg,
    };
    static const bsctp_stack_ops_t ops = {on_deliver, on_peer_failed, on_identify};
    char err[512];
    if (bsctp_stack_open(&m->stack, &cfg, &ops, m, err, sizeof(err)) != 0) {
        EBTL_SHOW_HELP("cannot-start", err, ebtl_help_host());
        return OPAL_ERR_UNREACH;
    }
    m->stack_open = true;
    /* Contiguous data from the user's buffer (conn mode): usrsctp copies
     * it anyway, and packing it first took about a quarter of the sender's
     * time at 4 MiB (docs/sctp-modes.md). Small payloads are packed: one
     * piece is cheaper than two. The descriptor is an eager one, with room
     * for ob1's header. */
    if (bsctp_stack_takes_pieces(&m->stack)) {
        m->base.inplace_min = BSCTP_INPLACE_MIN;
        m->base.inplace_above = 0;
    }
    /* A fragment whose last bytes need a packet of their own pays a
     * packet's fixed costs for them: on loopback's 64 KiB MTU, one packet
     * in three at the default size (4 MiB bandwidth +8 %). Never below the
     * eager limit, whose fragments the lists were sized for. */
    size_t hdr = sizeof(bsctp_wire_hdr_t);
    size_t whole = bsctp_stack_whole_packets(&m->stack, hdr + b->btl_max_send_size) - hdr;
    if (whole >= b->btl_eager_limit) {
        b->btl_max_send_size = whole;
    }
    EBTL_VERBOSE(1, "btl sctp: %s mode, %s, %zu address(es), UDP port %u, SCTP port %u, "
                "path MTU %u, largest fragment %zu, RTO %d/%d/%d ms, heartbeat %u ms, CRC32c %s",
                c->mode->name, c->style->name, bsctp_stack_num_addrs(&m->stack),
                bsctp_stack_udp_port(&m->stack, 0), m->stack.cfg.sctp_port, m->stack.cfg.pmtu,
                b->btl_max_send_size, c->rto_min_ms, c->rto_init_ms, c->rto_max_ms,
                m->stack.cfg.heartbeat_ms, c->crc32c ? "on" : "off");
    return OPAL_SUCCESS;
}

/* Which of the module's addresses are far from our cores
 * (btl_sctp_if_locality) into far[]: far, or NULL when none is. */
static const bool *module_far(const mca_btl_sctp_module_t *m, bool far[EBTL_MODEX_MAX_ADDRS])
{
    const ebtl_mca_ifaces_t *ifs = &mca_btl_sctp_component.base.ifaces;
    if (!ifs->prefer_near || m->ifaces < ifs->selected || m->ifaces >= ifs->selected + ifs->count) {
        return NULL;
    }
    size_t first = (size_t) (m->ifaces - ifs->selected);
    bool any = false;
    for (size_t i = 0; i < m->num_ifaces && i < EBTL_MODEX_MAX_ADDRS; i++) {
        far[i] = first + i < ifs->count && ifs->place[first + i] == EBTL_NIC_FAR;
        any |= far[i];
    }
    return any ? far : NULL;
}

/* Paths by a far NIC are standby when another path of the link is not. */
static void mark_standby(bsctp_link_t *l, const bool *far)
{
    bool any_near = false;
    for (int k = 0; far != NULL && k < l->num_paths; k++) {
        any_near |= !far[l->paths[k].nic];
    }
    for (int k = 0; k < l->num_paths; k++) {
        l->paths[k].standby = any_near && far[l->paths[k].nic];
    }
}

/* Make an endpoint for proc from its addresses: a link of the transport. */
static int add_one_proc(ebtl_module_t *base, opal_proc_t *proc, const ebtl_modex_addr_t *addrs,
                        int n, uint64_t epoch, struct mca_btl_base_endpoint_t **out)
{
    mca_btl_sctp_module_t *m = (mca_btl_sctp_module_t *) base;
    (void) epoch;
    /* Mode conn: every pair of our address and the peer's that reaches it
     * is a path under the one association (btl_sctp_paths.h); mode inet:
     * usrsctp's own multihoming, from the first pair. */
    size_t nics[BSCTP_MAX_PATHS];
    int which[BSCTP_MAX_PATHS];
    size_t num_addrs = bsctp_stack_num_addrs(&m->stack);
    bool same_host = OPAL_PROC_ON_LOCAL_NODE(proc->proc_flags);
    bool far_buf[EBTL_MODEX_MAX_ADDRS];
    const bool *far = module_far(m, far_buf);
    /* inet: the first pair is the association's primary path, a near one
     * when there is one */
    int npaths = ebtl_modex_choose_paths_near_first(m->ifaces, far, num_addrs, addrs, n, same_host,
                                                    &ebtl_route_kernel, nics, which,
                                                    m->stack.mode->btl_sockets ? BSCTP_MAX_PATHS : 1);
    if (npaths == 0) {
        which[0] = ebtl_modex_choose_path(m->ifaces, num_addrs, addrs, n, same_host, &nics[0]);
        npaths = which[0] >= 0;
    }
    if (npaths == 0) {
        EBTL_VERBOSE(10, "btl sctp: no network of ours reaches rank %u", proc->proc_name.vpid);
        return OPAL_ERR_UNREACH;
    }
    ebtl_sockaddr_t udp[BSCTP_MAX_PATHS];
    for (int k = 0; k < npaths; k++) {
        const ebtl_modex_addr_t *a = &addrs[which[k]];
        ebtl_sockaddr_set(&udp[k], a->family == 4 ? AF_INET : AF_INET6, a->addr, a->port);
    }
    int a = which[0];
    /* A link the peer's first packet made (a stranger) may know it by any
     * of its addresses. */
    int link = -1;
    for (int k = 0; k < npaths && link < 0; k++) {
        int path;
        link = bsctp_core_link_of_source(&m->stack, nics[k], &udp[k], &path);
    }
    if (link >= 0) {
        bsctp_core_link_known(&m->stack, (uint32_t) link, addrs[a].port2);
    } else {
        link = bsctp_stack_link(&m->stack, &udp[0], nics[0], addrs[a].port2, false);
    }
    for (int k = 0; link >= 0 && k < npaths; k++) {
        (void) bsctp_core_add_path(&m->stack, (uint32_t) link, nics[k], &udp[k]);
    }
    if (link >= 0) {
        mark_standby(&m->stack.links[link], far);
    }
    mca_btl_sctp_endpoint_t *ep = link >= 0 ? OBJ_NEW(mca_btl_sctp_endpoint_t) : NULL;
    if (ep == NULL) {
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    ep->streams = calloc((size_t) mca_btl_sctp_component.streams, sizeof(*ep->streams));
    if (ep->streams == NULL) {
        OBJ_RELEASE(ep);
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    ep->num_streams = (uint16_t) mca_btl_sctp_component.streams;
    ep->module = m;
    ep->proc = proc;
    ep->link = (uint32_t) link;
    bsctp_link_t *l = &m->stack.links[link];
    l->jobid = proc->proc_name.jobid;
    l->vpid = proc->proc_name.vpid;
    l->user = ep;
    char a_buf[64];
    EBTL_VERBOSE(20, "btl sctp: rank %u via %s and %d other path(s), SCTP port %u",
                proc->proc_name.vpid, ebtl_sockaddr_format(&udp[0], a_buf, sizeof(a_buf)),
                npaths - 1, addrs[a].port2);
    *out = ep;
    return OPAL_SUCCESS;
}

/* Where the fragments went (btl_sctp_streams.h). */
static void report_streams(mca_btl_sctp_module_t *m)
{
    const bsctp_streams_stats_t *s = &m->stack.stream_stats;
    char per[BSCTP_STREAMS_COUNTED * 24 + 32];
    size_t n = 0;
    per[0] = '\0';
    for (int i = 0; i <= BSCTP_STREAMS_COUNTED && n < sizeof(per); i++) {
        if (s->tx_stream[i] != 0) {
            n += (size_t) snprintf(per + n, sizeof(per) - n, " %s%d:%llu",
                                   i == BSCTP_STREAMS_COUNTED ? ">=" : "", i,
                                   (unsigned long long) s->tx_stream[i]);
        }
    }
    EBTL_VERBOSE(1, "btl sctp: streams (map %s): messages sent per stream%s; chosen for %llu ob1 "
                "envelopes, %llu other ob1 headers, %llu before the association's streams were "
                "known or unmapped, %llu not ob1; %llu identifications on streams above 0",
                m->stack.cfg.stream_map ? "on" : "off", per,
                (unsigned long long) s->chose_envelope, (unsigned long long) s->chose_other,
                (unsigned long long) s->chose_unmapped, (unsigned long long) s->chose_not_ob1,
                (unsigned long long) s->ident_extra);
}

/* What this module carried, with the style's own counters (one-to-one:
 * its sockets, per interface). */
static void report_style(mca_btl_sctp_module_t *m)
{
    char own[256];
    m->stack.style->describe(&m->stack, own, sizeof(own));
    if (mca_btl_sctp_component.verbose < 1 || own[0] == '\0') {
        return;
    }
    opal_output(0, "btl sctp module rank %u interface %s: tx_msgs=%llu tx_bytes=%llu rx_msgs=%llu "
                "rx_bytes=%llu%s", (unsigned) OPAL_PROC_MY_NAME.vpid, m->ifaces[0].name,
                (unsigned long long) m->stack.stats.tx_msgs,
                (unsigned long long) m->stack.stats.tx_bytes,
                (unsigned long long) m->stack.stats.rx_msgs,
                (unsigned long long) m->stack.stats.rx_bytes, own);
}

static int bsctp_finalize(struct mca_btl_base_module_t *btl)
{
    mca_btl_sctp_module_t *m = (mca_btl_sctp_module_t *) btl;
    ebtl_thread_stop(&mca_btl_sctp_component.base.thread);   /* before anything goes */
    bsctp_stats_report(m);
    report_streams(m);
    report_style(m);
    if (m->stack_open) {
        bsctp_stack_close(&m->stack);
        m->stack_open = false;
    }
    /* Fragments still waiting were never sent: the job is ending anyway. */
    while (!opal_list_is_empty(&m->pending)) {
        opal_list_remove_first(&m->pending);
    }
    OBJ_DESTRUCT(&m->pending);
    free(m->scratch);
    ebtl_module_finalize(btl);
    mca_btl_sctp_component_t *c = &mca_btl_sctp_component;
    for (size_t i = 0; i < c->num_modules; i++) {
        if (c->modules[i] == m) {
            c->modules[i] = c->modules[--c->num_modules];
            break;
        }
    }
    c->module = c->num_modules > 0 ? c->modules[0] : NULL;
    free(m);
    return OPAL_SUCCESS;
}

/* ------------------------------------------------------------- moving */

/* The bytes of the fragment's SCTP message. */
static size_t frag_wire_len(const mca_btl_sctp_frag_t *f)
{
    size_t len = sizeof(bsctp_wire_hdr_t);
    for (size_t i = 0; i < f->super.base.des_segment_count; i++) {
        len += f->super.segments[i].seg_len;
    }
    return len;
}

/* The message header goes into the descriptor's header room, before buf. */
static int frag_send(mca_btl_sctp_module_t *m, mca_btl_sctp_frag_t *f)
{
    const ebtl_frag_t *b = &f->super;
    bsctp_wire_hdr_t h = {BSCTP_WIRE_VERSION, BSCTP_WIRE_FRAG, f->tag, 0, 0};
    uint8_t *msg = b->buf - sizeof(h);
    memcpy(msg, &h, sizeof(h));
    struct iovec iov[2] = {{msg, sizeof(h) + b->segments[0].seg_len},
                           {b->segments[1].seg_addr.pval, b->segments[1].seg_len}};
    return bsctp_assoc_sendv(&m->stack, b->endpoint->link, f->sid, iov,
                            (int) b->base.des_segment_count);
}

/* The stream for ob1's bytes to ep (0 beyond what the endpoint tracks). */
static uint16_t choose_stream(mca_btl_sctp_module_t *m, mca_btl_sctp_endpoint_t *ep, uint8_t tag,
                              const void *ob1, size_t len)
{
    uint16_t sid = bsctp_assoc_stream(&m->stack, ep->link, tag, ob1, len);
    static int traced;
    if (traced < 40) {
        /* The first headers as parsed, to check the layout against the real ob1. */
        bsctp_ob1_info_t h;
        enum bsctp_ob1_kind k = bsctp_ob1_parse(tag, ob1, len, &h);
        traced++;
        EBTL_VERBOSE(40, "btl sctp: to rank %u tag 0x%02x len %zu: %s type %u flags 0x%x ctx %u "
                    "src %d tag %d seq %u key 0x%llx -> stream %u",
                    ep->proc ? (unsigned) ep->proc->proc_name.vpid : 0u, tag, len,
                    k == BSCTP_OB1_ENVELOPE ? "envelope" : k == BSCTP_OB1_OTHER ? "other" : "not ob1",
                    h.type, h.flags, h.ctx, h.src, h.tag, h.seq, (unsigned long long) h.key, sid);
    }
    return sid < ep->num_streams ? sid : 0;
}

/* A send usrsctp refused for good (rc: -errno): say so once, naming the
 * peer; ob1 then ends the job. */
static int send_failed(mca_btl_sctp_module_t *m, mca_btl_sctp_endpoint_t *ep, int rc)
{
    if (!m->base.failed) {
        m->base.failed = 1;
        EBTL_SHOW_HELP("send-failed", ep->proc ? (unsigned) ep->proc->proc_name.vpid : 0u,
                       ebtl_ompi_proc_host(ep->proc),
                       strerror(rc < 0 ? -rc : EIO), ebtl_help_host());
    }
    return OPAL_ERR_UNREACH;
}

#define FLUSH_AT_LEAST_NS 1000000u

/* Send what waits for send-buffer room. Order is kept per peer and stream
 * (SCTP orders no more than that): a stream stops at its first refused
 * fragment, and a peer's association stops for messages at least as large
 * as one it refused in this pass, so a small message on a free stream can
 * pass bulk data waiting on another. With btl_sctp_stream_map 0 every
 * fragment is on stream 0: one queue per peer, in ob1's order. */
static void flush_pending(mca_btl_sctp_module_t *m)
{
    if (opal_list_is_empty(&m->pending)) {
        return;
    }
    /* In conn mode only input makes room (SACKs, an association coming
     * up): with none since the last pass, the waiting fragments would all
     * be refused again, and visiting each costs a cache miss (2-3 % of a
     * streaming sender's time). A pass every millisecond regardless. */
    const bsctp_stack_t *st = &m->stack;
    if (st->mode->room_from_input && st->input_datagrams == m->flush_input
        && st->polled_ns - m->flush_ns < FLUSH_AT_LEAST_NS) {
        return;
    }
    m->flush_input = st->input_datagrams;
    m->flush_ns = st->polled_ns;
    uint32_t pass = ++m->flush_pass;
    opal_list_item_t *it = opal_list_get_first(&m->pending);
    while (it != opal_list_get_end(&m->pending)) {
        opal_list_item_t *next = opal_list_get_next(it);
        mca_btl_sctp_frag_t *f = (mca_btl_sctp_frag_t *) it;
        mca_btl_sctp_endpoint_t *ep = f->super.endpoint;
        struct bsctp_ep_stream *es = &ep->streams[f->sid];
        size_t len = frag_wire_len(f);
        if (ep->flush_pass != pass) {
            ep->flush_pass = pass;
            ep->min_fail = SIZE_MAX;
        }
        if (es->blocked == pass || len >= ep->min_fail) {
            es->blocked = pass;
            it = next;
            continue;
        }
        int rc = frag_send(m, f);
        if (rc == -EAGAIN) {
            es->blocked = pass;
            ep->min_fail = len;
            it = next;
            continue;
        }
        opal_list_remove_item(&m->pending, it);
        es->pending--;
        /* It went out (or never will): ob1 learns it now. */
        int status = rc == 0 ? OPAL_SUCCESS : send_failed(m, ep, rc);
        ebtl_frag_complete(&m->base.super, &f->super, status);
        it = next;
    }
}

static int bsctp_send(struct mca_btl_base_module_t *btl, struct mca_btl_base_endpoint_t *ep,
                     struct mca_btl_base_descriptor_t *des, mca_btl_base_tag_t tag)
{
    mca_btl_sctp_module_t *m = (mca_btl_sctp_module_t *) btl;
    mca_btl_sctp_frag_t *f = (mca_btl_sctp_frag_t *) des;
    f->super.endpoint = ep;
    f->tag = tag;
    BSCTP_LOCK(m);
    f->sid = choose_stream(m, ep, tag, f->super.buf, f->super.segments[0].seg_len);
    /* Behind earlier waiting fragments of its stream: in the order ob1 sent. */
    int rc = ep->streams[f->sid].pending == 0 ? frag_send(m, f) : -EAGAIN;
    if (rc == -EAGAIN) {
        f->super.held = true;
        ep->streams[f->sid].pending++;
        opal_list_append(&m->pending, &des->super.super);
        BSCTP_UNLOCK(m);
        return OPAL_SUCCESS;   /* completed later, with the callback */
    }
    BSCTP_UNLOCK(m);
    if (rc != 0) {
        return send_failed(m, ep, rc);   /* the job is ending */
    }
    /* usrsctp holds its own copy: done for ob1 now. */
    if (des->des_flags & MCA_BTL_DES_SEND_ALWAYS_CALLBACK) {
        des->des_cbfunc(btl, ep, des, OPAL_SUCCESS);
    }
    if (des->des_flags & MCA_BTL_DES_FLAGS_BTL_OWNERSHIP) {
        ebtl_frag_return(&f->super);
    }
    return 1;
}

static int bsctp_sendi(struct mca_btl_base_module_t *btl, struct mca_btl_base_endpoint_t *ep,
                      struct opal_convertor_t *conv, void *header, size_t header_size,
                      size_t payload_size, uint8_t order, uint32_t flags, mca_btl_base_tag_t tag,
                      mca_btl_base_descriptor_t **descriptor)
{
    size_t total = header_size + payload_size;
    if (total <= btl->btl_eager_limit) {
        mca_btl_sctp_module_t *m = (mca_btl_sctp_module_t *) btl;
        BSCTP_LOCK(m);
        uint16_t sid = choose_stream(m, ep, tag, header, header_size);
        if (ep->streams[sid].pending == 0) {
            bsctp_wire_hdr_t h = {BSCTP_WIRE_VERSION, BSCTP_WIRE_FRAG, tag, 0, 0};
            uint8_t *data = m->scratch;
            memcpy(data, &h, sizeof(h));
            size_t pos;
            bool packed = ebtl_sendi_pack(data + sizeof(h), conv, header, header_size,
                                          payload_size, &pos);
            int rc = packed ? bsctp_assoc_send_on(&m->stack, ep->link, sid, data,
                                                 sizeof(h) + total)
                            : -EAGAIN;
            if (rc == 0) {
                BSCTP_UNLOCK(m);
                return OPAL_SUCCESS;
            }
            ebtl_sendi_rewind(conv, payload_size, pos);
            if (rc != -EAGAIN) {
                BSCTP_UNLOCK(m);
                return send_failed(m, ep, rc);
            }
        }
        BSCTP_UNLOCK(m);
    }
    return ebtl_sendi_busy(btl, ep, order, total, flags, descriptor);
}

int mca_btl_sctp_progress(void)
{
    mca_btl_sctp_component_t *c = &mca_btl_sctp_component;
    int n = 0;
    uint64_t now = 0;   /* the last stack's poll read the clock */
    for (size_t i = 0; i < c->num_modules; i++) {
        mca_btl_sctp_module_t *m = c->modules[i];
        if (!m->stack_open) {
            continue;
        }
        BSCTP_LOCK(m);
        n += bsctp_stack_poll(&m->stack);   /* the ends of messages the links hold too */
        now = m->stack.polled_ns;
        flush_pending(m);
        BSCTP_UNLOCK(m);
    }
    if (now == 0) {
        now = ebtl_dgram_now_ns();   /* no stack open */
    }
    bool yield = false;
    if (c->num_modules > 0) {   /* ranks may share cores unseen (common/ebtl_yield.h) */
        BSCTP_LOCK(c->modules[0]);
        yield = ebtl_yield_due(&c->yield, now, n);
        BSCTP_UNLOCK(c->modules[0]);
    }
    if (yield) {
        sched_yield();
    }
    ebtl_thread_pass(&c->base.thread, now, n);
    return n;
}

mca_btl_sctp_module_t mca_btl_sctp_module_template = {
    .base.super = {EBTL_MODULE_TEMPLATE(&mca_btl_sctp_component.base.super, bsctp_finalize,
                                        bsctp_send, bsctp_sendi)},
};
