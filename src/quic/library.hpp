#pragma once
// The GnuTLS and ngtcp2 functions src/quic calls, reached through a table filled the first
// time HTTP/3 is started (`app.http3`), so that an application built with HTTP/3 that does not
// serve it never loads GnuTLS, ngtcp2 or their own dependencies: like src/openssl's table,
// the price of the option is paid by the applications that use it (docs/http3.md, "Turning
// it on"; docs/performance.md).
//
// The .cpp files of src/quic that call them include "quic/calls.hpp" last, which turns each
// name below into a call through the table; this header only declares it. It includes every
// GnuTLS and ngtcp2 header src/quic uses, so that none is first read after those names have
// become macros (a unity build puts several sources in one translation unit).

#include <gnutls/crypto.h>
#include <gnutls/gnutls.h>
#include <ngtcp2/ngtcp2.h>
#include <ngtcp2/ngtcp2_crypto.h>
#include <ngtcp2/ngtcp2_crypto_gnutls.h>

// Every GnuTLS and ngtcp2 function src/quic calls, directly or through ngtcp2's own macros
// (ngtcp2_conn_read_pkt expands to ngtcp2_conn_read_pkt_versioned and the like), or hands to
// ngtcp2 as a callback (ngtcp2_crypto_*_cb). One that is not listed is an undefined reference
// when an application links libtern, which names none of these libraries (the examples'
// build fails); ctest's `example: hello never loads OpenSSL ...` checks what hello maps.
#define TERN_QUIC_FUNCTIONS(X)                                  \
    X(gnutls_alpn_set_protocols)                                \
    X(gnutls_certificate_allocate_credentials)                  \
    X(gnutls_certificate_free_credentials)                      \
    X(gnutls_certificate_set_x509_key_file)                     \
    X(gnutls_credentials_set)                                   \
    X(gnutls_deinit)                                            \
    X(gnutls_init)                                              \
    X(gnutls_priority_set_direct)                               \
    X(gnutls_rnd)                                               \
    X(gnutls_session_set_ptr)                                   \
    X(gnutls_strerror)                                          \
    X(ngtcp2_accept)                                            \
    X(ngtcp2_cid_init)                                          \
    X(ngtcp2_conn_del)                                          \
    X(ngtcp2_conn_extend_max_offset)                            \
    X(ngtcp2_conn_extend_max_stream_offset)                     \
    X(ngtcp2_conn_extend_max_streams_bidi)                      \
    X(ngtcp2_conn_get_expiry)                                   \
    X(ngtcp2_conn_get_max_data_left)                            \
    X(ngtcp2_conn_get_num_scid)                                 \
    X(ngtcp2_conn_get_path)                                     \
    X(ngtcp2_conn_get_scid)                                     \
    X(ngtcp2_conn_handle_expiry)                                \
    X(ngtcp2_conn_is_local_stream)                              \
    X(ngtcp2_conn_open_uni_stream)                              \
    X(ngtcp2_conn_read_pkt_versioned)                           \
    X(ngtcp2_conn_server_new_versioned)                         \
    X(ngtcp2_conn_set_tls_native_handle)                        \
    X(ngtcp2_conn_shutdown_stream_read)                         \
    X(ngtcp2_conn_shutdown_stream_write)                        \
    X(ngtcp2_conn_write_connection_close_versioned)             \
    X(ngtcp2_conn_writev_stream_versioned)                      \
    X(ngtcp2_connection_close_error_set_application_error)      \
    X(ngtcp2_connection_close_error_set_transport_error_liberr) \
    X(ngtcp2_crypto_decrypt_cb)                                 \
    X(ngtcp2_crypto_delete_crypto_aead_ctx_cb)                  \
    X(ngtcp2_crypto_delete_crypto_cipher_ctx_cb)                \
    X(ngtcp2_crypto_encrypt_cb)                                 \
    X(ngtcp2_crypto_generate_retry_token)                       \
    X(ngtcp2_crypto_generate_stateless_reset_token)             \
    X(ngtcp2_crypto_get_path_challenge_data_cb)                 \
    X(ngtcp2_crypto_gnutls_configure_server_session)            \
    X(ngtcp2_crypto_hp_mask_cb)                                 \
    X(ngtcp2_crypto_recv_client_initial_cb)                     \
    X(ngtcp2_crypto_recv_crypto_data_cb)                        \
    X(ngtcp2_crypto_update_key_cb)                              \
    X(ngtcp2_crypto_verify_retry_token)                         \
    X(ngtcp2_crypto_version_negotiation_cb)                     \
    X(ngtcp2_crypto_write_retry)                                \
    X(ngtcp2_is_bidi_stream)                                    \
    X(ngtcp2_path_storage_zero)                                 \
    X(ngtcp2_pkt_decode_version_cid)                            \
    X(ngtcp2_pkt_write_stateless_reset)                         \
    X(ngtcp2_pkt_write_version_negotiation)                     \
    X(ngtcp2_settings_default_versioned)                        \
    X(ngtcp2_transport_params_default_versioned)                \
    /* end */

namespace tern::detail {

struct quic_functions {
// NOLINTNEXTLINE(bugprone-macro-parentheses): `name` is a function's name, not an expression
#define TERN_QUIC_MEMBER(name) decltype(&::name) name = nullptr;
    TERN_QUIC_FUNCTIONS(TERN_QUIC_MEMBER)
#undef TERN_QUIC_MEMBER
};

// The table, loading ngtcp2's GnuTLS backend (and with it ngtcp2 and GnuTLS) on the first
// call from any thread. Throws std::runtime_error, naming the library and dlerror()'s
// reason, when the library or one of the functions is missing.
const quic_functions& load_quic_library();
// The same table, inline: every call of the library goes through it, so a call costs a
// guard check here rather than a call into library.cpp.
inline const quic_functions& quic_library() {
    static const quic_functions& table = load_quic_library();
    return table;
}

}  // namespace tern::detail
