# uscope_pkgconfig(<name> <library target> <include dir in the source tree>)
# Writes pkgconfig/<name>.pc.in twice:
#  - pkg-install/<name>.pc, installed into <libdir>/pkgconfig: every path relative to
#    ${pcfiledir}, so that an installed tree can be moved or installed with --prefix;
#  - <build dir>/<name>.pc: the build tree as it is (the library where the build put it, the
#    headers in the source tree), for PKG_CONFIG_PATH=<build dir> without installing.
# The templates use @PC_PREFIX@, @PC_LIBDIR@, @PC_INCLUDEDIR@ and @PC_SVDIR@ (where the
# SystemVerilog package is: USCOPE_DPI_SV_DIR installed, sv/ in the source tree).
function(uscope_pkgconfig name target src_include)
  set(template ${PROJECT_SOURCE_DIR}/pkgconfig/${name}.pc.in)
  # Installed: <prefix>/<libdir>/pkgconfig/<name>.pc
  file(RELATIVE_PATH to_prefix "/p/${CMAKE_INSTALL_LIBDIR}/pkgconfig" "/p")
  string(REGEX REPLACE "/$" "" to_prefix "${to_prefix}")
  set(PC_PREFIX "\${pcfiledir}/${to_prefix}")
  set(PC_LIBDIR "\${prefix}/${CMAKE_INSTALL_LIBDIR}")
  set(PC_INCLUDEDIR "\${prefix}/${CMAKE_INSTALL_INCLUDEDIR}")
  set(PC_SVDIR "\${prefix}/${CMAKE_INSTALL_DATADIR}/uscope/sv")  # = USCOPE_DPI_SV_DIR
  configure_file(${template} ${PROJECT_BINARY_DIR}/pkg-install/${name}.pc @ONLY)
  install(FILES ${PROJECT_BINARY_DIR}/pkg-install/${name}.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
  # Build tree. The library's directory is known only at generate time (multi-config, or an
  # output directory set by the user), hence file(GENERATE) on the configured text.
  set(PC_PREFIX "${PROJECT_BINARY_DIR}")
  set(PC_LIBDIR "$<TARGET_FILE_DIR:${target}>")
  set(PC_INCLUDEDIR "${src_include}")
  set(PC_SVDIR "${PROJECT_SOURCE_DIR}/sv")
  configure_file(${template} ${PROJECT_BINARY_DIR}/pkg-build/${name}.pc.in @ONLY)
  file(GENERATE OUTPUT ${PROJECT_BINARY_DIR}/${name}.pc INPUT ${PROJECT_BINARY_DIR}/pkg-build/${name}.pc.in)
endfunction()
