#!/bin/sh
# Copyright (c) 2026 The ompi-esp-sctp authors. All rights reserved.
# SPDX-License-Identifier: BSD-3-Clause (see LICENSE)
# Generate configure and Makefile.in (needs autoconf, automake, libtool).
set -e
cd "$(dirname "$0")"
autoreconf --install --force --warnings=all
