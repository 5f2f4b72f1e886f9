# uscope_option(<name> <doc> <tool>...): an ON/OFF option whose default depends on whether the
# tools it needs are installed, so that a plain `cmake -S . -B build` needs only what the library
# needs. The tools are looked up only when the option is not set yet (first configure, no -D):
# the option then defaults to ON when every tool is found, OFF otherwise, and a STATUS line says
# which and why. An option set explicitly is never second-guessed: ON with a missing tool fails
# later, at the REQUIRED find of the part that needs it, which is what CI relies on.
#
# Tools: GTest, benchmark, CLI11 (CMake packages, Debian libgtest-dev, libbenchmark-dev,
# libcli11-dev), verilator (the program and its CMake package, >= 5.0), riscv-gcc (a bare-metal
# RISC-V gcc, Debian gcc-riscv64-unknown-elf), libdeflate (pkg-config, Debian libdeflate-dev).
function(_uscope_tool_found tool out)
  set(found FALSE)
  if(tool STREQUAL "verilator")
    find_program(_uscope_probe_verilator verilator)
    if(_uscope_probe_verilator)
      find_package(verilator 5.0 QUIET HINTS $ENV{VERILATOR_ROOT} /usr/share/verilator)
      set(found ${verilator_FOUND})
    endif()
  elseif(tool STREQUAL "libdeflate")
    find_package(PkgConfig QUIET)
    if(PKG_CONFIG_FOUND)
      pkg_check_modules(_uscope_probe_libdeflate QUIET libdeflate)
      set(found ${_uscope_probe_libdeflate_FOUND})
    endif()
  elseif(tool STREQUAL "riscv-gcc")
    find_program(_uscope_probe_riscv_gcc NAMES riscv64-unknown-elf-gcc riscv32-unknown-elf-gcc)
    if(_uscope_probe_riscv_gcc)
      set(found TRUE)
    endif()
  else()
    find_package(${tool} QUIET)
    set(found ${${tool}_FOUND})
  endif()
  set(${out} ${found} PARENT_SCOPE)
endfunction()

function(uscope_option name doc)
  if(DEFINED CACHE{${name}})
    return()
  endif()
  set(missing)
  foreach(tool IN LISTS ARGN)
    _uscope_tool_found(${tool} found)
    if(NOT found)
      list(APPEND missing ${tool})
    endif()
  endforeach()
  if(missing)
    list(JOIN missing ", " missing)
    set(${name} OFF CACHE BOOL "${doc}")
    message(STATUS "${name}=OFF by default: not found: ${missing} (-D${name}=ON makes it an error)")
  else()
    set(${name} ON CACHE BOOL "${doc}")
    list(JOIN ARGN ", " tools)
    message(STATUS "${name}=ON by default: found ${tools}")
  endif()
endfunction()
