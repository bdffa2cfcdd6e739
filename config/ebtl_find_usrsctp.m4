dnl Copyright (c) 2026 The ompi-esp-sctp authors. All rights reserved.
dnl SPDX-License-Identifier: BSD-3-Clause (see LICENSE)
dnl EBTL_FIND_USRSCTP: usrsctp for the sctp component (optional).
dnl Sets USRSCTP_CFLAGS, USRSCTP_LIBS, USRSCTP_STATIC (the static library,
dnl when it and objcopy are there), ebtl_have_usrsctp=yes|no, ebtl_usrsctp_why,
dnl ebtl_usrsctp_from (where it came from, for the summary).
AC_DEFUN([EBTL_FIND_USRSCTP], [
  AC_ARG_WITH([usrsctp],
    [AS_HELP_STRING([--with-usrsctp=DIR],
      [usrsctp installed in DIR (contrib/usrsctp builds one at -O2; Debian's is -O0)])
AS_HELP_STRING([--without-usrsctp], [do not build the sctp component])],
    [], [with_usrsctp=check])
  ebtl_have_usrsctp=no
  ebtl_usrsctp_why="disabled by --without-usrsctp"
  ebtl_usrsctp_dir=
  AS_CASE([$with_usrsctp], [yes|no|check], [], [
    ebtl_usrsctp_dir=$with_usrsctp; with_usrsctp=yes
    AS_IF([test -f "$ebtl_usrsctp_dir/lib/pkgconfig/usrsctp.pc"], [],
      [AC_MSG_ERROR([--with-usrsctp=$ebtl_usrsctp_dir: no lib/pkgconfig/usrsctp.pc there (contrib/usrsctp makes one)])])
    PKG_CONFIG_PATH="$ebtl_usrsctp_dir/lib/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
    export PKG_CONFIG_PATH])
  AS_IF([test "$with_usrsctp" != no], [
    PKG_CHECK_MODULES([USRSCTP], [usrsctp],
      [ebtl_have_usrsctp=yes; ebtl_usrsctp_version=`$PKG_CONFIG --modversion usrsctp`],
      [ebtl_usrsctp_why="usrsctp not found (apt-get install libusrsctp-dev)"])
    AS_IF([test "$ebtl_have_usrsctp" = yes], [
      esp_save_CPPFLAGS=$CPPFLAGS; CPPFLAGS="$CPPFLAGS $USRSCTP_CFLAGS"
      AC_CHECK_HEADER([usrsctp.h], [],
        [ebtl_have_usrsctp=no; ebtl_usrsctp_why="usrsctp.h not usable (apt-get install libusrsctp-dev)"])
      CPPFLAGS=$esp_save_CPPFLAGS])
    dnl A copy of the static library with malloc/calloc/free renamed to
    dnl btl_sctp_mem.c's per-thread cache; the shared library otherwise.
    ebtl_usrsctp_static=
    AS_IF([test "$ebtl_have_usrsctp" = yes], [
      AC_CHECK_TOOL([OBJCOPY], [objcopy], [])
      ebtl_usrsctp_libdir=`$PKG_CONFIG --variable=libdir usrsctp`
      AS_IF([test -n "$OBJCOPY" && test -f "$ebtl_usrsctp_libdir/libusrsctp.a"],
        [ebtl_usrsctp_static="$ebtl_usrsctp_libdir/libusrsctp.a"])
      AS_IF([test -n "$ebtl_usrsctp_dir"],
        [ebtl_usrsctp_from="from $ebtl_usrsctp_dir"
         AS_IF([test -z "$ebtl_usrsctp_static"],
           [AC_MSG_ERROR([--with-usrsctp=$ebtl_usrsctp_dir: no libusrsctp.a there, or no objcopy])])],
        [ebtl_usrsctp_from="the system's; contrib/usrsctp builds a faster one"])])
    AC_SUBST([USRSCTP_STATIC], [$ebtl_usrsctp_static])
    AS_IF([test "$with_usrsctp" = yes && test "$ebtl_have_usrsctp" = no],
      [AC_MSG_ERROR([--with-usrsctp given but $ebtl_usrsctp_why])])
  ])
])
