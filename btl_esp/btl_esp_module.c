/*
 * Copyright (c) 2026 The ompi-esp-sctp authors. All rights reserved.
 * SPDX-License-Identifier: BSD-3-Clause (see LICENSE)
 */
/*
 * btl esp module: the functions ob1 calls that are esp's own (send, sendi,
 * put, register_mem, flush, finalize; add_procs, alloc, free and
 * prepare_src are common/ebtl_base's and ebtl_frag's, with esp's add_one_proc
 * and its in-place policy), the engine's callbacks into ob1 (deliver,
 * complete, peer failure), and progress.
 */
#include "btl_esp.h"
#include "btl_esp_endpoint.h"
#include "btl_esp_frag.h"

#include <sched.h>
#include <stdio.h>
#include <string.h>

#include "ebtl_help.h"

#include <opal/datatype/opal_convertor.h>
#include <opal/util/proc.h>

/* Room a user-memory descriptor keeps for ob1's header. */
#define USER_FRAG_HEADER_ROOM 256

/* ---------------------------------------------------- engine callbacks */

static void engine_deliver(void *ctx, uint32_t peer, uint8_t tag, const void *data, size_t len)
{
    (void) peer;
    ebtl_module_deliver(ctx, NULL, tag, data, len);   /* the peer's endpoint would cost a lookup */
}

static void engine_complete(void *ctx, esp_msg_t *msg)
{
    mca_btl_esp_module_t *m = ctx;
    mca_btl_esp_frag_t *f = msg->user;
    if (msg->kind == ESP_MSG_PUT) {
        f->put_cb(&m->base.super, f->super.endpoint, f->put_local, f->put_local_handle,
                  f->put_ctx, f->put_cbdata, OPAL_SUCCESS);
        ebtl_frag_return(&f->super);
        return;
    }
    ebtl_frag_complete(&m->base.super, &f->super, OPAL_SUCCESS);
}

static void engine_peer_failed(void *ctx, uint32_t peer, const char *why)
{
    mca_btl_esp_module_t *m = ctx;
    mca_btl_esp_endpoint_t *ep = opal_pointer_array_get_item(&m->peers, (int) peer);
    ebtl_module_peer_failed(&m->base, ep ? ep->proc : NULL, peer, why,
                            mca_btl_esp_component.peer_timeout_s, false);
}

static int engine_unknown_peer(void *ctx, uint64_t id, uint32_t *peer)
{
    mca_btl_esp_module_t *m = ctx;
    opal_process_name_t name = {.jobid = (opal_jobid_t) (id >> 32), .vpid = (opal_vpid_t) id};
    opal_proc_t *proc = opal_proc_for_name(name);
    mca_btl_esp_endpoint_t *ep;
    if (proc == NULL || ebtl_module_add_proc(&m->base, proc, &ep) != OPAL_SUCCESS) {
        return -1;
    }
    *peer = ep->peer;
    return 0;
}

/* ------------------------------------------------------------ set-up */

