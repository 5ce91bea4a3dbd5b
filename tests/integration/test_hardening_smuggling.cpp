// Hardening matrix, request smuggling (RFC 9112 §6.3, §11.2): each case hides
// `GET /smuggled` behind an ambiguity in framing or in the header block. The hidden request
// must never run: its handler counts calls and the count stays 0. The visible answer is
// either an error with `Connection: close` and the close, or exactly the one legitimate
// response, with the hidden bytes consumed as body.

#include <atomic>
#include <catch2/catch.hpp>
#include <cstdio>
#include <string>
#include <string_view>

#include "support/raw_client.hpp"
#include "support/test_server.hpp"

using namespace tern_test;

namespace {

/// The request every case tries to smuggle.
const std::string hidden = "GET /smuggled HTTP/1.1\r\nHost: x\r\n\r\n";

/// A server whose GET /smuggled counts how often it runs.
struct smuggle_target {
    std::atomic<int> smuggled{0};
    test_server server{[this](tern::app& app) {
        app.get("/", [](tern::context& ctx) { ctx.text("root"); });
        app.post("/echo", [](tern::context& ctx) { ctx.result(std::string(ctx.body())); });
        const auto count = [this](tern::context& ctx) {
            ++smuggled;
            ctx.text("smuggled");
        };
        app.get("/smuggled", count).post("/smuggled", count);
    }};
};

/// `Content-Length: n` for the hidden request as a body.
std::string hidden_length() { return "Content-Length: " + std::to_string(hidden.size()) + "\r\n"; }

/// A chunked body whose one chunk is the hidden request.
std::string hidden_chunked() {
    char size[16];
    std::snprintf(size, sizeof size, "%zx", hidden.size());
    return std::string(size) + "\r\n" + hidden + "\r\n0\r\n\r\n";
}

/// Sends the visible request and, on the same connection, `GET /__alive` with
/// `Connection: close`; expects exactly two responses, the first `status` with `body`,
/// then the close. A smuggled request would answer in between.
void expect_one_legitimate_response(smuggle_target& t, std::string_view bytes, int status,
                                    std::string_view body) {
    raw_client c = t.server.client();
    c.send(bytes);
    c.send(get_request(alive_path, "Connection: close\r\n"));
    const response first = c.read_response();
    INFO("request: " << bytes);
    INFO("first: " << describe(first));
    CHECK(first.status == status);
    CHECK(first.body == body);
    const response second = c.read_response();
    INFO("second: " << describe(second));
    CHECK(second.status == 200);
    CHECK(second.body == "alive");
    CHECK(c.closed_by_peer());
    CHECK(c.buffered().empty());
    CHECK(t.smuggled.load() == 0);
}

}  // namespace

