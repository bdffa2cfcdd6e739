/*
 * Counters a tuner asks about, printed per process at finalize under
 * btl_sctp_verbose 1 as "btl sctp stats rank N: name=value ..." lines
 * (meanings in docs/counters.md): the BTL's and the transport's own, the
 * usrsctp stack's (usrsctp_get_stat: the whole process's stack, which in
 * MPI is this module's alone), the UDP sockets' and the test-only fault
 * layer's.
 */
#include "btl_sctp.h"

#include <stdio.h>
#include <string.h>
#include <usrsctp.h>

#include <opal/util/proc.h>

typedef struct sctp_counter {
    const char *name;
    uint64_t value;
} sctp_counter_t;

static void print_line(unsigned rank, const sctp_counter_t *c, size_t n, const char *tail)
{
    char line[2048];
    size_t len = 0;
    for (size_t i = 0; i < n && len < sizeof(line); i++) {
        len += (size_t) snprintf(line + len, sizeof(line) - len, " %s=%llu", c[i].name,
                                 (unsigned long long) c[i].value);
    }
    opal_output(0, "btl sctp stats rank %u:%s%s%s", rank, line, tail ? " " : "", tail ? tail : "");
}

#define N(a) (sizeof(a) / sizeof((a)[0]))

void sctp_stats_report(mca_btl_sctp_module_t *m)
{
    if (mca_btl_sctp_component.verbose < 1 || !m->stack_open) {
        return;
    }
    unsigned rank = OPAL_PROC_MY_NAME.vpid;
    const sctp_stack_stats_t *s = &m->stack.stats;
    const sctp_counter_t btl[] = {
        {"tx_msgs", s->tx_msgs},
        {"tx_bytes", s->tx_bytes},
        {"tx_busy", s->tx_busy},
        {"rx_msgs", s->rx_msgs},
        {"rx_bytes", s->rx_bytes},
        {"rx_partial", s->rx_partial},
        {"assoc_up", s->assoc_up},
        {"assoc_lost", s->assoc_lost},
        {"assoc_rejected", s->assoc_rejected},
        {"rx_bad", s->rx_bad},
        {"rx_unidentified", s->rx_unidentified},
        {"rx_unknown_src", s->rx_unknown_src},
        {"links", m->stack.num_links},
    };
    print_line(rank, btl, N(btl), NULL);

    struct sctpstat u;
    memset(&u, 0, sizeof(u));
    usrsctp_get_stat(&u);
    const sctp_counter_t stack[] = {
        {"packets_rx", u.sctps_inpackets},
        {"data_chunks_tx", u.sctps_senddata},
        {"data_chunks_rx", u.sctps_recvdata},
        {"sacks_tx", u.sctps_sendsacks},
        {"sacks_rx", u.sctps_recvsacks},
        {"retransmits", u.sctps_sendretransdata},
        {"fast_retransmits", u.sctps_sendfastretrans},
        {"timeouts", u.sctps_timodata},
        {"duplicates", u.sctps_recvdupdata},
        {"corrupt", u.sctps_badsum},
        {"malformed", u.sctps_hdrops},
        {"ootb", u.sctps_outoftheblue},
        {"bad_vtag", u.sctps_badvtag},
        {"rwnd_drops", u.sctps_datadroprwnd},
        {"assoc_active", u.sctps_activeestab},
        {"assoc_passive", u.sctps_passiveestab},
        {"aborted", u.sctps_aborted},
        {"send_errors", u.sctps_senderrors},
    };
    print_line(rank, stack, N(stack), NULL);

    uint64_t tx = 0, rx = 0, tx_err = 0;
    esp_fault_stats_t faults = {0};
    for (size_t i = 0; i < m->stack.num_socks; i++) {
        const esp_dgram_sock_t *d = &m->stack.socks[i];
        tx += d->stats.tx_datagrams;
        rx += d->stats.rx_datagrams;
        tx_err += d->stats.tx_errors;
        esp_fault_stats_add(&faults, d->fault);
    }
    const sctp_counter_t wire[] = {
        {"udp_tx", tx},
        {"udp_rx", rx},
        {"tx_errors", tx_err},
    };
    char fline[256];
    print_line(rank, wire, N(wire), esp_fault_stats_format(&faults, fline, sizeof(fline)));
}
