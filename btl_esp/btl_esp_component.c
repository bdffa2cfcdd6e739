/*
 * Copyright (c) 2026 The ompi-esp-sctp authors. All rights reserved.
 * SPDX-License-Identifier: BSD-3-Clause (see LICENSE)
 */
/*
 * btl esp component: MCA parameters and their checks, init (one module for
 * all selected interfaces and all peers). Open and close are
 * common/ebtl_mca's, progress is the module's.
 */
#include "ebtl_config.h"

#include "btl_esp.h"

#include <math.h>

#include <opal/mca/base/mca_base_var.h>
#include <opal/runtime/opal_progress.h>

#include "btl_esp_frag.h"
#include "ebtl_help.h"
#include "ebtl_params.h"

static const char *const esp_wire_names[] = {"udp", "ofi", "eth", NULL};
#ifdef EBTL_HAVE_LIBFABRIC
#define ESP_WIRES_BUILT "udp, eth, ofi"
#else
#define ESP_WIRES_BUILT "udp, eth (no ofi: configure found no libfabric)"
#endif

static bool size_param(const char *name, const char *text, uint64_t min, uint64_t max,
                       size_t *out)
{
    char err[256];
    uint64_t v;
    if (ebtl_param_size(name, text, min, max, &v, err, sizeof(err)) != 0) {
        ebtl_help_bad_param(err);
        return false;
    }
    *out = (size_t) v;
    return true;
}

static bool range_param(const char *name, long long v, long long min, long long max)
{
    char err[256];
    if (ebtl_param_check_range(name, v, min, max, err, sizeof(err)) != 0) {
        ebtl_help_bad_param(err);
        return false;
    }
    return true;
}

/* Check every parameter once, with one message naming what is wrong. */
static bool esp_params_valid(void)
{
    mca_btl_esp_component_t *c = &mca_btl_esp_component;
    char err[256];
    int wire = ebtl_param_keyword("btl_esp_wire", c->wire_name, esp_wire_names, err, sizeof(err));
    if (wire < 0) {
        ebtl_help_bad_param(err);
        return false;
    }
    c->wire = (enum mca_btl_esp_wire) wire;
#ifndef EBTL_HAVE_LIBFABRIC
    if (c->wire == ESP_WIRE_OFI) {
        snprintf(err, sizeof(err), "btl_esp_wire=ofi: this build of esp has no libfabric "
                 "(configure found none: install libfabric-dev and rebuild); use "
                 "btl_esp_wire=udp");
        ebtl_help_bad_param(err);
        return false;
    }
#endif
    if (!range_param("btl_esp_eth_type", c->eth_type, 0x0600, 0xffff)) {
        return false;
    }
    if (!range_param("btl_esp_window", c->window, 16, 65536)
        || (c->window & (c->window - 1)) != 0) {
        if ((c->window & (c->window - 1)) != 0 && c->window >= 16 && c->window <= 65536) {
            char err[128];
            snprintf(err, sizeof(err), "btl_esp_window=%d is not a power of 2 (e.g. 1024, 4096)",
                     c->window);
            ebtl_help_bad_param(err);
        }
        return false;
    }
    mca_btl_base_module_t *t = &mca_btl_esp_module_template.base.super;
    return range_param("btl_esp_ack_delay", c->ack_delay_us, 0, 100000)
           && range_param("btl_esp_ack_every", c->ack_every, 1, 65536)
           && range_param("btl_esp_rto_min", c->rto_min_us, 100, 10000000)
           && range_param("btl_esp_rto_max", c->rto_max_us, c->rto_min_us, 60000000)
           && range_param("btl_esp_rto_init", c->rto_init_us, c->rto_min_us, c->rto_max_us)
           && range_param("btl_esp_grant_delay", c->grant_delay_us, 10, 1000000)
           && range_param("btl_esp_peer_timeout", c->peer_timeout_s, 1, 86400)
           && range_param("btl_esp_resend_per_pass", c->resend_per_pass, 1, 65536)
           && range_param("btl_esp_tiny", c->tiny, 0, 65536)
           && range_param("btl_esp_checksum", c->checksum, -1, 1)
           && range_param("btl_esp_compact", c->compact, 0, 1)
           && range_param("btl_esp_put_release", c->put_release, 0, 1)
           && range_param("btl_esp_pace", c->pace, 0, 1)
           && range_param("btl_esp_fair", c->fair, 0, 1)
           && range_param("btl_esp_yield_load", c->yield_load, 0, 100000)
           && range_param("btl_esp_gso", c->gso, 0, 1)
           && range_param("btl_esp_gro", c->gro, 0, 1)
           && range_param("btl_esp_max_paths", c->max_paths, 1, ESP_MAX_PATHS)
           && range_param("btl_esp_path_timeout", c->path_timeout_us, 1000, 10000000)
           && range_param("btl_esp_path_probe", c->path_probe_us, 1000, 10000000)
           && size_param("btl_esp_rcvbuf", c->rcvbuf, 64 << 10, 1ull << 30, &c->rcvbuf_bytes)
           && size_param("btl_esp_sndbuf", c->sndbuf, 64 << 10, 1ull << 30, &c->sndbuf_bytes)
           && size_param("btl_esp_rcv_budget", c->rcv_budget, 0, 1ull << 30, &c->rcv_budget_bytes)
           && size_param("btl_esp_initial_burst", c->initial_burst, 1024, 1ull << 30,
                         &c->initial_burst_bytes)
           && size_param("btl_esp_hold_budget", c->hold_budget, 64 << 10, 1ull << 32,
                         &c->hold_budget_bytes)
           && range_param("btl_esp_max_send_size", (long long) t->btl_max_send_size, 1024,
                          16 << 20)
           && range_param("btl_esp_eager_limit", (long long) t->btl_eager_limit, 64,
                          (long long) t->btl_max_send_size)
           && ebtl_mca_faults_valid("esp", &c->base.faults);
}

