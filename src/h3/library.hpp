#pragma once
// The nghttp3 functions src/h3 calls, reached through a table filled the first time HTTP/3
// is started, as quic/library.hpp does for GnuTLS and ngtcp2 (an application built with
// HTTP/3 that does not serve it never loads nghttp3).
//
// The .cpp files of src/h3 that call nghttp3 include "h3/calls.hpp" last, which turns each
// name below into a call through the table; this header only declares it (and includes
// nghttp3's header, so that it is never first read after those names have become macros).

#include <nghttp3/nghttp3.h>

// Every nghttp3 function src/h3 calls, directly or through nghttp3's own macros
// (nghttp3_conn_server_new expands to nghttp3_conn_server_new_versioned and the like).
#define TERN_NGHTTP3_FUNCTIONS(X)               \
    X(nghttp3_conn_add_ack_offset)              \
    X(nghttp3_conn_add_write_offset)            \
    X(nghttp3_conn_bind_control_stream)         \
    X(nghttp3_conn_bind_qpack_streams)          \
    X(nghttp3_conn_block_stream)                \
    X(nghttp3_conn_close_stream)                \
    X(nghttp3_conn_del)                         \
    X(nghttp3_conn_read_stream)                 \
    X(nghttp3_conn_resume_stream)               \
    X(nghttp3_conn_server_new_versioned)        \
    X(nghttp3_conn_set_max_client_streams_bidi) \
    X(nghttp3_conn_set_stream_user_data)        \
    X(nghttp3_conn_shutdown)                    \
    X(nghttp3_conn_shutdown_stream_read)        \
    X(nghttp3_conn_shutdown_stream_write)       \
    X(nghttp3_conn_submit_info)                 \
    X(nghttp3_conn_submit_response)             \
    X(nghttp3_conn_submit_shutdown_notice)      \
    X(nghttp3_conn_submit_trailers)             \
    X(nghttp3_conn_unblock_stream)              \
    X(nghttp3_conn_writev_stream)               \
    X(nghttp3_err_infer_quic_app_error_code)    \
    X(nghttp3_rcbuf_get_buf)                    \
    X(nghttp3_settings_default_versioned)       \
    /* end */

namespace tern::detail {

struct nghttp3_functions {
// NOLINTNEXTLINE(bugprone-macro-parentheses): `name` is a function's name, not an expression
#define TERN_NGHTTP3_MEMBER(name) decltype(&::name) name = nullptr;
    TERN_NGHTTP3_FUNCTIONS(TERN_NGHTTP3_MEMBER)
#undef TERN_NGHTTP3_MEMBER
};

// The table, loading libnghttp3 on the first call from any thread. Throws
// std::runtime_error, naming the library and dlerror()'s reason, when the library or one of
// the functions is missing.
const nghttp3_functions& load_nghttp3_library();
// The same table, inline: every call of the library goes through it, so a call costs a
// guard check here rather than a call into library.cpp.
inline const nghttp3_functions& nghttp3_library() {
    static const nghttp3_functions& table = load_nghttp3_library();
    return table;
}

}  // namespace tern::detail
