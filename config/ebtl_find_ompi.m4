dnl Copyright (c) 2026 The ompi-esp-sctp authors. All rights reserved.
dnl SPDX-License-Identifier: BSD-3-Clause (see LICENSE)
dnl EBTL_FIND_OMPI: locate Open MPI's developer headers and libopen-pal,
dnl insist on Open MPI 4.1.x or 5.0.x, and set OMPI_CPPFLAGS, OMPI_LIBS,
dnl OMPI_VERSION, OMPI_SERIES (4.1 or 5.0), OMPI_COMPONENT_DIR (Open MPI's
dnl own component directory). The differences between the series live in
dnl common/ebtl_ompi.h.
AC_DEFUN([EBTL_FIND_OMPI], [
  AC_ARG_WITH([ompi],
    [AS_HELP_STRING([--with-ompi=DIR],
      [Open MPI installation prefix or its pkgconfig directory (default: pkg-config opal, then ompi's pkgconfig dir)])],
    [], [with_ompi=])
  AC_ARG_WITH([ompi-source],
    [AS_HELP_STRING([--with-ompi-source=DIR],
      [an Open MPI source tree of the installed version, for internal headers its developer package lacks (Debian 13's Open MPI 5.0.7; contrib/setup --ompi5 fetches it)])],
    [], [with_ompi_source=])

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
  dnl Debian 13's opal.pc keeps unsubstituted @OPAL_WRAPPER_...@ placeholders
  dnl and lacks its own include/openmpi: rebuild both lines from its variables.
  AS_CASE(["$esp_ompi_cflags $OMPI_LIBS"], [*@*], [
    esp_ompi_incdir=`$PKG_CONFIG --variable=includedir "$esp_ompi_pc"`
    esp_ompi_cflags="-I$esp_ompi_incdir -I$esp_ompi_incdir/openmpi"
    OMPI_LIBS="-L$OMPI_LIBDIR -lopen-pal"
    dnl Open MPI 5's headers include pmix.h and its modex macros call PMIx,
    dnl which Debian keeps apart. pmix.pc's -rpath is dropped: libpmix is
    dnl loaded by Open MPI before any component (and is in the linker's
    dnl path too), and a RUNPATH in a packaged component is a lintian error.
    AS_IF([$PKG_CONFIG --exists pmix], [
      esp_ompi_cflags="$esp_ompi_cflags `$PKG_CONFIG --cflags pmix`"
      OMPI_LIBS="$OMPI_LIBS `$PKG_CONFIG --libs pmix | sed 's/-Wl,-rpath -Wl,[[^ ]]*//g; s/-Wl,-rpath,[[^ ]]*//g; s/-Wl,--enable-new-dtags//g'`"])
  ])
  dnl -isystem keeps -Wextra quiet about Open MPI's own headers; a source
  dnl tree comes last, only for headers the installation lacks.
  OMPI_CPPFLAGS=`echo " $esp_ompi_cflags" | sed 's/ -I/ -isystem /g'`
  AS_IF([test -n "$with_ompi_source"], [
    AS_IF([test -d "$with_ompi_source/opal/mca"], [],
      [AC_MSG_ERROR([--with-ompi-source=$with_ompi_source: not an Open MPI source tree (no opal/mca there)])])
    OMPI_CPPFLAGS="$OMPI_CPPFLAGS -idirafter $with_ompi_source"
  ])
  esp_save_CPPFLAGS=$CPPFLAGS
  CPPFLAGS="$CPPFLAGS $OMPI_CPPFLAGS"
  AC_PREPROC_IFELSE([AC_LANG_SOURCE([[#include <opal_config.h>
#include <opal/mca/btl/btl.h>]])],
    [AC_MSG_RESULT([yes])],
    [AC_MSG_RESULT([no])
     esp_ompi_missing=`echo '#include <opal_config.h>
#include <opal/mca/btl/btl.h>' | $CPP $CPPFLAGS - 2>&1 | sed -n 's/.*fatal error: \(@<:@^:@:>@*\): No such file.*/\1/p' | head -1`
     AC_MSG_ERROR([Open MPI's BTL headers do not compile with $OMPI_CPPFLAGS (missing: ${esp_ompi_missing:-see config.log}).
  On Debian/Ubuntu install them with:  apt-get install libopenmpi-dev
  Debian 13's Open MPI 5.0.7 package lacks a few internal headers: give configure
  the matching source tree (apt-get source openmpi) with --with-ompi-source=DIR,
  or run contrib/setup --ompi5, which does that in a Debian 13 root.])])

  AC_MSG_CHECKING([Open MPI version])
  AC_COMPUTE_INT([esp_ompi_major], [OPAL_MAJOR_VERSION], [[#include <opal/version.h>]], [esp_ompi_major=0])
  AC_COMPUTE_INT([esp_ompi_minor], [OPAL_MINOR_VERSION], [[#include <opal/version.h>]], [esp_ompi_minor=0])
  AC_COMPUTE_INT([esp_ompi_release], [OPAL_RELEASE_VERSION], [[#include <opal/version.h>]], [esp_ompi_release=0])
  CPPFLAGS=$esp_save_CPPFLAGS
  OMPI_VERSION="$esp_ompi_major.$esp_ompi_minor.$esp_ompi_release"
  OMPI_SERIES="$esp_ompi_major.$esp_ompi_minor"
  AC_MSG_RESULT([$OMPI_VERSION])
  AS_CASE([$OMPI_SERIES], [4.1|5.0], [],
    [AC_MSG_ERROR([these components build for Open MPI 4.1.x (BTL API 3.1) and 5.0.x (BTL API 3.3), found $OMPI_VERSION.
  Point configure at an Open MPI 4.1 or 5.0 installation with --with-ompi=DIR])])

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
  AC_SUBST([OMPI_SERIES])
  AC_SUBST([OMPI_COMPONENT_DIR])
])
