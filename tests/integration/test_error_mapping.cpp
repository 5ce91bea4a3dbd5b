// Exception mappers, error(status) handlers and tern's error bodies over the wire.

#include <catch2/catch.hpp>
#include <stdexcept>
#include <string>

#include "support/raw_client.hpp"
#include "support/test_server.hpp"

namespace wire_test_error_mapping {

using namespace tern_test;

namespace {

struct app_error : std::runtime_error {
    using std::runtime_error::runtime_error;
};
struct not_found_error : app_error {
    using app_error::app_error;
};
struct deep_not_found : not_found_error {
    using not_found_error::not_found_error;
};
struct unrelated {};

}  // namespace

TEST_CASE(
    "exception<E> picks the mapper of the most derived matching type, in any "
    "registration order",
    "[wire][errors]") {
    auto routes = [](tern::app& app) {
        app.get("/base", [](tern::context&) { throw app_error("base"); });
        app.get("/derived", [](tern::context&) { throw not_found_error("derived"); });
        app.get("/deeper", [](tern::context&) { throw deep_not_found("deeper"); });
        app.get("/std", [](tern::context&) { throw std::logic_error("logic"); });
        app.get("/int", [](tern::context&) { throw 42; });
        app.get("/unrelated", [](tern::context&) { throw unrelated{}; });
    };
    auto mappers_base_first = [&](tern::app& app) {
        routes(app);
        app.exception<app_error>([](app_error& e, tern::context& ctx) {
            ctx.status(400).text("app:" + std::string(e.what()));
        });
        app.exception<not_found_error>([](not_found_error& e, tern::context& ctx) {
            ctx.status(404).text("nf:" + std::string(e.what()));
        });
        app.exception<std::exception>([](std::exception& e, tern::context& ctx) {
            ctx.status(503).text("std:" + std::string(e.what()));
        });
    };
    auto mappers_derived_first = [&](tern::app& app) {
        routes(app);
        app.exception<std::exception>([](std::exception& e, tern::context& ctx) {
            ctx.status(503).text("std:" + std::string(e.what()));
        });
        app.exception<not_found_error>([](not_found_error& e, tern::context& ctx) {
            ctx.status(404).text("nf:" + std::string(e.what()));
        });
        app.exception<app_error>([](app_error& e, tern::context& ctx) {
            ctx.status(400).text("app:" + std::string(e.what()));
        });
    };
    for (int order = 0; order < 2; ++order) {
        INFO("registration order " << order);
        test_server server(order == 0 ? std::function<void(tern::app&)>(mappers_base_first)
                                      : std::function<void(tern::app&)>(mappers_derived_first));
        auto r = fetch(server, get_request("/base"));
        CHECK(r.status == 400);
        CHECK(r.body == "app:base");
        r = fetch(server, get_request("/derived"));
        CHECK(r.status == 404);
        CHECK(r.body == "nf:derived");
        r = fetch(server, get_request("/deeper"));
        CHECK(r.status == 404);
        CHECK(r.body == "nf:deeper");
        r = fetch(server, get_request("/std"));
        CHECK(r.status == 503);
        CHECK(r.body == "std:logic");
        // Not a std::exception and no mapper: 500 with a body that leaks nothing.
        r = fetch(server, get_request("/int"));
        CHECK(r.status == 500);
        CHECK(r.body == "Internal Server Error");
        r = fetch(server, get_request("/unrelated"));
        CHECK(r.status == 500);
    }
}

TEST_CASE("http_error is answered by tern unless a mapper names http_error or a subclass",
          "[wire][errors]") {
    test_server plain([](tern::app& app) {
        app.get("/teapot", [](tern::context&) { throw tern::http_error(418, "short and stout"); });
        app.get("/nf", [](tern::context&) { throw tern::not_found("no such user"); });
        app.exception<std::exception>(
            [](std::exception&, tern::context& ctx) { ctx.status(599).text("generic"); });
    });
    auto r = fetch(plain, get_request("/teapot"));
    CHECK(r.status == 418);
    CHECK(r.body == "short and stout");
    CHECK(r.header("Content-Type") == "text/plain; charset=utf-8");
    r = fetch(plain, get_request("/nf"));
    CHECK(r.status == 404);
    CHECK(r.body == "no such user");

    test_server mapped([](tern::app& app) {
        app.get("/nf", [](tern::context&) { throw tern::not_found("no such user"); });
        app.get("/bad", [](tern::context&) { throw tern::bad_request("bad"); });
        app.exception<tern::not_found>([](tern::not_found& e, tern::context& ctx) {
            ctx.status(404).html(std::string("<h1>") + e.what() + "</h1>");
        });
    });
    r = fetch(mapped, get_request("/nf"));
    CHECK(r.status == 404);
    CHECK(r.body == "<h1>no such user</h1>");
    r = fetch(mapped, get_request("/bad"));
    CHECK(r.status == 400);
    CHECK(r.body == "bad");
}

TEST_CASE("a mapper that throws becomes a plain 500 and the server keeps serving",
          "[wire][errors]") {
    test_server server([](tern::app& app) {
        app.get("/", [](tern::context&) { throw app_error("first"); });
        app.exception<app_error>([](app_error&, tern::context& ctx) {
            ctx.header("X-Half-Done", "yes").cookie("session", "abc");
            throw std::runtime_error("second");
        });
    });
    const auto r = fetch(server, get_request("/"));
    CHECK(r.status == 500);
    CHECK(r.body == "Internal Server Error");
    // Nothing the failed mapper set goes out beside the 500.
    CHECK_FALSE(r.header("X-Half-Done"));
    CHECK_FALSE(r.header("Set-Cookie"));
    check_still_serving(server.port());
}

TEST_CASE(
    "error(status) shapes 404, 405, thrown errors and bodiless statuses, not "
    "application bodies",
    "[wire][errors]") {
    test_server server([](tern::app& app) {
        app.get("/exists", [](tern::context& ctx) { ctx.text("here"); });
        app.get("/own-404", [](tern::context& ctx) { ctx.status(404).text("my own not found"); });
        app.get("/bare-404", [](tern::context& ctx) { ctx.status(404); });
        app.get("/thrown", [](tern::context&) { throw tern::not_found("user 7"); });
        app.error(404, [](tern::context& ctx) {
            ctx.html("<p>custom 404: " + std::string(ctx.result()) + "</p>");
        });
        app.error(405, [](tern::context& ctx) { ctx.header("X-Shaped", "405"); });
        CHECK_THROWS_AS(app.error(200, [](tern::context&) {}), std::invalid_argument);
        CHECK_THROWS_AS(app.error(600, [](tern::context&) {}), std::invalid_argument);
    });
    auto r = fetch(server, get_request("/missing"));
    CHECK(r.status == 404);
    CHECK(r.body == "<p>custom 404: Not Found</p>");
    CHECK(r.header("Content-Type") == "text/html; charset=utf-8");
    r = fetch(server, get_request("/thrown"));
    CHECK(r.body == "<p>custom 404: user 7</p>");
    r = fetch(server, get_request("/bare-404"));
    CHECK(r.body == "<p>custom 404: Not Found</p>");
    r = fetch(server, get_request("/own-404"));
    CHECK(r.body == "my own not found");
    // An error handler that sets no body keeps tern's; its headers stay.
    r = fetch(server, body_request("POST", "/exists", ""));
    CHECK(r.status == 405);
    CHECK(r.body == "Method Not Allowed");
    CHECK(r.header("X-Shaped") == "405");
    CHECK(r.header("Allow"));
}

TEST_CASE("error(status) shapes errors from limits and parse failures, which still close",
          "[wire][errors]") {
    test_server server([](tern::app& app) {
        app.max_body_size(16);
        app.post("/upload", [](tern::context& ctx) { ctx.text("ok"); });
        app.error(413, [](tern::context& ctx) {
            ctx.status(413).json_text(R"({"error":"too big","path":")" + std::string(ctx.path()) +
                                      "\"}");
        });
        app.error(400, [](tern::context& ctx) { ctx.text("custom 400"); });
    });
    auto r = expect_rejected(server, body_request("POST", "/upload", std::string(100, 'x')), 413);
    CHECK(r.body == R"({"error":"too big","path":"/upload"})");
    CHECK(r.header("Content-Type") == "application/json");
    // A request line that never parsed: the handler runs with an empty request.
    r = expect_rejected(server, "GET /a b c HTTP/1.1\r\nHost: x\r\n\r\n", 400);
    CHECK(r.body == "custom 400");
}

