// What every response carries on the wire, and how the context's response setters show up
// in it: status line, Date, Content-Length, Content-Type, custom headers.

#include <catch2/catch.hpp>
#include <stdexcept>
#include <string>

#include "support/raw_client.hpp"
#include "support/test_server.hpp"

namespace wire_test_response_headers {

using namespace tern_test;

TEST_CASE("every response has an HTTP/1.1 status line, an IMF-fixdate Date and a Content-Length",
          "[wire][headers]") {
    test_server server([](tern::app& app) {
        app.get("/text", [](tern::context& ctx) { ctx.text("hello"); });
        app.get("/boom", [](tern::context&) { throw std::runtime_error("boom"); });
    });
    for (const char* target : {"/text", "/missing", "/boom"}) {
        const response r = fetch(server, get_request(target));
        INFO(target << " -> " << describe(r));
        check_common_headers(r);
        REQUIRE(r.header("Content-Length").has_value());
        CHECK(*r.header("Content-Length") == std::to_string(r.body.size()));
    }
}

TEST_CASE("a 200 text response has the status, the body and an exact Content-Length",
          "[wire][headers]") {
    test_server server(
        [](tern::app& app) { app.get("/", [](tern::context& ctx) { ctx.text("hello"); }); });
    const response r = fetch(server, get_request("/"));
    INFO(describe(r));
    CHECK(r.status == 200);
    CHECK(r.body == "hello");
    CHECK(r.header("Content-Length") == "5");
    check_common_headers(r);
}

TEST_CASE("a 204 response has no Content-Length, no Content-Type and no body bytes",
          "[wire][headers]") {
    test_server server([](tern::app& app) {
        app.get("/nothing", [](tern::context& ctx) { ctx.status(204); });
        app.get("/next", [](tern::context& ctx) { ctx.text("next"); });
    });
    raw_client c = server.client();
    // The second request proves no body bytes followed the 204's headers.
    c.send(get_request("/nothing") + get_request("/next"));
    const response r = c.read_response();
    INFO(describe(r));
    CHECK(r.status == 204);
    check_common_headers(r);
    CHECK_FALSE(r.header("Content-Length").has_value());
    CHECK_FALSE(r.header("Content-Type").has_value());
    const response next = c.read_response();
    CHECK(next.status == 200);
    CHECK(next.body == "next");
}

TEST_CASE("a response without a body has Content-Length 0 and no Content-Type", "[wire][headers]") {
    test_server server([](tern::app& app) { app.get("/empty", [](tern::context&) {}); });
    const response r = fetch(server, get_request("/empty"));
    INFO(describe(r));
    CHECK(r.status == 200);
    CHECK(r.header("Content-Length") == "0");
    CHECK(r.body.empty());
    CHECK_FALSE(r.header("Content-Type").has_value());
}

TEST_CASE("text() sends text/plain, charset=utf-8", "[wire][headers]") {
    test_server server(
        [](tern::app& app) { app.get("/", [](tern::context& ctx) { ctx.text("plain"); }); });
    const response r = fetch(server, get_request("/"));
    CHECK(r.header("Content-Type") == "text/plain; charset=utf-8");
    CHECK(r.body == "plain");
}

TEST_CASE("html() sends text/html, charset=utf-8", "[wire][headers]") {
    test_server server(
        [](tern::app& app) { app.get("/", [](tern::context& ctx) { ctx.html("<p>hi</p>"); }); });
    const response r = fetch(server, get_request("/"));
    CHECK(r.header("Content-Type") == "text/html; charset=utf-8");
    CHECK(r.body == "<p>hi</p>");
}

TEST_CASE("result() without a content type sends the body and no Content-Type", "[wire][headers]") {
    test_server server(
        [](tern::app& app) { app.get("/", [](tern::context& ctx) { ctx.result("raw"); }); });
    const response r = fetch(server, get_request("/"));
    INFO(describe(r));
    CHECK(r.status == 200);
    CHECK(r.body == "raw");
    CHECK(r.header("Content-Length") == "3");
    CHECK_FALSE(r.header("Content-Type").has_value());
}

TEST_CASE("status, content_type and result chain into a 201 with that type", "[wire][headers]") {
    test_server server([](tern::app& app) {
        app.post("/", [](tern::context& ctx) {
            ctx.status(201).content_type("text/plain").result("Created!");
        });
    });
    raw_client c = server.client();
    c.send(body_request("POST", "/", ""));
    const response r = c.read_response();
    INFO(describe(r));
    CHECK(r.status == 201);
    CHECK(r.header("Content-Type") == "text/plain");
    CHECK(r.body == "Created!");
    check_common_headers(r);
}

TEST_CASE("result() keeps a content type set before it", "[wire][headers]") {
    test_server server([](tern::app& app) {
        app.get("/", [](tern::context& ctx) {
            ctx.content_type("application/octet-stream");
            ctx.result("bytes");
        });
    });
    const response r = fetch(server, get_request("/"));
    CHECK(r.header("Content-Type") == "application/octet-stream");
    CHECK(r.body == "bytes");
}

TEST_CASE("results are set, not sent: the last body setter wins with its content type",
          "[wire][headers]") {
    test_server server([](tern::app& app) {
        app.get("/", [](tern::context& ctx) {
            ctx.text("a");
            ctx.html("b");
        });
    });
    const response r = fetch(server, get_request("/"));
    INFO(describe(r));
    CHECK(r.body == "b");
    CHECK(r.header("Content-Type") == "text/html; charset=utf-8");
    CHECK(r.header("Content-Length") == "1");
}

TEST_CASE("a header set by the handler appears in the response", "[wire][headers]") {
    test_server server([](tern::app& app) {
        app.get("/", [](tern::context& ctx) {
            ctx.header("X-A", "1");
            ctx.text("ok");
        });
    });
    const response r = fetch(server, get_request("/"));
    INFO(describe(r));
    CHECK(r.header("X-A") == "1");
    CHECK(r.header_count("X-A") == 1);
}

TEST_CASE("setting a header twice keeps only the last value", "[wire][headers]") {
    test_server server([](tern::app& app) {
        app.get("/", [](tern::context& ctx) {
            ctx.header("X-A", "1");
            ctx.header("x-a", "2");  // names are case-insensitive
            ctx.text("ok");
        });
    });
    const response r = fetch(server, get_request("/"));
    INFO(describe(r));
    CHECK(r.header_count("X-A") == 1);
    CHECK(r.header("X-A") == "2");
}

TEST_CASE("headers managed by tern or breaking the header block are refused by header()",
          "[wire][headers]") {
    // Each probe reports whether ctx.header() threw std::invalid_argument; the assertions run
    // on the test thread (Catch2 assertions are not thread-safe).
    test_server server([](tern::app& app) {
        app.get("/probe/{which}", [](tern::context& ctx) {
            const std::string which(ctx.path_param("which"));
            try {
                if (which == "content-length") ctx.header("Content-Length", "5");
                if (which == "transfer-encoding") ctx.header("Transfer-Encoding", "chunked");
                if (which == "date") ctx.header("Date", "Sun, 06 Nov 1994 08:49:37 GMT");
                if (which == "crlf") ctx.header("X-Evil", "a\r\nX-Injected: 1");
                if (which == "bad-name") ctx.header("Bad Name", "v");
                // RFC 9110 5.5: no control character but HTAB in a field value (a proxy
                // such as nginx answers 502 for a response that has one).
                if (which == "vt") ctx.header("X-Evil", "a\x0b b");
                if (which == "soh") ctx.header("X-Evil", "a\x01");
                if (which == "del") ctx.header("X-Evil", "a\x7f");
                if (which == "esc-type") ctx.content_type("text/plain\x1b");
                if (which == "vt-location") ctx.redirect("/next\x0b");
                ctx.text("accepted");
            } catch (const std::invalid_argument&) {
                ctx.text("refused");
            }
        });
    });
    for (const char* which : {"content-length", "transfer-encoding", "date", "crlf", "bad-name",
                              "vt", "soh", "del", "esc-type", "vt-location"}) {
        const response r = fetch(server, get_request(std::string("/probe/") + which));
        INFO(which << " -> " << describe(r));
        CHECK(r.status == 200);
        CHECK(r.body == "refused");
        CHECK_FALSE(r.header("X-Injected").has_value());
        check_common_headers(r);
    }
}

TEST_CASE("a header value with a tab is accepted", "[wire][headers]") {
    test_server server([](tern::app& app) {
        app.get("/", [](tern::context& ctx) { ctx.header("X-Tabbed", "a\tb").text("ok"); });
    });
    const response r = fetch(server, get_request("/"));
    INFO(describe(r));
    CHECK(r.status == 200);
    CHECK(r.header("X-Tabbed") == "a\tb");
}

TEST_CASE("status() refuses codes outside 100..599", "[wire][headers]") {
    test_server server([](tern::app& app) {
        app.get("/", [](tern::context& ctx) {
            std::string out;
            for (int code : {99, 600, 1000, -1}) {
                try {
                    ctx.status(code);
                    out += "accepted ";
                } catch (const std::invalid_argument&) {
                    out += "refused ";
                }
            }
            ctx.status(200).text(out);
        });
    });
    const response r = fetch(server, get_request("/"));
    CHECK(r.status == 200);
    CHECK(r.body == "refused refused refused refused ");
}

TEST_CASE("status() refuses a 1xx code: a final response cannot be informational",
          "[wire][headers]") {
    test_server server([](tern::app& app) {
        app.get("/probe", [](tern::context& ctx) {
            std::string out;
            for (int code : {100, 101, 103, 199}) {
                try {
                    ctx.status(code);
                    out += "accepted ";
                } catch (const std::invalid_argument&) {
                    out += "refused ";
                }
            }
            ctx.status(200).text(out);
        });
    });
    const response r = fetch(server, get_request("/probe"));
    CHECK(r.status == 200);
    CHECK(r.body == "refused refused refused refused ");
}

TEST_CASE("a handler that sets 101 or 100 gets a 500 and the connection stays in step",
          "[wire][headers]") {
    test_server server([](tern::app& app) {
        app.get("/switch", [](tern::context& ctx) { ctx.status(101); });
        app.get("/continue", [](tern::context& ctx) { ctx.status(100).text("body"); });
        app.get("/next", [](tern::context& ctx) { ctx.text("next"); });
    });
    raw_client c = server.client();
    // Pipelined: were a 1xx sent as the final answer, the client would read it as interim
    // and take the next response for this request, one step behind from then on.
    c.send(get_request("/switch") + get_request("/continue") + get_request("/next"));
    for (const char* target : {"/switch", "/continue"}) {
        const response r = c.read_response();
        INFO(target << " -> " << describe(r));
        CHECK(r.status == 500);
        check_common_headers(r);
    }
    const response next = c.read_response();
    INFO(describe(next));
    CHECK(next.status == 200);
    CHECK(next.body == "next");
}

}  // namespace wire_test_response_headers
