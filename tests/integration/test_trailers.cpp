// Trailer fields over HTTP/1.1, on real sockets (RFC 9112 7.1.2, RFC 9110 6.5): a chunked
// request's trailers reach the handler (ctx.trailer, ctx.trailers); a response's trailers
// (ctx.trailer, response_stream::trailer) go out in the last chunk, a whole body then chunked
// instead of sized; HTTP/1.0 and HEAD get none; fields a trailer must not carry are refused;
// trailers over the head limits get 431 and the close, and the server goes on serving.

#include "support/test_server.hpp"

#include <catch2/catch.hpp>

#include <cstdio>
#include <stdexcept>
#include <string>
#include <thread>

namespace wire_test_trailers {

using namespace tern_test;

namespace {

/// The routes of these tests. /echo answers the request's trailers, one "name=value;" each,
/// after its body; /whole sets two trailers on a body in memory; /empty on an empty body;
/// /stream streams three pieces from another thread, with one trailer set on the context and
/// one on the stream (and one set on both: the stream's wins).
void routes(tern::app& app) {
    app.post("/echo", [](tern::context& ctx) {
        std::string out(ctx.body());
        out += '|';
        for (const auto& t : ctx.trailers()) {
            out += std::string(t.name) + "=" + std::string(t.value) + ";";
        }
        out += ctx.trailer("X-CHECKSUM").value_or("none");
        ctx.text(out);
    });
    app.get("/whole", [](tern::context& ctx) {
        ctx.trailer("X-Checksum", "first").trailer("x-checksum", "42").trailer("X-Done", "yes");
        ctx.text("whole body");
    });
    app.get("/empty", [](tern::context& ctx) {
        ctx.status(200).trailer("grpc-status", "5").trailer("grpc-message", "not found");
    });
    app.get("/stream", [](tern::context& ctx) {
        ctx.trailer("x-from-context", "1").trailer("x-both", "context");
        auto out = ctx.stream();
        std::thread([out] {
            for (int i = 0; i < 3; ++i) out.write("piece" + std::to_string(i) + ";");
            out.trailer("X-Both", "stream");
            out.trailer("x-count", "3");
            out.end();
            out.trailer("x-late", "ignored");  // after end(): not sent
        }).detach();
    });
}

/// A chunked POST to /echo: one chunk of `data`, then `trailers` (each line ending in CRLF).
std::string chunked_echo(std::string_view data, std::string_view trailers) {
    std::string r = "POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n";
    if (!data.empty()) {
        char size[16];
        std::snprintf(size, sizeof size, "%zx\r\n", data.size());
        r += size;
        r += data;
        r += "\r\n";
    }
    return r + "0\r\n" + std::string(trailers) + "\r\n";
}

/// Sends `request` with `Connection: close` added and returns every byte until the close.
std::string raw_answer(const test_server& server, std::string request) {
    const auto at = request.find("\r\n") + 2;
    request.insert(at, "Connection: close\r\n");
    raw_client c = server.client();
    c.send(request);
    return c.read_all_until_close();
}

}  // namespace

TEST_CASE("a chunked request's trailer fields reach the handler, in order, by name in any case",
          "[wire][trailers]") {
    test_server server(routes);
    raw_client c = server.client();
    c.send(chunked_echo("hello", "X-Checksum:  abc \r\nX-Other: 2\r\n"));
    const response r = c.read_response();
    INFO(describe(r));
    CHECK(r.status == 200);
    CHECK(r.body == "hello|X-Checksum=abc;X-Other=2;abc");
    // The connection stays usable, and the next request has no trailers of its own.
    c.send(chunked_echo("again", ""));
    const response next = c.read_response();
    INFO(describe(next));
    CHECK(next.body == "again|none");
    c.send(body_request("POST", "/echo", "sized"));
    CHECK(c.read_response().body == "sized|none");
}

TEST_CASE("trailer fields arrive whole when they come a byte at a time", "[wire][trailers]") {
    test_server server(routes);
    raw_client c = server.client();
    const std::string bytes = chunked_echo("abc", "X-Checksum: 99\r\n");
    for (const char ch : bytes) c.send(std::string_view(&ch, 1));
    const response r = c.read_response();
    INFO(describe(r));
    CHECK(r.body == "abc|X-Checksum=99;99");
}

TEST_CASE("a body in memory with trailers goes out chunked, the trailers in its last chunk",
          "[wire][trailers]") {
    test_server server(routes);
    const std::string raw = raw_answer(server, get_request("/whole"));
    INFO(raw);
    CHECK(raw.rfind("HTTP/1.1 200 OK\r\n", 0) == 0);
    CHECK(raw.find("Transfer-Encoding: chunked\r\n") != std::string::npos);
    CHECK(raw.find("Content-Length") == std::string::npos);
    // The replaced value is gone; names are sent lower-case.
    const std::string tail =
        "\r\n\r\n0000000a\r\nwhole body\r\n0\r\nx-checksum: 42\r\nx-done: yes\r\n\r\n";
    CHECK(raw.size() >= tail.size());
    CHECK(raw.substr(raw.size() - tail.size()) == tail);

    // On a kept-alive connection the client reads the body, then the next answer.
    raw_client c = server.client();
    c.send(get_request("/whole") + get_request(alive_path));
    const response r = c.read_response();
    INFO(describe(r));
    CHECK(r.body == "whole body");
    CHECK(c.read_response().body == "alive");
}

TEST_CASE("an empty body with trailers is the last chunk carrying them", "[wire][trailers]") {
    test_server server(routes);
    const std::string raw = raw_answer(server, get_request("/empty"));
    INFO(raw);
    const std::string tail = "\r\n\r\n0\r\ngrpc-status: 5\r\ngrpc-message: not found\r\n\r\n";
    CHECK(raw.find("Transfer-Encoding: chunked\r\n") != std::string::npos);
    REQUIRE(raw.size() >= tail.size());
    CHECK(raw.substr(raw.size() - tail.size()) == tail);
}

TEST_CASE("a streamed body ends with the context's and the stream's trailers in its last chunk",
          "[wire][trailers]") {
    test_server server(routes);
    const std::string raw = raw_answer(server, get_request("/stream"));
    INFO(raw);
    const auto last = raw.find("\r\n0\r\n");
    REQUIRE(last != std::string::npos);
    const std::string trailers = raw.substr(last + 5);
    CHECK(trailers == "x-from-context: 1\r\nx-both: stream\r\nx-count: 3\r\n\r\n");
    CHECK(raw.find("piece2;") != std::string::npos);
}

TEST_CASE("HTTP/1.0 and HEAD get no trailers: the body keeps its Content-Length",
          "[wire][trailers]") {
    test_server server(routes);
    SECTION("HTTP/1.0") {
        raw_client c = server.client();
        c.send("GET /whole HTTP/1.0\r\n\r\n");
        const std::string raw = c.read_all_until_close();
        INFO(raw);
        CHECK(raw.find("Content-Length: 10\r\n") != std::string::npos);
        CHECK(raw.find("chunked") == std::string::npos);
        CHECK(raw.find("x-checksum") == std::string::npos);
        CHECK(raw.substr(raw.size() - 10) == "whole body");
    }
    SECTION("HTTP/1.0, streamed: the close ends the body") {
        raw_client c = server.client();
        c.send("GET /stream HTTP/1.0\r\n\r\n");
        const std::string raw = c.read_all_until_close();
        INFO(raw);
        CHECK(raw.find("x-count") == std::string::npos);
        CHECK(raw.find("piece0;piece1;piece2;") != std::string::npos);
    }
    SECTION("HEAD") {
        raw_client c = server.client();
        c.send("HEAD /whole HTTP/1.1\r\nHost: x\r\n\r\n" + get_request(alive_path));
        const response r = c.read_response(true);
        INFO(describe(r));
        CHECK(r.header("Content-Length") == "10");
        CHECK_FALSE(r.header("Transfer-Encoding").has_value());
        CHECK(c.read_response().body == "alive");
    }
}

TEST_CASE("fields a trailer must not carry are refused with std::invalid_argument",
          "[wire][trailers]") {
    test_server server([](tern::app& app) {
        app.get("/refused", [](tern::context& ctx) {
            std::string refused;
            for (const char* name :
                 {"Content-Length", "transfer-encoding", "Host", "Authorization", "Set-Cookie",
                  "Content-Type", "content-encoding", "Cache-Control", "Connection", "TE",
                  "Trailer", "bad name", ":status", ""}) {
                try {
                    ctx.trailer(name, "x");
                } catch (const std::invalid_argument&) {
                    refused += "r";
                }
            }
            try {
                ctx.trailer("x-ok", "line\r\nbreak");
            } catch (const std::invalid_argument&) {
                refused += "v";
            }
            auto out = ctx.stream();
            try {
                out.trailer("content-md5", "x");
            } catch (const std::invalid_argument&) {
                refused += "s";
            }
            out.write(refused);
            out.end();
        });
    });
    raw_client c = server.client();
    c.send(get_request("/refused"));
    const response r = c.read_response();
    INFO(describe(r));
    CHECK(r.body == std::string(14, 'r') + "vs");
}

TEST_CASE("a compressed body keeps its trailers, streamed or whole", "[wire][trailers]") {
    test_server server([](tern::app& app) {
        app.compression();
        app.get("/whole",
                [](tern::context& ctx) { ctx.trailer("x-sum", "w").text(std::string(4000, 'a')); });
        app.get("/stream", [](tern::context& ctx) {
            ctx.content_type("text/plain");
            auto out = ctx.stream();
            out.write(std::string(4000, 'b'));
            out.trailer("x-sum", "s");
            out.end();
        });
    });
    for (const char* path : {"/whole", "/stream"}) {
        INFO(path);
        const std::string raw = raw_answer(server, get_request(path, "Accept-Encoding: gzip\r\n"));
        CHECK(raw.find("Content-Encoding: gzip\r\n") != std::string::npos);
        const std::string tail = std::string("\r\n0\r\nx-sum: ") + path[1] + "\r\n\r\n";
        REQUIRE(raw.size() > tail.size());
        CHECK(raw.substr(raw.size() - tail.size()) == tail);
    }
}

TEST_CASE("request trailers over max_header_size or max_header_count get 431 and the close",
          "[wire][trailers][limits]") {
    tern::config cfg = test_config();
    cfg.limits.max_header_size = 256;
    cfg.limits.max_header_count = 6;
    test_server server(routes, cfg);
    SECTION("one trailer over max_header_size") {
        expect_rejected(server, chunked_echo("abc", "X-Big: " + std::string(300, 'b') + "\r\n"),
                        431);
    }
    SECTION("trailers that take the field count past max_header_count (with the head's)") {
        // The head has Host and Transfer-Encoding: five trailers make seven fields.
        expect_rejected(server, chunked_echo("abc", "A: 1\r\nB: 2\r\nC: 3\r\nD: 4\r\nE: 5\r\n"),
                        431);
    }
    SECTION("within the limits: taken") {
        raw_client c = server.client();
        c.send(chunked_echo("abc", "A: 1\r\nB: " + std::string(200, 'b') + "\r\n"));
        const response r = c.read_response();
        INFO(describe(r));
        CHECK(r.status == 200);
    }
}

}  // namespace wire_test_trailers
