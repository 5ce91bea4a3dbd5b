// CORS without sockets: preflight answers, headers on actual responses, and the checks a
// cors_config goes through.

#include "http/request.hpp"
#include "http/response.hpp"
#include "support/response_fields.hpp"
#include "web/cors.hpp"

#include <catch2/catch.hpp>

#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace unit_test_web_cors {

using tern::cors_config;
using tern::header_field;
using tern::detail::cors_policy;
using tern::detail::request;
using tern::detail::response;
using tern_test::only_field;

namespace {

request make_request(std::string_view method, std::vector<header_field> headers) {
    request req;
    req.method = method;
    req.target = req.path = "/api";
    req.headers = std::move(headers);
    return req;
}

request preflight(std::string_view origin, std::string_view method,
                  std::vector<header_field> extra = {}) {
    std::vector<header_field> headers = {{"Origin", origin},
                                         {"Access-Control-Request-Method", method}};
    headers.insert(headers.end(), extra.begin(), extra.end());
    return make_request("OPTIONS", std::move(headers));
}

bool has_access_control_field(const response& res) {
    for (const auto& f : res.fields) {
        if (f.first.starts_with("Access-Control-")) return true;
    }
    return false;
}

cors_config listed(std::vector<std::string> origins) {
    cors_config c;
    c.allowed_origins = std::move(origins);
    return c;
}

response answer(const cors_policy& policy, const request& req) {
    response res;
    policy.answer_preflight(req, res);
    return res;
}

response decorated(const cors_policy& policy, const request& req) {
    response res;
    res.body = "data";
    policy.decorate(req, res);
    return res;
}

}  // namespace

TEST_CASE("cors: a preflight needs OPTIONS, Origin and Access-Control-Request-Method", "[cors]") {
    CHECK(cors_policy::is_preflight(preflight("https://a.example", "PUT")));
    CHECK_FALSE(cors_policy::is_preflight(make_request("OPTIONS", {{"Origin", "https://a"}})));
    CHECK_FALSE(cors_policy::is_preflight(
        make_request("OPTIONS", {{"Access-Control-Request-Method", "PUT"}})));
    CHECK_FALSE(cors_policy::is_preflight(
        make_request("POST", {{"Origin", "https://a"}, {"Access-Control-Request-Method", "PUT"}})));
    CHECK(cors_policy::is_preflight(make_request(
        "OPTIONS", {{"origin", "https://a"}, {"access-control-request-method", "PUT"}})));
}

TEST_CASE("cors: a preflight from a listed origin gets 204 with the requested method", "[cors]") {
    const cors_policy policy(listed({"https://app.example.com", "http://localhost:3000"}));
    const auto res = answer(policy, preflight("http://localhost:3000", "DELETE"));
    CHECK(res.status == 204);
    CHECK(res.body.empty());
    CHECK(only_field(res, "Access-Control-Allow-Origin") == "http://localhost:3000");
    CHECK(only_field(res, "Access-Control-Allow-Methods") == "DELETE");
    CHECK(only_field(res, "Access-Control-Max-Age") == "600");
    CHECK_FALSE(only_field(res, "Access-Control-Allow-Credentials"));
    CHECK_FALSE(only_field(res, "Access-Control-Allow-Headers"));
    CHECK(only_field(res, "Vary") ==
          "Origin, Access-Control-Request-Method, Access-Control-Request-Headers");
}

TEST_CASE("cors: origins compare case-insensitively and the request's spelling is echoed",
          "[cors]") {
    const cors_policy policy(listed({"HTTPS://App.Example.COM"}));
    auto res = answer(policy, preflight("https://app.example.com", "PUT"));
    CHECK(res.status == 204);
    CHECK(only_field(res, "Access-Control-Allow-Origin") == "https://app.example.com");
    res = decorated(policy, make_request("GET", {{"Origin", "https://APP.example.com"}}));
    CHECK(only_field(res, "Access-Control-Allow-Origin") == "https://APP.example.com");
}

TEST_CASE("cors: a preflight from an origin not listed gets 403 and no Access-Control fields",
          "[cors]") {
    const cors_policy policy(listed({"https://app.example.com"}));
    for (std::string_view origin :
         {"https://evil.example.com", "http://app.example.com", "https://app.example.com:8443",
          "https://app.example.com.evil.example", "https://app.example.co", "null", ""}) {
        CAPTURE(origin);
        const auto res = answer(policy, preflight(origin, "PUT"));
        CHECK(res.status == 403);
        CHECK(res.body == "CORS preflight refused");
        CHECK(res.content_type == "text/plain; charset=utf-8");
        CHECK_FALSE(has_access_control_field(res));
    }
}

