/*
 * Copyright (c) 2026 The ompi-esp-sctp authors. All rights reserved.
 * SPDX-License-Identifier: BSD-3-Clause (see LICENSE)
 */
/*
 * The cases of test_sctp_stack.c in inet mode: two threaded usrsctp stacks
 * in one process (one UDP encapsulation port, two SCTP ports) on
 * 127.0.0.1, every byte checked, then (after the last close) no usrsctp
 * thread left running.
 * Style one-to-one is not run here: in inet mode a peer's accepted
 * association is matched to its link by the peer's UDP port, which must
 * equal its listener's SCTP port, and two stacks of one process on one
 * address cannot both have that. The MPI tests (contrib/check sections
 * mpi-sctp-inet-o2o, cluster-sctp-inet-o2o, component) run it between
 * processes.
 */
#define TEST_INET 1
#include "test_sctp_stack.c"