TEST_CASE("an ambiguously framed request is refused and its hidden request never runs",
          "[wire][hardening][smuggling]") {
    const wire_case c = GENERATE(values<wire_case>({
        {"CL.TE: Content-Length then chunked",
         "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 6\r\nTransfer-Encoding: "
         "chunked\r\n\r\n0\r\n\r\n" +
             hidden,
         400},
        {"TE.CL: chunked then Content-Length",
         "POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nContent-Length: "
         "3\r\n\r\n1\r\nA\r\n0\r\n\r\n" +
             hidden,
         400},
        {"TE.TE: chunked plus Transfer-encoding: x",
         "POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nTransfer-encoding: "
         "x\r\n\r\n0\r\n\r\n" +
             hidden,
         400},
        {"TE.TE: chunked plus a VT-suffixed chunked",
         "POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: "
         "chunked\x0b\r\n\r\n0\r\n\r\n" +
             hidden,
         400},
        {"Content-Length plus an unknown coding",
         "POST /echo HTTP/1.1\r\nHost: x\r\n" + hidden_length() + "Transfer-Encoding: x\r\n\r\n" +
             hidden,
         400},
        {"Content-Length 0 then the hidden length",
         "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n" + hidden_length() + "\r\n" +
             hidden,
         400},
        {"Content-Length 5 then the hidden length",
         "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n" + hidden_length() + "\r\nhello" +
             hidden,
         400},
        {"space before the Content-Length colon",
         "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length : " + std::to_string(hidden.size()) +
             "\r\n\r\n" + hidden,
         400},
        {"space before the Transfer-Encoding colon",
         "POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding : chunked\r\n\r\n0\r\n\r\n" + hidden,
         400},
        {"CR then a request after the header block", "GET / HTTP/1.1\r\nHost: x\r\n\r\r" + hidden,
         400},
        {"bare LF header termination", "GET / HTTP/1.1\r\nHost: x\n\n" + hidden, 400},
        {"CRLF then a bare LF as the empty line",
         "GET / HTTP/1.1\r\nHost: x\r\nX: y\r\n\n" + hidden, 400},
        {"obs-fold (SP) hiding Transfer-Encoding",
         "POST /echo HTTP/1.1\r\nHost: x\r\nX-Foo: bar\r\n Transfer-Encoding: "
         "chunked\r\nContent-Length: 5\r\n\r\n0\r\n\r\n" +
             hidden,
         400},
        {"obs-fold (HTAB) hiding Transfer-Encoding",
         "POST /echo HTTP/1.1\r\nHost: x\r\nX-Foo: bar\r\n\tTransfer-Encoding: "
         "chunked\r\n\r\n0\r\n\r\n" +
             hidden,
         400},
        {"Transfer-Encoding in a trailer",
         "POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n"
         "Transfer-Encoding: chunked\r\n\r\n" +
             hidden,
         400},
        {"Content-Length in a trailer",
         "POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n" +
             hidden_length() + "\r\n" + hidden,
         400},
        {"gzip, chunked (not decoded)",
         "POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n" +
             hidden,
         501},
        {"chunked on HTTP/1.0",
         "POST /echo HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n" + hidden, 400},
    }));
    smuggle_target t;
    INFO("case: " << c.name);
    expect_rejected(t.server, c.bytes, c.status);
    CHECK(t.smuggled.load() == 0);
}

TEST_CASE("a request line inside a body is consumed as body, never run",
          "[wire][hardening][smuggling]") {
    smuggle_target t;
    SECTION("GET with a Content-Length body") {
        expect_one_legitimate_response(
            t, "GET / HTTP/1.1\r\nHost: x\r\n" + hidden_length() + "\r\n" + hidden, 200, "root");
    }
    SECTION("GET with a chunked body") {
        expect_one_legitimate_response(
            t, "GET / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n" + hidden_chunked(),
            200, "root");
    }
    SECTION("POST with a Content-Length body is echoed") {
        expect_one_legitimate_response(
            t, "POST /echo HTTP/1.1\r\nHost: x\r\n" + hidden_length() + "\r\n" + hidden, 200,
            hidden);
    }
    SECTION("POST with a chunked body is echoed") {
        expect_one_legitimate_response(
            t,
            "POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n" +
                hidden_chunked(),
            200, hidden);
    }
    SECTION("POST with leading-zero Content-Length") {
        expect_one_legitimate_response(t,
                                       "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 0" +
                                           std::to_string(hidden.size()) + "\r\n\r\n" + hidden,
                                       200, hidden);
    }
}

TEST_CASE("a Transfer_Encoding look-alike leaves the body bytes to fail as a request",
          "[wire][hardening][smuggling]") {
    // Without a real Transfer-Encoding the POST has an empty body; "0\r\n\r\n" is then read
    // as the next request line, which is malformed: 400 and the close, so the hidden request
    // after it is never reached.
    smuggle_target t;
    raw_client c = t.server.client();
    c.send("POST /echo HTTP/1.1\r\nHost: x\r\nTransfer_Encoding: chunked\r\n\r\n0\r\n\r\n" +
           hidden);
    const response first = c.read_response();
    INFO("first: " << describe(first));
    CHECK(first.status == 200);
    CHECK(first.body.empty());
    const response second = c.read_response();
    INFO("second: " << describe(second));
    CHECK(second.status == 400);
    check_closed_and_still_serving(c, second, t.server.port());
    CHECK(t.smuggled.load() == 0);
}
