# Finds tern's dependencies. All come from Debian packages (scripts/install-deps.sh).
set(THREADS_PREFER_PTHREAD_FLAG ON)
find_package(Threads REQUIRED)
find_package(fmt 9 REQUIRED)

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

# Standalone asio is header-only; Debian ships no CMake package for it.
find_path(TERN_ASIO_INCLUDE_DIR asio.hpp REQUIRED)
add_library(tern_asio INTERFACE)
target_include_directories(tern_asio SYSTEM INTERFACE "${TERN_ASIO_INCLUDE_DIR}")
target_compile_definitions(tern_asio INTERFACE ASIO_STANDALONE ASIO_NO_DEPRECATED)
