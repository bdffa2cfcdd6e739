dnl Copyright (c) 2026 The ompi-esp-sctp authors. All rights reserved.
dnl SPDX-License-Identifier: BSD-3-Clause (see LICENSE)
dnl EBTL_FIND_OMPI: locate Open MPI's developer headers and libopen-pal,
dnl insist on Open MPI 4.1.x, and set OMPI_CPPFLAGS, OMPI_LIBS, OMPI_VERSION,
dnl OMPI_COMPONENT_DIR (Open MPI's own component directory).
AC_DEFUN([EBTL_FIND_OMPI], [
  AC_ARG_WITH([ompi],
    [AS_HELP_STRING([--with-ompi=DIR],
      [Open MPI installation prefix or its pkgconfig directory (default: pkg-config opal, then ompi's pkgconfig dir)])],
    [], [with_ompi=])

  AC_PATH_PROG([PKG_CONFIG], [pkg-config])
  esp_ompi_pc=
  AS_IF([test -n "$with_ompi"], [
    for d in "$with_ompi" "$with_ompi/lib/pkgconfig" "$with_ompi/lib64/pkgconfig" "$with_ompi"/lib/*/openmpi/lib/pkgconfig "$with_ompi"/lib/*/pkgconfig; do
      AS_IF([test -f "$d/opal.pc"], [esp_ompi_pc="$d/opal.pc"; break])
    done
    AS_IF([test -z "$esp_ompi_pc"],
      [AC_MSG_ERROR([--with-ompi=$with_ompi: no opal.pc found there (looked in DIR, DIR/lib/pkgconfig, DIR/lib/*/openmpi/lib/pkgconfig)])])
  ], [test -n "$PKG_CONFIG"], [
    AS_IF([$PKG_CONFIG --exists opal], [esp_ompi_pc=opal], [
      dnl Debian ships opal.pc only in Open MPI's private pkgconfig dir.
      esp_ompi_libdir=`$PKG_CONFIG --variable=libdir ompi 2>/dev/null`
      AS_IF([test -n "$esp_ompi_libdir" && test -f "$esp_ompi_libdir/pkgconfig/opal.pc"],
        [esp_ompi_pc="$esp_ompi_libdir/pkgconfig/opal.pc"])
    ])
  ])
  AS_IF([test -z "$esp_ompi_pc"],
    [AC_MSG_ERROR([Open MPI's developer files were not found (no pkg-config 'opal').
  On Debian/Ubuntu install them with:  apt-get install libopenmpi-dev
  or point configure at an Open MPI 4.1 installation with --with-ompi=DIR])])

  AC_MSG_CHECKING([for Open MPI developer headers])
  esp_ompi_cflags=`$PKG_CONFIG --cflags "$esp_ompi_pc"`
  OMPI_LIBS=`$PKG_CONFIG --libs "$esp_ompi_pc"`
  OMPI_LIBDIR=`$PKG_CONFIG --variable=libdir "$esp_ompi_pc"`
  dnl -isystem keeps -Wextra quiet about Open MPI's own headers.
  OMPI_CPPFLAGS=`echo " $esp_ompi_cflags" | sed 's/ -I/ -isystem /g'`
  esp_save_CPPFLAGS=$CPPFLAGS
  CPPFLAGS="$CPPFLAGS $OMPI_CPPFLAGS"
  AC_PREPROC_IFELSE([AC_LANG_SOURCE([[#include <opal_config.h>
#include <opal/mca/btl/btl.h>]])],
    [AC_MSG_RESULT([yes])],
    [AC_MSG_RESULT([no])
     AC_MSG_ERROR([Open MPI's BTL headers (opal/mca/btl/btl.h) are missing from $esp_ompi_cflags.
  On Debian/Ubuntu install them with:  apt-get install libopenmpi-dev
  (Open MPI must be built with --with-devel-headers), or use --with-ompi=DIR])])

  AC_MSG_CHECKING([Open MPI version])
  AC_COMPUTE_INT([esp_ompi_major], [OPAL_MAJOR_VERSION], [[#include <opal/version.h>]], [esp_ompi_major=0])
  AC_COMPUTE_INT([esp_ompi_minor], [OPAL_MINOR_VERSION], [[#include <opal/version.h>]], [esp_ompi_minor=0])
  AC_COMPUTE_INT([esp_ompi_release], [OPAL_RELEASE_VERSION], [[#include <opal/version.h>]], [esp_ompi_release=0])
  CPPFLAGS=$esp_save_CPPFLAGS
  OMPI_VERSION="$esp_ompi_major.$esp_ompi_minor.$esp_ompi_release"
  AC_MSG_RESULT([$OMPI_VERSION])
  AS_IF([test "$esp_ompi_major.$esp_ompi_minor" != "4.1"],
    [AC_MSG_ERROR([these components are written for Open MPI 4.1.x (BTL API 3.1), found $OMPI_VERSION.
  Point configure at an Open MPI 4.1 installation with --with-ompi=DIR])])

  dnl Open MPI's own component directory, for --enable-system-install.
  AC_PATH_PROG([OMPI_INFO], [ompi_info])
  OMPI_COMPONENT_DIR=
  AS_IF([test -n "$OMPI_INFO"],
    [OMPI_COMPONENT_DIR=`$OMPI_INFO --path pkglibdir --parsable 2>/dev/null | sed -n 's/^path:pkglibdir://p'`])
  AS_IF([test -z "$OMPI_COMPONENT_DIR" && test -n "$OMPI_LIBDIR"],
    [OMPI_COMPONENT_DIR="$OMPI_LIBDIR/openmpi"])

  AC_PATH_PROG([MPICC], [mpicc])
  AC_SUBST([OMPI_CPPFLAGS])
  AC_SUBST([OMPI_LIBS])
  AC_SUBST([OMPI_VERSION])
  AC_SUBST([OMPI_COMPONENT_DIR])
])
