# 64-bit ARM (Raspberry Pi 3/4/5 with a 64-bit OS, most industrial ARM PCs).
#   cmake -S . -B build-aarch64 -DCMAKE_TOOLCHAIN_FILE=toolchains/aarch64-linux-gnu.cmake
# See cross-common.cmake for Debian multiarch vs. a board SDK's sysroot.
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(EDDY_TARGET_TRIPLE aarch64-linux-gnu)
set(EDDY_QEMU qemu-aarch64)
include(${CMAKE_CURRENT_LIST_DIR}/cross-common.cmake)
