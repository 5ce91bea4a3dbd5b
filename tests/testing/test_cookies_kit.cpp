// The test kit's cookie jar against a real tern server: cookies kept between calls, sent
// only within their path, replaced, removed by Max-Age=0, and set by hand.

#include "testing/canned_server.hpp"

#include <catch2/catch.hpp>
#include <tern/tern.hpp>
#include <tern/testing.hpp>

#include <string>

namespace kit_test_cookies_kit {

namespace {

// Echoes the Cookie header the request carried ("-" when none).
void echo_cookies(tern::context& ctx) { ctx.text(std::string(ctx.header("cookie").value_or("-"))); }

}  // namespace

TEST_CASE("a cookie the server sets is sent back on the next calls until the server removes it",
          "[testing][cookies]") {
    tern::app app;
    app.threads(2);
    app.post("/login", [](tern::context& ctx) {
        tern::cookie_options options;
        options.http_only = true;
        options.max_age = std::chrono::hours(1);
        ctx.cookie("session", std::string(ctx.body()), options).status(204);
    });
    app.post("/logout", [](tern::context& ctx) { ctx.remove_cookie("session").status(204); });
    app.get("/me", echo_cookies);
    tern::testing::test(app, [](tern::testing::server&, tern::testing::client& http) {
        CHECK(http.get("/me").body == "-");
        CHECK(http.post("/login", "abc").status == 204);
        CHECK(http.cookie("session") == "abc");
        CHECK(http.get("/me").body == "session=abc");
        CHECK(http.get("/me").body == "session=abc");  // kept, not used up
        http.post("/login", "def");                    // same name and path: replaced
        CHECK(http.get("/me").body == "session=def");
        CHECK(http.post("/logout", "").status == 204);  // Max-Age=0
        CHECK_FALSE(http.cookie("session").has_value());
        CHECK(http.get("/me").body == "-");
    });
}

TEST_CASE("a cookie with a Path goes only to targets within that path, longer paths first",
          "[testing][cookies]") {
    tern::app app;
    app.threads(2);
    app.get("/set", [](tern::context& ctx) {
        tern::cookie_options admin;
        admin.path = "/admin";
        ctx.cookie("site", "1").cookie("area", "2", admin).status(204);
    });
    app.get("/me", echo_cookies);
    app.get("/admin/me", echo_cookies);
    app.get("/administrator", echo_cookies);
    tern::testing::test(app, [](tern::testing::server&, tern::testing::client& http) {
        http.get("/set");
        CHECK(http.get("/me").body == "site=1");
        CHECK(http.get("/admin/me?x=1").body == "area=2; site=1");
        // "/admin" does not cover "/administrator" (RFC 6265 path-match).
        CHECK(http.get("/administrator").body == "site=1");
        http.clear_cookies();
        CHECK(http.get("/admin/me").body == "-");
    });
}

TEST_CASE("a cookie put by hand is sent, and a client's jar is its own", "[testing][cookies]") {
    tern::app app;
    app.threads(2);
    app.get("/me", echo_cookies);
    tern::testing::test(app, [](tern::testing::server& server, tern::testing::client& http) {
        http.cookie("token", "t1");
        CHECK(http.get("/me").body == "token=t1");
        auto other = server.make_client();
        CHECK(other.get("/me").body == "-");
    });
}

TEST_CASE(
    "Expires in the past removes a cookie, in the future keeps it, and a pair without '=' is "
    "ignored",
    "[testing][cookies]") {
    tern_testing_test::canned_server setter(
        "HTTP/1.1 204 No Content\r\n"
        "Set-Cookie: keep=1; Expires=Thu, 01 Jan 2098 00:00:00 GMT\r\n"
        "Set-Cookie: old=2; Expires=Thu, 01 Jan 1970 00:00:00 GMT\r\n"
        "Set-Cookie: negative=3; Max-Age=-1\r\n"
        "Set-Cookie: later=4; Max-Age=60; Expires=Thu, 01 Jan 1970 00:00:00 GMT\r\n"
        "Set-Cookie: broken; Path=/\r\n\r\n",
        true);
    tern::testing::client http(setter.port());
    http.cookie("old", "before");
    CHECK(http.get("/").status == 204);
    CHECK(http.cookie("keep") == "1");
    CHECK_FALSE(http.cookie("old").has_value());
    CHECK_FALSE(http.cookie("negative").has_value());
    CHECK(http.cookie("later") == "4");  // Max-Age wins over Expires
    CHECK_FALSE(http.cookie("broken").has_value());
}

}  // namespace kit_test_cookies_kit
