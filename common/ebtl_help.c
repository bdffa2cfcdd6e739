/*
 * Copyright (c) 2026 The ompi-esp-sctp authors. All rights reserved.
 * SPDX-License-Identifier: BSD-3-Clause (see LICENSE)
 */
/* Messages through opal_show_help, and where the help file is. */
#include "ebtl_help.h"

#include <dlfcn.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <opal/util/proc.h>

#include "ebtl_mca.h"

char ebtl_help_file[64] = "help-mpi-btl-ebtl.txt";
static char component[32] = "?";

/* An address inside this .so, for dladdr. */
static const char anchor;

void ebtl_help_open(const char *component_name)
{
    snprintf(component, sizeof(component), "%s", component_name);
    snprintf(ebtl_help_file, sizeof(ebtl_help_file), "help-mpi-btl-%s.txt", component_name);
    Dl_info info;
    if (dladdr(&anchor, &info) == 0 || info.dli_fname == NULL) {
        return;
    }
    char *dir = realpath(info.dli_fname, NULL);
    char *slash = dir != NULL ? strrchr(dir, '/') : NULL;
    if (slash == NULL) {
        free(dir);
        return;
    }
    *slash = '\0';
    char file[PATH_MAX];
    snprintf(file, sizeof(file), "%s/%s", dir, ebtl_help_file);
    if (access(file, R_OK) == 0) {
        opal_show_help_add_dir(dir);
    } else {
        EBTL_VERBOSE(1, "btl %s: no help file %s next to the component; its messages will be "
                     "Open MPI's \"Sorry!\" placeholder (make install puts the file there)",
                     component, file);
    }
    free(dir);
}

const char *ebtl_help_component(void)
{
    return component;
}

const char *ebtl_help_host(void)
{
    return opal_process_info.nodename != NULL ? opal_process_info.nodename : "?";
}

bool ebtl_help_show(const char *topic, ...)
{
    va_list ap;
    va_start(ap, topic);
    char *text = opal_show_help_vstring(ebtl_help_file, topic, true, ap);
    va_end(ap);
    if (text == NULL) {
        return false;   /* Open MPI said it found no such file or topic */
    }
    fputs(text, stderr);
    fflush(stderr);
    free(text);
    return true;
}

void ebtl_help_bad_param(const char *fact)
{
    if (!EBTL_SHOW_HELP("bad-parameter", component, fact, component, ebtl_help_host(),
                        component)) {
        fprintf(stderr, "btl %s: %s\n", component, fact);
    }
}
