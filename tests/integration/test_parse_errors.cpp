// Malformed requests (RFC 9112): each gets an error status with `Connection: close`, the
// connection is closed, and the server goes on serving fresh clients. The framing cases
// (Content-Length, Transfer-Encoding) are the request-smuggling vectors of RFC 9112 §6.3.

#include <catch2/catch.hpp>
#include <string>

#include "support/raw_client.hpp"
#include "support/test_server.hpp"

namespace wire_test_parse_errors {

using namespace tern_test;

namespace {

void routes(tern::app& app) {
    app.get("/", [](tern::context& ctx) { ctx.text("root"); });
    app.put("/echo", [](tern::context& ctx) { ctx.result(std::string(ctx.body())); });
}

}  // namespace

// ---- request line ---------------------------------------------------------------------------

TEST_CASE("a garbage request line gets 400 and the connection closes", "[wire][parse]") {
    test_server server(routes);
    SECTION("words that are not a request line") {
        expect_rejected(server, "this is not http\r\n\r\n", 400);
    }
    SECTION("control bytes") { expect_rejected(server, "\x01\x02\x03 / HTTP/1.1\r\n\r\n", 400); }
}

TEST_CASE("a malformed HTTP version gets 400, an unsupported one 505", "[wire][parse]") {
    test_server server(routes);
    SECTION("malformed") { expect_rejected(server, "GET / HTTP/1.10\r\nHost: x\r\n\r\n", 400); }
    SECTION("unsupported") { expect_rejected(server, "GET / HTTP/9.9\r\nHost: x\r\n\r\n", 505); }
}

TEST_CASE("bare LF line endings get 400 and the connection closes", "[wire][parse]") {
    test_server server(routes);
    SECTION("everywhere") { expect_rejected(server, "GET / HTTP/1.1\nHost: x\n\n", 400); }
    SECTION("in a header line only") {
        expect_rejected(server, "GET / HTTP/1.1\r\nHost: x\nX-A: 1\r\n\r\n", 400);
    }
}

// ---- header fields --------------------------------------------------------------------------

TEST_CASE("a header line without a colon gets 400 and the connection closes", "[wire][parse]") {
    test_server server(routes);
    expect_rejected(server, "GET / HTTP/1.1\r\nHost: x\r\nNoColonHere\r\n\r\n", 400);
}

TEST_CASE("whitespace between a header name and the colon gets 400 and the connection closes",
          "[wire][parse]") {
    // RFC 9112 §5.1: a server MUST reject such a field with 400.
    test_server server(routes);
    SECTION("on Host") { expect_rejected(server, "GET / HTTP/1.1\r\nHost : x\r\n\r\n", 400); }
    SECTION("on another field") {
        expect_rejected(server, "GET / HTTP/1.1\r\nHost: x\r\nX-Test : y\r\n\r\n", 400);
    }
}

TEST_CASE("an obs-fold continuation line gets 400 and the connection closes", "[wire][parse]") {
    // RFC 9112 §5.2: obsolete line folding outside message/http is rejected with 400.
    test_server server(routes);
    SECTION("with a space") {
        expect_rejected(server, "GET / HTTP/1.1\r\nHost: x\r\nX-Long: a\r\n b\r\n\r\n", 400);
    }
    SECTION("with a tab") {
        expect_rejected(server, "GET / HTTP/1.1\r\nHost: x\r\nX-Long: a\r\n\tb\r\n\r\n", 400);
    }
}

// ---- Host (RFC 9112 §3.2) -------------------------------------------------------------------

TEST_CASE("an HTTP/1.1 request without Host gets 400 and the connection closes", "[wire][parse]") {
    test_server server(routes);
    expect_rejected(server, "GET / HTTP/1.1\r\n\r\n", 400);
}

TEST_CASE("a request with two Host fields gets 400 and the connection closes", "[wire][parse]") {
    test_server server(routes);
    SECTION("with different values") {
        expect_rejected(server, "GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", 400);
    }
    SECTION("with the same value") {
        expect_rejected(server, "GET / HTTP/1.1\r\nHost: a\r\nHost: a\r\n\r\n", 400);
    }
}

TEST_CASE("an HTTP/1.0 request without Host is served normally", "[wire][parse]") {
    test_server server(routes);
    raw_client c = server.client();
    c.send("GET / HTTP/1.0\r\n\r\n");
    const response r = c.read_response();
    INFO(describe(r));
    CHECK(r.status == 200);
    CHECK(r.body == "root");
    check_common_headers(r);
}

// ---- body framing ---------------------------------------------------------------------------

TEST_CASE("Content-Length together with Transfer-Encoding gets 400 and the connection closes",
          "[wire][parse]") {
    test_server server(routes);
    SECTION("Content-Length first") {
        expect_rejected(server,
                        "PUT /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n"
                        "Transfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
                        400);
    }
    SECTION("Transfer-Encoding first") {
        expect_rejected(server,
                        "PUT /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n"
                        "Content-Length: 5\r\n\r\n0\r\n\r\n",
                        400);
    }
}

TEST_CASE("two different Content-Length values get 400 and the connection closes",
          "[wire][parse]") {
    test_server server(routes);
    SECTION("in two fields") {
        expect_rejected(server,
                        "PUT /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n"
                        "Content-Length: 6\r\n\r\nhello!",
                        400);
    }
    SECTION("as a list in one field") {
        expect_rejected(server,
                        "PUT /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 5, 6\r\n\r\nhello!", 400);
    }
}

TEST_CASE("a non-numeric Content-Length gets 400 and the connection closes", "[wire][parse]") {
    test_server server(routes);
    SECTION("letters") {
        expect_rejected(server, "PUT /echo HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n",
                        400);
    }
    SECTION("a sign") {
        expect_rejected(server, "PUT /echo HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\n\r\n", 400);
    }
    SECTION("digits then letters") {
        expect_rejected(server, "PUT /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 5x\r\n\r\nhello",
                        400);
    }
}

TEST_CASE("an invalid chunk size gets 400 and the connection closes", "[wire][parse]") {
    test_server server(routes);
    expect_rejected(server,
                    "PUT /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
                    "zz\r\nhello\r\n0\r\n\r\n",
                    400);
}

TEST_CASE("chunk data longer than its size gets 400 and the connection closes", "[wire][parse]") {
    test_server server(routes);
    expect_rejected(server,
                    "PUT /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
                    "3\r\nhello\r\n0\r\n\r\n",
                    400);
}

TEST_CASE("Transfer-Encoding not ending in chunked gets 400 and the connection closes",
          "[wire][parse]") {
    // RFC 9112 §6.3: a request whose final coding is not chunked has no reliable length.
    test_server server(routes);
    expect_rejected(server,
                    "PUT /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked, gzip\r\n\r\n"
                    "0\r\n\r\n",
                    400);
}

TEST_CASE("an unknown transfer coding alone gets 501 or 400 and the connection closes",
          "[wire][parse]") {
    // RFC 9112 §6.1 says 501 for a coding the server does not understand, while a sole
    // non-chunked coding also fails §6.3's framing rules (400). Both answers are accepted
    // for this case only; every other case here expects exactly 400.
    test_server server(routes);
    raw_client c = server.client();
    c.send("PUT /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip\r\n\r\n0\r\n\r\n");
    const response r = c.read_response();
    INFO(describe(r));
    CHECK((r.status == 501 || r.status == 400));
    check_common_headers(r);
    check_closed_and_still_serving(c, r, server.port());
}

// ---- after the error ------------------------------------------------------------------------

TEST_CASE("an error response carries a body that matches its Content-Length", "[wire][parse]") {
    test_server server(routes);
    const response r = expect_rejected(server, "GET / HTTP/1.1\r\nNoColon\r\n\r\n", 400);
    REQUIRE(r.header("Content-Length").has_value());
    CHECK(*r.header("Content-Length") == std::to_string(r.body.size()));
}

TEST_CASE("a bad request on a connection that already served one gets 400 and the close",
          "[wire][parse]") {
    test_server server(routes);
    raw_client c = server.client();
    c.send(get_request("/"));
    CHECK(c.read_response().body == "root");
    c.send("GET / HTTP/1.1\r\nHost: x\r\nBad Header: 1\r\n\r\n");
    const response r = c.read_response();
    INFO(describe(r));
    CHECK(r.status == 400);
    check_closed_and_still_serving(c, r, server.port());
}

TEST_CASE("many bad clients in a row leave the server serving", "[wire][parse]") {
    test_server server(routes);
    for (int i = 0; i < 20; ++i) {
        raw_client c = server.client();
        c.send("GARBAGE\r\n\r\n");
        const response r = c.read_response();
        INFO("client " << i << ": " << describe(r));
        REQUIRE(r.status == 400);
        REQUIRE(c.closed_by_peer());
    }
    check_still_serving(server.port());
}

}  // namespace wire_test_parse_errors
