/*
 * Copyright (c) 2026 The ompi-esp-sctp authors. All rights reserved.
 * SPDX-License-Identifier: BSD-3-Clause (see LICENSE)
 */
/* The progress thread (see ebtl_thread.h). */
#include "ebtl_ompi.h"
#include "ebtl_thread.h"
#include "ebtl_dgram.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <time.h>

#include <opal/runtime/opal_progress.h>

static __thread bool in_progress_thread;

bool ebtl_thread_is_self(void)
{
    return in_progress_thread;
}

static void sleep_ns(uint64_t ns)
{
    struct timespec ts = {(time_t) (ns / 1000000000ull), (long) (ns % 1000000000ull)};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
}

const char *ebtl_thread_format(const ebtl_thread_t *t, char *buf, size_t len)
{
    if (!t->started) {
        snprintf(buf, len, "progress_thread=off");
    } else {
        snprintf(buf, len, "progress_thread=on passes=%llu yields=%llu fds=%d",
                 (unsigned long long) t->passes, (unsigned long long) t->yields, t->nfds);
    }
    return buf;
}

void ebtl_thread_enable(mca_btl_base_module_t **modules, int n)
{
    /* what btl tcp does for its thread (4.1 btl_tcp_component.c) */
    opal_set_using_threads(true);
    for (int i = 0; i < n; i++) {
        modules[i]->btl_flags |= MCA_BTL_FLAGS_BTL_PROGRESS_THREAD_ENABLED;
    }
}

void ebtl_thread_add_peers_at_start(mca_btl_base_module_t **modules, int n)
{
    /* Whenever two threads may be in the BTL: one delivers to ob1 holding
     * the module lock, while another adds a peer lazily (ob1's first send
     * to it) holding ob1's proc lock and calling add_procs, which takes
     * the module lock: a deadlock, seen with the progress thread under
     * MPI_THREAD_MULTIPLE at np 4. Every peer added at start-up instead
     * (btl tcp too, under MPI_THREAD_MULTIPLE with several modules). */
    for (int i = 0; i < n; i++) {
        modules[i]->btl_flags |= MCA_BTL_FLAGS_SINGLE_ADD_PROCS;
    }
}

/* Until a datagram comes in on one of t's descriptors, or ns pass. */
static void wait_input(const ebtl_thread_t *t, uint64_t ns)
{
    if (t->nfds == 0) {
        sleep_ns(ns);
        return;
    }
    struct pollfd p[EBTL_THREAD_MAX_FDS];
    for (int i = 0; i < t->nfds; i++) {
        p[i].fd = t->fds[i];
        p[i].events = POLLIN;
        p[i].revents = 0;
    }
    struct timespec ts = {(time_t) (ns / 1000000000ull), (long) (ns % 1000000000ull)};
    (void) ppoll(p, (nfds_t) t->nfds, &ts, NULL);
}

static void *thread_main(void *arg)
{
    ebtl_thread_t *t = arg;
    in_progress_thread = true;
    while (!__atomic_load_n(&t->stop, __ATOMIC_ACQUIRE)) {
        uint64_t tick = t->busy(t->ctx) ? t->busy_ns : t->idle_ns;
        /* the components stamp their passes with the same clock */
        if (ebtl_dgram_now_ns() - __atomic_load_n(&t->main_pass_ns, __ATOMIC_RELAXED) < tick) {
            t->yields++;   /* the application is in MPI: its passes do the work */
            sleep_ns(tick);
            continue;
        }
        uint64_t before = __atomic_load_n(&t->events, __ATOMIC_RELAXED);
        opal_progress();
        t->passes++;
        if (__atomic_load_n(&t->events, __ATOMIC_RELAXED) == before) {
            wait_input(t, tick);
        }
    }
    return NULL;
}

int ebtl_thread_start(ebtl_thread_t *t, bool (*busy)(void *ctx), void *ctx, uint64_t busy_ns,
                      uint64_t idle_ns, const int *fds, int nfds)
{
    t->nfds = 0;
    for (int i = 0; i < nfds && t->nfds < EBTL_THREAD_MAX_FDS; i++) {
        if (fds[i] >= 0) {
            t->fds[t->nfds++] = fds[i];
        }
    }
    t->busy = busy;
    t->ctx = ctx;
    t->busy_ns = busy_ns;
    t->idle_ns = idle_ns;
    t->stop = false;
    t->main_pass_ns = 0;
    t->events = t->passes = t->yields = 0;
    /* Signals stay with the application's threads. */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    int rc = pthread_create(&t->tid, NULL, thread_main, t);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (rc != 0) {
        errno = rc;
        return -1;
    }
    t->running = t->started = true;
    return 0;
}

void ebtl_thread_stop(ebtl_thread_t *t)
{
    if (!t->running) {
        return;
    }
    __atomic_store_n(&t->stop, true, __ATOMIC_RELEASE);
    (void) pthread_join(t->tid, NULL);
    t->running = false;
}
