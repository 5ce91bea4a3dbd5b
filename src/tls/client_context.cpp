#include "tls/client_context.hpp"

#include <openssl/err.h>
#include <openssl/ssl.h>

#include <new>
#include <stdexcept>

// Last: OpenSSL's functions through the table that loads it on first use.
#include "openssl/calls.hpp"

namespace tern::detail {

namespace {

// ALPN's wire form: a length byte, then the name.
constexpr unsigned char alpn_http11[] = {8, 'h', 't', 't', 'p', '/', '1', '.', '1'};

std::string reason_and_clear() {
    const unsigned long e = ERR_get_error();
    const char* reason = e != 0 ? ERR_reason_error_string(e) : nullptr;
    ERR_clear_error();
    return reason != nullptr ? reason : "no reason given";
}

}  // namespace

std::shared_ptr<const tls_client_context> tls_client_context::build(bool verify_peer,
                                                                    const std::string& ca_file) {
    std::shared_ptr<tls_client_context> c(new tls_client_context);
    c->verify_ = verify_peer;
    c->ctx_ = SSL_CTX_new(TLS_client_method());
    if (c->ctx_ == nullptr) {
        ERR_clear_error();
        throw std::bad_alloc();
    }
    SSL_CTX_set_min_proto_version(c->ctx_, TLS1_2_VERSION);
    // The server's reply to a client that has said all it will is a FIN without
    // close_notify, as often as not: that ends the response, it is not an attack.
    SSL_CTX_set_options(c->ctx_, SSL_OP_IGNORE_UNEXPECTED_EOF);
    SSL_CTX_set_alpn_protos(c->ctx_, alpn_http11, sizeof alpn_http11);
    if (verify_peer) {
        const int loaded = ca_file.empty()
                               ? SSL_CTX_set_default_verify_paths(c->ctx_)
                               : SSL_CTX_load_verify_locations(c->ctx_, ca_file.c_str(), nullptr);
        if (loaded != 1) {
            throw std::invalid_argument("client: the CA file " + ca_file +
                                        " cannot be loaded: " + reason_and_clear());
        }
        SSL_CTX_set_verify(c->ctx_, SSL_VERIFY_PEER, nullptr);
    } else {
        SSL_CTX_set_verify(c->ctx_, SSL_VERIFY_NONE, nullptr);
    }
    return c;
}

tls_client_context::~tls_client_context() { SSL_CTX_free(ctx_); }

}  // namespace tern::detail
