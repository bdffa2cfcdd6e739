dnl Copyright (c) 2026 The ompi-esp-sctp authors. All rights reserved.
dnl SPDX-License-Identifier: BSD-3-Clause (see LICENSE)
dnl EBTL_FIND_LIBFABRIC: libfabric for esp's ofi wire (optional).
AC_DEFUN([EBTL_FIND_LIBFABRIC], [
  AC_ARG_WITH([libfabric],
    [AS_HELP_STRING([--without-libfabric], [build esp without its libfabric (ofi) wire])],
    [], [with_libfabric=check])
  ebtl_have_libfabric=no
  ebtl_libfabric_why="disabled by --without-libfabric"
  AS_IF([test "$with_libfabric" != no], [
    PKG_CHECK_MODULES([LIBFABRIC], [libfabric],
      [ebtl_have_libfabric=yes; ebtl_libfabric_version=`$PKG_CONFIG --modversion libfabric`],
      [ebtl_libfabric_why="libfabric not found (apt-get install libfabric-dev)"])
    AS_IF([test "$with_libfabric" = yes && test "$ebtl_have_libfabric" = no],
      [AC_MSG_ERROR([--with-libfabric given but $ebtl_libfabric_why])])
  ])
  AS_IF([test "$ebtl_have_libfabric" = yes],
    [AC_DEFINE([EBTL_HAVE_LIBFABRIC], [1], [libfabric is available for esp's ofi wire])])
])
