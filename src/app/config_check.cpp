#include "app/config_check.hpp"

#include "web/cookie_signer.hpp"
#include "web/cors.hpp"
#include "web/session_manager.hpp"

#include <chrono>
#include <stdexcept>
#include <string_view>

namespace tern::detail {

namespace {

void at_least(std::vector<std::string>& faults, std::size_t value, std::size_t minimum,
              std::string_view name) {
    if (value < minimum) {
        faults.push_back(std::string(name) + " must be at least " + std::to_string(minimum));
    }
}

// The shape of the TLS settings; the files themselves are read at start (they may not exist
// yet when the app is set up), where a bad one is an error naming it.
void tls_faults(const tls_config& t, std::vector<std::string>& faults) {
    if (t.certificates.empty()) faults.emplace_back("tls needs at least one certificate");
    for (std::size_t i = 0; i < t.certificates.size(); ++i) {
        const auto& cert = t.certificates[i];
        const std::string which = "tls certificate " + std::to_string(i);
        if (cert.cert_file.empty() == cert.cert_pem.empty()) {
            faults.push_back(which + " needs exactly one of cert_file and cert_pem");
        }
        if (cert.key_file.empty() == cert.key_pem.empty()) {
            faults.push_back(which + " needs exactly one of key_file and key_pem");
        }
    }
    at_least(faults, t.max_handshakes, 1, "tls max_handshakes");
    if (t.client_certificates != client_certificates::none && t.client_ca_file.empty()) {
        faults.emplace_back("tls client_certificates needs a client_ca_file");
    }
}

void not_negative(std::vector<std::string>& faults, std::chrono::milliseconds value,
                  std::string_view name) {
    if (value.count() < 0) faults.push_back(std::string(name) + " must not be negative");
}

}  // namespace

std::vector<std::string> config_faults(const config& c) {
    std::vector<std::string> faults;
    at_least(faults, c.blocking.threads, 1, "blocking.threads");
    at_least(faults, c.blocking.max_queue, 1, "blocking.max_queue");
    not_negative(faults, c.blocking.max_wait, "blocking.max_wait");
    at_least(faults, c.limits.max_concurrent_connections, 1, "limits.max_concurrent_connections");
    at_least(faults, c.limits.max_header_count, 1, "limits.max_header_count");
    at_least(faults, c.limits.max_header_size, 1, "limits.max_header_size");
    at_least(faults, c.limits.max_line_size, 16, "limits.max_line_size");
    not_negative(faults, c.timeouts.first_byte, "timeouts.first_byte");
    not_negative(faults, c.timeouts.header, "timeouts.header");
    not_negative(faults, c.timeouts.body_idle, "timeouts.body_idle");
    not_negative(faults, c.timeouts.keep_alive, "timeouts.keep_alive");
    not_negative(faults, c.timeouts.write, "timeouts.write");
    not_negative(faults, c.timeouts.drain, "timeouts.drain");
    at_least(faults, c.limits.max_json_size, 1, "limits.max_json_size");
    at_least(faults, c.limits.max_json_depth, 1, "limits.max_json_depth");
    at_least(faults, c.streams.buffer_size, 1, "streams.buffer_size");
    at_least(faults, c.streams.max_buffer, c.streams.buffer_size, "streams.max_buffer");
    not_negative(faults, c.streams.sse_keep_alive, "streams.sse_keep_alive");
    at_least(faults, c.websocket.max_message_size, 1, "websocket.max_message_size");
    not_negative(faults, c.websocket.ping_interval, "websocket.ping_interval");
    at_least(faults, std::size_t{c.http2.max_concurrent_streams}, 1,
             "http2.max_concurrent_streams");
    at_least(faults, c.http2.max_unsent, 1, "http2.max_unsent");
    at_least(faults, c.http2.max_open_files, 1, "http2.max_open_files");
    at_least(faults, c.http2.max_spooled_bytes, 1, "http2.max_spooled_bytes");
    at_least(faults, c.http2.max_body_memory, 1, "http2.max_body_memory");
    at_least(faults, std::size_t{c.http3.max_concurrent_streams}, 1,
             "http3.max_concurrent_streams");
    at_least(faults, std::size_t{c.http3.stream_window}, 1024, "http3.stream_window");
    at_least(faults, std::size_t{c.http3.connection_window}, std::size_t{c.http3.stream_window},
             "http3.connection_window");
    at_least(faults, c.http3.max_handshakes, 1, "http3.max_handshakes");
    if (c.http3.handshake_timeout.count() < 1) {
        faults.emplace_back("http3.handshake_timeout must be at least 1 ms");
    }
    at_least(faults, c.http3.max_unacked, 1, "http3.max_unacked");
    at_least(faults, c.http3.max_open_files, 1, "http3.max_open_files");
    at_least(faults, c.http3.max_spooled_bytes, 1, "http3.max_spooled_bytes");
    at_least(faults, c.http3.max_body_memory, 1, "http3.max_body_memory");
    for (const auto& files : c.static_files) {
        if (files.directory.empty()) faults.emplace_back("static_files needs a directory");
        if (files.hosted_path.empty() || files.hosted_path.front() != '/') {
            faults.emplace_back("static_files hosted_path must begin with '/'");
        }
    }
    if (c.sessions) {
        try {
            check_session_config(*c.sessions);
        } catch (const std::invalid_argument& e) {
            faults.emplace_back(e.what());
        }
    }
    if (!c.cookie_secret.empty() && c.cookie_secret.size() < cookie_signer::min_key_size) {
        faults.push_back("cookie_secret needs at least " +
                         std::to_string(cookie_signer::min_key_size) + " bytes, not " +
                         std::to_string(c.cookie_secret.size()) +
                         " (use 32 random bytes, e.g. from `openssl rand -base64 32`)");
    }
    if (c.cors) {
        try {
            const cors_policy check(*c.cors);
        } catch (const std::invalid_argument& e) {
            faults.emplace_back(e.what());
        }
    }
    if (c.compression && (c.compression->level < 1 || c.compression->level > 9)) {
        faults.emplace_back("compression level must be 1..9");
    }
    if (c.compression && (c.compression->brotli_level < 0 || c.compression->brotli_level > 11)) {
        faults.emplace_back("compression brotli_level must be 0..11");
    }
    if (c.compression && (c.compression->zstd_level < 1 || c.compression->zstd_level > 19)) {
        faults.emplace_back("compression zstd_level must be 1..19");
    }
    if (c.tls) tls_faults(*c.tls, faults);
    return faults;
}

void check_config(const config& c) {
    const auto faults = config_faults(c);
    if (faults.empty()) return;
    std::string message = "tern: ";
    for (std::size_t i = 0; i < faults.size(); ++i) {
        if (i > 0) message += "; ";
        message += faults[i];
    }
    throw std::invalid_argument(message);
}

void check_http3(const config& c) {
    if (c.http3_port == 0) return;
#ifndef TERN_HTTP3
    throw std::invalid_argument(
        "tern: http3 needs a tern built with HTTP/3 (TERN_HTTP3, on by default; docs/http3.md)");
#else
    if (!c.tls) {
        throw std::invalid_argument(
            "tern: http3 needs tls(...): QUIC uses the HTTPS certificate and key");
    }
    // GnuTLS reads the first certificate's files (docs/http3.md).
    const auto& first = c.tls->certificates.front();
    if (first.cert_file.empty() || first.key_file.empty() || !first.password.empty()) {
        throw std::invalid_argument(
            "tern: http3 needs the first certificate as files (cert_file, key_file) with a key "
            "in the clear");
    }
#endif
}

}  // namespace tern::detail