TEST_CASE("an error handler that throws falls back to a plain 500", "[wire][errors]") {
    test_server server([](tern::app& app) {
        app.error(404, [](tern::context&) { throw std::runtime_error("oops"); });
    });
    const auto r = fetch(server, get_request("/missing"));
    CHECK(r.status == 500);
    CHECK(r.body == "Internal Server Error");
    check_still_serving(server.port());
}

TEST_CASE("an error handler that throws gives a plain 500 even when a mapper would take it",
          "[wire][errors]") {
    // docs/errors.md: an error(status) handler that throws gives a plain 500; the app's
    // exception mappers are for filters and handlers, not for the error shaping after them.
    test_server server([](tern::app& app) {
        app.exception<std::exception>(
            [](std::exception&, tern::context& ctx) { ctx.status(418).text("mapped"); });
        app.exception<tern::http_error>([](tern::http_error&, tern::context& ctx) {
            ctx.status(418).text("mapped http_error");
        });
        app.error(404, [](tern::context&) { throw std::runtime_error("oops"); });
        app.error(405, [](tern::context&) { throw tern::forbidden("no"); });
        app.error(413, [](tern::context& ctx) {
            ctx.header("X-Partial", "1");
            throw std::runtime_error("late");
        });
        app.post("/only-post", [](tern::context& ctx) { ctx.text("posted"); });
    });
    auto r = fetch(server, get_request("/missing"));
    INFO(describe(r));
    CHECK(r.status == 500);
    CHECK(r.body == "Internal Server Error");
    r = fetch(server, get_request("/only-post"));
    INFO(describe(r));
    CHECK(r.status == 500);
    CHECK(r.body == "Internal Server Error");
    // A refusal from the connection (a body over the limit) takes the same path, and what
    // the failed handler set does not go out.
    r = expect_rejected(
        server, "POST /only-post HTTP/1.1\r\nHost: x\r\nContent-Length: 99999999999\r\n\r\n", 500);
    CHECK(r.body == "Internal Server Error");
    CHECK_FALSE(r.header("X-Partial").has_value());
    check_still_serving(server.port());
}

