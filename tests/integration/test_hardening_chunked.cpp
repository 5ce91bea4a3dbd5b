// Hardening matrix, chunked bodies (RFC 9112 §7.1): a bad chunk size, chunk line ending or
// trailer gets 400 with `Connection: close`, the server closes, and a fresh client is still
// served. Valid forms (extensions, leading zeros, trailers, several chunks) are de-chunked and
// echoed. An incomplete body is never served; one over max_body_size gets 413.

#include <catch2/catch.hpp>
#include <string>
#include <string_view>

#include "support/raw_client.hpp"
#include "support/test_server.hpp"

namespace wire_test_hardening_chunked {

using namespace tern_test;
using namespace std::string_literals;

namespace {

/// One raw-byte case: a name for the report, the chunked body, the expected status.
struct chunk_case {
    std::string_view name;
    std::string body;
    int status;
};

/// A chunked body that must be accepted, and what the handler sees after de-chunking.
struct decoded_case {
    std::string_view name;
    std::string body;
    std::string decoded;
};

void routes(tern::app& app) {
    app.get("/", [](tern::context& ctx) { ctx.text("root"); });
    app.post("/echo", [](tern::context& ctx) { ctx.result(std::string(ctx.body())); });
}

/// A chunked POST to /echo whose body (chunks, last chunk, trailers) is `body`.
std::string chunked_post(std::string_view body) {
    return "POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n" +
           std::string(body);
}

/// Settings with a 16-byte body limit, for the 413 cases.
tern::config small_body() {
    tern::config cfg = test_config();
    cfg.limits.max_body_size = 16;
    return cfg;
}

/// Sends `chunked_post(c.body)`: the status, the close, a server still serving.
void expect_chunked_case(const test_server& server, const chunk_case& c) {
    INFO("case: " << c.name);
    expect_rejected(server, chunked_post(c.body), c.status);
}

/// Sends `chunked_post(c.body)` and expects 200 echoing `c.decoded` on a usable connection.
void expect_decoded(const test_server& server, const decoded_case& c) {
    INFO("case: " << c.name);
    raw_client client = server.client();
    client.send(chunked_post(c.body));
    const response r = client.read_response();
    INFO("response: " << describe(r));
    CHECK(r.status == 200);
    CHECK(r.body == c.decoded);
    check_common_headers(r);
    client.send(get_request(alive_path));
    const response again = client.read_response();
    INFO("follow-up: " << describe(again));
    CHECK(again.status == 200);
    CHECK(again.body == "alive");
}

/// Sends an incomplete chunked request and half-closes: nothing is served (no 2xx), the
/// server closes, and a fresh client is still served.
void expect_not_served(const test_server& server, std::string_view body) {
    INFO("body: " << body);
    raw_client c = server.client();
    c.send(chunked_post(body));
    c.shutdown_write();
    const std::string rest = c.read_all_until_close();
    INFO("received: " << rest);
    CHECK(rest.rfind("HTTP/1.1 2", 0) == std::string::npos);
    CHECK(rest.find("hello") == std::string::npos);
    check_still_serving(server.port());
}

}  // namespace

TEST_CASE("a malformed chunk gets 400 and the connection closes", "[wire][hardening][chunked]") {
    const chunk_case c = GENERATE(values<chunk_case>({
        {"size zz", "zz\r\nhello\r\n0\r\n\r\n", 400},
        {"size -1", "-1\r\nhello\r\n0\r\n\r\n", 400},
        {"size 0x5", "0x5\r\nhello\r\n0\r\n\r\n", 400},
        {"size of 17 hex digits (overflows 64 bits)", "10000000000000000\r\nhello\r\n0\r\n\r\n",
         400},
        {"size of 18 f's", "ffffffffffffffffff\r\nhello\r\n0\r\n\r\n", 400},
        {"space before the size", " 5\r\nhello\r\n0\r\n\r\n", 400},
        {"space after the size", "5 \r\nhello\r\n0\r\n\r\n", 400},
        {"empty size line", "\r\nhello\r\n0\r\n\r\n", 400},
        {"LF only after the size", "5\nhello\r\n0\r\n\r\n", 400},
        {"CR only after the size", "5\rhello\r\n0\r\n\r\n", 400},
        {"LF only after the data", "5\r\nhello\n0\r\n\r\n", 400},
        {"no CRLF after the data", "5\r\nhelloX0\r\n\r\n", 400},
        {"next size right after the data", "5\r\nhello0\r\n\r\n", 400},
        {"data longer than the size", "3\r\nhello\r\n0\r\n\r\n", 400},
        {"empty line instead of the last chunk", "5\r\nhello\r\n\r\n", 400},
        {"LF-only last chunk", "5\r\nhello\r\n0\n\n", 400},
        {"LF only as the final empty line", "5\r\nhello\r\n0\r\n\n", 400},
        {"CR CR LF as the final empty line", "5\r\nhello\r\n0\r\n\r\r\n", 400},
        {"empty extension after ';'", "5;\r\nhello\r\n0\r\n\r\n", 400},
        {"NUL in an extension", "5;a\0\r\nhello\r\n0\r\n\r\n"s, 400},
        {"bare CR in a trailer", "5\r\nhello\r\n0\r\nX-T: a\rb\r\n\r\n", 400},
        {"obs-fold in a trailer", "5\r\nhello\r\n0\r\nX-T: a\r\n b\r\n\r\n", 400},
        {"space before a trailer's colon", "5\r\nhello\r\n0\r\nX-T : a\r\n\r\n", 400},
        {"trailer line without a colon", "5\r\nhello\r\n0\r\nNoColon\r\n\r\n", 400},
        {"bare LF ending a trailer", "5\r\nhello\r\n0\r\nX-T: 1\n\r\n", 400},
    }));
    test_server server(routes);
    expect_chunked_case(server, c);
}

TEST_CASE("valid chunked forms are de-chunked and the connection stays usable",
          "[wire][hardening][chunked]") {
    const decoded_case c = GENERATE(values<decoded_case>({
        {"one chunk", "5\r\nhello\r\n0\r\n\r\n", "hello"},
        {"several chunks", "2\r\nhe\r\n3\r\nllo\r\n0\r\n\r\n", "hello"},
        {"only the last chunk", "0\r\n\r\n", ""},
        {"uppercase hex size", "A\r\n0123456789\r\n0\r\n\r\n", "0123456789"},
        {"lowercase hex size", "a\r\n0123456789\r\n0\r\n\r\n", "0123456789"},
        {"leading zeros in the size", "005\r\nhello\r\n000\r\n\r\n", "hello"},
        {"extension with a value", "5;ext=1\r\nhello\r\n0\r\n\r\n", "hello"},
        {"extension without a value", "5;ext\r\nhello\r\n0\r\n\r\n", "hello"},
        {"quoted extension value", "5;a=\"q v\"\r\nhello\r\n0;z=1\r\n\r\n", "hello"},
        {"two extensions", "5;a=1;b=2\r\nhello\r\n0\r\n\r\n", "hello"},
        {"one trailer", "5\r\nhello\r\n0\r\nX-T: 1\r\n\r\n", "hello"},
        {"two trailers", "5\r\nhello\r\n0\r\nX-T: 1\r\nX-U: 2\r\n\r\n", "hello"},
        {"CRLF inside the data", "4\r\n\r\n\r\n\r\n0\r\n\r\n", "\r\n\r\n"},
    }));
    test_server server(routes);
    expect_decoded(server, c);
}

TEST_CASE("an incomplete chunked body followed by the client's close is never served",
          "[wire][hardening][chunked]") {
    test_server server(routes);
    SECTION("no last chunk") { expect_not_served(server, "5\r\nhello\r\n"); }
    SECTION("chunk data cut short") { expect_not_served(server, "5\r\nhel"); }
    SECTION("last chunk without the final empty line") {
        expect_not_served(server, "5\r\nhello\r\n0\r\n");
    }
    SECTION("inside a trailer") { expect_not_served(server, "5\r\nhello\r\n0\r\nX-T: 1"); }
}

TEST_CASE("a chunked body over max_body_size gets 413 and the connection closes",
          "[wire][hardening][chunked][limits]") {
    test_server server(routes, small_body());
    SECTION("exactly the limit in one chunk is served") {
        expect_decoded(server, {"16 bytes", "10\r\n" + std::string(16, 'b') + "\r\n0\r\n\r\n",
                                std::string(16, 'b')});
    }
    SECTION("exactly the limit in three chunks is served") {
        expect_decoded(server,
                       {"8+7+1 bytes", "8\r\nbbbbbbbb\r\n7\r\nbbbbbbb\r\n1\r\nb\r\n0\r\n\r\n",
                        std::string(16, 'b')});
    }
    SECTION("one over in one chunk") {
        expect_chunked_case(server,
                            {"17 bytes", "11\r\n" + std::string(17, 'b') + "\r\n0\r\n\r\n", 413});
    }
    SECTION("one over across chunks") {
        expect_chunked_case(
            server, {"8+8+1 bytes", "8\r\nbbbbbbbb\r\n8\r\nbbbbbbbb\r\n1\r\nb\r\n0\r\n\r\n", 413});
    }
    SECTION("a large chunk is refused as soon as the count passes, before it ends") {
        expect_chunked_case(server,
                            {"ffff announced, 25 sent", "ffff\r\n" + std::string(25, 'b'), 413});
    }
}

// RFC 9112 7.1.1 allows BWS before ';' in a chunk extension, but llhttp's strict mode
// refuses it and tern keeps every lenient flag off: a documented strictness
// (docs/limits.md, "Where tern is stricter than the RFC grammar").
TEST_CASE("whitespace before a chunk extension is refused with 400 (documented strictness)",
          "[wire][hardening][chunked]") {
    test_server server(routes);
    expect_chunked_case(server, {"BWS before ';'", "5 ;ext=1\r\nhello\r\n0\r\n\r\n", 400});
}

}  // namespace wire_test_hardening_chunked
