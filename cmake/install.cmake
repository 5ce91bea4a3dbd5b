# Install rules: headers, libtern, libtern_testing, the CMake package (tern-config.cmake, its
# version file and the exported targets, namespace tern::), tern.pc and tern-testing.pc.
# Consumers write
#   find_package(tern 0.2 REQUIRED)  +  target_link_libraries(app PRIVATE tern::tern)
# or `pkg-config --cflags --libs tern`; see docs/building.md.
include(CMakePackageConfigHelpers)

set(TERN_CMAKE_DIR "${CMAKE_INSTALL_LIBDIR}/cmake/tern")

# A static libtern leaves its private dependencies to the application's link line. The
# package names them by the files found when tern was configured, not by their CMake
# targets, so a consumer needs none of llhttp's, zlib's, brotli's or zstd's CMake packages
# (nor, with TERN_HTTP3, ngtcp2's, nghttp3's or GnuTLS's pkg-config modules) (a
# shared libtern carries them itself). OpenSSL is on the list only with
# TERN_OPENSSL_DLOPEN=OFF: by default libtern loads libssl and libcrypto with dlopen when it
# first needs them (src/openssl/library.cpp); zlib, brotli and zstd likewise only with
# TERN_CODECS_DLOPEN=OFF (src/compression/library.cpp), the HTTP/3
# libraries only with TERN_HTTP3_DLOPEN=OFF (src/quic/library.cpp). The same list goes into
# tern.pc.
set(TERN_STATIC_LINK_FILES "")
if(TERN_LIBRARY_TYPE STREQUAL "STATIC_LIBRARY")
    set(TERN_STATIC_LINK_FILES "${TERN_LLHTTP_LIBRARY}")
    if(NOT TERN_CODECS_DLOPEN)
        tern_library_beside(ZLIB::ZLIB TERN_ZLIB_LIBRARY z)
        find_library(TERN_BROTLIENC_LIBRARY NAMES brotlienc HINTS ${TERN_BROTLI_LIBRARY_DIRS} REQUIRED)
        find_library(TERN_ZSTD_LIBRARY NAMES zstd HINTS ${TERN_ZSTD_LIBRARY_DIRS} REQUIRED)
        list(APPEND TERN_STATIC_LINK_FILES "${TERN_ZLIB_LIBRARY}" "${TERN_BROTLIENC_LIBRARY}"
                                           "${TERN_ZSTD_LIBRARY}")
    endif()
    if(NOT TERN_OPENSSL_DLOPEN)
        tern_library_beside(OpenSSL::SSL TERN_SSL_LIBRARY ssl)
        tern_library_beside(OpenSSL::Crypto TERN_CRYPTO_LIBRARY crypto)
        list(APPEND TERN_STATIC_LINK_FILES "${TERN_SSL_LIBRARY}" "${TERN_CRYPTO_LIBRARY}")
    endif()
    if(TERN_IO_URING)
        list(APPEND TERN_STATIC_LINK_FILES "${TERN_URING_LIBRARY}")
    endif()
    if(TERN_HTTP3 AND NOT TERN_HTTP3_DLOPEN)
        # HTTP/3 (docs/http3.md): ngtcp2 with its GnuTLS backend, nghttp3 and GnuTLS.
        find_library(TERN_NGTCP2_CRYPTO_LIBRARY NAMES ngtcp2_crypto_gnutls
                     HINTS ${TERN_NGTCP2_LIBRARY_DIRS} REQUIRED)
        find_library(TERN_NGTCP2_LIBRARY NAMES ngtcp2 HINTS ${TERN_NGTCP2_LIBRARY_DIRS} REQUIRED)
        find_library(TERN_NGHTTP3_LIBRARY NAMES nghttp3 HINTS ${TERN_NGHTTP3_LIBRARY_DIRS} REQUIRED)
        find_library(TERN_GNUTLS_LIBRARY NAMES gnutls HINTS ${TERN_GNUTLS_LIBRARY_DIRS} REQUIRED)
        list(APPEND TERN_STATIC_LINK_FILES "${TERN_NGTCP2_CRYPTO_LIBRARY}" "${TERN_NGTCP2_LIBRARY}"
                                           "${TERN_NGHTTP3_LIBRARY}" "${TERN_GNUTLS_LIBRARY}")
    endif()
    foreach(_file IN LISTS TERN_STATIC_LINK_FILES)
        target_link_libraries(tern INTERFACE "$<INSTALL_INTERFACE:${_file}>")
    endforeach()
endif()