static void engine_config(mca_btl_esp_module_t *m, esp_proto_config_t *cfg)
{
    mca_btl_esp_component_t *c = &mca_btl_esp_component;
    esp_proto_config_default(cfg);
    opal_process_name_t me = OPAL_PROC_MY_NAME;
    /* Every job launched by one mpirun (a job family: the upper half of
     * the job id) may talk to the others, e.g. after MPI_Comm_spawn. */
    cfg->job_key = ((uint64_t) (me.jobid >> 16) * 0x9E3779B97F4A7C15ull) ^ 0x4553505f4b455931ull;
    cfg->my_id = ebtl_proc_id(me);
    cfg->my_epoch = m->base.epoch;
    cfg->seed = ebtl_random64();
    cfg->window = (uint32_t) c->window;
    cfg->ack_delay_ns = (uint64_t) c->ack_delay_us * 1000;
    cfg->ack_every = (uint32_t) c->ack_every;
    cfg->rto_min_ns = (uint64_t) c->rto_min_us * 1000;
    cfg->rto_max_ns = (uint64_t) c->rto_max_us * 1000;
    cfg->rto_init_ns = (uint64_t) c->rto_init_us * 1000;
    cfg->peer_timeout_ns = (uint64_t) c->peer_timeout_s * 1000000000ull;
    cfg->resend_per_pass = (uint32_t) c->resend_per_pass;
    size_t rcvbuf = m->nics[0].rcvbuf;
    cfg->rcv_budget = c->rcv_budget_bytes ? c->rcv_budget_bytes : rcvbuf / 2;
    cfg->initial_burst = c->initial_burst_bytes;
    cfg->grant_delay_ns = (uint64_t) c->grant_delay_us * 1000;
    cfg->path_timeout_ns = (uint64_t) c->path_timeout_us * 1000;
    cfg->path_probe_ns = (uint64_t) c->path_probe_us * 1000;
    cfg->hold_budget = c->hold_budget_bytes;
    cfg->tiny = (size_t) c->tiny;
    cfg->checksum = c->checksum != 0;
    cfg->compact = c->compact != 0;
    cfg->release = c->put_release != 0;
    cfg->pace = c->pace != 0;
    cfg->fair = c->fair != 0;
}

static int add_one_proc(ebtl_module_t *base, opal_proc_t *proc, const ebtl_modex_addr_t *addrs,
                        int n, uint64_t epoch, struct mca_btl_base_endpoint_t **out);

