#pragma once
// Included last by each .cpp file of src/quic that calls GnuTLS or ngtcp2 (after every such
// header, which these names would break): each function of quic/library.hpp's list becomes a
// call through its table, so libtern has no link-time reference to GnuTLS or ngtcp2. ngtcp2's
// own macros used in those files expand to these names and go through the table too.

#include "quic/library.hpp"

#define gnutls_alpn_set_protocols (::tern::detail::quic_library().gnutls_alpn_set_protocols)
#define gnutls_certificate_allocate_credentials \
    (::tern::detail::quic_library().gnutls_certificate_allocate_credentials)
#define gnutls_certificate_free_credentials \
    (::tern::detail::quic_library().gnutls_certificate_free_credentials)
#define gnutls_certificate_set_x509_key_file \
    (::tern::detail::quic_library().gnutls_certificate_set_x509_key_file)
#define gnutls_credentials_set (::tern::detail::quic_library().gnutls_credentials_set)
#define gnutls_deinit (::tern::detail::quic_library().gnutls_deinit)
#define gnutls_init (::tern::detail::quic_library().gnutls_init)
#define gnutls_priority_set_direct (::tern::detail::quic_library().gnutls_priority_set_direct)
#define gnutls_rnd (::tern::detail::quic_library().gnutls_rnd)
#define gnutls_session_set_ptr (::tern::detail::quic_library().gnutls_session_set_ptr)
#define gnutls_strerror (::tern::detail::quic_library().gnutls_strerror)
#define ngtcp2_accept (::tern::detail::quic_library().ngtcp2_accept)
#define ngtcp2_cid_init (::tern::detail::quic_library().ngtcp2_cid_init)
#define ngtcp2_conn_del (::tern::detail::quic_library().ngtcp2_conn_del)
#define ngtcp2_conn_extend_max_offset (::tern::detail::quic_library().ngtcp2_conn_extend_max_offset)
#define ngtcp2_conn_extend_max_stream_offset \
    (::tern::detail::quic_library().ngtcp2_conn_extend_max_stream_offset)
#define ngtcp2_conn_extend_max_streams_bidi \
    (::tern::detail::quic_library().ngtcp2_conn_extend_max_streams_bidi)
#define ngtcp2_conn_get_expiry (::tern::detail::quic_library().ngtcp2_conn_get_expiry)
#define ngtcp2_conn_get_max_data_left (::tern::detail::quic_library().ngtcp2_conn_get_max_data_left)
#define ngtcp2_conn_get_num_scid (::tern::detail::quic_library().ngtcp2_conn_get_num_scid)
#define ngtcp2_conn_get_path (::tern::detail::quic_library().ngtcp2_conn_get_path)
#define ngtcp2_conn_get_scid (::tern::detail::quic_library().ngtcp2_conn_get_scid)
#define ngtcp2_conn_handle_expiry (::tern::detail::quic_library().ngtcp2_conn_handle_expiry)
#define ngtcp2_conn_is_local_stream (::tern::detail::quic_library().ngtcp2_conn_is_local_stream)
#define ngtcp2_conn_open_uni_stream (::tern::detail::quic_library().ngtcp2_conn_open_uni_stream)
#define ngtcp2_conn_read_pkt_versioned \
    (::tern::detail::quic_library().ngtcp2_conn_read_pkt_versioned)
#define ngtcp2_conn_server_new_versioned \
    (::tern::detail::quic_library().ngtcp2_conn_server_new_versioned)
#define ngtcp2_conn_set_tls_native_handle \
    (::tern::detail::quic_library().ngtcp2_conn_set_tls_native_handle)
#define ngtcp2_conn_shutdown_stream_read \
    (::tern::detail::quic_library().ngtcp2_conn_shutdown_stream_read)
#define ngtcp2_conn_shutdown_stream_write \
    (::tern::detail::quic_library().ngtcp2_conn_shutdown_stream_write)
#define ngtcp2_conn_write_connection_close_versioned \
    (::tern::detail::quic_library().ngtcp2_conn_write_connection_close_versioned)
#define ngtcp2_conn_writev_stream_versioned \
    (::tern::detail::quic_library().ngtcp2_conn_writev_stream_versioned)
#define ngtcp2_connection_close_error_set_application_error \
    (::tern::detail::quic_library().ngtcp2_connection_close_error_set_application_error)
#define ngtcp2_connection_close_error_set_transport_error_liberr \
    (::tern::detail::quic_library().ngtcp2_connection_close_error_set_transport_error_liberr)
#define ngtcp2_crypto_decrypt_cb (::tern::detail::quic_library().ngtcp2_crypto_decrypt_cb)
#define ngtcp2_crypto_delete_crypto_aead_ctx_cb \
    (::tern::detail::quic_library().ngtcp2_crypto_delete_crypto_aead_ctx_cb)
#define ngtcp2_crypto_delete_crypto_cipher_ctx_cb \
    (::tern::detail::quic_library().ngtcp2_crypto_delete_crypto_cipher_ctx_cb)
#define ngtcp2_crypto_encrypt_cb (::tern::detail::quic_library().ngtcp2_crypto_encrypt_cb)
#define ngtcp2_crypto_generate_retry_token \
    (::tern::detail::quic_library().ngtcp2_crypto_generate_retry_token)
#define ngtcp2_crypto_generate_stateless_reset_token \
    (::tern::detail::quic_library().ngtcp2_crypto_generate_stateless_reset_token)
#define ngtcp2_crypto_get_path_challenge_data_cb \
    (::tern::detail::quic_library().ngtcp2_crypto_get_path_challenge_data_cb)
#define ngtcp2_crypto_gnutls_configure_server_session \
    (::tern::detail::quic_library().ngtcp2_crypto_gnutls_configure_server_session)
#define ngtcp2_crypto_hp_mask_cb (::tern::detail::quic_library().ngtcp2_crypto_hp_mask_cb)
#define ngtcp2_crypto_recv_client_initial_cb \
    (::tern::detail::quic_library().ngtcp2_crypto_recv_client_initial_cb)
#define ngtcp2_crypto_recv_crypto_data_cb \
    (::tern::detail::quic_library().ngtcp2_crypto_recv_crypto_data_cb)
#define ngtcp2_crypto_update_key_cb (::tern::detail::quic_library().ngtcp2_crypto_update_key_cb)
#define ngtcp2_crypto_verify_retry_token \
    (::tern::detail::quic_library().ngtcp2_crypto_verify_retry_token)
#define ngtcp2_crypto_version_negotiation_cb \
    (::tern::detail::quic_library().ngtcp2_crypto_version_negotiation_cb)
#define ngtcp2_crypto_write_retry (::tern::detail::quic_library().ngtcp2_crypto_write_retry)
#define ngtcp2_is_bidi_stream (::tern::detail::quic_library().ngtcp2_is_bidi_stream)
#define ngtcp2_path_storage_zero (::tern::detail::quic_library().ngtcp2_path_storage_zero)
#define ngtcp2_pkt_decode_version_cid (::tern::detail::quic_library().ngtcp2_pkt_decode_version_cid)
#define ngtcp2_pkt_write_stateless_reset \
    (::tern::detail::quic_library().ngtcp2_pkt_write_stateless_reset)
#define ngtcp2_pkt_write_version_negotiation \
    (::tern::detail::quic_library().ngtcp2_pkt_write_version_negotiation)
#define ngtcp2_settings_default_versioned \
    (::tern::detail::quic_library().ngtcp2_settings_default_versioned)
#define ngtcp2_transport_params_default_versioned \
    (::tern::detail::quic_library().ngtcp2_transport_params_default_versioned)
