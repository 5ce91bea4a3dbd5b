#pragma once
// Included last by each .cpp file of src/h3 that calls nghttp3 (after nghttp3's header,
// which these names would break): each function of h3/library.hpp's list becomes a call
// through its table, so libtern has no link-time reference to nghttp3.

#include "h3/library.hpp"

#define nghttp3_conn_add_ack_offset (::tern::detail::nghttp3_library().nghttp3_conn_add_ack_offset)
#define nghttp3_conn_add_write_offset \
    (::tern::detail::nghttp3_library().nghttp3_conn_add_write_offset)
#define nghttp3_conn_bind_control_stream \
    (::tern::detail::nghttp3_library().nghttp3_conn_bind_control_stream)
#define nghttp3_conn_bind_qpack_streams \
    (::tern::detail::nghttp3_library().nghttp3_conn_bind_qpack_streams)
#define nghttp3_conn_block_stream (::tern::detail::nghttp3_library().nghttp3_conn_block_stream)
#define nghttp3_conn_close_stream (::tern::detail::nghttp3_library().nghttp3_conn_close_stream)
#define nghttp3_conn_del (::tern::detail::nghttp3_library().nghttp3_conn_del)
#define nghttp3_conn_read_stream (::tern::detail::nghttp3_library().nghttp3_conn_read_stream)
#define nghttp3_conn_resume_stream (::tern::detail::nghttp3_library().nghttp3_conn_resume_stream)
#define nghttp3_conn_server_new_versioned \
    (::tern::detail::nghttp3_library().nghttp3_conn_server_new_versioned)
#define nghttp3_conn_set_max_client_streams_bidi \
    (::tern::detail::nghttp3_library().nghttp3_conn_set_max_client_streams_bidi)
#define nghttp3_conn_set_stream_user_data \
    (::tern::detail::nghttp3_library().nghttp3_conn_set_stream_user_data)
#define nghttp3_conn_shutdown (::tern::detail::nghttp3_library().nghttp3_conn_shutdown)
#define nghttp3_conn_shutdown_stream_read \
    (::tern::detail::nghttp3_library().nghttp3_conn_shutdown_stream_read)
#define nghttp3_conn_shutdown_stream_write \
    (::tern::detail::nghttp3_library().nghttp3_conn_shutdown_stream_write)
#define nghttp3_conn_submit_info (::tern::detail::nghttp3_library().nghttp3_conn_submit_info)
#define nghttp3_conn_submit_response \
    (::tern::detail::nghttp3_library().nghttp3_conn_submit_response)
#define nghttp3_conn_submit_shutdown_notice \
    (::tern::detail::nghttp3_library().nghttp3_conn_submit_shutdown_notice)
#define nghttp3_conn_submit_trailers \
    (::tern::detail::nghttp3_library().nghttp3_conn_submit_trailers)
#define nghttp3_conn_unblock_stream (::tern::detail::nghttp3_library().nghttp3_conn_unblock_stream)
#define nghttp3_conn_writev_stream (::tern::detail::nghttp3_library().nghttp3_conn_writev_stream)
#define nghttp3_err_infer_quic_app_error_code \
    (::tern::detail::nghttp3_library().nghttp3_err_infer_quic_app_error_code)
#define nghttp3_rcbuf_get_buf (::tern::detail::nghttp3_library().nghttp3_rcbuf_get_buf)
#define nghttp3_settings_default_versioned \
    (::tern::detail::nghttp3_library().nghttp3_settings_default_versioned)
