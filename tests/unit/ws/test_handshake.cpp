// The server's side of the WebSocket opening handshake (src/ws/handshake.hpp) on requests
// built here: what is accepted (RFC 6455 4.2.1), the status of each refusal, the
// Sec-WebSocket-Accept value (4.2.2's example), subprotocol choice and the extension offer.

#include <catch2/catch.hpp>

#include "http/token.hpp"
#include "ws/handshake.hpp"

#include <string>
#include <string_view>
#include <vector>

namespace unit_test_ws_handshake {

using namespace tern::detail;
using namespace tern::detail::ws;

namespace {

constexpr std::string_view sample_key = "dGhlIHNhbXBsZSBub25jZQ==";

// A valid upgrade request; tests change or remove its fields.
struct upgrade_request {
    std::vector<std::pair<std::string, std::string>> fields = {
        {"Host", "server.example.com"},  {"Upgrade", "websocket"},
        {"Connection", "Upgrade"},       {"Sec-WebSocket-Key", std::string(sample_key)},
        {"Sec-WebSocket-Version", "13"},
    };
    std::string method = "GET";
    int minor = 1;
    std::string body;
    request req;

    void set(std::string_view name, std::string value) {
        for (auto& [n, v] : fields) {
            if (iequals(n, name)) {
                v = std::move(value);
                return;
            }
        }
        fields.emplace_back(std::string(name), std::move(value));
    }
    void remove(std::string_view name) {
        std::erase_if(fields, [&](const auto& f) { return iequals(f.first, name); });
    }
    void add(std::string name, std::string value) {
        fields.emplace_back(std::move(name), std::move(value));
    }
    const request& build() {
        req = request{};
        req.method = method;
        req.target = "/chat";
        req.path = "/chat";
        req.version_minor = static_cast<std::uint8_t>(minor);
        for (const auto& [n, v] : fields) req.headers.push_back({n, v});
        req.body = body;
        return req;
    }
};

handshake_result check(upgrade_request& u, const handshake_policy& policy = {}) {
    return check_upgrade(u.build(), policy);
}

}  // namespace

TEST_CASE("accept_key gives RFC 6455 4.2.2's example answer", "[ws][handshake]") {
    CHECK(accept_key(sample_key) == "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=");
    CHECK(accept_key("x3JJHMbDL1EzLkh9GBhXDw==") == "HSmrc0sMlYUkAGmm5OPpG2HaGWk=");
}

TEST_CASE("a valid upgrade request is accepted with its Sec-WebSocket-Accept", "[ws][handshake]") {
    upgrade_request u;
    const auto r = check(u);
    CHECK(r.status == 101);
    CHECK(r.accept == "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=");
    CHECK(r.subprotocol.empty());
    CHECK_FALSE(r.deflate);
    CHECK(wants_websocket(u.req));
}

TEST_CASE("Upgrade and Connection are matched as case-insensitive tokens in lists",
          "[ws][handshake]") {
    upgrade_request u;
    u.set("Upgrade", "h2c, WebSocket");
    u.set("Connection", "keep-alive,  UPGRADE");
    CHECK(check(u).status == 101);
    u.remove("Connection");
    u.add("connection", "keep-alive");
    u.add("CONNECTION", "upgrade");
    CHECK(check(u).status == 101);
}

TEST_CASE("a method other than GET gets 405", "[ws][handshake]") {
    for (const char* m : {"POST", "HEAD", "PUT", "get"}) {
        upgrade_request u;
        u.method = m;
        CAPTURE(m);
        CHECK(check(u).status == 405);
    }
}

TEST_CASE("a request that is not a WebSocket upgrade gets 426", "[ws][handshake]") {
    upgrade_request u;
    u.remove("Upgrade");
    auto r = check(u);
    CHECK(r.status == 426);
    CHECK_FALSE(r.why.empty());
    CHECK_FALSE(wants_websocket(u.req));
    u.set("Upgrade", "h2c");
    CHECK(check(u).status == 426);
    u.set("Upgrade", "websocket/13");
    CHECK(check(u).status == 426);
}

TEST_CASE("a version other than 13, or none, gets 426", "[ws][handshake]") {
    for (const char* v : {"8", "12", "14", "13, 8", ""}) {
        upgrade_request u;
        u.set("Sec-WebSocket-Version", v);
        CAPTURE(v);
        CHECK(check(u).status == 426);
    }
    upgrade_request u;
    u.remove("Sec-WebSocket-Version");
    CHECK(check(u).status == 426);
    u.add("Sec-WebSocket-Version", "13");
    u.add("Sec-WebSocket-Version", "13");
    CHECK(check(u).status == 400);
}

TEST_CASE("a malformed upgrade request gets 400", "[ws][handshake]") {
    SECTION("HTTP/1.0") {
        upgrade_request u;
        u.minor = 0;
        CHECK(check(u).status == 400);
    }
    SECTION("no Host") {
        upgrade_request u;
        u.remove("Host");
        CHECK(check(u).status == 400);
    }
    SECTION("Connection without Upgrade") {
        upgrade_request u;
        u.set("Connection", "keep-alive");
        CHECK(check(u).status == 400);
        u.remove("Connection");
        CHECK(check(u).status == 400);
    }
    SECTION("no key or two keys") {
        upgrade_request u;
        u.remove("Sec-WebSocket-Key");
        CHECK(check(u).status == 400);
        u.add("Sec-WebSocket-Key", std::string(sample_key));
        u.add("Sec-WebSocket-Key", std::string(sample_key));
        CHECK(check(u).status == 400);
    }
    SECTION("a body") {
        upgrade_request u;
        u.body = "x";
        CHECK(check(u).status == 400);
        u.body.clear();
        u.set("Content-Length", "1");
        CHECK(check(u).status == 400);
        u.set("Content-Length", "0");
        CHECK(check(u).status == 101);
        u.remove("Content-Length");
        u.set("Transfer-Encoding", "chunked");
        CHECK(check(u).status == 400);
    }
}

TEST_CASE("Sec-WebSocket-Key must be the padded base64 of exactly 16 bytes", "[ws][handshake]") {
    const std::vector<std::string> bad = {
        "",
        "dGhlIHNhbXBsZSBub25jZQ=",    // 23 characters
        "dGhlIHNhbXBsZSBub25jZQ===",  // 25
        "dGhlIHNhbXBsZSBub25jZQ",     // no padding
        "dGhlIHNhbXBsZSBub25jZR==",   // non-zero bits after the 16th byte
        "dGhlIHNhbXBsZSBub25jZ===",   // 15 bytes and a half
        "dGhlIHNhbXBsZSBub25j ZQ==",  // a space inside
        "dGhlIHNhbXBsZSBub25jZQ=A",   // padding then data
        "dGhlIHNhbXBsZSBub25jZ-Q=",   // URL-safe alphabet
        "dGhlIHNhbXBsZSBub25jZ_==",
        "dGhlIHNhbXBsZSBub25jZQ==dGhl",      // 19 bytes
        "dGhlIHNhbXBsZSBub24=",              // 14 bytes
        "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAA==",  // 22 bytes
    };
    for (const auto& key : bad) {
        upgrade_request u;
        u.set("Sec-WebSocket-Key", key);
        CAPTURE(key);
        CHECK(check(u).status == 400);
    }
    for (const char* key : {"AAAAAAAAAAAAAAAAAAAAAA==", "/////////////////////w==",
                            "+++++++++++++++++++++g==", "x3JJHMbDL1EzLkh9GBhXDw=="}) {
        upgrade_request u;
        u.set("Sec-WebSocket-Key", key);
        CAPTURE(key);
        CHECK(check(u).status == 101);
    }
}

TEST_CASE("the first subprotocol the client lists that the route speaks is chosen",
          "[ws][handshake]") {
    const std::vector<std::string> ours = {"chat.v2", "chat.v1"};
    handshake_policy policy;
    policy.subprotocols = ours;
    upgrade_request u;
    u.set("Sec-WebSocket-Protocol", "mqtt, chat.v1, chat.v2");
    CHECK(check(u, policy).subprotocol == "chat.v1");
    u.remove("Sec-WebSocket-Protocol");
    u.add("Sec-WebSocket-Protocol", "mqtt");
    u.add("Sec-WebSocket-Protocol", "chat.v2");
    CHECK(check(u, policy).subprotocol == "chat.v2");
    u.remove("Sec-WebSocket-Protocol");
    u.add("Sec-WebSocket-Protocol", "mqtt, CHAT.V1");
    auto r = check(u, policy);
    CHECK(r.status == 101);
    CHECK(r.subprotocol.empty());
    u.remove("Sec-WebSocket-Protocol");
    CHECK(check(u, policy).subprotocol.empty());
    // A route with no subprotocols chooses none, whatever is offered.
    u.set("Sec-WebSocket-Protocol", "chat.v1");
    CHECK(check(u).subprotocol.empty());
}

TEST_CASE("permessage-deflate is negotiated only when the route compresses", "[ws][handshake]") {
    upgrade_request u;
    u.set("Sec-WebSocket-Extensions", "permessage-deflate; client_max_window_bits");
    CHECK_FALSE(check(u).deflate);
    handshake_policy policy;
    policy.compression = true;
    auto r = check(u, policy);
    REQUIRE(r.deflate);
    CHECK_FALSE(r.deflate->server_no_context_takeover);
    policy.server_no_context_takeover = true;
    r = check(u, policy);
    REQUIRE(r.deflate);
    CHECK(r.deflate->server_no_context_takeover);
    u.remove("Sec-WebSocket-Extensions");
    CHECK_FALSE(check(u, policy).deflate);
}

TEST_CASE("several Sec-WebSocket-Extensions fields are read as one list", "[ws][handshake]") {
    handshake_policy policy;
    policy.compression = true;
    upgrade_request u;
    u.add("Sec-WebSocket-Extensions", "x-webkit-deflate-frame");
    u.add("Sec-WebSocket-Extensions", "permessage-deflate; bogus");
    u.add("Sec-WebSocket-Extensions", "permessage-deflate; server_max_window_bits=10");
    const auto r = check(u, policy);
    REQUIRE(r.deflate);
    CHECK(r.deflate->server_max_window_bits == 10);
}

}  // namespace unit_test_ws_handshake
