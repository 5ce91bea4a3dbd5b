#pragma once
// The nghttp2 functions src/h2 calls, reached through a table filled the first time a
// connection speaks HTTP/2 (ALPN h2, or the h2c preface), so that an application that never
// serves HTTP/2 never loads or maps libnghttp2 (docs/performance.md, round 3), as src/openssl
// does for OpenSSL.
//
// The .cpp files of src/h2 that call nghttp2 include "h2/calls.hpp" last, which turns each
// name below into a call through the table; this header only declares it. It includes the
// nghttp2 header, so that it is never first read after those names have become macros (a
// unity build puts several sources in one translation unit).

#include <nghttp2/nghttp2.h>

#include <atomic>

// Every nghttp2 function src/h2 calls. One that is not listed is an undefined reference when
// an application links libtern, which names no nghttp2 library (the examples' build fails);
// ctest's `example: hello loads nghttp2 at its first HTTP/2 connection, ...` checks
// what hello maps.
#define TERN_NGHTTP2_FUNCTIONS(X)                                \
    X(nghttp2_option_del)                                        \
    X(nghttp2_option_new)                                        \
    X(nghttp2_option_set_max_deflate_dynamic_table_size)         \
    X(nghttp2_option_set_no_auto_window_update)                  \
    X(nghttp2_option_set_no_closed_streams)                      \
    X(nghttp2_session_callbacks_del)                             \
    X(nghttp2_session_callbacks_new)                             \
    X(nghttp2_session_callbacks_set_on_begin_frame_callback)     \
    X(nghttp2_session_callbacks_set_on_begin_headers_callback)   \
    X(nghttp2_session_callbacks_set_on_data_chunk_recv_callback) \
    X(nghttp2_session_callbacks_set_on_frame_recv_callback)      \
    X(nghttp2_session_callbacks_set_on_frame_send_callback)      \
    X(nghttp2_session_callbacks_set_on_header_callback)          \
    X(nghttp2_session_callbacks_set_on_stream_close_callback)    \
    X(nghttp2_session_consume_connection)                        \
    X(nghttp2_session_consume_stream)                            \
    X(nghttp2_session_del)                                       \
    X(nghttp2_session_find_stream)                               \
    X(nghttp2_session_get_last_proc_stream_id)                   \
    X(nghttp2_session_get_remote_window_size)                    \
    X(nghttp2_session_get_stream_remote_window_size)             \
    X(nghttp2_session_get_stream_user_data)                      \
    X(nghttp2_session_mem_recv)                                  \
    X(nghttp2_session_mem_send)                                  \
    X(nghttp2_session_resume_data)                               \
    X(nghttp2_session_server_new3)                               \
    X(nghttp2_session_set_stream_user_data)                      \
    X(nghttp2_session_terminate_session)                         \
    X(nghttp2_session_want_read)                                 \
    X(nghttp2_session_want_write)                                \
    X(nghttp2_stream_get_state)                                  \
    X(nghttp2_submit_goaway)                                     \
    X(nghttp2_submit_headers)                                    \
    X(nghttp2_submit_ping)                                       \
    X(nghttp2_submit_response)                                   \
    X(nghttp2_submit_rst_stream)                                 \
    X(nghttp2_submit_settings)                                   \
    X(nghttp2_submit_shutdown_notice)                            \
    /* end */

namespace tern::detail {

struct nghttp2_functions {
// NOLINTNEXTLINE(bugprone-macro-parentheses): `name` is a function's name, not an expression
#define TERN_NGHTTP2_MEMBER(name) decltype(&::name) name = nullptr;
    TERN_NGHTTP2_FUNCTIONS(TERN_NGHTTP2_MEMBER)
#undef TERN_NGHTTP2_MEMBER
};

// Loads the table (libnghttp2) on the first call from any thread, and publishes it in
// nghttp2_loaded. Throws std::runtime_error, naming the library and the loader's reason,
// when the library or one of the functions is missing.
const nghttp2_functions& load_nghttp2_library();
// The table once loaded, null before.
extern std::atomic<const nghttp2_functions*> nghttp2_loaded;

/// Whether nghttp2 can be used, loading it now the first time. When it cannot (a missing
/// package), the reason is printed on stderr once and false returned from then on without
/// trying again: each new HTTP/2 connection is closed, HTTP/1.1 goes on being served.
bool nghttp2_available() noexcept;

// The table, loading it on the first call. Inline, since src/h2 calls nghttp2 about thirty
// times per request: once loaded it is one load and a branch before the call, where an
// out-of-line accessor with its own guard cost about 220 instructions per request
// (callgrind, docs/performance.md).
inline const nghttp2_functions& nghttp2_library() {
    if (const auto* table = nghttp2_loaded.load(std::memory_order_acquire)) return *table;
    return load_nghttp2_library();
}

}  // namespace tern::detail