TEST_CASE("cors: a preflight for a method not allowed is refused, GET, HEAD, POST always pass",
          "[cors]") {
    cors_config config = listed({"https://a.example"});
    config.allowed_methods = {"PUT"};
    const cors_policy policy(config);
    CHECK(answer(policy, preflight("https://a.example", "PUT")).status == 204);
    CHECK(answer(policy, preflight("https://a.example", "GET")).status == 204);
    CHECK(answer(policy, preflight("https://a.example", "HEAD")).status == 204);
    CHECK(answer(policy, preflight("https://a.example", "POST")).status == 204);
    // Methods are case-sensitive (RFC 9110 9.1).
    CHECK(answer(policy, preflight("https://a.example", "put")).status == 403);
    CHECK(answer(policy, preflight("https://a.example", "DELETE")).status == 403);
    CHECK(answer(policy, preflight("https://a.example", "PATCH")).status == 403);
    CHECK(answer(policy, preflight("https://a.example", "")).status == 403);
    const auto refused = answer(policy, preflight("https://a.example", "DELETE"));
    CHECK_FALSE(has_access_control_field(refused));
}

TEST_CASE("cors: requested headers are checked against an explicit list, case-insensitively",
          "[cors]") {
    cors_config config = listed({"https://a.example"});
    config.allowed_headers = {"Content-Type", "X-Request-Id", "Authorization"};
    const cors_policy policy(config);

    auto res = answer(policy,
                      preflight("https://a.example", "PUT",
                                {{"Access-Control-Request-Headers", "content-type,x-request-id"}}));
    CHECK(res.status == 204);
    CHECK(only_field(res, "Access-Control-Allow-Headers") == "content-type, x-request-id");

    // The list may be split over several fields, with empty members and whitespace.
    res = answer(policy, preflight("https://a.example", "PUT",
                                   {{"Access-Control-Request-Headers", " AUTHORIZATION ,, "},
                                    {"Access-Control-Request-Headers", "Content-Type"}}));
    CHECK(res.status == 204);
    CHECK(only_field(res, "Access-Control-Allow-Headers") == "AUTHORIZATION, Content-Type");

    res = answer(policy, preflight("https://a.example", "PUT",
                                   {{"Access-Control-Request-Headers", "content-type, x-debug"}}));
    CHECK(res.status == 403);
    CHECK_FALSE(has_access_control_field(res));

    res = answer(policy, preflight("https://a.example", "PUT",
                                   {{"Access-Control-Request-Headers", "content type"}}));
    CHECK(res.status == 403);
}

TEST_CASE("cors: with \"*\" headers the requested list is echoed back, trimmed", "[cors]") {
    const cors_policy policy(listed({"https://a.example"}));  // allowed_headers = {"*"}
    auto res = answer(policy, preflight("https://a.example", "PATCH",
                                        {{"Access-Control-Request-Headers", "x-a ,\tX-B"},
                                         {"Access-Control-Request-Headers", "x-c"}}));
    CHECK(res.status == 204);
    CHECK(only_field(res, "Access-Control-Allow-Headers") == "x-a, X-B, x-c");

    // Even "*" does not let through something that is not a header name.
    res = answer(policy, preflight("https://a.example", "PATCH",
                                   {{"Access-Control-Request-Headers", "x-a, x:b"}}));
    CHECK(res.status == 403);
}

TEST_CASE("cors: with credentials the origin is echoed and Allow-Credentials sent", "[cors]") {
    cors_config config = listed({"https://a.example", "https://b.example"});
    config.allow_credentials = true;
    config.exposed_headers = {"X-Total-Count"};
    const cors_policy policy(config);

    auto res = answer(policy, preflight("https://b.example", "PUT"));
    CHECK(res.status == 204);
    CHECK(only_field(res, "Access-Control-Allow-Origin") == "https://b.example");
    CHECK(only_field(res, "Access-Control-Allow-Credentials") == "true");

    res = decorated(policy, make_request("GET", {{"Origin", "https://a.example"}}));
    CHECK(only_field(res, "Access-Control-Allow-Origin") == "https://a.example");
    CHECK(only_field(res, "Access-Control-Allow-Credentials") == "true");
    CHECK(only_field(res, "Access-Control-Expose-Headers") == "X-Total-Count");
    CHECK(only_field(res, "Vary") == "Origin");
    CHECK(res.body == "data");
}