int mca_btl_esp_module_init(mca_btl_esp_module_t *m)
{
    mca_btl_esp_component_t *c = &mca_btl_esp_component;
    size_t fsize = sizeof(mca_btl_esp_frag_t);
    *m = mca_btl_esp_module_template;
    OBJ_CONSTRUCT(&m->peers, opal_pointer_array_t);
    opal_pointer_array_init(&m->peers, 16, INT32_MAX, 16);
    m->reg_free = -1;
    ebtl_yield_init(&m->yield, c->yield_load);
    if (ebtl_module_construct(&m->base, EBTL_MODEX_KIND_ESP, add_one_proc, fsize, 0,
                              c->free_list_max) != OPAL_SUCCESS
        || ebtl_frag_list_init(&m->frags_user, fsize, 0, USER_FRAG_HEADER_ROOM, c->free_list_max)
               != OPAL_SUCCESS
        || ebtl_frag_list_init(&m->frags_put, fsize, 0, 0, c->free_list_max) != OPAL_SUCCESS) {
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    /* A contiguous payload that does not fit an eager fragment is sent from
     * the user's memory: the engine keeps the descriptor until the peer
     * acknowledges every byte. */
    m->base.frags_inplace = &m->frags_user;
    m->base.inplace_min = 1;
    m->base.inplace_above = m->base.super.btl_eager_limit;
    int rc = esp_wire_open(m);
    if (rc != OPAL_SUCCESS) {
        return rc;
    }
    esp_proto_config_t cfg;
    engine_config(m, &cfg);
    static const esp_proto_ops_t ops = {
        .transmit = esp_wire_transmit,
        .deliver = engine_deliver,
        .put_target = esp_reg_put_target,
        .complete = engine_complete,
        .unknown_peer = engine_unknown_peer,
        .peer_failed = engine_peer_failed,
    };
    m->proto = esp_proto_create(&cfg, &ops, m, ebtl_dgram_now_ns());
    if (m->proto == NULL) {
        esp_wire_close(m);
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    rc = esp_wire_modex_send(m);
    if (rc != OPAL_SUCCESS) {
        EBTL_SHOW_HELP("modex-send-failed", "esp", rc, "esp", ebtl_help_host());
        return rc;
    }
    EBTL_VERBOSE(1, "btl esp: %zu address(es) on the %s wire, window %d, checksum %s, receive "
                "budget %zu bytes", m->num_nics, m->wire->name, c->window,
                c->checksum != 0 ? "on" : "heads only",
                cfg.rcv_budget);
    if (c->verbose >= 1) {
        opal_output(0, "btl esp rank %u: interfaces: %s", OPAL_PROC_MY_NAME.vpid,
                    c->base.ifaces.locality);
    }
    return OPAL_SUCCESS;
}

/* Make an endpoint for proc from its addresses: a peer of the engine. */
static int add_one_proc(ebtl_module_t *base, opal_proc_t *proc, const ebtl_modex_addr_t *addrs,
                        int n, uint64_t epoch, struct mca_btl_base_endpoint_t **out)
{
    mca_btl_esp_module_t *m = (mca_btl_esp_module_t *) base;
    uint64_t id = ebtl_proc_id(proc->proc_name);
    size_t nic[ESP_MAX_PATHS];
    int addr[ESP_MAX_PATHS];
    bool same_host = OPAL_PROC_ON_LOCAL_NODE(proc->proc_flags);
    int npaths = esp_endpoint_choose_paths(m, addrs, n, same_host, nic, addr,
                                           mca_btl_esp_component.max_paths);
    if (npaths == 0) {
        EBTL_VERBOSE(10, "btl esp: no network of ours reaches rank %u", proc->proc_name.vpid);
        return OPAL_ERR_UNREACH;
    }
    mca_btl_esp_endpoint_t *ep = OBJ_NEW(mca_btl_esp_endpoint_t);
    if (ep == NULL) {
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    /* The largest datagram every path's two interfaces carry whole. */
    size_t max = SIZE_MAX;
    unsigned via[ESP_MAX_PATHS];
    for (int k = 0; k < npaths; k++) {
        const ebtl_modex_addr_t *a = &addrs[addr[k]];
        const mca_btl_esp_nic_t *n = &m->nics[nic[k]];
        size_t theirs;
        if (m->wire->resolve(n, a, same_host, ep->path[k].to, &theirs) != 0) {
            OBJ_RELEASE(ep);
            return OPAL_ERR_UNREACH;
        }
        ep->path[k].nic = nic[k];
        ep->path[k].routed = !ebtl_modex_on_link(&n->iface, a);
        via[k] = (unsigned) nic[k];
        max = n->max_payload < max ? n->max_payload : max;
        max = theirs < max ? theirs : max;
    }
    ep->npaths = (unsigned) npaths;
    ep->module = m;
    ep->proc = proc;
    ep->id = id;
    ep->peer = m->num_peers;
    if (esp_proto_add_peer(m->proto, ep->peer, id, epoch, max) != 0) {
        EBTL_SHOW_HELP("peer-datagram-too-small", (unsigned) proc->proc_name.vpid, max,
                       ebtl_help_host(), ebtl_ompi_proc_host(proc));
        OBJ_RELEASE(ep);
        return OPAL_ERR_UNREACH;
    }
    bool standby[ESP_MAX_PATHS];
    bool fallbacks = esp_endpoint_standby_paths(m, nic, npaths, standby);
    (void) esp_proto_set_paths(m->proto, ep->peer, ep->npaths, via, fallbacks ? standby : NULL);
    /* Loopback too: a stray datagram with the job's token and a few bits
     * flipped (a capture replayed, a buggy tool) must not reach ob1, and the
     * CRC rides on copies made anyway (docs/parameters.md has the cost). */
    (void) esp_proto_peer_checksum(m->proto, ep->peer, mca_btl_esp_component.checksum != 0);
    m->num_peers++;
    opal_pointer_array_set_item(&m->peers, (int) ep->peer, ep);
    for (unsigned k = 0; k < ep->npaths; k++) {
        char a_buf[64];
        m->nics[ep->path[k].nic].active = true;
        EBTL_VERBOSE(20, "btl esp: rank %u path %u via %s to %s%s, datagrams up to %zu bytes",
                     proc->proc_name.vpid, k, m->nics[ep->path[k].nic].iface.name,
                     m->wire->format(&ep->path[k].to[ESP_CH_DATA], a_buf, sizeof(a_buf)),
                     ep->path[k].routed ? " (routed)" : "", max);
    }
    *out = ep;
    return OPAL_SUCCESS;
}

static int esp_finalize(struct mca_btl_base_module_t *btl)
{
    mca_btl_esp_module_t *m = (mca_btl_esp_module_t *) btl;
    ebtl_thread_stop(&mca_btl_esp_component.base.thread);   /* before anything goes */
    esp_stats_report(m);
    esp_proto_destroy(m->proto);
    m->proto = NULL;
    esp_wire_close(m);
    esp_reg_fini(m);
    OBJ_DESTRUCT(&m->peers);
    OBJ_DESTRUCT(&m->frags_user.super);
    OBJ_DESTRUCT(&m->frags_put.super);
    ebtl_module_finalize(btl);
    mca_btl_esp_component.module = NULL;
    free(m);
    return OPAL_SUCCESS;
}

/* ------------------------------------------------------------- moving */

static int esp_send(struct mca_btl_base_module_t *btl, struct mca_btl_base_endpoint_t *ep,
                    struct mca_btl_base_descriptor_t *des, mca_btl_base_tag_t tag)
{
    mca_btl_esp_module_t *m = (mca_btl_esp_module_t *) btl;
    mca_btl_esp_frag_t *f = (mca_btl_esp_frag_t *) des;
    esp_msg_t *msg = &f->msg;
    msg->kind = ESP_MSG_SEND;
    msg->tag = tag;
    msg->user = f;
    msg->iovcnt = (int) des->des_segment_count;
    for (int i = 0; i < msg->iovcnt; i++) {
        msg->iov[i].iov_base = des->des_segments[i].seg_addr.pval;
        msg->iov[i].iov_len = des->des_segments[i].seg_len;
    }
    f->super.endpoint = ep;
    f->super.held = true;
    bool own_copy = des->des_segment_count == 1
                    && (des->des_flags & MCA_BTL_DES_FLAGS_BTL_OWNERSHIP);
    ESP_LOCK(m);
    uint64_t now = ebtl_dgram_now_ns();
    size_t backlog = esp_proto_backlog(m->proto, ep->peer);
    /* Our own copy of the bytes and ours to free: done for ob1 now, unless
     * the queue is long (ESP_SEND_INLINE_MAX); the engine keeps the
     * descriptor until the peer acknowledges it. */
    bool inline_done = own_copy && backlog < ESP_SEND_INLINE_MAX;
    msg->prompt_ack = !inline_done;   /* ob1 waits for the ACK */
    if (inline_done) {
        f->super.pml_owns = false;
    }
    if (backlog >= ESP_SEND_BACKLOG_MAX) {
        esp_proto_tick(m->proto, now);
    }
    int rc = esp_proto_send(m->proto, ep->peer, msg, now);
    m->wire->flush(m);
    /* Still under the lock: another thread's progress may complete the
     * descriptor as soon as we let go. */
    if (rc == 0 && inline_done && (des->des_flags & MCA_BTL_DES_SEND_ALWAYS_CALLBACK)) {
        des->des_cbfunc(btl, ep, des, OPAL_SUCCESS);
    }
    ESP_UNLOCK(m);
    if (rc != 0) {
        return OPAL_ERR_UNREACH;   /* the peer failed: the job is ending */
    }
    return inline_done ? 1 : OPAL_SUCCESS;
}

static int esp_sendi(struct mca_btl_base_module_t *btl, struct mca_btl_base_endpoint_t *ep,
                     struct opal_convertor_t *conv, void *header, size_t header_size,
                     size_t payload_size, uint8_t order, uint32_t flags, mca_btl_base_tag_t tag,
                     mca_btl_base_descriptor_t **descriptor)
{
    mca_btl_esp_module_t *m = (mca_btl_esp_module_t *) btl;
    size_t total = header_size + payload_size;
    if (total <= esp_proto_copy_limit(m->proto)) {
        uint8_t data[total > 0 ? total : 1];
        size_t pos;
        if (!ebtl_sendi_pack(data, conv, header, header_size, payload_size, &pos)) {
            return ebtl_sendi_busy(btl, ep, order, total, flags, descriptor);
        }
        struct iovec one = {data, total};
        ESP_LOCK(m);
        /* With a long queue, the descriptor path instead: its send completes
         * at the peer's acknowledgement (esp_send). */
        int rc = esp_proto_backlog(m->proto, ep->peer) >= ESP_SEND_INLINE_MAX
                     ? -1
                     : esp_proto_send_copy(m->proto, ep->peer, tag, &one, 1, ebtl_dgram_now_ns());
        m->wire->flush(m);
        ESP_UNLOCK(m);
        if (rc == 0) {
            return OPAL_SUCCESS;
        }
        /* Not now (window full, not connected yet): the normal path. */
        ebtl_sendi_rewind(conv, payload_size, pos);
    }
    return ebtl_sendi_busy(btl, ep, order, total, flags, descriptor);
}

static int esp_put(struct mca_btl_base_module_t *btl, struct mca_btl_base_endpoint_t *ep,
                   void *local_address, uint64_t remote_address,
                   struct mca_btl_base_registration_handle_t *local_handle,
                   struct mca_btl_base_registration_handle_t *remote_handle, size_t size,
                   int flags, int order, mca_btl_base_rdma_completion_fn_t cbfunc,
                   void *cbcontext, void *cbdata)
{
    mca_btl_esp_module_t *m = (mca_btl_esp_module_t *) btl;
    (void) flags;
    (void) order;
    if (remote_handle == NULL || size == 0) {
        return OPAL_ERR_BAD_PARAM;
    }
    mca_btl_esp_frag_t *f = (mca_btl_esp_frag_t *) ebtl_frag_get(&m->frags_put);
    if (f == NULL) {
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    esp_msg_t *msg = &f->msg;
    msg->kind = ESP_MSG_PUT;
    msg->tag = 0;
    msg->user = f;
    msg->iovcnt = 1;
    msg->iov[0].iov_base = local_address;
    msg->iov[0].iov_len = size;
    msg->put_key = remote_handle->key;
    msg->prompt_ack = true;
    msg->put_addr = remote_address;
    f->super.endpoint = ep;
    f->put_cb = cbfunc;
    f->put_local = local_address;
    f->put_local_handle = local_handle;
    f->put_ctx = cbcontext;
    f->put_cbdata = cbdata;
    f->super.held = true;
    f->super.pml_owns = false;
    ESP_LOCK(m);
    uint64_t now = ebtl_dgram_now_ns();
    if (esp_proto_backlog(m->proto, ep->peer) >= ESP_SEND_BACKLOG_MAX) {
        esp_proto_tick(m->proto, now);
    }
    int rc = esp_proto_send(m->proto, ep->peer, msg, now);
    m->wire->flush(m);
    ESP_UNLOCK(m);
    if (rc != 0) {
        ebtl_frag_return(&f->super);
        return OPAL_ERR_UNREACH;
    }
    return OPAL_SUCCESS;
}

static int esp_flush(struct mca_btl_base_module_t *btl, struct mca_btl_base_endpoint_t *ep)
{
    mca_btl_esp_module_t *m = (mca_btl_esp_module_t *) btl;
    (void) ep;
    /* Everything sent is acknowledged (puts are then complete). */
    while (!m->base.failed) {
        ESP_LOCK(m);
        bool idle = esp_proto_idle(m->proto);
        ESP_UNLOCK(m);
        if (idle) {
            break;
        }
        mca_btl_esp_progress();
    }
    return m->base.failed ? OPAL_ERROR : OPAL_SUCCESS;
}

/* Where ranks share cores the receiving rank is off the CPU for
 * milliseconds at a time, and its grant must cover that or the link idles
 * until it runs again (docs/tuning.md, the 7 -> 1 incast). The kernel
 * counts each thread's time runnable but waiting for a CPU and its turns
 * on one (/proc/thread-self/schedstat); their ratio over the last interval
 * is the typical wait, 0 on a core of its own. */
#define CPU_WAIT_EVERY_NS (20 * 1000 * 1000)
#define CPU_WAIT_MAX_NS (20 * 1000 * 1000)

static void cpu_wait(mca_btl_esp_module_t *m, uint64_t now)
{
    if (now < m->cpu_wait_next_ns) {
        return;
    }
    m->cpu_wait_next_ns = now + CPU_WAIT_EVERY_NS;
    unsigned long long run, wait, slices;
    FILE *f = fopen("/proc/thread-self/schedstat", "r");
    if (f == NULL) {
        return;
    }
    int got = fscanf(f, "%llu %llu %llu", &run, &wait, &slices);
    fclose(f);
    if (got != 3) {
        return;
    }
    uint64_t dw = wait - m->cpu_wait_total_ns, ds = slices - m->cpu_wait_slices;
    /* Totals are per thread: another thread's progress starts over. */
    bool first = m->cpu_wait_slices == 0 || m->cpu_wait_tid != gettid()
                 || wait < m->cpu_wait_total_ns || slices < m->cpu_wait_slices;
    m->cpu_wait_tid = gettid();
    m->cpu_wait_total_ns = wait;
    m->cpu_wait_slices = slices;
    if (first) {
        return;
    }
    uint64_t w = ds > 0 ? dw / ds : 0;
    if (w > CPU_WAIT_MAX_NS) {
        w = CPU_WAIT_MAX_NS;
    }
    m->cpu_wait_ns = (3 * m->cpu_wait_ns + w) / 4;
    esp_proto_set_cpu_wait(m->proto, m->cpu_wait_ns);
}

int mca_btl_esp_progress(void)
{
    mca_btl_esp_module_t *m = mca_btl_esp_component.module;
    if (m == NULL || m->proto == NULL) {
        return 0;
    }
    ESP_LOCK(m);
    uint64_t now = ebtl_dgram_now_ns();
    int n = esp_wire_poll(m, now);
    esp_proto_tick(m->proto, now);
    m->wire->flush(m);
    cpu_wait(m, now);
    bool yield = ebtl_yield_due(&m->yield, now, n);   /* ranks share cores */
    ESP_UNLOCK(m);
    if (yield) {
        sched_yield();
    }
    ebtl_thread_pass(&mca_btl_esp_component.base.thread, now, n);
    return n;
}

int mca_btl_esp_wait_fds(int *out, int max)
{
    mca_btl_esp_module_t *m = mca_btl_esp_component.module;
    int n = 0;
    for (size_t i = 0; m != NULL && m->wire->wait_fds != NULL && i < m->num_nics; i++) {
        n += m->wire->wait_fds(&m->nics[i], out + n, max - n);
    }
    return n;
}

bool mca_btl_esp_busy(void)
{
    mca_btl_esp_module_t *m = mca_btl_esp_component.module;
    if (m == NULL || m->proto == NULL) {
        return false;
    }
    ESP_LOCK(m);
    bool busy = !esp_proto_idle(m->proto);
    ESP_UNLOCK(m);
    return busy;
}

/* The module every process has: common/ebtl_base's functions, esp's own
 * moving functions, and PUT (emulated: the engine writes into the target). */
mca_btl_esp_module_t mca_btl_esp_module_template = {
    .base.super = {
        EBTL_MODULE_TEMPLATE(&mca_btl_esp_component.base.super, esp_finalize, esp_send, esp_sendi),
        .btl_put = esp_put,
        .btl_register_mem = esp_reg_register,
        .btl_deregister_mem = esp_reg_deregister,
        .btl_flush = esp_flush,
        .btl_put_limit = 1ull << 30,
        .btl_put_alignment = 0,
    },
};
