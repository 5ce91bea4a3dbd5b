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

namespace wire_test_hardening_smuggling {

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

namespace {

/// A POST /echo on HTTP/1.`minor` with `fields` and `tail` after the header block.
std::string post_with(std::string_view fields, std::string_view tail, char minor = '1') {
    std::string out = "POST /echo HTTP/1.";
    out.push_back(minor);
    out += "\r\nHost: x\r\n";
    out += fields;
    out += "\r\n";
    out += tail;
    return out;
}

}  // namespace

TEST_CASE("a framing or singleton field that is empty, blank, comma-only or repeated is refused",
          "[wire][hardening][smuggling]") {
    // The sweep of docs/security.md: each form of a field tern interprets that a peer could
    // read differently. Where Content-Length is present the hidden request is its body;
    // without it the hidden request follows the header block.
    const std::string cl3 = "Content-Length: 3\r\n";
    const std::string body = "abc" + hidden;
    const wire_case c = GENERATE_COPY(values<wire_case>({
        {"TE empty, with CL", post_with("Transfer-Encoding: \r\n" + cl3, body), 400},
        {"TE with no value, with CL", post_with("Transfer-Encoding:\r\n" + cl3, body), 400},
        {"TE blank, with CL", post_with("Transfer-Encoding:    \r\n" + cl3, body), 400},
        {"TE comma, with CL", post_with("Transfer-Encoding: ,\r\n" + cl3, body), 400},
        {"TE commas and spaces, with CL", post_with("Transfer-Encoding:  , ,\r\n" + cl3, body),
         400},
        {"CL, then TE empty", post_with(cl3 + "Transfer-Encoding:\r\n", body), 400},
        {"TE empty, no CL", post_with("Transfer-Encoding:\r\n", hidden), 400},
        {"TE blank, no CL", post_with("Transfer-Encoding:   \r\n", hidden), 400},
        {"TE comma, no CL", post_with("Transfer-Encoding: ,\r\n", hidden), 400},
        {"TE commas and spaces, no CL", post_with("Transfer-Encoding: , ,\r\n", hidden), 400},
        {"TE empty, with CL, HTTP/1.0", post_with("Transfer-Encoding:\r\n" + cl3, body, '0'), 400},
        {"TE comma, with CL, HTTP/1.0", post_with("Transfer-Encoding: ,\r\n" + cl3, body, '0'),
         400},
        {"TE blank, no CL, HTTP/1.0", post_with("Transfer-Encoding:  \r\n", hidden, '0'), 400},
        {"TE chunked with a trailing comma",
         post_with("Transfer-Encoding: chunked,\r\n", "0\r\n\r\n" + hidden), 400},
        {"TE chunked after a leading comma",
         post_with("Transfer-Encoding: , chunked\r\n", "0\r\n\r\n" + hidden), 400},
        {"TE chunked, then an empty element",
         post_with("Transfer-Encoding: chunked, ,\r\n", "0\r\n\r\n" + hidden), 400},
        {"TE chunked, then an empty TE line",
         post_with("Transfer-Encoding: chunked\r\nTransfer-Encoding:\r\n", "0\r\n\r\n" + hidden),
         400},
        {"an empty TE line, then TE chunked",
         post_with("Transfer-Encoding:\r\nTransfer-Encoding: chunked\r\n", "0\r\n\r\n" + hidden),
         400},
        {"TE chunked on two lines",
         post_with("Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n",
                   "0\r\n\r\n" + hidden),
         400},
        {"CL blank", post_with("Content-Length:   \r\n", hidden), 400},
        {"CL comma", post_with("Content-Length: ,\r\n", hidden), 400},
        {"CL commas and spaces", post_with("Content-Length:  , ,\r\n", hidden), 400},
        {"CL with a trailing comma", post_with("Content-Length: 3,\r\n", body), 400},
        {"CL, then an empty CL line", post_with(cl3 + "Content-Length:\r\n", body), 400},
        {"an empty CL line, then CL", post_with("Content-Length:\r\n" + cl3, body), 400},
        {"Host comma", "GET / HTTP/1.1\r\nHost: ,\r\n\r\n" + hidden, 400},
        {"Host commas and spaces", "GET / HTTP/1.1\r\nHost:  , ,\r\n\r\n" + hidden, 400},
        {"Host as a list without spaces", "GET / HTTP/1.1\r\nHost: a,b\r\n\r\n" + hidden, 400},
        {"Host empty, twice", "GET / HTTP/1.1\r\nHost:\r\nHost:\r\n\r\n" + hidden, 400},
        {"Host empty, twice, HTTP/1.0", "GET / HTTP/1.0\r\nHost:\r\nHost:\r\n\r\n" + hidden, 400},
        {"Content-Type twice",
         post_with("Content-Type: text/plain\r\nContent-Type: "
                   "application/x-www-form-urlencoded\r\n" +
                       hidden_length(),
                   hidden),
         400},
        {"Content-Type twice, one empty",
         post_with("Content-Type:\r\nContent-Type: text/plain\r\n" + hidden_length(), hidden), 400},
        {"Expect 100-continue, then another expectation",
         post_with("Expect: 100-continue\r\nExpect: magic\r\n" + hidden_length(), hidden), 417},
        {"Expect with 100-continue and another member in one line",
         post_with("Expect: 100-continue, magic\r\n" + hidden_length(), hidden), 417},
    }));
    smuggle_target t;
    INFO("case: " << c.name);
    expect_rejected(t.server, c.bytes, c.status);
    CHECK(t.smuggled.load() == 0);
}

TEST_CASE("an empty, blank or comma-only field that does not frame the body is ignored",
          "[wire][hardening][smuggling]") {
    // A list with no members asks for nothing (RFC 9110 5.6.1.2): the request is served,
    // framed by its Content-Length, and the connection keeps its default persistence.
    const std::string field =
        GENERATE(as<std::string>{},  //
                 "Connection:", "Connection:   ", "Connection: ,", "Connection:  , ,",
                 "Connection: ,\r\nConnection: ,", "Expect:", "Expect:   ", "Expect: ,",
                 "Expect:  , ,", "Expect:\r\nExpect:", "Upgrade:", "Upgrade: ,",
                 "Connection: upgrade\r\nUpgrade:", "Connection: upgrade\r\nUpgrade:  , ,",
                 "TE:", "TE: ,", "TE:  , ,", "Cookie:", "Cookie: ;", "Cookie: ,",
                 "Cookie:\r\nCookie:", "Content-Type:", "Content-Type:   ", "Content-Type: ,");
    smuggle_target t;
    INFO("field: " << field);
    expect_one_legitimate_response(t, post_with(field + "\r\n" + hidden_length(), hidden), 200,
                                   hidden);
}

TEST_CASE("an empty or blank Host is served like any request", "[wire][hardening][smuggling]") {
    // RFC 9112 3.2: an empty Host is what a client sends when the target has no authority.
    const std::string host = GENERATE(as<std::string>{}, "Host:", "Host: ", "Host:     ");
    smuggle_target t;
    INFO("field: " << host);
    expect_one_legitimate_response(
        t, "POST /echo HTTP/1.1\r\n" + host + "\r\n" + hidden_length() + "\r\n" + hidden, 200,
        hidden);
}

TEST_CASE("Connection close wins over keep-alive, in either order, and nothing after it runs",
          "[wire][hardening][smuggling]") {
    const std::string fields =
        GENERATE(as<std::string>{}, "Connection: keep-alive\r\nConnection: close\r\n",
                 "Connection: close\r\nConnection: keep-alive\r\n",
                 "Connection: keep-alive, close\r\n", "Connection: , close, ,\r\n");
    smuggle_target t;
    INFO("fields: " << fields);
    raw_client c = t.server.client();
    c.send("GET / HTTP/1.1\r\nHost: x\r\n" + fields + "\r\n" + hidden);
    const response r = c.read_response();
    CHECK(r.status == 200);
    CHECK(r.body == "root");
    check_closed_and_still_serving(c, r, t.server.port());
    CHECK(t.smuggled.load() == 0);
}

TEST_CASE("an HTTP/1.0 request with an empty Connection list is answered and closed",
          "[wire][hardening][smuggling]") {
    smuggle_target t;
    raw_client c = t.server.client();
    c.send("GET / HTTP/1.0\r\nConnection: , ,\r\n\r\n" + hidden);
    const std::string got = c.read_all_until_close();
    CHECK(got.find("\r\n\r\nroot") != std::string::npos);
    CHECK(got.find("smuggled") == std::string::npos);
    CHECK(t.smuggled.load() == 0);
    check_still_serving(t.server.port());
}

}  // namespace wire_test_hardening_smuggling
