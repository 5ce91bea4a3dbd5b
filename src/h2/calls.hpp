#pragma once
// Included last by each .cpp file of src/h2 that calls nghttp2 (after the nghttp2 header,
// which these names would break): each function below becomes a call through the table of
// h2/library.hpp, so libtern has no link-time reference to libnghttp2.

#include "h2/library.hpp"

#define nghttp2_option_del (::tern::detail::nghttp2_library().nghttp2_option_del)
#define nghttp2_option_new (::tern::detail::nghttp2_library().nghttp2_option_new)
#define nghttp2_option_set_max_deflate_dynamic_table_size \
    (::tern::detail::nghttp2_library().nghttp2_option_set_max_deflate_dynamic_table_size)
#define nghttp2_option_set_no_auto_window_update \
    (::tern::detail::nghttp2_library().nghttp2_option_set_no_auto_window_update)
#define nghttp2_option_set_no_closed_streams \
    (::tern::detail::nghttp2_library().nghttp2_option_set_no_closed_streams)
#define nghttp2_session_callbacks_del \
    (::tern::detail::nghttp2_library().nghttp2_session_callbacks_del)
#define nghttp2_session_callbacks_new \
    (::tern::detail::nghttp2_library().nghttp2_session_callbacks_new)
#define nghttp2_session_callbacks_set_on_begin_frame_callback \
    (::tern::detail::nghttp2_library().nghttp2_session_callbacks_set_on_begin_frame_callback)
#define nghttp2_session_callbacks_set_on_begin_headers_callback \
    (::tern::detail::nghttp2_library().nghttp2_session_callbacks_set_on_begin_headers_callback)
#define nghttp2_session_callbacks_set_on_data_chunk_recv_callback \
    (::tern::detail::nghttp2_library().nghttp2_session_callbacks_set_on_data_chunk_recv_callback)
#define nghttp2_session_callbacks_set_on_frame_recv_callback \
    (::tern::detail::nghttp2_library().nghttp2_session_callbacks_set_on_frame_recv_callback)
#define nghttp2_session_callbacks_set_on_frame_send_callback \
    (::tern::detail::nghttp2_library().nghttp2_session_callbacks_set_on_frame_send_callback)
#define nghttp2_session_callbacks_set_on_header_callback \
    (::tern::detail::nghttp2_library().nghttp2_session_callbacks_set_on_header_callback)
#define nghttp2_session_callbacks_set_on_stream_close_callback \
    (::tern::detail::nghttp2_library().nghttp2_session_callbacks_set_on_stream_close_callback)
#define nghttp2_session_consume_connection \
    (::tern::detail::nghttp2_library().nghttp2_session_consume_connection)
#define nghttp2_session_consume_stream \
    (::tern::detail::nghttp2_library().nghttp2_session_consume_stream)
#define nghttp2_session_del (::tern::detail::nghttp2_library().nghttp2_session_del)
#define nghttp2_session_find_stream (::tern::detail::nghttp2_library().nghttp2_session_find_stream)
#define nghttp2_session_get_last_proc_stream_id \
    (::tern::detail::nghttp2_library().nghttp2_session_get_last_proc_stream_id)
#define nghttp2_session_get_remote_window_size \
    (::tern::detail::nghttp2_library().nghttp2_session_get_remote_window_size)
#define nghttp2_session_get_stream_remote_window_size \
    (::tern::detail::nghttp2_library().nghttp2_session_get_stream_remote_window_size)
#define nghttp2_session_get_stream_user_data \
    (::tern::detail::nghttp2_library().nghttp2_session_get_stream_user_data)
#define nghttp2_session_mem_recv (::tern::detail::nghttp2_library().nghttp2_session_mem_recv)
#define nghttp2_session_mem_send (::tern::detail::nghttp2_library().nghttp2_session_mem_send)
#define nghttp2_session_resume_data (::tern::detail::nghttp2_library().nghttp2_session_resume_data)
#define nghttp2_session_server_new3 (::tern::detail::nghttp2_library().nghttp2_session_server_new3)
#define nghttp2_session_set_stream_user_data \
    (::tern::detail::nghttp2_library().nghttp2_session_set_stream_user_data)
#define nghttp2_session_terminate_session \
    (::tern::detail::nghttp2_library().nghttp2_session_terminate_session)
#define nghttp2_session_want_read (::tern::detail::nghttp2_library().nghttp2_session_want_read)
#define nghttp2_session_want_write (::tern::detail::nghttp2_library().nghttp2_session_want_write)
#define nghttp2_stream_get_state (::tern::detail::nghttp2_library().nghttp2_stream_get_state)
#define nghttp2_submit_goaway (::tern::detail::nghttp2_library().nghttp2_submit_goaway)
#define nghttp2_submit_headers (::tern::detail::nghttp2_library().nghttp2_submit_headers)
#define nghttp2_submit_ping (::tern::detail::nghttp2_library().nghttp2_submit_ping)
#define nghttp2_submit_response (::tern::detail::nghttp2_library().nghttp2_submit_response)
#define nghttp2_submit_rst_stream (::tern::detail::nghttp2_library().nghttp2_submit_rst_stream)
#define nghttp2_submit_settings (::tern::detail::nghttp2_library().nghttp2_submit_settings)
#define nghttp2_submit_shutdown_notice \
    (::tern::detail::nghttp2_library().nghttp2_submit_shutdown_notice)