TEST_CASE("cors: \"*\" without credentials answers \"*\" and adds no Vary: Origin", "[cors]") {
    cors_config config = listed({"*"});
    config.exposed_headers = {"X-A", "X-B"};
    const cors_policy policy(config);

    auto res = answer(policy, preflight("https://anything.example", "PUT",
                                        {{"Access-Control-Request-Headers", "x-custom"}}));
    CHECK(res.status == 204);
    CHECK(only_field(res, "Access-Control-Allow-Origin") == "*");
    CHECK(only_field(res, "Access-Control-Allow-Headers") == "x-custom");
    CHECK_FALSE(only_field(res, "Access-Control-Allow-Credentials"));

    res = decorated(policy, make_request("GET", {{"Origin", "https://anything.example"}}));
    CHECK(only_field(res, "Access-Control-Allow-Origin") == "*");
    CHECK(only_field(res, "Access-Control-Expose-Headers") == "X-A, X-B");
    CHECK_FALSE(only_field(res, "Vary"));

    // The answer is the same for every request, so a cached copy of a response to a
    // request without Origin serves cross-origin readers too.
    res = decorated(policy, make_request("GET", {}));
    CHECK(only_field(res, "Access-Control-Allow-Origin") == "*");
    CHECK_FALSE(only_field(res, "Vary"));
}

TEST_CASE("cors: the \"null\" origin is allowed when listed, or by \"*\"", "[cors]") {
    const cors_policy by_list(listed({"https://a.example"}));
    CHECK(answer(by_list, preflight("null", "PUT")).status == 403);
    CHECK_FALSE(only_field(decorated(by_list, make_request("GET", {{"Origin", "null"}})),
                           "Access-Control-Allow-Origin"));

    const cors_policy by_name(listed({"https://a.example", "null"}));
    auto res = answer(by_name, preflight("null", "PUT"));
    CHECK(res.status == 204);
    CHECK(only_field(res, "Access-Control-Allow-Origin") == "null");
    CHECK(only_field(decorated(by_name, make_request("GET", {{"Origin", "null"}})),
                     "Access-Control-Allow-Origin") == "null");

    const cors_policy any(listed({"*"}));
    res = answer(any, preflight("null", "PUT"));
    CHECK(res.status == 204);
    CHECK(only_field(res, "Access-Control-Allow-Origin") == "*");
}

TEST_CASE("cors: decorate merges Origin into an existing Vary", "[cors]") {
    const cors_policy policy(listed({"https://a.example"}));
    const auto req = make_request("GET", {{"Origin", "https://a.example"}});

    response res;
    res.fields.emplace_back("Vary", "Accept-Encoding");
    policy.decorate(req, res);
    CHECK(only_field(res, "Vary") == "Accept-Encoding, Origin");

    response already;
    already.fields.emplace_back("vary", "origin");
    policy.decorate(req, already);
    CHECK(already.fields.front().second == "origin");
    CHECK(already.fields.size() == 2);  // vary + Access-Control-Allow-Origin

    response star;
    star.fields.emplace_back("Vary", "*");
    policy.decorate(req, star);
    CHECK(only_field(star, "Vary") == "*");
}

TEST_CASE("cors: decorate adds no Access-Control fields without Origin or for another origin",
          "[cors]") {
    cors_config config = listed({"https://a.example"});
    config.allow_credentials = true;
    config.exposed_headers = {"X-A"};
    const cors_policy policy(config);

    for (const auto& req :
         {make_request("GET", {}), make_request("GET", {{"Origin", "https://b.example"}}),
          make_request("POST", {{"Origin", "null"}})}) {
        const auto res = decorated(policy, req);
        CHECK_FALSE(has_access_control_field(res));
        // The answer depends on Origin, so even these say so to caches.
        CHECK(only_field(res, "Vary") == "Origin");
        CHECK(res.status == 200);
        CHECK(res.body == "data");
    }
}

