// What a handler reads from tern::context for a request that came over the wire. Handlers
// only gather values into the response body; the assertions run on the test thread, since
// Catch2 assertions are not thread-safe.

#include <catch2/catch.hpp>
#include <stdexcept>
#include <string>

#include "support/raw_client.hpp"
#include "support/test_server.hpp"

namespace wire_test_context {

using namespace tern_test;

TEST_CASE("method() is the request method as sent", "[wire][context]") {
    test_server server([](tern::app& app) {
        const tern::handler echo_method = [](tern::context& ctx) {
            ctx.text(std::string(ctx.method()));
        };
        app.get("/m", echo_method);
        app.post("/m", echo_method);
        app.del("/m", echo_method);
        app.add("PROPFIND", "/m", echo_method);
    });
    CHECK(fetch(server, get_request("/m")).body == "GET");
    CHECK(fetch(server, body_request("POST", "/m", "x")).body == "POST");
    CHECK(fetch(server, body_request("DELETE", "/m", "")).body == "DELETE");
    CHECK(fetch(server, body_request("PROPFIND", "/m", "")).body == "PROPFIND");
}

TEST_CASE("path() is the raw path without the query string", "[wire][context]") {
    test_server server([](tern::app& app) {
        app.get("/files/<rest>", [](tern::context& ctx) { ctx.text(std::string(ctx.path())); });
    });
    CHECK(fetch(server, get_request("/files/a%20b")).body == "/files/a%20b");
    CHECK(fetch(server, get_request("/files/x/y?q=1")).body == "/files/x/y");
}

TEST_CASE("query_string() is the raw text after '?', empty when there is none", "[wire][context]") {
    test_server server([](tern::app& app) {
        app.get("/q",
                [](tern::context& ctx) { ctx.text("[" + std::string(ctx.query_string()) + "]"); });
    });
    CHECK(fetch(server, get_request("/q?q=a+b&q=c%21")).body == "[q=a+b&q=c%21]");
    CHECK(fetch(server, get_request("/q")).body == "[]");
    CHECK(fetch(server, get_request("/q?")).body == "[]");
}

TEST_CASE("header() finds a field case-insensitively, trimmed, and the first of repeats",
          "[wire][context]") {
    test_server server([](tern::app& app) {
        app.get("/h", [](tern::context& ctx) {
            const auto value = [&](std::string_view name) {
                const auto v = ctx.header(name);
                return v ? "<" + std::string(*v) + ">" : std::string("none");
            };
            ctx.text(value("x-custom-thing") + value("X-CUSTOM-THING") + value("X-Padded") +
                     value("X-Twice") + value("X-Absent"));
        });
    });
    const response r = fetch(server, get_request("/h",
                                                 "X-Custom-Thing: v1\r\n"
                                                 "X-Padded: \t  padded value \t\r\n"
                                                 "X-Twice: first\r\n"
                                                 "X-Twice: second\r\n"));
    INFO(describe(r));
    CHECK(r.body == "<v1><v1><padded value><first>none");
}

TEST_CASE("headers() lists every field in the order received", "[wire][context]") {
    test_server server([](tern::app& app) {
        app.get("/h", [](tern::context& ctx) {
            std::string out;
            for (const tern::header_field& h : ctx.headers()) {
                out += std::string(h.name) + "=" + std::string(h.value) + ";";
            }
            ctx.text(out);
        });
    });
    const std::string request =
        "GET /h HTTP/1.1\r\n"
        "Host: localhost\r\n"
        "Zeta: 1\r\n"
        "alpha: 2\r\n"
        "Middle-Name: 3\r\n"
        "Zeta: 4\r\n"
        "\r\n";
    const response r = fetch(server, request);
    INFO(describe(r));
    CHECK(r.body == "Host=localhost;Zeta=1;alpha=2;Middle-Name=3;Zeta=4;");
}

TEST_CASE("ip() is the peer address", "[wire][context]") {
    test_server server(
        [](tern::app& app) { app.get("/ip", [](tern::context& ctx) { ctx.text(ctx.ip()); }); });
    CHECK(fetch(server, get_request("/ip")).body == "127.0.0.1");
}

TEST_CASE("scheme() is http without TLS", "[wire][context]") {
    test_server server([](tern::app& app) {
        app.get("/s", [](tern::context& ctx) { ctx.text(std::string(ctx.scheme())); });
    });
    CHECK(fetch(server, get_request("/s")).body == "http");
}

TEST_CASE("body() is empty for a request without a body", "[wire][context]") {
    test_server server([](tern::app& app) {
        app.get("/b",
                [](tern::context& ctx) { ctx.text(ctx.body().empty() ? "empty" : "not empty"); });
    });
    CHECK(fetch(server, get_request("/b")).body == "empty");
}

TEST_CASE("path_param() of a name the route does not declare throws std::out_of_range",
          "[wire][context]") {
    test_server server([](tern::app& app) {
        app.get("/users/{id}", [](tern::context& ctx) {
            try {
                ctx.path_param("name");
                ctx.text("no throw");
            } catch (const std::out_of_range&) {
                ctx.text("out_of_range");
            }
        });
        app.get("/static", [](tern::context& ctx) {
            try {
                ctx.path_param("id");
                ctx.text("no throw");
            } catch (const std::out_of_range&) {
                ctx.text("out_of_range");
            }
        });
    });
    CHECK(fetch(server, get_request("/users/1")).body == "out_of_range");
    CHECK(fetch(server, get_request("/static")).body == "out_of_range");
}

TEST_CASE("status() is 200 until set and result() returns the body set so far", "[wire][context]") {
    test_server server([](tern::app& app) {
        app.get("/s", [](tern::context& ctx) {
            const std::string before =
                std::to_string(ctx.status()) + "[" + std::string(ctx.result()) + "]";
            ctx.status(202).result("first");
            const std::string after =
                std::to_string(ctx.status()) + "[" + std::string(ctx.result()) + "]";
            ctx.text(before + after);
        });
    });
    const response r = fetch(server, get_request("/s"));
    INFO(describe(r));
    CHECK(r.status == 202);
    CHECK(r.body == "200[]202[first]");
}

TEST_CASE("each request on a keep-alive connection sees only its own headers, query and body",
          "[wire][context]") {
    test_server server([](tern::app& app) {
        const tern::handler describe_request = [](tern::context& ctx) {
            const auto tag = ctx.header("X-Tag");
            ctx.text(std::string(ctx.method()) + " " + std::string(ctx.path()) +
                     " q=" + std::string(ctx.query_string()) +
                     " tag=" + (tag ? std::string(*tag) : std::string("none")) + " body=" +
                     std::string(ctx.body()) + " n=" + std::to_string(ctx.headers().size()));
        };
        app.get("/r/{x}", describe_request);
        app.put("/r/{x}", describe_request);
    });
    raw_client c = server.client();
    c.send(body_request("PUT", "/r/1?a=1", "payload", "X-Tag: one\r\n") + get_request("/r/2"));
    const response first = c.read_response();
    const response second = c.read_response();
    INFO(describe(first));
    INFO(describe(second));
    // PUT: Host, X-Tag, Content-Length; GET: Host.
    CHECK(first.body == "PUT /r/1 q=a=1 tag=one body=payload n=3");
    CHECK(second.body == "GET /r/2 q= tag=none body= n=1");
}

}  // namespace wire_test_context
