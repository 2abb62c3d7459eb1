# Shared part of the ARM toolchain files. The including file sets
# EDDY_TARGET_TRIPLE (e.g. aarch64-linux-gnu), CMAKE_SYSTEM_PROCESSOR and
# EDDY_QEMU (the qemu-user binary that runs the target's test programs).
#
# Two ways to find the target's libraries (SQLite, the compression codecs):
#  * Debian multiarch (default): `dpkg --add-architecture arm64` and install
#    libsqlite3-dev:arm64 and the codecs' -dev:arm64 packages (make cross
#    does it). Headers come from /usr/include, libraries from
#    /usr/lib/<triple>.
#  * A board SDK's sysroot (Yocto, Buildroot): pass -DCMAKE_SYSROOT=/path or
#    set the environment variable EDDY_SYSROOT. Everything is then searched
#    only inside the sysroot. EDDY_CROSS_PREFIX (env or -D) overrides the
#    compiler prefix, e.g. /opt/sdk/bin/aarch64-poky-linux- .
set(CMAKE_SYSTEM_NAME Linux)

if(NOT DEFINED EDDY_CROSS_PREFIX)
  if(DEFINED ENV{EDDY_CROSS_PREFIX})
    set(EDDY_CROSS_PREFIX "$ENV{EDDY_CROSS_PREFIX}")
  else()
    set(EDDY_CROSS_PREFIX "${EDDY_TARGET_TRIPLE}-")
  endif()
endif()
set(CMAKE_C_COMPILER "${EDDY_CROSS_PREFIX}gcc")
set(CMAKE_CXX_COMPILER "${EDDY_CROSS_PREFIX}g++")

if(NOT CMAKE_SYSROOT AND DEFINED ENV{EDDY_SYSROOT})
  set(CMAKE_SYSROOT "$ENV{EDDY_SYSROOT}")
endif()

if(CMAKE_SYSROOT)
  set(CMAKE_FIND_ROOT_PATH "${CMAKE_SYSROOT}")
  set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
  set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
  set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
  set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
  set(_eddy_qemu_root "${CMAKE_SYSROOT}")
else()
  # Debian multiarch: the compiler reports the library architecture, so
  # find_library looks in /usr/lib/<triple> and never in the host's.
  set(CMAKE_LIBRARY_ARCHITECTURE "${EDDY_TARGET_TRIPLE}")
  set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
  # qemu runs target programs with the multiarch loader and libc
  # (libc6:<arch>, installed with the -dev packages). The cross compiler's own
  # copy under /usr/<triple> is not used at run time: threads hang under
  # qemu-user 7.2 with it.
  set(_eddy_qemu_root "")
endif()

# One self-contained binary to copy to the board: libstdc++ and libgcc are
# linked statically (boards often ship an older libstdc++ than C++20 needs);
# libc, SQLite and the C codec libraries stay shared (snappy, C++, is static:
# src/client/CMakeLists.txt).
set(CMAKE_EXE_LINKER_FLAGS_INIT "-static-libstdc++ -static-libgcc")
set(EDDY_STATIC_CXX_RUNTIME ON)  # read by src/client/CMakeLists.txt (snappy)

# Run target test programs under qemu-user (ctest uses this emulator).
find_program(EDDY_QEMU_PATH ${EDDY_QEMU})
if(EDDY_QEMU_PATH AND _eddy_qemu_root)
  set(CMAKE_CROSSCOMPILING_EMULATOR "${EDDY_QEMU_PATH};-L;${_eddy_qemu_root}")
elseif(EDDY_QEMU_PATH)
  set(CMAKE_CROSSCOMPILING_EMULATOR "${EDDY_QEMU_PATH}")
endif()
