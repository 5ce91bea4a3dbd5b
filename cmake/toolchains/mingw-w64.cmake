# Cross-builds for 64-bit Windows with Debian's mingw-w64 toolchain (g++-mingw-w64-x86-64-posix:
# GCC 12 with posix threads, so std::thread and std::mutex work), against the libraries that
# scripts/windows-deps.sh builds into a prefix (docs/building.md, "Windows (cross-built, run
# under Wine)").
#
#   prefix=$(scripts/windows-deps.sh)
#   cmake -S . -B build-windows -G Ninja -DCMAKE_TOOLCHAIN_FILE=cmake/toolchains/mingw-w64.cmake \
#         -DTERN_WINDOWS_DEPS_PREFIX="$prefix"
#
# The prefix comes from the cache variable TERN_WINDOWS_DEPS_PREFIX or, when that is unset, the
# environment variable of that name. Libraries, headers and CMake packages are looked for in
# the prefix (and the toolchain's own sysroot) only, programs on the build machine only, and
# pkg-config reads the prefix's .pc files only. Executables run under wine
# (CMAKE_CROSSCOMPILING_EMULATOR, so ctest and add_test run .exe files), with WINEPATH naming
# the prefix's bin/ so that its DLLs and the toolchain's runtime DLLs copied there are found.
set(CMAKE_SYSTEM_NAME Windows)
set(CMAKE_SYSTEM_PROCESSOR x86_64)

set(_tern_mingw x86_64-w64-mingw32)
set(CMAKE_C_COMPILER ${_tern_mingw}-gcc-posix)
set(CMAKE_CXX_COMPILER ${_tern_mingw}-g++-posix)
set(CMAKE_RC_COMPILER ${_tern_mingw}-windres)
set(CMAKE_AR ${_tern_mingw}-ar CACHE FILEPATH "")
set(CMAKE_RANLIB ${_tern_mingw}-ranlib CACHE FILEPATH "")

if(NOT TERN_WINDOWS_DEPS_PREFIX AND DEFINED ENV{TERN_WINDOWS_DEPS_PREFIX})
    set(TERN_WINDOWS_DEPS_PREFIX "$ENV{TERN_WINDOWS_DEPS_PREFIX}")
endif()
if(NOT TERN_WINDOWS_DEPS_PREFIX)
    message(FATAL_ERROR
        "mingw-w64.cmake: set TERN_WINDOWS_DEPS_PREFIX (a cache variable or the environment "
        "variable) to the prefix scripts/windows-deps.sh prints")
endif()
set(TERN_WINDOWS_DEPS_PREFIX "${TERN_WINDOWS_DEPS_PREFIX}" CACHE PATH
    "The prefix of the Windows dependencies (scripts/windows-deps.sh)")
# try_compile projects read this file again: hand them the prefix.
list(APPEND CMAKE_TRY_COMPILE_PLATFORM_VARIABLES TERN_WINDOWS_DEPS_PREFIX)

set(CMAKE_FIND_ROOT_PATH "${TERN_WINDOWS_DEPS_PREFIX}" /usr/${_tern_mingw})
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)

# pkg-config (the host's) reads the prefix's .pc files and nothing else; their paths are
# absolute already, so no sysroot is prepended.
set(ENV{PKG_CONFIG_LIBDIR} "${TERN_WINDOWS_DEPS_PREFIX}/lib/pkgconfig:${TERN_WINDOWS_DEPS_PREFIX}/share/pkgconfig")
unset(ENV{PKG_CONFIG_PATH})
unset(ENV{PKG_CONFIG_SYSROOT_DIR})

# wine wants the DLL search path as Windows paths; Z: is the root of the Linux file system.
string(REPLACE "/" "\\" _tern_wine_bin "Z:${TERN_WINDOWS_DEPS_PREFIX}/bin")
set(CMAKE_CROSSCOMPILING_EMULATOR env "WINEPATH=${_tern_wine_bin}" "WINEDEBUG=-all" wine)
