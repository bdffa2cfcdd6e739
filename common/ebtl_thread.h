/*
 * Copyright (c) 2026 The ompi-esp-sctp authors. All rights reserved.
 * SPDX-License-Identifier: BSD-3-Clause (see LICENSE)
 */
/*
 * The progress thread both components may run (btl_<c>_progress_thread):
 * while the application computes and makes no MPI call, it calls
 * opal_progress() every tick, so that the component's sockets are drained,
 * ACKs and retransmissions go out, timers run and ob1 gets complete
 * fragments (rendezvous and pipelines go on). It stays out of the way
 * while the application's own threads progress: a pass by any other
 * thread in the last tick (ebtl_thread_main_pass) makes it sleep.
 *
 * Open MPI's locks must be real for this, as for btl tcp's thread:
 * ebtl_thread_enable() at component init, before ob1 looks at the modules,
 * sets opal_using_threads() and MCA_BTL_FLAGS_BTL_PROGRESS_THREAD_ENABLED
 * (ob1 then guards its matching), and every lock the component already
 * takes for MPI_THREAD_MULTIPLE does the rest.
 */
#ifndef EBTL_THREAD_H
#define EBTL_THREAD_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include <opal/mca/btl/btl.h>

#define EBTL_THREAD_MAX_FDS 64

typedef struct ebtl_thread {
    pthread_t tid;
    bool started;                 /* it ran in this process (for the counters) */
    bool running;
    bool stop;                    /* atomic: the thread ends at its next tick */
    /* the component's state: true while it has data out or timers due
     * (the thread then ticks every busy_ns, else every idle_ns) */
    bool (*busy)(void *ctx);
    void *ctx;
    uint64_t busy_ns, idle_ns;
    /* it sleeps in poll() on these (the component's sockets), so that a
     * datagram wakes it at once; none: it sleeps the tick */
    int fds[EBTL_THREAD_MAX_FDS];
    int nfds;
    uint64_t main_pass_ns;        /* atomic: another thread's last progress pass */
    uint64_t events;              /* atomic: what the thread's own passes handled */
    /* what it did: passes it made, ticks it slept through for another
     * thread's passes */
    uint64_t passes, yields;
} ebtl_thread_t;

/* At component init, with the thread asked for: Open MPI's locks real,
 * and ob1 told (on each of the n modules). */
void ebtl_thread_enable(mca_btl_base_module_t **modules, int n);

/* Whenever threads may share the BTL (its thread, or MPI_THREAD_MULTIPLE):
 * ob1 adds every peer at start-up, never lazily from another thread. */
void ebtl_thread_add_peers_at_start(mca_btl_base_module_t **modules, int n);

/* Start the thread, sleeping on the nfds descriptors fds (0: ticking).
 * Returns 0, or -1 (errno) when it cannot be made. */
int ebtl_thread_start(ebtl_thread_t *t, bool (*busy)(void *ctx), void *ctx, uint64_t busy_ns,
                      uint64_t idle_ns, const int *fds, int nfds);

/* Stop it and wait for it (no-op when not running). First thing at finalize. */
void ebtl_thread_stop(ebtl_thread_t *t);

/* "progress_thread=on passes=N yields=N fds=N" or "progress_thread=off",
 * for the counters at finalize: the thread's own passes (opal_progress
 * calls), the ticks it slept through because another thread progressed,
 * and how many sockets it slept on (0: it ticked). */
const char *ebtl_thread_format(const ebtl_thread_t *t, char *buf, size_t len);

/* True in the progress thread itself. */
bool ebtl_thread_is_self(void);

/* The component's progress function calls this on every pass, with what
 * the pass handled: another thread's passes keep the progress thread
 * asleep; its own, when they handle something, make it pass again at once
 * (a stream arriving while the application computes is drained at the
 * rate it comes, not one pass per tick). */
static inline void ebtl_thread_pass(ebtl_thread_t *t, uint64_t now_ns, int handled)
{
    if (!t->running) {
        return;
    }
    if (ebtl_thread_is_self()) {
        if (handled > 0) {
            __atomic_fetch_add(&t->events, (uint64_t) handled, __ATOMIC_RELAXED);
        }
    } else {
        __atomic_store_n(&t->main_pass_ns, now_ns, __ATOMIC_RELAXED);
    }
}

#endif
