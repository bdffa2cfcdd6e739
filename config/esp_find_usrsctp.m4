dnl ESP_FIND_USRSCTP: usrsctp for the sctp component (optional).
dnl Sets USRSCTP_CFLAGS, USRSCTP_LIBS, USRSCTP_STATIC (the static library,
dnl when it and objcopy are there), esp_have_usrsctp=yes|no, esp_usrsctp_why.
AC_DEFUN([ESP_FIND_USRSCTP], [
  AC_ARG_WITH([usrsctp],
    [AS_HELP_STRING([--without-usrsctp], [do not build the sctp component])],
    [], [with_usrsctp=check])
  esp_have_usrsctp=no
  esp_usrsctp_why="disabled by --without-usrsctp"
  AS_IF([test "$with_usrsctp" != no], [
    PKG_CHECK_MODULES([USRSCTP], [usrsctp],
      [esp_have_usrsctp=yes; esp_usrsctp_version=`$PKG_CONFIG --modversion usrsctp`],
      [esp_usrsctp_why="usrsctp not found (apt-get install libusrsctp-dev)"])
    AS_IF([test "$esp_have_usrsctp" = yes], [
      esp_save_CPPFLAGS=$CPPFLAGS; CPPFLAGS="$CPPFLAGS $USRSCTP_CFLAGS"
      AC_CHECK_HEADER([usrsctp.h], [],
        [esp_have_usrsctp=no; esp_usrsctp_why="usrsctp.h not usable (apt-get install libusrsctp-dev)"])
      CPPFLAGS=$esp_save_CPPFLAGS])
    dnl A copy of the static library with malloc/calloc/free renamed to
    dnl btl_sctp_mem.c's per-thread cache; the shared library otherwise.
    esp_usrsctp_static=
    AS_IF([test "$esp_have_usrsctp" = yes], [
      AC_CHECK_TOOL([OBJCOPY], [objcopy], [])
      esp_usrsctp_libdir=`$PKG_CONFIG --variable=libdir usrsctp`
      AS_IF([test -n "$OBJCOPY" && test -f "$esp_usrsctp_libdir/libusrsctp.a"],
        [esp_usrsctp_static="$esp_usrsctp_libdir/libusrsctp.a"])])
    AC_SUBST([USRSCTP_STATIC], [$esp_usrsctp_static])
    AS_IF([test "$with_usrsctp" = yes && test "$esp_have_usrsctp" = no],
      [AC_MSG_ERROR([--with-usrsctp given but $esp_usrsctp_why])])
  ])
])