TEST_CASE("tern's error bodies are JSON for clients that prefer JSON, text otherwise",
          "[wire][errors]") {
    test_server server([](tern::app& app) {
        app.get("/nf", [](tern::context&) { throw tern::not_found("user \"7\" not found"); });
        app.get("/mine", [](tern::context& ctx) { ctx.status(404).text("plain on purpose"); });
        app.max_body_size(4);
        app.post("/p", [](tern::context& ctx) { ctx.text("ok"); });
    });
    auto r = fetch(server, get_request("/nf", "Accept: application/json\r\n"));
    CHECK(r.status == 404);
    CHECK(r.header("Content-Type") == "application/problem+json");
    CHECK(r.body == R"({"detail":"user \"7\" not found","status":404,"title":"Not Found"})");
    r = fetch(server, get_request("/missing", "Accept: application/json\r\n"));
    CHECK(r.body == R"({"status":404,"title":"Not Found"})");
    // A browser's Accept prefers HTML and says */* for the rest: text.
    r = fetch(server,
              get_request("/missing", "Accept: text/html,application/xhtml+xml,*/*;q=0.8\r\n"));
    CHECK(r.header("Content-Type") == "text/plain; charset=utf-8");
    r = fetch(server, get_request("/missing", "Accept: text/plain;q=0.5, application/json\r\n"));
    CHECK(r.header("Content-Type") == "application/problem+json");
    r = fetch(server, get_request("/missing", "Accept: application/json;q=0.1, text/plain\r\n"));
    CHECK(r.header("Content-Type") == "text/plain; charset=utf-8");
    // The weight is read as for Accept-Encoding: "q = 0" with spaces still refuses JSON.
    r = fetch(server,
              get_request("/missing", "Accept: application/json; q = 0, text/plain;Q=0.5\r\n"));
    CHECK(r.header("Content-Type") == "text/plain; charset=utf-8");
    r = fetch(server, get_request("/missing", "Accept: application/problem+json\r\n"));
    CHECK(r.header("Content-Type") == "application/problem+json");
    r = fetch(server, get_request("/missing"));
    CHECK(r.header("Content-Type") == "text/plain; charset=utf-8");
    // The application's own body is never rewritten.
    r = fetch(server, get_request("/mine", "Accept: application/json\r\n"));
    CHECK(r.body == "plain on purpose");
    // Limits too.
    r = expect_rejected(
        server, body_request("POST", "/p", "too long", "Accept: application/json\r\n"), 413);
    CHECK(r.body == R"({"status":413,"title":"Content Too Large"})");
}

TEST_CASE("exception mappers and error handlers cannot be added while running", "[wire][errors]") {
    test_server server([](tern::app&) {});
    CHECK_THROWS_AS(server.app().error(404, [](tern::context&) {}), std::logic_error);
    CHECK_THROWS_AS(server.app().exception<std::exception>([](std::exception&, tern::context&) {}),
                    std::logic_error);
}

}  // namespace wire_test_error_mapping