# tern_testing is static too: its HTTPS clients use libssl, its certificate and WebSocket
# handshake libcrypto, its HTTP/2 client nghttp2. The installed package names their files the
# same way (the build tree links OpenSSL::SSL, OpenSSL::Crypto and nghttp2's pkg-config
# target), so a consumer of tern::testing needs no OpenSSL CMake package and no nghttp2
# pkg-config module. tern-testing.pc names them too.
# On Windows (scripts/windows-deps.sh builds nghttp2 since the kit is built there) the files
# are the import libraries of the DLLs (libssl.dll.a, libnghttp2.dll.a). A Windows build
# without nghttp2 has no kit (CMakeLists.txt): tern alone is installed, and said so.
set(TERN_INSTALLED_TARGETS tern)
if(TARGET PkgConfig::TERN_NGHTTP2)
    tern_library_beside(OpenSSL::SSL TERN_SSL_LIBRARY ssl)
    tern_library_beside(OpenSSL::Crypto TERN_CRYPTO_LIBRARY crypto)
    find_library(TERN_NGHTTP2_LIBRARY NAMES nghttp2 HINTS ${TERN_NGHTTP2_LIBRARY_DIRS} REQUIRED)
    set(TERN_TESTING_PC_LIBS "")
    foreach(_file IN ITEMS "${TERN_SSL_LIBRARY}" "${TERN_CRYPTO_LIBRARY}" "${TERN_NGHTTP2_LIBRARY}")
        target_link_libraries(tern_testing INTERFACE "$<INSTALL_INTERFACE:${_file}>")
        string(APPEND TERN_TESTING_PC_LIBS " ${_file}")
    endforeach()
    list(APPEND TERN_INSTALLED_TARGETS tern_testing)
else()
    message(STATUS "tern: no nghttp2: tern::testing and tern-testing.pc are not installed")
endif()

install(DIRECTORY include/tern TYPE INCLUDE FILES_MATCHING PATTERN "*.hpp")
# tern_testing (tern::testing, the test kit) is a static library beside libtern.
install(TARGETS ${TERN_INSTALLED_TARGETS} EXPORT tern-targets)
install(EXPORT tern-targets NAMESPACE tern:: DESTINATION "${TERN_CMAKE_DIR}")

configure_package_config_file(cmake/tern-config.cmake.in
    "${PROJECT_BINARY_DIR}/tern-config.cmake" INSTALL_DESTINATION "${TERN_CMAKE_DIR}")
# 0.x: a minor step breaks source or ABI (docs/versioning.md), so find_package(tern 0.2) takes
# 0.2.y only; from 1.0 the major version carries that promise.
if(PROJECT_VERSION_MAJOR EQUAL 0)
    set(_tern_compatibility SameMinorVersion)
else()
    set(_tern_compatibility SameMajorVersion)
endif()
write_basic_package_version_file("${PROJECT_BINARY_DIR}/tern-config-version.cmake"
    COMPATIBILITY ${_tern_compatibility})
install(FILES "${PROJECT_BINARY_DIR}/tern-config.cmake"
              "${PROJECT_BINARY_DIR}/tern-config-version.cmake"
        DESTINATION "${TERN_CMAKE_DIR}")

# tern.pc finds its prefix from its own location (${pcfiledir}), so it stays right when the
# tree is installed with `cmake --install --prefix <dir>` or moved. The C++20 flag is the
# consumer's to give (pkg-config has no way to say "at least C++20").
cmake_path(RELATIVE_PATH CMAKE_INSTALL_PREFIX
           BASE_DIRECTORY "${CMAKE_INSTALL_FULL_LIBDIR}/pkgconfig" OUTPUT_VARIABLE TERN_PC_PREFIX)
cmake_path(RELATIVE_PATH CMAKE_INSTALL_FULL_LIBDIR
           BASE_DIRECTORY "${CMAKE_INSTALL_PREFIX}" OUTPUT_VARIABLE TERN_PC_LIBDIR)
cmake_path(RELATIVE_PATH CMAKE_INSTALL_FULL_INCLUDEDIR
           BASE_DIRECTORY "${CMAKE_INSTALL_PREFIX}" OUTPUT_VARIABLE TERN_PC_INCLUDEDIR)
set(TERN_PC_CFLAGS "")
if(TERN_LIBRARY_TYPE STREQUAL "SHARED_LIBRARY")
    set(TERN_PC_CFLAGS " -DTERN_SHARED")
endif()
set(TERN_PC_LIBS "")
foreach(_item IN LISTS TERN_STATIC_LINK_FILES CMAKE_THREAD_LIBS_INIT)
    string(APPEND TERN_PC_LIBS " ${_item}")
endforeach()
configure_file(cmake/tern.pc.in "${PROJECT_BINARY_DIR}/tern.pc" @ONLY)
install(FILES "${PROJECT_BINARY_DIR}/tern.pc" DESTINATION "${CMAKE_INSTALL_LIBDIR}/pkgconfig")
if("tern_testing" IN_LIST TERN_INSTALLED_TARGETS)
    configure_file(cmake/tern-testing.pc.in "${PROJECT_BINARY_DIR}/tern-testing.pc" @ONLY)
    install(FILES "${PROJECT_BINARY_DIR}/tern-testing.pc"
            DESTINATION "${CMAKE_INSTALL_LIBDIR}/pkgconfig")
endif()

# Swagger UI's files for app.swagger_ui (docs/openapi.md), with its licence and notice.
if(TERN_SWAGGER_UI_DIR)
    install(FILES "${TERN_SWAGGER_UI_DIR}/swagger-ui-bundle.js" "${TERN_SWAGGER_UI_DIR}/swagger-ui.css"
                  "${TERN_SWAGGER_UI_DIR}/LICENSE" "${TERN_SWAGGER_UI_DIR}/NOTICE"
            DESTINATION "${CMAKE_INSTALL_DATADIR}/tern/swagger-ui")
endif()
