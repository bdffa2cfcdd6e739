dnl ESP_FIND_LIBFABRIC: libfabric for esp's ofi wire (optional).
AC_DEFUN([ESP_FIND_LIBFABRIC], [
  AC_ARG_WITH([libfabric],
    [AS_HELP_STRING([--without-libfabric], [build esp without its libfabric (ofi) wire])],
    [], [with_libfabric=check])
  esp_have_libfabric=no
  esp_libfabric_why="disabled by --without-libfabric"
  AS_IF([test "$with_libfabric" != no], [
    PKG_CHECK_MODULES([LIBFABRIC], [libfabric],
      [esp_have_libfabric=yes; esp_libfabric_version=`$PKG_CONFIG --modversion libfabric`],
      [esp_libfabric_why="libfabric not found (apt-get install libfabric-dev)"])
    AS_IF([test "$with_libfabric" = yes && test "$esp_have_libfabric" = no],
      [AC_MSG_ERROR([--with-libfabric given but $esp_libfabric_why])])
  ])
  AS_IF([test "$esp_have_libfabric" = yes],
    [AC_DEFINE([ESP_HAVE_LIBFABRIC], [1], [libfabric is available for esp's ofi wire])])
])
