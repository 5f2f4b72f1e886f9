# cmake -DDPI_HDR=<V..__Dpi.h> -DOUT=<imports.inc> -P gen_imports.cmake
# Lists every DPI import of the generated header as USCOPE_DPI_IMPORT(name):
# the list is Verilator's own view of sv/uscope_pkg.sv.
file(STRINGS "${DPI_HDR}" lines REGEX "^ *extern .*\\(")
set(out "// Generated from ${DPI_HDR} by tests/dpi/drift/gen_imports.cmake\n")
set(n 0)
foreach(line IN LISTS lines)
  if(line MATCHES "^ *extern [^(]*[ *]([A-Za-z_][A-Za-z0-9_]*)\\(")
    string(APPEND out "USCOPE_DPI_IMPORT(${CMAKE_MATCH_1})\n")
    math(EXPR n "${n} + 1")
  endif()
endforeach()
if(n EQUAL 0)
  message(FATAL_ERROR "no DPI import found in ${DPI_HDR}")
endif()
file(WRITE "${OUT}" "${out}")
