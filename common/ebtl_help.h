/*
 * Copyright (c) 2026 The ompi-esp-sctp authors. All rights reserved.
 * SPDX-License-Identifier: BSD-3-Clause (see LICENSE)
 */
/*
 * Messages to the user, from help files in Open MPI's format. Each
 * component looks its topics up in its own help file,
 * help-mpi-btl-<component>.txt: btl_<c>/'s topics with the ones both
 * components share (common/help-ebtl-shared.txt) appended when installed.
 * The file is installed next to the component's .so. Open MPI 4.1 looks
 * for help files in its own data directory and in those added with
 * opal_show_help_add_dir, so ebtl_help_open adds the directory the .so was
 * loaded from.
 *
 * A message is rendered by Open MPI (opal_show_help_vstring: the same
 * lookup, format and dashed lines as opal_show_help) and written to the
 * process's stderr, which mpirun forwards. opal_show_help itself relays an
 * application process's message to mpirun through PMIx, and in Open MPI
 * 4.1.4 with PMIx 4.2 that relay loses about one message in four (Open
 * MPI's own tcp BTL's too: docs/known-issues.md). So each process prints
 * its own message; mpirun's aggregation of identical ones ("N more
 * processes have sent help message") does not apply.
 */
#ifndef EBTL_HELP_H
#define EBTL_HELP_H

#include <opal_config.h>
#include <opal/util/show_help.h>

#include <stdbool.h>

/* This component's help file (set by ebtl_help_open). */
extern char ebtl_help_file[];

/* At component open: remember the component's name and help file, and add
 * the directory of the .so this code is in to Open MPI's help path. */
void ebtl_help_open(const char *component_name);

/* The component's name and this host's, for the messages. */
const char *ebtl_help_component(void);
const char *ebtl_help_host(void);

/* Show topic from this component's help file, between dashed lines; the
 * arguments fill its %s, %d ... in order. False when there is no such file
 * or topic (Open MPI then printed its "Sorry!" placeholder). */
bool ebtl_help_show(const char *topic, ...);
#define EBTL_SHOW_HELP(topic, ...) ebtl_help_show((topic), __VA_ARGS__)

/* A parameter value this component cannot use: fact says which and why
 * ("btl_x_y=5 is out of range [6, 9]"); said in one line if the help file
 * is missing. */
void ebtl_help_bad_param(const char *fact);

#endif
