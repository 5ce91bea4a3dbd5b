#pragma once
// Loading a shared library on first use, for the tables through which libtern reaches the
// libraries an application may never need (OpenSSL in src/openssl; zlib, brotli and zstd in
// src/compression; GnuTLS, ngtcp2 and nghttp3 in src/quic and src/h3):
// a program that does not use them neither loads nor maps them (docs/performance.md, round 3).

#include <atomic>
#include <cstdio>
#include <exception>
#include <string_view>

namespace tern::detail {

/// `soname` loaded now (RTLD_NOW: every function resolved here, once; RTLD_LOCAL; never
/// closed, since libraries such as OpenSSL and GnuTLS keep global state until the process
/// ends). Throws std::runtime_error naming `soname`, what it is needed for (`needed_for`,
/// e.g. "gzip (Debian: zlib1g)") and the loader's reason.
void* load_shared_library(const char* soname, std::string_view needed_for);

/// `name` in `library` or in a library it depends on (dlsym on a handle covers the libraries
/// it loaded), or std::runtime_error naming both.
void* shared_library_function(void* library, const char* soname, const char* name);

/// Whether `load` (a table's loader, which throws naming the library and the loader's
/// reason) succeeds, for callers that go on without the library: a body left uncompressed, an
/// HTTP/2 connection closed. The first failure is printed on stderr with `without_it` (what
/// the process does instead) and recorded in `failed`; from then on the answer is false
/// without trying again, since each try would search the library path anew for every body
/// or connection. The process goes on without the library until it restarts.
template <class Load>
bool library_available(Load load, std::atomic<bool>& failed, const char* without_it) noexcept {
    if (failed.load(std::memory_order_relaxed)) return false;
    try {
        load();
        return true;
    } catch (const std::exception& e) {
        if (!failed.exchange(true)) std::fprintf(stderr, "%s (%s)\n", e.what(), without_it);
    }
    return false;
}

}  // namespace tern::detail

// For the tables' lists of functions (`TERN_..._FUNCTIONS(X)`), in a function that has a
// local `table` and, for loading, the `library` handle and its `soname`:
//   TERN_LOAD_FUNCTION  fills the member `name` with the function of that name in `library`;
//   TERN_LINK_FUNCTION  with the function itself, in a build that links the library.
// NOLINTBEGIN(bugprone-macro-parentheses): `name` is a function's name, not an expression
#define TERN_LOAD_FUNCTION(name)                         \
    table.name = reinterpret_cast<decltype(table.name)>( \
        ::tern::detail::shared_library_function(library, soname, #name));
#define TERN_LINK_FUNCTION(name) table.name = &::name;
// NOLINTEND(bugprone-macro-parentheses)
