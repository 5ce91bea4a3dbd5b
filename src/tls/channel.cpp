#include "tls/channel.hpp"

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include <new>
#include <string>
#include <utility>

// Last: OpenSSL's functions through the table that loads it on first use.
#include "openssl/calls.hpp"

namespace tern::detail {

// The socket BIO (SSL_set_fd) lets OpenSSL do the system calls on the non-blocking socket,
// as nginx does: no copy through memory BIOs, and kernel TLS could take over the records.
// The socket stays the connection's (BIO_NOCLOSE). SIGPIPE is blocked on tern's threads, so
// a write to a reset peer is an EPIPE here (src/net/server.cpp).
tls_channel::tls_channel(std::shared_ptr<const tls_context> context, platform::native_socket fd)
    : context_(std::move(context)), ssl_(SSL_new(context_->initial())) {
    if (ssl_ == nullptr || SSL_set_fd(ssl_, static_cast<int>(fd)) != 1) {
        SSL_free(ssl_);
        ERR_clear_error();
        throw std::bad_alloc();
    }
    SSL_set_accept_state(ssl_);
}

tls_channel::tls_channel(std::shared_ptr<const tls_client_context> context,
                         platform::native_socket fd, const std::string& host)
    : client_context_(std::move(context)), ssl_(SSL_new(client_context_->get())) {
    if (ssl_ == nullptr || SSL_set_fd(ssl_, static_cast<int>(fd)) != 1) {
        SSL_free(ssl_);
        ERR_clear_error();
        throw std::bad_alloc();
    }
    SSL_set_connect_state(ssl_);
    // An address is never sent as SNI (RFC 6066 3) and is matched against the certificate's
    // IP entries; a name is both.
    const bool is_address = host.find(':') != std::string::npos ||
                            host.find_first_not_of("0123456789.") == std::string::npos;
    if (!is_address) SSL_set_tlsext_host_name(ssl_, host.c_str());
    if (client_context_->verifies()) {
        if (is_address) {
            X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl_), host.c_str());
        } else {
            SSL_set1_host(ssl_, host.c_str());
        }
    }
    ERR_clear_error();
}

tls_channel::~tls_channel() { SSL_free(ssl_); }

const char* tls_channel::verify_failure() const noexcept {
    if (!client_context_ || !client_context_->verifies()) return nullptr;
    const long verified = SSL_get_verify_result(ssl_);
    return verified == X509_V_OK ? nullptr : X509_verify_cert_error_string(verified);
}

// OpenSSL's error queue is per thread and shared by every connection of the loop: each call
// starts with it empty and leaves it empty, so one connection's failure is never read as
// another's.
tls_channel::result tls_channel::outcome(int rc) noexcept {
    result r;
    switch (SSL_get_error(ssl_, rc)) {
        case SSL_ERROR_WANT_READ:
            r.what = status::want_read;
            break;
        case SSL_ERROR_WANT_WRITE:
            r.what = status::want_write;
            break;
        case SSL_ERROR_ZERO_RETURN:  // close_notify (or, with IGNORE_UNEXPECTED_EOF, a FIN)
        case SSL_ERROR_SYSCALL:      // a reset, a write to a closed peer
            r.what = status::closed;
            break;
        default: {
            const unsigned long e = ERR_peek_error();
            const char* reason = ERR_reason_error_string(e);
            failure_ = reason != nullptr ? reason : "TLS protocol error";
            plain_http_ =
                ERR_GET_LIB(e) == ERR_LIB_SSL && (ERR_GET_REASON(e) == SSL_R_HTTP_REQUEST ||
                                                  ERR_GET_REASON(e) == SSL_R_HTTPS_PROXY_REQUEST);
            r.what = status::failed;
            break;
        }
    }
    // After a fatal error or the peer's close, no close_notify is sent (OpenSSL forbids
    // SSL_shutdown after a fatal error).
    if (r.what == status::failed || r.what == status::closed) shut_ = true;
    ERR_clear_error();
    return r;
}

tls_channel::result tls_channel::handshake() noexcept {
    ERR_clear_error();
    const int rc = SSL_do_handshake(ssl_);
    if (rc == 1) {
        established_ = true;
        return {};
    }
    return outcome(rc);
}

tls_channel::result tls_channel::read(char* into, std::size_t n) noexcept {
    ERR_clear_error();
    std::size_t got = 0;
    if (SSL_read_ex(ssl_, into, n, &got) == 1) return {status::done, got};
    return outcome(0);
}

tls_channel::result tls_channel::write(const char* from, std::size_t n) noexcept {
    if (n == 0) return {};
    ERR_clear_error();
    std::size_t sent = 0;
    if (SSL_write_ex(ssl_, from, n, &sent) == 1) return {status::done, sent};
    return outcome(0);
}

bool tls_channel::has_pending() const noexcept { return SSL_has_pending(ssl_) == 1; }

void tls_channel::shutdown() noexcept {
    if (shut_ || !established_) return;
    shut_ = true;
    ERR_clear_error();
    SSL_shutdown(ssl_);  // queues close_notify and sends what the socket takes now
    ERR_clear_error();
}

const char* tls_channel::version() const noexcept { return SSL_get_version(ssl_); }

std::string_view tls_channel::alpn() const noexcept {
    const unsigned char* data = nullptr;
    unsigned int length = 0;
    SSL_get0_alpn_selected(ssl_, &data, &length);
    if (data == nullptr) return {};
    return {reinterpret_cast<const char*>(data), length};
}

std::string tls_channel::client_subject() const {
    X509* cert = SSL_get0_peer_certificate(ssl_);
    if (cert == nullptr || SSL_get_verify_result(ssl_) != X509_V_OK) return {};
    BIO* out = BIO_new(BIO_s_mem());
    if (out == nullptr) throw std::bad_alloc();
    X509_NAME_print_ex(out, X509_get_subject_name(cert), 0, XN_FLAG_RFC2253);
    char* data = nullptr;
    const long n = BIO_get_mem_data(out, &data);
    std::string subject(data, static_cast<std::size_t>(n > 0 ? n : 0));
    BIO_free(out);
    return subject;
}

std::string_view tls_channel::server_name() const noexcept {
    const char* name = SSL_get_servername(ssl_, TLSEXT_NAMETYPE_host_name);
    return name != nullptr ? std::string_view(name) : std::string_view();
}

}  // namespace tern::detail
