// Hardening matrix, request line (RFC 9112 §3, docs/limits.md "Malformed requests"): every
// malformed request line gets its documented status with `Connection: close`, the server
// closes, and a fresh client is still served. Valid edge forms are served and the connection
// stays usable.

#include <catch2/catch.hpp>
#include <stdexcept>
#include <string>
#include <string_view>

#include "support/raw_client.hpp"
#include "support/test_server.hpp"

namespace wire_test_hardening_request_line {

using namespace tern_test;
using namespace std::string_literals;

namespace {

void routes(tern::app& app) {
    app.get("/", [](tern::context& ctx) { ctx.text("root"); });
    app.get("/x", [](tern::context& ctx) { ctx.text("x"); });
    app.add("PROPFIND", "/", [](tern::context& ctx) { ctx.text("propfind"); });
}

/// Sends `bytes` and expects `status` and `body` on a connection that stays usable.
response expect_served(const test_server& server, std::string_view bytes, int status,
                       std::string_view body) {
    raw_client c = server.client();
    c.send(bytes);
    const response r = c.read_response();
    INFO("request: " << bytes);
    INFO("response: " << describe(r));
    CHECK(r.status == status);
    CHECK(r.body == body);
    check_common_headers(r);
    CHECK_FALSE(has_token(r.header("Connection").value_or(""), "close"));
    c.send(get_request(alive_path));
    const response again = c.read_response();
    INFO("follow-up: " << describe(again));
    CHECK(again.status == 200);
    CHECK(again.body == "alive");
    CHECK(c.buffered().empty());
    return r;
}

}  // namespace

TEST_CASE("a malformed request line gets its documented status and the connection closes",
          "[wire][hardening][request-line]") {
    const wire_case c = GENERATE(values<wire_case>({
        {"only a method", "GET\r\n\r\n", 400},
        {"missing target", "GET HTTP/1.1\r\nHost: x\r\n\r\n", 400},
        {"tabs as separators", "GET\t/\tHTTP/1.1\r\nHost: x\r\n\r\n", 400},
        {"lowercase http/1.1", "GET / http/1.1\r\nHost: x\r\n\r\n", 400},
        {"space after the version", "GET / HTTP/1.1 \r\nHost: x\r\n\r\n", 400},
        {"HTTP/1.10", "GET / HTTP/1.10\r\nHost: x\r\n\r\n", 400},
        {"HTTP/01.1", "GET / HTTP/01.1\r\nHost: x\r\n\r\n", 400},
        {"HTTP/1 without a minor version", "GET / HTTP/1\r\nHost: x\r\n\r\n", 400},
        {"HTTP/1. with an empty minor version", "GET / HTTP/1.\r\nHost: x\r\n\r\n", 400},
        {"HTTP/11 without a dot", "GET / HTTP/11\r\nHost: x\r\n\r\n", 400},
        {"HTTPS/1.1 as protocol name", "GET / HTTPS/1.1\r\nHost: x\r\n\r\n", 400},
        {"bare CR after the version", "GET / HTTP/1.1\rHost: x\r\n\r\n", 400},
        {"bare LF after the version", "GET / HTTP/1.1\nHost: x\r\n\r\n", 400},
        {"CR CR LF after the version", "GET / HTTP/1.1\r\r\nHost: x\r\n\r\n", 400},
        {"HTTP/2.0 version", "GET / HTTP/2.0\r\nHost: x\r\n\r\n", 505},
        {"HTTP/0.9 written with a version", "GET / HTTP/0.9\r\nHost: x\r\n\r\n", 505},
        {"NUL in the target", "GET /a\0b HTTP/1.1\r\nHost: x\r\n\r\n"s, 400},
        {"SOH control byte in the target", "GET /a\001b HTTP/1.1\r\nHost: x\r\n\r\n", 400},
        {"DEL in the target", "GET /a\177b HTTP/1.1\r\nHost: x\r\n\r\n", 400},
        {"raw space in the target", "GET /a b HTTP/1.1\r\nHost: x\r\n\r\n", 400},
        {"tab in the target", "GET /a\tb HTTP/1.1\r\nHost: x\r\n\r\n", 400},
        {"non-ASCII byte in the target", "GET /a\200b HTTP/1.1\r\nHost: x\r\n\r\n", 400},
        {"space before the method", " GET / HTTP/1.1\r\nHost: x\r\n\r\n", 400},
        {"tab before the method", "\tGET / HTTP/1.1\r\nHost: x\r\n\r\n", 400},
        {"CONNECT (not a proxy)", "CONNECT h:443 HTTP/1.1\r\nHost: h:443\r\n\r\n", 501},
    }));
    test_server server(routes);
    expect_case(server, c);
}

// With HTTP/2 on (the default) the preface starts an h2c connection (tests/clients/h2_wire.py).
TEST_CASE("with HTTP/2 off, the HTTP/2 connection preface gets 505 and the connection closes",
          "[wire][hardening][request-line]") {
    tern::config cfg = test_config();
    cfg.http2.enabled = false;
    test_server server(routes, cfg);
    expect_case(server, {"HTTP/2 connection preface", "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", 505});
}

TEST_CASE("valid request-line edge forms are served and the connection stays usable",
          "[wire][hardening][request-line]") {
    test_server server(routes);
    SECTION("a registered extension method") {
        expect_served(server, "PROPFIND / HTTP/1.1\r\nHost: x\r\n\r\n", 200, "propfind");
    }
    SECTION("a known method on a path without a route for it gets 405 with Allow") {
        const response r = expect_served(server, "PROPFIND /x HTTP/1.1\r\nHost: x\r\n\r\n", 405,
                                         "Method Not Allowed");
        CHECK(r.header("Allow").has_value());
    }
    SECTION("a query string") {
        expect_served(server, "GET /?q=1&r HTTP/1.1\r\nHost: x\r\n\r\n", 200, "root");
    }
}

// ---- checks tern adds to llhttp's ------------------------------------------------------------

// llhttp 9.2 tolerates several spaces between the parts; RFC 9112 3 says one SP.
TEST_CASE("extra spaces between the parts of the request line get 400",
          "[wire][hardening][request-line]") {
    const wire_case c = GENERATE(values<wire_case>({
        {"two spaces before the target", "GET  / HTTP/1.1\r\nHost: x\r\n\r\n", 400},
        {"two spaces before the version", "GET /  HTTP/1.1\r\nHost: x\r\n\r\n", 400},
    }));
    test_server server(routes);
    expect_case(server, c);
}

// llhttp takes `GET /\r\n` (no version) as an HTTP/0.9 simple request; tern refuses it.
TEST_CASE("a request line without a version gets 400", "[wire][hardening][request-line]") {
    test_server server(routes);
    expect_case(server, {"missing version", "GET /\r\nHost: x\r\n\r\n", 400});
}

// llhttp refuses versions it does not know as syntax errors; tern tells a well-formed
// HTTP/d.d apart from garbage and answers it 505.
TEST_CASE("a well-formed HTTP version other than 1.x gets 505", "[wire][hardening][request-line]") {
    const wire_case c = GENERATE(values<wire_case>({
        {"HTTP/3.0", "GET / HTTP/3.0\r\nHost: x\r\n\r\n", 505},
        {"HTTP/9.9", "GET / HTTP/9.9\r\nHost: x\r\n\r\n", 505},
    }));
    test_server server(routes);
    expect_case(server, c);
}

// RFC 9110 2.5 says a server SHOULD serve HTTP/1.2 as 1.1, but llhttp's strict mode refuses
// it; tern answers 505 rather than turn on a lenient flag (docs/limits.md, strictness).
TEST_CASE("an HTTP/1.2 request gets 505 (documented strictness)",
          "[wire][hardening][request-line]") {
    test_server server(routes);
    expect_case(server, {"HTTP/1.2", "GET / HTTP/1.2\r\nHost: x\r\n\r\n", 505});
}

// A '#' fragment is not part of any request-target form (RFC 9112 3.2).
TEST_CASE("a fragment in the request target gets 400", "[wire][hardening][request-line]") {
    test_server server(routes);
    expect_case(server, {"fragment", "GET /#frag HTTP/1.1\r\nHost: x\r\n\r\n", 400});
}

// The asterisk-form is for OPTIONS only (RFC 9112 3.2.4).
TEST_CASE("the asterisk-form on GET gets 400", "[wire][hardening][request-line]") {
    test_server server(routes);
    expect_case(server, {"asterisk-form on GET", "GET * HTTP/1.1\r\nHost: x\r\n\r\n", 400});
}

// A server MUST accept the absolute-form (RFC 9112 3.2.2) and route by its path.
TEST_CASE("an absolute-form target is routed by its path", "[wire][hardening][request-line]") {
    test_server server(routes);
    expect_served(server, "GET http://h/x HTTP/1.1\r\nHost: h\r\n\r\n", 200, "x");
}

// llhttp parses only the methods it knows; any other token is unrecognised: 501 (RFC 9110
// 9.1, 15.6.2), and app.add refuses to register a route for it (docs/limits.md, Methods).
TEST_CASE("an unknown method token gets 501", "[wire][hardening][request-line]") {
    test_server server(routes);
    SECTION("an unregistered token") {
        expect_case(server, {"FOO", "FOO / HTTP/1.1\r\nHost: x\r\n\r\n", 501});
    }
    SECTION("lowercase get (methods are case-sensitive)") {
        expect_case(server, {"get", "get / HTTP/1.1\r\nHost: x\r\n\r\n", 501});
    }
    SECTION("a route for such a token cannot be registered") {
        tern::app app(test_config());
        CHECK_THROWS_AS(app.add("FOO", "/foo", [](tern::context& ctx) { ctx.text("foo"); }),
                        std::invalid_argument);
    }
}

}  // namespace wire_test_hardening_request_line
