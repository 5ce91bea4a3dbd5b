#include "testing/stream.hpp"

#include "testing/client_tls.hpp"

#include <tern/testing.hpp>

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509_vfy.h>

#include <array>
#include <utility>

namespace tern::testing::detail {

namespace {

// Why a handshake failed, in words a test author can act on.
std::string handshake_failure(SSL* ssl, const stream_options& options, unsigned long error) {
    const long verified = SSL_get_verify_result(ssl);
    if (verified != X509_V_OK) {
        return std::string(
                   "TLS handshake failed: the server's certificate failed verification "
                   "(certificate verification failed: ") +
               X509_verify_cert_error_string(verified) +
               "); the kit's clients trust only tern::testing::test_tls()'s certificate";
    }
    std::string what = "TLS handshake failed";
    if (!options.alpn.empty()) what += " (offering " + options.alpn + " by ALPN)";
    if (ERR_GET_REASON(error) == SSL_R_TLSV1_ALERT_NO_APPLICATION_PROTOCOL) {
        return what + ": the server refused ALPN " + options.alpn +
               " (alert no_application_protocol)" +
               (options.alpn == "h2" ? ": does the app serve HTTP/2 (app.http2)?" : "");
    }
    if (error != 0) {
        std::string text(256, '\0');
        ERR_error_string_n(error, text.data(), text.size());
        return what + ": " + text.c_str();
    }
    return what + ": the server closed the connection";
}

// ALPN's wire format: each protocol preceded by its length.
std::string alpn_list(const std::string& protocol) {
    std::string out(1, static_cast<char>(protocol.size()));
    return out + protocol;
}

}  // namespace

void stream::ssl_free::operator()(ssl_st* ssl) const noexcept { SSL_free(ssl); }

stream::stream(std::uint16_t port, const stream_options& options, clock::time_point deadline)
    : socket_(port, deadline) {
    if (options.tls) handshake(options, deadline);
}

stream::~stream() = default;
stream::stream(stream&& other) noexcept = default;
stream& stream::operator=(stream&& other) noexcept = default;

void stream::handshake(const stream_options& options, clock::time_point deadline) {
    ssl_.reset(SSL_new(client_tls_context()));
    BIO* in = BIO_new(BIO_s_mem());
    BIO* out = BIO_new(BIO_s_mem());
    if (!ssl_ || !in || !out) {
        BIO_free(in);
        BIO_free(out);
        throw client_error("TLS: " + openssl_errors("SSL_new"));
    }
    BIO_set_mem_eof_return(in, -1);  // an empty input BIO means "wait", not the end
    SSL_set_bio(ssl_.get(), in, out);
    const std::string alpn = options.alpn.empty() ? std::string() : alpn_list(options.alpn);
    if (SSL_set_tlsext_host_name(ssl_.get(), tls_server_name) != 1 ||
        SSL_set1_host(ssl_.get(), tls_server_name) != 1 ||
        (!alpn.empty() &&
         SSL_set_alpn_protos(ssl_.get(), reinterpret_cast<const unsigned char*>(alpn.data()),
                             static_cast<unsigned>(alpn.size())) != 0)) {
        throw client_error("TLS: " + openssl_errors("SSL_set_tlsext_host_name"));
    }
    for (;;) {
        ERR_clear_error();
        const int result = SSL_connect(ssl_.get());
        const int error = SSL_get_error(ssl_.get(), result);
        // An alert the client sends (a certificate it refuses) goes out too.
        const bool sent = flush(deadline);
        if (result == 1) {
            if (!sent) throw client_error(handshake_failure(ssl_.get(), options, 0));
            return;
        }
        if (error == SSL_ERROR_WANT_READ && sent) {
            const std::ptrdiff_t n = feed(deadline);
            if (n < 0) throw timeout_error("timed out in the TLS handshake");
            if (n > 0) continue;
        }
        throw client_error(handshake_failure(ssl_.get(), options, ERR_peek_last_error()));
    }
}

bool stream::flush(clock::time_point deadline) {
    BIO* out = SSL_get_wbio(ssl_.get());
    std::array<char, 16384> chunk{};
    for (;;) {
        const int n = BIO_read(out, chunk.data(), static_cast<int>(chunk.size()));
        if (n <= 0) return true;
        if (!socket_.send_all(std::string_view(chunk.data(), static_cast<std::size_t>(n)),
                              deadline)) {
            return false;
        }
    }
}

std::ptrdiff_t stream::feed(clock::time_point deadline) {
    std::array<char, 16384> chunk{};
    const std::ptrdiff_t n = socket_.receive_until(chunk.data(), chunk.size(), deadline);
    if (n > 0) BIO_write(SSL_get_rbio(ssl_.get()), chunk.data(), static_cast<int>(n));
    return n;
}

std::ptrdiff_t stream::tls_receive(char* out, std::size_t size, clock::time_point deadline) {
    for (;;) {
        ERR_clear_error();
        std::size_t got = 0;
        const int result = SSL_read_ex(ssl_.get(), out, size, &got);
        const int error = SSL_get_error(ssl_.get(), result);
        // Reading may have written (a TLS 1.3 key update's answer); a peer that has closed
        // shows at the next read.
        flush(deadline);
        if (result == 1) return static_cast<std::ptrdiff_t>(got);
        if (error == SSL_ERROR_ZERO_RETURN) return 0;  // the server's close_notify
        if (error != SSL_ERROR_WANT_READ) {
            throw client_error("TLS: " + openssl_errors("SSL_read failed"));
        }
        const std::ptrdiff_t n = feed(deadline);
        if (n <= 0) return n;  // -1: the time ran out; 0: closed without close_notify
    }
}

bool stream::tls_send_all(std::string_view bytes, clock::time_point deadline) {
    while (!bytes.empty()) {
        ERR_clear_error();
        std::size_t written = 0;
        const int result = SSL_write_ex(ssl_.get(), bytes.data(), bytes.size(), &written);
        const int error = SSL_get_error(ssl_.get(), result);
        if (!flush(deadline)) return false;
        if (result == 1) {
            bytes.remove_prefix(written);
            continue;
        }
        if (error == SSL_ERROR_ZERO_RETURN) return false;
        throw client_error("TLS: " + openssl_errors("SSL_write failed"));
    }
    return true;
}

bool stream::send_all(std::string_view bytes, clock::time_point deadline) {
    return ssl_ ? tls_send_all(bytes, deadline) : socket_.send_all(bytes, deadline);
}

std::ptrdiff_t stream::receive_until(char* out, std::size_t size, clock::time_point deadline) {
    return ssl_ ? tls_receive(out, size, deadline) : socket_.receive_until(out, size, deadline);
}

std::size_t stream::receive(char* out, std::size_t size, clock::time_point deadline) {
    const std::ptrdiff_t n = receive_until(out, size, deadline);
    if (n < 0) throw timeout_error("no answer from the server within the timeout");
    return static_cast<std::size_t>(n);
}

bool stream::idle_and_open() {
    if (!ssl_) return socket_.idle_and_open();
    // Nothing arrived, nothing received is waiting in OpenSSL: idle.
    if (socket_.idle_and_open() && SSL_pending(ssl_.get()) == 0 &&
        BIO_ctrl_pending(SSL_get_rbio(ssl_.get())) == 0) {
        return true;
    }
    // Something did: perhaps only records without data (session tickets), which a read
    // takes, or the server's close_notify.
    try {
        char byte = 0;
        return tls_receive(&byte, 1, clock::now()) < 0;
    } catch (const client_error&) {
        return false;
    }
}

std::string stream::alpn() const {
    if (!ssl_) return {};
    const unsigned char* protocol = nullptr;
    unsigned length = 0;
    SSL_get0_alpn_selected(ssl_.get(), &protocol, &length);
    return protocol ? std::string(reinterpret_cast<const char*>(protocol), length) : std::string();
}

}  // namespace tern::testing::detail
