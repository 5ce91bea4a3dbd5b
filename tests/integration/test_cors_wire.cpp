// CORS over the wire: preflights answered before routing and filters, refused preflights,
// Access-Control-* fields on actual responses (errors included), plain OPTIONS, the "*"
// origin, and configurations refused at setup.

#include <atomic>
#include <catch2/catch.hpp>
#include <stdexcept>
#include <string>

#include "support/raw_client.hpp"
#include "support/test_server.hpp"

namespace wire_test_cors_wire {

using namespace tern_test;

namespace {

constexpr std::string_view app_origin = "https://app.example.com";

// An OPTIONS preflight for `method` on `target` from `origin`, asking for `headers`
// (none when empty).
std::string preflight(std::string_view target, std::string_view origin, std::string_view method,
                      std::string_view headers = {}) {
    std::string out = "OPTIONS ";
    out.append(target).append(" HTTP/1.1\r\nHost: localhost\r\n");
    out.append("Origin: ").append(origin).append("\r\n");
    out.append("Access-Control-Request-Method: ").append(method).append("\r\n");
    if (!headers.empty()) {
        out.append("Access-Control-Request-Headers: ").append(headers).append("\r\n");
    }
    out.append("\r\n");
    return out;
}

std::string origin_header(std::string_view origin) {
    return "Origin: " + std::string(origin) + "\r\n";
}

// Counts the header fields of `r` whose name starts with "Access-Control-".
std::size_t access_control_fields(const response& r) {
    std::size_t n = 0;
    for (const auto& [name, value] : r.headers) {
        if (name.size() >= 15 && iequals(std::string_view(name).substr(0, 15), "Access-Control-")) {
            ++n;
        }
    }
    return n;
}

tern::cors_config listed_origins() {
    tern::cors_config cors;
    cors.allowed_origins = {std::string(app_origin), "http://localhost:3000"};
    cors.exposed_headers = {"X-Request-Id", "X-Total"};
    cors.allow_credentials = true;
    return cors;
}

// Counts how often filters and handlers ran, to show that preflights reach neither.
struct counters {
    std::atomic<int> filters{0};
    std::atomic<int> handlers{0};
};

// Routes: /items (GET, POST), /private/data (GET behind an auth filter), /boom (throws),
// /custom (an OPTIONS handler of its own), /vary (sets its own Vary).
void cors_routes(tern::app& app, counters& n) {
    app.get("/items", [&n](tern::context& ctx) {
        ++n.handlers;
        ctx.header("X-Request-Id", "r-1").json_text("[1,2]");
    });
    app.post("/items", [&n](tern::context& ctx) {
        ++n.handlers;
        ctx.status(201).text("created");
    });
    app.get("/private/data", [&n](tern::context& ctx) {
        ++n.handlers;
        ctx.text("secret");
    });
    app.before("/private/*", [&n](tern::context& ctx) {
        ++n.filters;
        if (!ctx.header("Authorization")) throw tern::unauthorized("log in first");
    });
    app.get("/boom", [&n](tern::context&) {
        ++n.handlers;
        throw std::runtime_error("internal detail");
    });
    app.options("/custom", [&n](tern::context& ctx) {
        ++n.handlers;
        ctx.status(200).text("custom options");
    });
    app.get("/vary", [&n](tern::context& ctx) {
        ++n.handlers;
        ctx.header("Vary", "Cookie").text("varies");
    });
}

// Checks a preflight accepted for `origin` and `method` with credentials on.
void check_preflight_allowed(const response& r, std::string_view origin, std::string_view method) {
    INFO(describe(r));
    CHECK(r.status == 204);
    check_common_headers(r);
    CHECK(r.header("Access-Control-Allow-Origin") == std::string(origin));
    CHECK(r.header_count("Access-Control-Allow-Origin") == 1);
    CHECK(r.header("Access-Control-Allow-Credentials") == "true");
    CHECK(r.header("Access-Control-Allow-Methods") == std::string(method));
    CHECK(r.header("Access-Control-Max-Age") == "600");
    CHECK(r.header("Vary") ==
          "Origin, Access-Control-Request-Method, Access-Control-Request-Headers");
    // A preflight is not a request for the resource.
    CHECK_FALSE(r.header("Allow"));
    CHECK_FALSE(r.header("Access-Control-Expose-Headers"));
}

// Checks a refused preflight: 403, a short body, and no Access-Control-* field at all.
void check_preflight_refused(const response& r) {
    INFO(describe(r));
    CHECK(r.status == 403);
    check_common_headers(r);
    CHECK(r.body == "CORS preflight refused");
    CHECK(access_control_fields(r) == 0);
}

// Checks the CORS fields of an actual response to a request from `origin`.
void check_actual_allowed(const response& r, std::string_view origin) {
    INFO(describe(r));
    CHECK(r.header("Access-Control-Allow-Origin") == std::string(origin));
    CHECK(r.header_count("Access-Control-Allow-Origin") == 1);
    CHECK(r.header("Access-Control-Allow-Credentials") == "true");
    CHECK(r.header("Access-Control-Expose-Headers") == "X-Request-Id, X-Total");
    const auto vary = r.header("Vary");
    REQUIRE(vary.has_value());
    CHECK(has_token(*vary, "Origin"));
    // Preflight-only fields stay off actual responses.
    CHECK_FALSE(r.header("Access-Control-Allow-Methods"));
    CHECK_FALSE(r.header("Access-Control-Max-Age"));
}

}  // namespace

TEST_CASE(
    "a preflight gets 204 with the Access-Control fields, even where only other methods "
    "are routed",
    "[wire][cors]") {
    counters n;
    test_server server([&](tern::app& app) {
        cors_routes(app, n);
        app.cors(listed_origins());
    });
    // /items has GET and POST only: PUT and DELETE would be 405, but a preflight is not.
    auto r = fetch(server, preflight("/items", app_origin, "PUT", "Content-Type, X-Custom"));
    check_preflight_allowed(r, app_origin, "PUT");
    CHECK(r.header("Access-Control-Allow-Headers") == "Content-Type, X-Custom");

    r = fetch(server, preflight("/items", "http://localhost:3000", "DELETE"));
    check_preflight_allowed(r, "http://localhost:3000", "DELETE");
    // No headers asked for: none answered.
    CHECK_FALSE(r.header("Access-Control-Allow-Headers"));

    // A path with no route at all.
    r = fetch(server, preflight("/no/such/path", app_origin, "PATCH", "authorization"));
    check_preflight_allowed(r, app_origin, "PATCH");
    CHECK(r.header("Access-Control-Allow-Headers") == "authorization");

    // Origins compare case-insensitively; the request's spelling is echoed.
    r = fetch(server, preflight("/items", "HTTPS://App.Example.COM", "POST"));
    check_preflight_allowed(r, "HTTPS://App.Example.COM", "POST");

    // Access-Control-Request-Headers split over two fields is one list.
    r = fetch(server,
              "OPTIONS /items HTTP/1.1\r\nHost: localhost\r\nOrigin: " + std::string(app_origin) +
                  "\r\nAccess-Control-Request-Method: PUT\r\n"
                  "Access-Control-Request-Headers: x-a\r\n"
                  "Access-Control-Request-Headers: x-b, x-c\r\n\r\n");
    check_preflight_allowed(r, app_origin, "PUT");
    CHECK(r.header("Access-Control-Allow-Headers") == "x-a, x-b, x-c");

    CHECK(n.handlers == 0);
    CHECK(n.filters == 0);
}

TEST_CASE("a preflight skips before filters and the app's own OPTIONS handler", "[wire][cors]") {
    counters n;
    test_server server([&](tern::app& app) {
        cors_routes(app, n);
        app.cors(listed_origins());
    });
    // The auth filter would answer 401: a preflight carries no credentials, so it is not run.
    auto r = fetch(server, preflight("/private/data", app_origin, "GET", "Authorization"));
    check_preflight_allowed(r, app_origin, "GET");
    CHECK(r.header("Access-Control-Allow-Headers") == "Authorization");

    r = fetch(server, preflight("/custom", app_origin, "PUT"));
    check_preflight_allowed(r, app_origin, "PUT");
    CHECK(r.body.empty());
    CHECK(n.filters == 0);
    CHECK(n.handlers == 0);

    // The actual request does go through the filter, and its 401 is readable cross-origin.
    r = fetch(server, get_request("/private/data", origin_header(app_origin)));
    CHECK(r.status == 401);
    CHECK(r.body == "log in first");
    check_actual_allowed(r, app_origin);
    CHECK(n.filters == 1);
    CHECK(n.handlers == 0);

    r = fetch(server, get_request("/private/data",
                                  origin_header(app_origin) + "Authorization: Bearer t\r\n"));
    CHECK(r.status == 200);
    CHECK(r.body == "secret");
    check_actual_allowed(r, app_origin);
    CHECK(n.handlers == 1);
}

TEST_CASE("a preflight from another origin, for a method or a header not allowed, gets 403",
          "[wire][cors]") {
    counters n;
    test_server server([&](tern::app& app) {
        cors_routes(app, n);
        tern::cors_config cors = listed_origins();
        cors.allowed_methods = {"PUT"};
        cors.allowed_headers = {"Content-Type", "X-Api-Key"};
        app.cors(cors);
    });
    // Allowed, for reference: a listed method and listed headers in any case.
    auto r = fetch(server, preflight("/items", app_origin, "PUT", "content-type, x-api-key"));
    check_preflight_allowed(r, app_origin, "PUT");
    CHECK(r.header("Access-Control-Allow-Headers") == "content-type, x-api-key");
    // GET, HEAD and POST are always allowed.
    r = fetch(server, preflight("/items", app_origin, "POST"));
    check_preflight_allowed(r, app_origin, "POST");

    // Refused: an origin not listed, one differing only by port or scheme, "null".
    for (const char* origin : {"https://evil.example", "https://app.example.com:8443",
                               "http://app.example.com", "null"}) {
        INFO("origin " << origin);
        check_preflight_refused(fetch(server, preflight("/items", origin, "PUT")));
    }
    // Refused: a method not listed (methods are case-sensitive).
    for (const char* method : {"DELETE", "PATCH", "put"}) {
        INFO("method " << method);
        check_preflight_refused(fetch(server, preflight("/items", app_origin, method)));
    }
    // Refused: one header not listed spoils the list.
    check_preflight_refused(
        fetch(server, preflight("/items", app_origin, "PUT", "Content-Type, X-Other")));
    // Refused on a path without a route, and on the filtered path too: still 403, not 404/401.
    check_preflight_refused(fetch(server, preflight("/nowhere", "https://evil.example", "PUT")));
    check_preflight_refused(fetch(server, preflight("/private/data", app_origin, "DELETE")));
    CHECK(n.handlers == 0);
    CHECK(n.filters == 0);
    check_still_serving(server.port());
}

TEST_CASE("actual responses carry Access-Control-Allow-Origin, errors included", "[wire][cors]") {
    counters n;
    test_server server([&](tern::app& app) {
        cors_routes(app, n);
        app.cors(listed_origins());
    });
    const std::string from_app = origin_header(app_origin);

    auto r = fetch(server, get_request("/items", from_app));
    CHECK(r.status == 200);
    CHECK(r.body == "[1,2]");
    CHECK(r.header("X-Request-Id") == "r-1");
    check_actual_allowed(r, app_origin);

    r = fetch(server, body_request("POST", "/items", "x", from_app));
    CHECK(r.status == 201);
    check_actual_allowed(r, app_origin);

    // 404, 405 and 500 are readable by the page that asked.
    r = fetch(server, get_request("/nothing/here", from_app));
    CHECK(r.status == 404);
    CHECK(r.body == "Not Found");
    check_actual_allowed(r, app_origin);

    r = fetch(server, body_request("DELETE", "/items", "", from_app));
    CHECK(r.status == 405);
    CHECK(r.header("Allow").has_value());
    check_actual_allowed(r, app_origin);

    r = fetch(server, get_request("/boom", from_app));
    CHECK(r.status == 500);
    CHECK(r.body == "Internal Server Error");
    check_actual_allowed(r, app_origin);

    // A Vary the handler set is merged with Origin, not repeated.
    r = fetch(server, get_request("/vary", from_app));
    CHECK(r.status == 200);
    CHECK(r.header_count("Vary") == 1);
    CHECK(r.header("Vary") == "Cookie, Origin");
    check_actual_allowed(r, app_origin);
}

TEST_CASE("responses to requests without an allowed Origin get Vary: Origin and nothing else",
          "[wire][cors]") {
    counters n;
    test_server server([&](tern::app& app) {
        cors_routes(app, n);
        app.cors(listed_origins());
    });
    for (const std::string& extra : {std::string(), origin_header("https://evil.example"),
                                     origin_header("https://app.example.com.evil.example")}) {
        INFO("extra headers: " << extra);
        auto r = fetch(server, get_request("/items", extra));
        INFO(describe(r));
        CHECK(r.status == 200);
        CHECK(r.body == "[1,2]");
        CHECK(access_control_fields(r) == 0);
        CHECK(r.header("Vary") == "Origin");
        r = fetch(server, get_request("/nothing", extra));
        CHECK(r.status == 404);
        CHECK(access_control_fields(r) == 0);
    }
}

TEST_CASE("OPTIONS without Access-Control-Request-Method keeps tern's 204 and Allow",
          "[wire][cors]") {
    counters n;
    test_server server([&](tern::app& app) {
        cors_routes(app, n);
        app.cors(listed_origins());
    });
    // With an Origin: the usual answer, decorated as an actual request.
    auto r = fetch(server, "OPTIONS /items HTTP/1.1\r\nHost: localhost\r\nOrigin: " +
                               std::string(app_origin) + "\r\n\r\n");
    INFO(describe(r));
    CHECK(r.status == 204);
    check_common_headers(r);
    const auto allow = r.header("Allow");
    REQUIRE(allow.has_value());
    CHECK(has_token(*allow, "GET"));
    CHECK(has_token(*allow, "POST"));
    CHECK_FALSE(has_token(*allow, "PUT"));
    CHECK(r.header("Access-Control-Allow-Origin") == std::string(app_origin));
    CHECK_FALSE(r.header("Access-Control-Allow-Methods"));

    // Without one: the usual answer, no Access-Control fields.
    r = fetch(server, "OPTIONS /items HTTP/1.1\r\nHost: localhost\r\n\r\n");
    CHECK(r.status == 204);
    CHECK(r.header("Allow") == allow);
    CHECK(access_control_fields(r) == 0);

    // The app's own OPTIONS handler answers when it is not a preflight.
    r = fetch(server, "OPTIONS /custom HTTP/1.1\r\nHost: localhost\r\nOrigin: " +
                          std::string(app_origin) + "\r\n\r\n");
    CHECK(r.status == 200);
    CHECK(r.body == "custom options");
    CHECK(r.header("Access-Control-Allow-Origin") == std::string(app_origin));
    CHECK(n.handlers == 1);

    // A path without routes stays 404.
    r = fetch(server, "OPTIONS /nowhere HTTP/1.1\r\nHost: localhost\r\n\r\n");
    CHECK(r.status == 404);
}

TEST_CASE("the \"*\" origin answers \"*\" on every response, without Vary: Origin",
          "[wire][cors]") {
    counters n;
    test_server server([&](tern::app& app) {
        cors_routes(app, n);
        tern::cors_config cors;
        cors.allowed_origins = {"*"};
        cors.exposed_headers = {"X-Request-Id"};
        cors.max_age = std::chrono::seconds(0);
        app.cors(cors);
    });
    auto r = fetch(server, preflight("/items", "https://anyone.example", "PUT", "X-Thing"));
    INFO(describe(r));
    CHECK(r.status == 204);
    CHECK(r.header("Access-Control-Allow-Origin") == "*");
    CHECK(r.header("Access-Control-Allow-Methods") == "PUT");
    CHECK(r.header("Access-Control-Allow-Headers") == "X-Thing");
    CHECK_FALSE(r.header("Access-Control-Allow-Credentials"));
    CHECK_FALSE(r.header("Access-Control-Max-Age"));  // max_age 0

    // "null" (sandboxed frames, file: pages) is covered by "*".
    r = fetch(server, preflight("/items", "null", "PUT"));
    CHECK(r.status == 204);
    CHECK(r.header("Access-Control-Allow-Origin") == "*");

    for (const std::string& extra : {origin_header("https://anyone.example"), std::string()}) {
        INFO("extra headers: " << extra);
        r = fetch(server, get_request("/items", extra));
        CHECK(r.status == 200);
        CHECK(r.header("Access-Control-Allow-Origin") == "*");
        CHECK(r.header("Access-Control-Expose-Headers") == "X-Request-Id");
        CHECK_FALSE(r.header("Access-Control-Allow-Credentials"));
        CHECK_FALSE(r.header("Vary"));
        r = fetch(server, get_request("/nothing", extra));
        CHECK(r.status == 404);
        CHECK(r.header("Access-Control-Allow-Origin") == "*");
    }
}

TEST_CASE("app.cors refuses credentials with \"*\" and other bad configurations at setup",
          "[wire][cors]") {
    tern::app app;
    tern::cors_config any;
    any.allowed_origins = {"*"};
    any.allow_credentials = true;
    CHECK_THROWS_AS(app.cors(any), std::invalid_argument);
    CHECK_FALSE(app.settings().cors.has_value());

    tern::cors_config empty;
    CHECK_THROWS_AS(app.cors(empty), std::invalid_argument);
    tern::cors_config slash;
    slash.allowed_origins = {"https://app.example.com/"};
    CHECK_THROWS_AS(app.cors(slash), std::invalid_argument);
    tern::cors_config mixed;
    mixed.allowed_origins = {"*", "https://app.example.com"};
    CHECK_THROWS_AS(app.cors(mixed), std::invalid_argument);
    CHECK_FALSE(app.settings().cors.has_value());

    // A running server refuses a new CORS setting.
    test_server server;
    CHECK_THROWS_AS(server.app().cors(listed_origins()), std::logic_error);
    check_still_serving(server.port());
}

TEST_CASE("without app.cors, preflights are plain OPTIONS and no CORS fields are sent",
          "[wire][cors]") {
    counters n;
    test_server server([&](tern::app& app) { cors_routes(app, n); });
    auto r = fetch(server, preflight("/items", app_origin, "PUT"));
    INFO(describe(r));
    CHECK(r.status == 204);
    CHECK(r.header("Allow").has_value());
    CHECK(access_control_fields(r) == 0);
    r = fetch(server, preflight("/private/data", app_origin, "GET"));
    CHECK(r.status == 401);  // the filter runs: nothing special about it without CORS
    CHECK(access_control_fields(r) == 0);
    r = fetch(server, get_request("/items", origin_header(app_origin)));
    CHECK(r.status == 200);
    CHECK(access_control_fields(r) == 0);
    CHECK_FALSE(r.header("Vary"));
}

TEST_CASE("an Access-Control-Allow-Origin the handler set is kept, not doubled", "[wire][cors]") {
    test_server server([](tern::app& app) {
        app.get("/public", [](tern::context& ctx) {
            ctx.header("Access-Control-Allow-Origin", "*").text("public");
        });
        app.get("/plain", [](tern::context& ctx) { ctx.text("plain"); });
        app.cors(listed_origins());
    });
    auto r = fetch(server, get_request("/public", origin_header(app_origin)));
    INFO(describe(r));
    CHECK(r.status == 200);
    CHECK(r.body == "public");
    // Two values would make browsers refuse the response.
    CHECK(r.header_count("Access-Control-Allow-Origin") == 1);
    CHECK(r.header("Access-Control-Allow-Origin") == "*");
    CHECK_FALSE(r.header("Access-Control-Allow-Credentials"));
    CHECK_FALSE(r.header("Access-Control-Expose-Headers"));
    CHECK(r.header("Vary") == "Origin");

    r = fetch(server, get_request("/plain", origin_header(app_origin)));
    check_actual_allowed(r, app_origin);
}

TEST_CASE("a body over max_body_size gets 413 with the CORS fields, then the close",
          "[wire][cors]") {
    counters n;
    test_server server([&](tern::app& app) {
        cors_routes(app, n);
        app.max_body_size(10);
        app.cors(listed_origins());
    });
    const std::string from_app = origin_header(app_origin);
    // Refused from the Content-Length, before the body.
    auto r = expect_rejected(server,
                             body_request("POST", "/items", std::string(100, 'x'), from_app), 413);
    check_actual_allowed(r, app_origin);
    // Refused while de-chunking.
    r = expect_rejected(server,
                        "POST /items HTTP/1.1\r\nHost: localhost\r\n" + from_app +
                            "Transfer-Encoding: chunked\r\n\r\n20\r\n" + std::string(32, 'x') +
                            "\r\n0\r\n\r\n",
                        413);
    check_actual_allowed(r, app_origin);
    CHECK(n.handlers == 0);
}

}  // namespace wire_test_cors_wire