TEST_CASE("cors: max_age 0 sends no Access-Control-Max-Age", "[cors]") {
    cors_config config = listed({"https://a.example"});
    config.max_age = std::chrono::seconds(0);
    auto res = answer(cors_policy(config), preflight("https://a.example", "PUT"));
    CHECK(res.status == 204);
    CHECK_FALSE(only_field(res, "Access-Control-Max-Age"));

    config.max_age = std::chrono::hours(2);
    res = answer(cors_policy(config), preflight("https://a.example", "PUT"));
    CHECK(only_field(res, "Access-Control-Max-Age") == "7200");
}

TEST_CASE("cors: origins that are not scheme://host[:port] are refused at setup", "[cors]") {
    using Catch::Matchers::Contains;
    for (std::string origin : {"https://a.example", "http://localhost:3000", "HTTP://A.EXAMPLE",
                               "http://127.0.0.1:8080", "http://[::1]:5173", "null", "app://local",
                               "chrome-extension://abcdef", "https://a.example:1"}) {
        CAPTURE(origin);
        CHECK_NOTHROW(cors_policy(listed({origin})));
    }
    for (std::string origin : {"https://a.example/",
                               "https://a.example/path",
                               "https://a.example?x=1",
                               "https://a.example#top",
                               "a.example",
                               "https//a.example",
                               "://a.example",
                               "https://",
                               "https://user@a.example",
                               "https://a.example:",
                               "https://a.example:99999",
                               "https://a.example:8x",
                               "https://a example",
                               " https://a.example",
                               "1http://a.example",
                               "https://a.example:443",
                               "http://a.example:80",
                               "",
                               "**",
                               "https://*.example"}) {
        CAPTURE(origin);
        CHECK_THROWS_AS(cors_policy(listed({origin})), std::invalid_argument);
    }
    CHECK_THROWS_WITH(cors_policy(listed({"https://a.example/"})), Contains("https://a.example/"));
}

TEST_CASE("cors: other faulty configs are refused at setup", "[cors]") {
    using Catch::Matchers::Contains;
    CHECK_THROWS_WITH(cors_policy(listed({})), Contains("allowed_origins"));

    cors_config config = listed({"*"});
    config.allow_credentials = true;
    CHECK_THROWS_WITH(cors_policy(config), Contains("allow_credentials"));

    CHECK_THROWS_AS(cors_policy(listed({"*", "https://a.example"})), std::invalid_argument);

    config = listed({"https://a.example"});
    config.allowed_methods = {"GET", "BAD METHOD"};
    CHECK_THROWS_WITH(cors_policy(config), Contains("BAD METHOD"));
    config.allowed_methods = {"*"};
    CHECK_THROWS_AS(cors_policy(config), std::invalid_argument);
    config.allowed_methods = {};
    CHECK_NOTHROW(cors_policy(config));

    config = listed({"https://a.example"});
    config.allowed_headers = {"X-Ok", "X:Bad"};
    CHECK_THROWS_WITH(cors_policy(config), Contains("X:Bad"));
    config.allowed_headers = {"*", "X-Ok"};
    CHECK_THROWS_WITH(cors_policy(config), Contains("only"));
    config.allowed_headers = {};
    CHECK_NOTHROW(cors_policy(config));

    config = listed({"https://a.example"});
    config.exposed_headers = {""};
    CHECK_THROWS_AS(cors_policy(config), std::invalid_argument);
    config.exposed_headers = {"*"};
    CHECK_NOTHROW(cors_policy(config));
    config.allow_credentials = true;
    CHECK_THROWS_AS(cors_policy(config), std::invalid_argument);

    config = listed({"https://a.example"});
    config.max_age = std::chrono::seconds(-1);
    CHECK_THROWS_WITH(cors_policy(config), Contains("max_age"));
}

TEST_CASE("cors: with an explicit header list and no request headers, none are answered",
          "[cors]") {
    cors_config config = listed({"https://a.example"});
    config.allowed_headers = {};
    const cors_policy policy(config);
    auto res = answer(policy, preflight("https://a.example", "PUT"));
    CHECK(res.status == 204);
    CHECK_FALSE(only_field(res, "Access-Control-Allow-Headers"));
    res = answer(policy, preflight("https://a.example", "PUT",
                                   {{"Access-Control-Request-Headers", "content-type"}}));
    CHECK(res.status == 403);
}

}  // namespace unit_test_web_cors
