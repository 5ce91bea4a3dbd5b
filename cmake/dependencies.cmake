# Finds tern's dependencies. All come from Debian packages (scripts/install-deps.sh).
set(THREADS_PREFER_PTHREAD_FLAG ON)
find_package(Threads REQUIRED)
find_package(fmt 9 REQUIRED)
# JSON error bodies inside libtern, and <tern/json.hpp> for applications (header-only).
find_package(nlohmann_json 3.2 REQUIRED)
# gzip compression of responses (private to libtern).
find_package(ZLIB REQUIRED)
# TLS, and the SHA-1, HMAC, base64 and random bytes of WebSocket handshakes, sessions and
# signed cookies: libtern compiles against OpenSSL's headers and loads libssl and libcrypto
# at run time, the first time it needs them (src/openssl/library.cpp). The tests and tools
# that call OpenSSL themselves link its targets.
find_package(OpenSSL REQUIRED COMPONENTS SSL Crypto)
# nghttp2 (Debian libnghttp2-dev): not libtern's (HTTP/2 framing and HPACK are tern's own,
# src/h2), but the test kit's HTTP/2 client codec and the oracle of the unit tests and fuzzers.
# On Windows it is looked for only: without it there is no test kit and no tests, but
# libtern and the examples build (docs/platforms.md).
find_package(PkgConfig REQUIRED)
if(WIN32)
    pkg_check_modules(TERN_NGHTTP2 IMPORTED_TARGET libnghttp2>=1.52)
else()
    pkg_check_modules(TERN_NGHTTP2 REQUIRED IMPORTED_TARGET libnghttp2>=1.52)
endif()
# br and zstd compression of responses beside gzip (private to libtern; Debian
# libbrotli-dev, libzstd-dev).
pkg_check_modules(TERN_BROTLI REQUIRED IMPORTED_TARGET libbrotlienc>=1.0)
pkg_check_modules(TERN_ZSTD REQUIRED IMPORTED_TARGET libzstd>=1.4)

# llhttp >= 9.2: older releases accept "\r\n\rX" as the end of the header block and obs-fold,
# both request-smuggling vectors. Debian 12 ships 8.1; scripts/install-deps.sh fetches 9.2.
find_package(llhttp CONFIG QUIET)
if(NOT llhttp_FOUND)
    message(FATAL_ERROR
        "tern needs llhttp >= 9.2 (CMake package 'llhttp'), which was not found. "
        "Run scripts/install-deps.sh to install it.")
endif()
find_path(TERN_LLHTTP_INCLUDE_DIR llhttp.h REQUIRED)
file(STRINGS "${TERN_LLHTTP_INCLUDE_DIR}/llhttp.h" _llhttp_version_lines
     REGEX "#define LLHTTP_VERSION_(MAJOR|MINOR|PATCH) ")
set(_llhttp_version "")
foreach(_part MAJOR MINOR PATCH)
    string(REGEX MATCH "LLHTTP_VERSION_${_part} ([0-9]+)" _ "${_llhttp_version_lines}")
    list(APPEND _llhttp_version "${CMAKE_MATCH_1}")
endforeach()
list(JOIN _llhttp_version "." TERN_LLHTTP_VERSION)
if(TERN_LLHTTP_VERSION VERSION_LESS 9.2)
    message(FATAL_ERROR
        "tern needs llhttp >= 9.2, found ${TERN_LLHTTP_VERSION} in ${TERN_LLHTTP_INCLUDE_DIR}. "
        "llhttp 8.x accepts \"\\r\\n\\rX\" as the end of headers and obs-fold (request "
        "smuggling). Run scripts/install-deps.sh, which installs 9.2 from Debian 13.")
endif()
message(STATUS "tern: llhttp ${TERN_LLHTTP_VERSION}")

# Finds the library file to link for imported target `target` among NAMES (searched in
# order) in the directory of the target's own file, or that file when none is there. Link
# lines that must not name the target (the installed package, tern.pc) use it: the
# unversioned name (libfmt.so, not libfmt.so.9.1.0) survives upgrades of the library.
function(tern_library_beside target out_var)
    get_target_property(_file ${target} IMPORTED_LOCATION)
    if(NOT _file)
        get_target_property(_configs ${target} IMPORTED_CONFIGURATIONS)
        list(GET _configs 0 _config)
        get_target_property(_file ${target} IMPORTED_LOCATION_${_config})
    endif()
    get_filename_component(_dir "${_file}" DIRECTORY)
    find_library(${out_var} NAMES ${ARGN} PATHS "${_dir}" NO_DEFAULT_PATH)
    if(NOT ${out_var})
        set(${out_var} "${_file}")
    endif()
    set(${out_var} "${${out_var}}" PARENT_SCOPE)
endfunction()

# llhttp as libtern links it. A shared libtern links the shared library. A static libtern
# links llhttp's static archive when one sits beside it (Debian's libllhttp-dev ships both):
# an application then carries the parser checked above and needs no libllhttp at run time,
# which Debian 12 does not package. TERN_LLHTTP_LIBRARY is the file linked.
add_library(tern_llhttp INTERFACE)
target_include_directories(tern_llhttp SYSTEM INTERFACE "${TERN_LLHTTP_INCLUDE_DIR}")
if(BUILD_SHARED_LIBS)
    target_link_libraries(tern_llhttp INTERFACE llhttp::llhttp_shared)
else()
    tern_library_beside(llhttp::llhttp_shared TERN_LLHTTP_LIBRARY libllhttp.a llhttp)
    target_link_libraries(tern_llhttp INTERFACE "${TERN_LLHTTP_LIBRARY}")
endif()

# Standalone asio is header-only; Debian ships no CMake package for it.
find_path(TERN_ASIO_INCLUDE_DIR asio.hpp REQUIRED)
add_library(tern_asio INTERFACE)
target_include_directories(tern_asio SYSTEM INTERFACE "${TERN_ASIO_INCLUDE_DIR}")
# ASIO_DISABLE_VISIBILITY: asio's headers otherwise push default visibility, which would
# export every asio symbol from a shared libtern.
target_compile_definitions(tern_asio INTERFACE ASIO_STANDALONE ASIO_NO_DEPRECATED
                                               ASIO_DISABLE_VISIBILITY)
# TERN_IO=portable: asio's portable reactor for everything (its select reactor on Linux, its
# kqueue elsewhere, IOCP on Windows), so that the portable build on Linux calls no epoll_* at
# all (scripts/check-portable-symbols.sh). TERN_IO_PORTABLE tells tern's own sources.
if(TERN_IO STREQUAL "portable")
    target_compile_definitions(tern_asio INTERFACE TERN_IO_PORTABLE ASIO_DISABLE_EPOLL)
endif()
# TERN_IO_URING: asio's io_uring backend for everything asio waits on (acceptors, timers, the
# wake pipe and each worker's socket poller; docs/performance.md), epoll left out.
if(TERN_IO_URING)
    pkg_check_modules(TERN_URING REQUIRED IMPORTED_TARGET liburing)
    find_library(TERN_URING_LIBRARY NAMES uring HINTS ${TERN_URING_LIBRARY_DIRS} REQUIRED)
    target_compile_definitions(tern_asio INTERFACE ASIO_HAS_IO_URING ASIO_DISABLE_EPOLL)
    target_link_libraries(tern_asio INTERFACE "${TERN_URING_LIBRARY}")
endif()
