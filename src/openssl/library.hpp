#pragma once
// The OpenSSL functions libtern calls, reached through a table filled the first time
// something needs OpenSSL (a TLS context, a session id, a signed cookie, a WebSocket
// handshake), so that an application that uses none of them never loads libssl or
// libcrypto: the two are about two thirds of the dynamic loader's work at start-up and
// 1.7 MB of a plain server's resident memory (docs/performance.md, round 3).
//
// The .cpp files that call OpenSSL include "openssl/calls.hpp" last, which turns each name
// below into a call through the table; this header only declares the table.

#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/kdf.h>
#include <openssl/ocsp.h>
#include <openssl/params.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

// Every OpenSSL function libtern calls, directly or through OpenSSL's own macros (which
// expand to SSL_ctrl, SSL_CTX_ctrl, OPENSSL_sk_num and the like). A call to one that is not
// listed is an undefined reference when an application links libtern, which names no
// OpenSSL library (the examples' build fails); ctest's `example: hello never loads OpenSSL`
// checks what hello needs and maps.
#define TERN_OPENSSL_FUNCTIONS(X)           \
    X(ASN1_STRING_get0_data)                \
    X(ASN1_STRING_length)                   \
    X(BIO_ctrl)                             \
    X(BIO_free)                             \
    X(BIO_new)                              \
    X(BIO_new_file)                         \
    X(BIO_new_mem_buf)                      \
    X(BIO_read)                             \
    X(BIO_s_mem)                            \
    X(CRYPTO_get_ex_new_index)              \
    X(CRYPTO_malloc)                        \
    X(CRYPTO_memcmp)                        \
    X(ERR_clear_error)                      \
    X(ERR_error_string_n)                   \
    X(ERR_get_error)                        \
    X(ERR_peek_error)                       \
    X(ERR_peek_last_error)                  \
    X(ERR_reason_error_string)              \
    X(EVP_CIPHER_get_iv_length)             \
    X(EVP_DecryptInit_ex)                   \
    X(EVP_Digest)                           \
    X(EVP_EncodeBlock)                      \
    X(EVP_EncryptInit_ex)                   \
    X(EVP_KDF_CTX_free)                     \
    X(EVP_KDF_CTX_new)                      \
    X(EVP_KDF_derive)                       \
    X(EVP_KDF_fetch)                        \
    X(EVP_KDF_free)                         \
    X(EVP_MAC_CTX_set_params)               \
    X(EVP_PKEY_free)                        \
    X(EVP_aes_256_cbc)                      \
    X(EVP_sha1)                             \
    X(EVP_sha256)                           \
    X(GENERAL_NAMES_free)                   \
    X(HMAC)                                 \
    X(OCSP_RESPONSE_free)                   \
    X(OPENSSL_cleanse)                      \
    X(OPENSSL_sk_num)                       \
    X(OPENSSL_sk_value)                     \
    X(OSSL_PARAM_construct_end)             \
    X(OSSL_PARAM_construct_octet_string)    \
    X(OSSL_PARAM_construct_utf8_string)     \
    X(PEM_read_bio_PrivateKey)              \
    X(PEM_read_bio_X509)                    \
    X(PEM_read_bio_X509_AUX)                \
    X(RAND_bytes)                           \
    X(SSL_CTX_callback_ctrl)                \
    X(SSL_CTX_check_private_key)            \
    X(SSL_CTX_ctrl)                         \
    X(SSL_CTX_free)                         \
    X(SSL_CTX_get0_certificate)             \
    X(SSL_CTX_get_ex_data)                  \
    X(SSL_CTX_load_verify_locations)        \
    X(SSL_CTX_new)                          \
    X(SSL_CTX_set_alpn_protos)              \
    X(SSL_CTX_set_alpn_select_cb)           \
    X(SSL_CTX_set_cipher_list)              \
    X(SSL_CTX_set_ciphersuites)             \
    X(SSL_CTX_set_client_CA_list)           \
    X(SSL_CTX_set_default_verify_paths)     \
    X(SSL_CTX_set_ex_data)                  \
    X(SSL_CTX_set_options)                  \
    X(SSL_CTX_set_session_id_context)       \
    X(SSL_CTX_set_tlsext_ticket_key_evp_cb) \
    X(SSL_CTX_set_verify)                   \
    X(SSL_CTX_use_PrivateKey)               \
    X(SSL_CTX_use_certificate)              \
    X(SSL_ctrl)                             \
    X(SSL_do_handshake)                     \
    X(SSL_free)                             \
    X(SSL_get0_alpn_selected)               \
    X(SSL_get0_param)                       \
    X(SSL_get0_peer_certificate)            \
    X(SSL_get_SSL_CTX)                      \
    X(SSL_get_error)                        \
    X(SSL_get_servername)                   \
    X(SSL_get_verify_result)                \
    X(SSL_get_version)                      \
    X(SSL_has_pending)                      \
    X(SSL_load_client_CA_file)              \
    X(SSL_new)                              \
    X(SSL_read_ex)                          \
    X(SSL_set1_host)                        \
    X(SSL_set_SSL_CTX)                      \
    X(SSL_set_accept_state)                 \
    X(SSL_set_connect_state)                \
    X(SSL_set_fd)                           \
    X(SSL_shutdown)                         \
    X(SSL_version)                          \
    X(SSL_write_ex)                         \
    X(TLS_client_method)                    \
    X(TLS_server_method)                    \
    X(X509_NAME_print_ex)                   \
    X(X509_VERIFY_PARAM_set1_ip_asc)        \
    X(X509_free)                            \
    X(X509_get_ext_d2i)                     \
    X(X509_get_subject_name)                \
    X(X509_verify_cert_error_string)        \
    X(d2i_OCSP_RESPONSE)                    \
    /* end */

namespace tern::detail {

struct openssl_functions {
// NOLINTNEXTLINE(bugprone-macro-parentheses): `name` is a function's name, not an expression
#define TERN_OPENSSL_MEMBER(name) decltype(&::name) name = nullptr;
    TERN_OPENSSL_FUNCTIONS(TERN_OPENSSL_MEMBER)
#undef TERN_OPENSSL_MEMBER
};

// The table, loading libssl (and with it libcrypto) on the first call from any thread.
// Throws std::runtime_error, naming the library and dlerror()'s reason, when the library
// or one of the functions is missing.
const openssl_functions& openssl();

}  // namespace tern::detail
