#pragma once
// The zlib, brotli and zstd functions libtern calls (src/web's response encoders, src/ws's
// permessage-deflate), reached through three tables, each filled the first time something
// compresses with that library, so that an application that compresses nothing never loads
// or maps them, and one that uses only gzip loads only zlib (docs/performance.md, round 3;
// docs/compression.md).
//
// Called through the tables by name (`zlib_library().deflate(...)`), not through macros as
// src/openssl's are: zlib's names (deflate, inflate) are also the names of libtern's own
// members.

#include <brotli/encode.h>
#ifndef ZLIB_CONST
#define ZLIB_CONST  // next_in points to const bytes
#endif
#include <zlib.h>
#include <zstd.h>

#define TERN_ZLIB_FUNCTIONS(X) \
    X(deflate)                 \
    X(deflateBound)            \
    X(deflateEnd)              \
    X(deflateInit2_)           \
    X(deflateReset)            \
    X(inflate)                 \
    X(inflateEnd)              \
    X(inflateInit2_)           \
    X(inflateReset)            \
    /* end */

#define TERN_BROTLI_FUNCTIONS(X)      \
    X(BrotliEncoderCompress)          \
    X(BrotliEncoderCompressStream)    \
    X(BrotliEncoderCreateInstance)    \
    X(BrotliEncoderDestroyInstance)   \
    X(BrotliEncoderHasMoreOutput)     \
    X(BrotliEncoderIsFinished)        \
    X(BrotliEncoderMaxCompressedSize) \
    X(BrotliEncoderSetParameter)      \
    /* end */

#define TERN_ZSTD_FUNCTIONS(X) \
    X(ZSTD_CCtx_setParameter)  \
    X(ZSTD_compressBound)      \
    X(ZSTD_compressCCtx)       \
    X(ZSTD_compressStream2)    \
    X(ZSTD_createCCtx)         \
    X(ZSTD_freeCCtx)           \
    X(ZSTD_isError)            \
    /* end */

namespace tern::detail {

// NOLINTBEGIN(bugprone-macro-parentheses): `name` is a function's name, not an expression
#define TERN_COMPRESSION_MEMBER(name) decltype(&::name) name = nullptr;
struct zlib_functions {
    TERN_ZLIB_FUNCTIONS(TERN_COMPRESSION_MEMBER)
};
struct brotli_functions {
    TERN_BROTLI_FUNCTIONS(TERN_COMPRESSION_MEMBER)
};
struct zstd_functions {
    TERN_ZSTD_FUNCTIONS(TERN_COMPRESSION_MEMBER)
};
#undef TERN_COMPRESSION_MEMBER
// NOLINTEND(bugprone-macro-parentheses)

// Each table, loading its library on the first call from any thread. Throws
// std::runtime_error, naming the library and the loader's reason, when the library or one
// of the functions is missing.
const zlib_functions& zlib_library();
const brotli_functions& brotli_library();
const zstd_functions& zstd_library();

/// Whether the library can be used, loading it now the first time. When it cannot (a
/// missing package), the reason is printed on stderr once and false returned from then on:
/// the caller goes on without compressing (the body is sent as it is, the WebSocket
/// extension declined) instead of failing the request.
bool zlib_available() noexcept;
bool brotli_available() noexcept;
bool zstd_available() noexcept;

/// zlib's deflateInit2 and inflateInit2 (macros over the versioned functions in the table).
inline int deflate_init2(z_stream& z, int level, int window_bits, int mem_level, int strategy) {
    return zlib_library().deflateInit2_(&z, level, Z_DEFLATED, window_bits, mem_level, strategy,
                                        ZLIB_VERSION, static_cast<int>(sizeof(z_stream)));
}
inline int inflate_init2(z_stream& z, int window_bits) {
    return zlib_library().inflateInit2_(&z, window_bits, ZLIB_VERSION,
                                        static_cast<int>(sizeof(z_stream)));
}

}  // namespace tern::detail
