/*
 * The cases of test_sctp_stack.c in inet mode: two threaded usrsctp stacks
 * in one process (one UDP encapsulation port, two SCTP ports) on
 * 127.0.0.1, every byte checked, then (after the last close) no usrsctp
 * thread left running.
 */
#define TEST_INET 1
#include "test_sctp_stack.c"
