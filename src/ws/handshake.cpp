#include "ws/handshake.hpp"

#include "http/header_values.hpp"

#include <openssl/evp.h>

#include <algorithm>
#include <array>
#include <new>
#include <string>
#include <utility>

// Last: OpenSSL's functions through the table that loads it on first use.
#include "http/token.hpp"
#include "openssl/calls.hpp"

namespace tern::detail::ws {

namespace {

constexpr std::string_view websocket_guid = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11";

constexpr bool is_base64_char(char c) noexcept {
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '+' ||
           c == '/';
}

// RFC 6455 4.1/4.2.1: the key is the base64 (RFC 4648 section 4, padded) of 16 bytes: 22
// characters then "==". 16 bytes are 128 bits and 22 characters carry 132, so the last
// character's low four bits are zero (RFC 4648 3.5: canonical encoding): A, Q, g or w.
bool is_base64_of_16_bytes(std::string_view key) noexcept {
    if (key.size() != 24 || key[22] != '=' || key[23] != '=') return false;
    if (!std::all_of(key.begin(), key.begin() + 22, is_base64_char)) return false;
    return std::string_view("AQgw").find(key[21]) != std::string_view::npos;
}

bool list_has(std::span<const header_field> headers, std::string_view name,
              std::string_view token) noexcept {
    bool found = false;
    for_each_member(headers, name, [&](std::string_view m) { found = found || iequals(m, token); });
    return found;
}

handshake_result refuse(int status, std::string why) {
    handshake_result r;
    r.status = status;
    r.why = std::move(why);
    return r;
}

}  // namespace

bool wants_websocket(const request& req) noexcept {
    return list_has(req.headers, "Upgrade", "websocket");
}

handshake_result check_upgrade(const request& req, const handshake_policy& policy) {
    // RFC 6455 4.2.1, in the order that gives the most useful refusal.
    if (req.method != "GET") return refuse(405, "a WebSocket handshake is a GET request");
    if (!wants_websocket(req)) return refuse(426, "not a WebSocket upgrade request");
    if (req.version_major < 1 || (req.version_major == 1 && req.version_minor < 1)) {
        return refuse(400, "a WebSocket handshake needs HTTP/1.1");
    }
    if (!has_field(req.headers, "Host")) return refuse(400, "no Host field");
    if (!list_has(req.headers, "Connection", "Upgrade")) {
        return refuse(400, "Connection does not list Upgrade");
    }
    // RFC 6455 4.2.2 / 4.4: a version the server does not speak gets 426 naming the one it
    // does; so does a handshake without any version. Two Version fields are malformed.
    const auto versions = std::count_if(req.headers.begin(), req.headers.end(), [](const auto& h) {
        return iequals(h.name, "Sec-WebSocket-Version");
    });
    if (versions > 1) return refuse(400, "more than one Sec-WebSocket-Version field");
    const auto version = single_field(req.headers, "Sec-WebSocket-Version");
    if (!version || trim_ows(*version) != "13") {
        return refuse(426, "Sec-WebSocket-Version must be 13");
    }
    const auto key = single_field(req.headers, "Sec-WebSocket-Key");
    if (!key) return refuse(400, "a WebSocket handshake needs exactly one Sec-WebSocket-Key");
    const std::string_view key_value = trim_ows(*key);
    if (!is_base64_of_16_bytes(key_value)) {
        return refuse(400, "Sec-WebSocket-Key is not the base64 of 16 bytes");
    }
    // The handshake has no body (and the bytes after it are frames, not a body).
    const auto length = single_field(req.headers, "Content-Length");
    if (has_field(req.headers, "Transfer-Encoding") || !req.body_view().empty() ||
        (length && trim_ows(*length) != "0")) {
        return refuse(400, "a WebSocket handshake has no body");
    }

    handshake_result r;
    r.status = 101;
    r.accept = accept_key(key_value);
    if (!policy.subprotocols.empty()) {
        for_each_member(req.headers, "Sec-WebSocket-Protocol", [&](std::string_view offered) {
            if (!r.subprotocol.empty()) return;
            const auto& ours = policy.subprotocols;
            if (std::find(ours.begin(), ours.end(), offered) != ours.end()) {
                r.subprotocol = std::string(offered);
            }
        });
    }
    if (policy.compression) {
        // Several fields form one list (RFC 9110 5.3). Joined as written, since a parameter
        // value may be a quoted string holding a comma, which negotiate_deflate reads.
        std::string joined;
        std::string_view offers;
        std::size_t fields = 0;
        for (const auto& h : req.headers) {
            if (!iequals(h.name, "Sec-WebSocket-Extensions")) continue;
            if (fields++ == 0) {
                offers = h.value;
                continue;
            }
            if (fields == 2) joined = offers;
            joined += ", ";
            joined += h.value;
            offers = joined;
        }
        if (fields != 0) r.deflate = negotiate_deflate(offers, policy.server_no_context_takeover);
    }
    return r;
}

std::string accept_key(std::string_view key) {
    std::string input;
    input.reserve(key.size() + websocket_guid.size());
    input.append(key);
    input.append(websocket_guid);
    std::array<unsigned char, EVP_MAX_MD_SIZE> digest{};
    unsigned int digest_size = 0;
    if (EVP_Digest(input.data(), input.size(), digest.data(), &digest_size, EVP_sha1(), nullptr) !=
        1) {
        throw std::bad_alloc();  // EVP_Digest fails only when it cannot allocate
    }
    // base64 of a 20-byte digest: 28 characters and EVP_EncodeBlock's terminating NUL.
    std::array<unsigned char, 4 * ((EVP_MAX_MD_SIZE + 2) / 3) + 1> text{};
    const int size = EVP_EncodeBlock(text.data(), digest.data(), static_cast<int>(digest_size));
    return {reinterpret_cast<const char*>(text.data()), static_cast<std::size_t>(size)};
}

}  // namespace tern::detail::ws