/* One module for every selected address (the module's own set-up is
 * btl_esp_module.c). */
static mca_btl_base_module_t **esp_make_modules(int *num_btls)
{
    mca_btl_esp_module_t *m = calloc(1, sizeof(*m));
    mca_btl_base_module_t **btls = malloc(sizeof(*btls));
    if (m == NULL || btls == NULL) {
        free(m);
        free(btls);
        return NULL;
    }
    if (mca_btl_esp_module_init(m) != OPAL_SUCCESS) {
        free(m);
        free(btls);
        return NULL;
    }
    mca_btl_esp_component.module = m;
    esp_stats_register_pvars();
    btls[0] = &m->base.super;
    *num_btls = 1;
    return btls;
}

static int esp_component_register(void)
{
    mca_btl_esp_component_t *c = &mca_btl_esp_component;
    esp_proto_config_t d; /* the engine's defaults are the parameters' defaults */
    esp_proto_config_default(&d);

    const ebtl_mca_param_t params[] = {
        EBTL_PARAM_STR("wire", OPAL_INFO_LVL_4, &c->wire_name, "udp",
            "Datagram service under the protocol: udp (UDP sockets, unprivileged, everywhere); "
            "ofi (a libfabric FI_EP_DGRAM endpoint per address, for fabrics whose datagram "
            "service is libfabric's; btl_esp_ofi_provider); eth (esp frames straight on "
            "Ethernet, to peers on the same link; needs CAP_NET_RAW; peers elsewhere by udp). "
            "Wires in this build: " ESP_WIRES_BUILT "."),
        EBTL_PARAM_STR("ofi_provider", OPAL_INFO_LVL_5, &c->ofi_provider, "",
            "btl_esp_wire=ofi: the libfabric provider (as fi_info -t FI_EP_DGRAM lists them, "
            "e.g. udp, efa); empty: the first that offers FI_EP_DGRAM on the address"),
        EBTL_PARAM_INT("eth_type", OPAL_INFO_LVL_5, &c->eth_type, 0x88b5,
            "btl_esp_wire=eth: the ethertype of esp's frames (0x0600..0xffff; default 0x88b5, "
            "IEEE's local experimental one)"),
        EBTL_PARAM_INT("window", OPAL_INFO_LVL_5, &c->window, (int) d.window,
            "Most segments in flight to one peer (a power of 2, 16..65536); memory grows with "
            "traffic, not with this"),
        EBTL_PARAM_INT("ack_delay", OPAL_INFO_LVL_5, &c->ack_delay_us,
            (int) (d.ack_delay_ns / 1000), "Microseconds a receiver may wait to send a "
            "standalone ACK (data going back carries it sooner)"),
        EBTL_PARAM_INT("ack_every", OPAL_INFO_LVL_5, &c->ack_every, (int) d.ack_every,
            "Segments received before an ACK is sent at once"),
        EBTL_PARAM_INT("rto_min", OPAL_INFO_LVL_5, &c->rto_min_us, (int) (d.rto_min_ns / 1000),
            "Floor of the adaptive retransmit timeout, microseconds"),
        EBTL_PARAM_INT("rto_max", OPAL_INFO_LVL_5, &c->rto_max_us, (int) (d.rto_max_ns / 1000),
            "Ceiling of the retransmit timeout (and its backoff), microseconds"),
        EBTL_PARAM_INT("rto_init", OPAL_INFO_LVL_5, &c->rto_init_us, (int) (d.rto_init_ns / 1000),
            "Retransmit timeout before the first RTT measurement, microseconds"),
        EBTL_PARAM_INT("peer_timeout", OPAL_INFO_LVL_4, &c->peer_timeout_s,
            (int) (d.peer_timeout_ns / 1000000000ull), "Seconds without any acknowledgement "
            "from a peer that has data outstanding before the job is ended with an error naming "
            "that peer. Raise it if ranks compute for longer than this without calling MPI while "
            "others send to them"),
        EBTL_PARAM_INT("resend_per_pass", OPAL_INFO_LVL_6, &c->resend_per_pass,
            (int) d.resend_per_pass, "Most retransmissions per progress pass"),
        EBTL_PARAM_STR("rcvbuf", OPAL_INFO_LVL_5, &c->rcvbuf, "4m",
            "Kernel receive buffer of each socket (k/m/g suffixes); as root the system limit is "
            "bypassed"),
        EBTL_PARAM_STR("sndbuf", OPAL_INFO_LVL_5, &c->sndbuf, "4m",
            "Kernel send buffer of each socket"),
        EBTL_PARAM_STR("rcv_budget", OPAL_INFO_LVL_5, &c->rcv_budget, "0",
            "Payload bytes all peers together may have in flight toward this process; 0: half "
            "of the receive buffer the kernel granted"),
        EBTL_PARAM_INT("grant_delay", OPAL_INFO_LVL_5, &c->grant_delay_us,
            (int) (d.grant_delay_ns / 1000), "Microseconds of queueing a receiver lets its senders "
            "cause: together they may have in flight what it drains in this long (and at most "
            "the receive budget), shared among those sending at the moment (btl_esp_fair)"),
        EBTL_PARAM_STR("initial_burst", OPAL_INFO_LVL_5, &c->initial_burst, "256k",
            "Bytes a sender sends at the start of a burst, before the receiver's first ACK "
            "grants its share of the receive budget"),
        EBTL_PARAM_STR("hold_budget", OPAL_INFO_LVL_6, &c->hold_budget, "8m",
            "Out-of-order bytes a receiver keeps per peer while a gap fills"),
        EBTL_PARAM_INT("tiny", OPAL_INFO_LVL_6, &c->tiny, (int) d.tiny,
            "Segments up to this many payload bytes, and ACKs, use the priority channel (a "
            "second socket polled first)"),
        EBTL_PARAM_INT("gso", OPAL_INFO_LVL_6, &c->gso, 1,
            "1: send runs of equal-size datagrams to one peer as one UDP GSO message (the "
            "kernel cuts them; where the device refuses, esp falls back by itself); 0: one "
            "datagram per message"),
        EBTL_PARAM_INT("gro", OPAL_INFO_LVL_6, &c->gro, 1,
            "1: ask for UDP GRO on the data socket, so that a burst from a GSO sender arrives "
            "as one read of up to 64 KiB (8 such receive buffers per socket); 0: one datagram "
            "per read"),
        EBTL_PARAM_INT("max_paths", OPAL_INFO_LVL_4, &c->max_paths, ESP_MAX_PATHS,
            "Ways to one peer used at once, at most: one per NIC of ours with an address of "
            "the peer's on its subnet (btl_esp_if_include/exclude choose the NICs). Segments "
            "go by every live path; a dead path's are resent by the others. 1: one path, "
            "as a single-NIC run"),
        EBTL_PARAM_INT("path_timeout", OPAL_INFO_LVL_5, &c->path_timeout_us,
            (int) (d.path_timeout_ns / 1000),
            "Microseconds a path may deliver nothing, while it has data out and another path "
            "delivers, before it counts as dead (at least; 4 of its round trips when longer); "
            "its data then goes again by the other paths"),
        EBTL_PARAM_INT("path_probe", OPAL_INFO_LVL_5, &c->path_probe_us,
            (int) (d.path_probe_ns / 1000),
            "Microseconds between probes of a dead path; it is used again once it answers"),
        EBTL_PARAM_INT("checksum", OPAL_INFO_LVL_4, &c->checksum, 1,
            "CRC-32C over every byte of every datagram (folded into the receiver's copy where "
            "there is one); a corrupted datagram is dropped and counted. 1: on every path "
            "(-1, once 'auto', is the same); 0: only each datagram's head (header and the "
            "first 128 payload bytes, which hold every header ob1 parses) is checked, which "
            "is always done. Either end asking for 1 turns it on both ways"),
        EBTL_PARAM_INT("compact", OPAL_INFO_LVL_5, &c->compact, 1,
            "1: after its first datagram, a large message (a fragment cut in pieces, or a PUT "
            "once its first piece is acknowledged) goes in datagrams with a 20-byte header "
            "instead of 56, where the peer takes them and owes no acknowledgement: at MTU 1500 "
            "a frame carries 1452 bytes of it, against 1416 (tcp: 1448); 0: every datagram "
            "with the full header"),
        EBTL_PARAM_INT("put_release", OPAL_INFO_LVL_5, &c->put_release, 1,
            "1: a PUT (a rendezvous message's data) is complete for ob1 as soon as its last "
            "datagram is sent, its unacknowledged bytes (256 KiB at most) copied for resending, "
            "so that ob1's FIN follows the data without waiting a round trip for the "
            "acknowledgement; only on links slower than 4 Gbit/s, where the copy costs less "
            "than the wait. 0: a PUT is complete when the peer has acknowledged all of it"),
        EBTL_PARAM_INT("pace", OPAL_INFO_LVL_5, &c->pace, 0,
            "1: new data goes at 1.25 times the receiver's grant per round trip, in bursts of "
            "at most an eighth of it, instead of all the grant at once when an ACK reopens it: "
            "several senders to one busy receiver overflow the switch port before it less "
            "(7 -> 1 incast: 1.8 % of segments sent again, 0.3-0.5 % paced) but also keep it "
            "less full (goodput 6-9 % lower; docs/tuning.md). 0 (default): the grant at once"),
        EBTL_PARAM_INT("fair", OPAL_INFO_LVL_5, &c->fair, 1,
            "1 (default): several senders in a burst toward this process share its grant by "
            "what each delivered in the last tens of milliseconds (a sender that fell behind "
            "its equal share gets up to twice it, one ahead down to half); 0: equal split"),
        EBTL_PARAM_INT("yield_load", OPAL_INFO_LVL_5, &c->yield_load, 150,
            "Percent: while the host's runnable threads average more than this share of its "
            "CPUs (ranks or other jobs share cores Open MPI cannot see: containers, "
            "namespaces), a progress pass that found nothing to do yields the CPU, as "
            "mpi_yield_when_idle does, so that a rank with work runs. 0: never"),
        EBTL_PARAM_INT("verbose", OPAL_INFO_LVL_4, &c->verbose, 0,
            "1: print the protocol counters of each process at finalize"),
        EBTL_PARAM_INT("free_list_max", OPAL_INFO_LVL_9, &c->free_list_max, -1,
            "Most fragment descriptors of each kind (-1: no limit)"),
    };
    static const ebtl_defaults_t defaults = {
        .exclusivity = MCA_BTL_EXCLUSIVITY_LOW + 100, /* above tcp, below shared memory */
        /* A 64 KiB message and ob1's header go eager: its rendezvous cost
         * more than the CHUNKs it now takes on loopback (docs/parameters.md). */
        .eager_limit = 64 * 1024 + 128,
        .max_send_size = 64 * 1024 + 128,
        /* Beyond the rendezvous's first fragment, all by PUT: a send of
         * the end costs a copy PUT saves (docs/parameters.md). */
        .rdma_pipeline_send_length = 0,
        .rdma_pipeline_frag_size = 4 * 1024 * 1024,
        .flags = MCA_BTL_FLAGS_SEND | MCA_BTL_FLAGS_PUT,
    };
    mca_btl_esp_module_template.base.super.btl_registration_handle_size =
        sizeof(struct mca_btl_base_registration_handle_t);
    return ebtl_mca_register(&c->base, params, sizeof(params) / sizeof(params[0]), &defaults,
                             &mca_btl_esp_module_template.base.super);
}

mca_btl_esp_component_t mca_btl_esp_component = {
    .base = EBTL_COMPONENT("esp", esp_component_register, mca_btl_esp_progress,
                           esp_params_valid, esp_make_modules, mca_btl_esp_busy,
                           mca_btl_esp_wait_fds),
};
