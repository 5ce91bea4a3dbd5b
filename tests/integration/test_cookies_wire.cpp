// Cookies over the wire: reading Cookie headers (one or several, quoted values, pairs that
// are skipped), writing one Set-Cookie field per cookie with every attribute, removing a
// cookie, and a cookie the handler cannot set answered 500 without leaking Set-Cookie.

#include <catch2/catch.hpp>
#include <chrono>
#include <stdexcept>
#include <string>
#include <vector>

#include "support/raw_client.hpp"
#include "support/test_server.hpp"

namespace wire_test_cookies_wire {

using namespace tern_test;

namespace {

// The values of every Set-Cookie field, in the order they arrived.
std::vector<std::string> set_cookies(const response& r) {
    std::vector<std::string> out;
    for (const auto& [name, value] : r.headers) {
        if (iequals(name, "Set-Cookie")) out.push_back(value);
    }
    return out;
}

// Routes that echo what the server read from the Cookie header(s).
void echo_routes(tern::app& app) {
    // GET /one?name=x: the value of cookie x, or "<none>".
    app.get("/one", [](tern::context& ctx) {
        const auto value = ctx.cookie(ctx.query_param("name").value_or(""));
        ctx.text(value ? "[" + std::string(*value) + "]" : std::string("<none>"));
    });
    // GET /all: every cookie as name=[value] lines, in order.
    app.get("/all", [](tern::context& ctx) {
        std::string out;
        for (const auto& [name, value] : ctx.cookies()) {
            out.append(name).append("=[").append(value).append("]\n");
        }
        ctx.text(out);
    });
}

}  // namespace

TEST_CASE("ctx.cookie reads a cookie from one Cookie header", "[wire][cookies]") {
    test_server server(echo_routes);
    const std::string cookie = "Cookie: session=abc123; theme=dark; lang=en-GB\r\n";
    auto r = fetch(server, get_request("/one?name=theme", cookie));
    INFO(describe(r));
    CHECK(r.status == 200);
    CHECK(r.body == "[dark]");
    r = fetch(server, get_request("/one?name=session", cookie));
    CHECK(r.body == "[abc123]");
    r = fetch(server, get_request("/one?name=lang", cookie));
    CHECK(r.body == "[en-GB]");
    // Names are case-sensitive; absent ones are nullopt.
    r = fetch(server, get_request("/one?name=Theme", cookie));
    CHECK(r.body == "<none>");
    r = fetch(server, get_request("/one?name=missing", cookie));
    CHECK(r.body == "<none>");
    // No Cookie header at all.
    r = fetch(server, get_request("/one?name=theme"));
    CHECK(r.body == "<none>");
    r = fetch(server, get_request("/all"));
    CHECK(r.status == 200);
    CHECK(r.body.empty());
}

TEST_CASE("cookies() lists the cookies of several Cookie headers in order, the first name wins",
          "[wire][cookies]") {
    test_server server(echo_routes);
    const std::string cookies = "Cookie: a=1; b=2\r\nX-Between: y\r\ncookie: a=3;c=4\r\n";
    auto r = fetch(server, get_request("/all", cookies));
    INFO(describe(r));
    CHECK(r.status == 200);
    CHECK(r.body == "a=[1]\nb=[2]\na=[3]\nc=[4]\n");
    r = fetch(server, get_request("/one?name=a", cookies));
    CHECK(r.body == "[1]");
    r = fetch(server, get_request("/one?name=c", cookies));
    CHECK(r.body == "[4]");
}

TEST_CASE("quoted cookie values lose their quotes, empty values and odd pairs", "[wire][cookies]") {
    test_server server(echo_routes);
    // A quoted value, an empty value, a value with '=' in it, a pair without '=', an empty
    // name and a name that is not a token (skipped), spaces around ';'.
    const std::string cookies =
        "Cookie: q=\"hello world\";  empty=; b64=YWJj=; novalue ; =anon; bad name=1 ; last=z\r\n";
    auto r = fetch(server, get_request("/all", cookies));
    INFO(describe(r));
    CHECK(r.status == 200);
    CHECK(r.body == "q=[hello world]\nempty=[]\nb64=[YWJj=]\nlast=[z]\n");
    r = fetch(server, get_request("/one?name=q", cookies));
    CHECK(r.body == "[hello world]");
    r = fetch(server, get_request("/one?name=empty", cookies));
    CHECK(r.body == "[]");
    r = fetch(server, get_request("/one?name=novalue", cookies));
    CHECK(r.body == "<none>");
    // A lone quote is not a quoted value: it stays.
    r = fetch(server, get_request("/one?name=x", "Cookie: x=\"half\r\n"));
    CHECK(r.body == "[\"half]");
}

TEST_CASE("each ctx.cookie is its own Set-Cookie field line, in order", "[wire][cookies]") {
    test_server server([](tern::app& app) {
        app.get("/login", [](tern::context& ctx) {
            ctx.cookie("session", "abc123");
            ctx.cookie("theme", "dark");
            ctx.cookie("lang", "en-GB");
            ctx.text("welcome");
        });
        app.get("/one", [](tern::context& ctx) { ctx.cookie("only", "1").text("one"); });
        app.get("/none", [](tern::context& ctx) { ctx.text("none"); });
    });
    auto r = fetch(server, get_request("/login"));
    INFO(describe(r));
    CHECK(r.status == 200);
    CHECK(r.body == "welcome");
    check_common_headers(r);
    CHECK(r.header_count("Set-Cookie") == 3);
    CHECK(set_cookies(r) == std::vector<std::string>{"session=abc123; Path=/", "theme=dark; Path=/",
                                                     "lang=en-GB; Path=/"});

    r = fetch(server, get_request("/one"));
    CHECK(r.header_count("Set-Cookie") == 1);
    CHECK(r.header("Set-Cookie") == "only=1; Path=/");

    r = fetch(server, get_request("/none"));
    CHECK(r.header_count("Set-Cookie") == 0);
}

TEST_CASE("every cookie attribute reaches the wire", "[wire][cookies]") {
    test_server server([](tern::app& app) {
        app.get("/attrs", [](tern::context& ctx) {
            tern::cookie_options all;
            all.path = "/app";
            all.domain = "example.com";
            all.max_age = std::chrono::hours(1);
            // 2030-01-15T08:00:00Z
            all.expires = std::chrono::system_clock::from_time_t(1894694400);
            all.secure = true;
            all.http_only = true;
            all.same_site = tern::same_site::strict;
            ctx.cookie("full", "v1", all);

            tern::cookie_options lax;
            lax.same_site = tern::same_site::lax;
            lax.http_only = true;
            ctx.cookie("lax", "v2", lax);

            tern::cookie_options none;
            none.same_site = tern::same_site::none;
            none.secure = true;
            ctx.cookie("cross", "v3", none);

            tern::cookie_options bare;
            bare.path.clear();  // no Path attribute at all
            ctx.cookie("bare", "v4", bare);

            tern::cookie_options negative;
            negative.max_age = std::chrono::seconds(-5);  // written as 0: delete now
            ctx.cookie("neg", "v5", negative);

            ctx.text("ok");
        });
    });
    const auto r = fetch(server, get_request("/attrs"));
    INFO(describe(r));
    CHECK(r.status == 200);
    REQUIRE(r.header_count("Set-Cookie") == 5);
    const auto values = set_cookies(r);
    CHECK(values[0] ==
          "full=v1; Path=/app; Domain=example.com; Max-Age=3600; "
          "Expires=Tue, 15 Jan 2030 08:00:00 GMT; Secure; HttpOnly; SameSite=Strict");
    CHECK(values[1] == "lax=v2; Path=/; HttpOnly; SameSite=Lax");
    CHECK(values[2] == "cross=v3; Path=/; Secure; SameSite=None");
    CHECK(values[3] == "bare=v4");
    CHECK(values[4] == "neg=v5; Path=/; Max-Age=0");
}

TEST_CASE("remove_cookie sends an empty value, Max-Age=0 and an Expires in 1970",
          "[wire][cookies]") {
    test_server server([](tern::app& app) {
        app.get("/logout", [](tern::context& ctx) {
            ctx.remove_cookie("session");
            tern::cookie_options scoped;
            scoped.path = "/app";
            scoped.domain = "example.com";
            scoped.secure = true;
            ctx.remove_cookie("prefs", scoped);
            ctx.text("bye");
        });
    });
    const auto r = fetch(server, get_request("/logout", "Cookie: session=abc; prefs=x\r\n"));
    INFO(describe(r));
    CHECK(r.status == 200);
    CHECK(r.body == "bye");
    REQUIRE(r.header_count("Set-Cookie") == 2);
    CHECK(set_cookies(r) ==
          std::vector<std::string>{
              "session=; Path=/; Max-Age=0; Expires=Thu, 01 Jan 1970 00:00:00 GMT",
              "prefs=; Path=/app; Domain=example.com; Max-Age=0; "
              "Expires=Thu, 01 Jan 1970 00:00:00 GMT; Secure"});
}

TEST_CASE("a cookie the handler may not set is a 500 and no Set-Cookie leaks", "[wire][cookies]") {
    test_server server([](tern::app& app) {
        // Each route first sets a good cookie, then one that is refused.
        app.get("/space", [](tern::context& ctx) {
            ctx.cookie("good", "1");
            ctx.cookie("bad", "two words");
            ctx.text("unreachable");
        });
        app.get("/semicolon", [](tern::context& ctx) {
            ctx.cookie("good", "1");
            ctx.cookie("bad", "a;Domain=evil.example");
            ctx.text("unreachable");
        });
        app.get("/crlf", [](tern::context& ctx) {
            ctx.cookie("good", "1");
            ctx.cookie("bad", "a\r\nX-Injected: 1");
            ctx.text("unreachable");
        });
        app.get("/name", [](tern::context& ctx) {
            ctx.cookie("good", "1");
            ctx.cookie("bad name", "v");
            ctx.text("unreachable");
        });
        app.get("/path", [](tern::context& ctx) {
            ctx.cookie("good", "1");
            tern::cookie_options o;
            o.path = "/a; Secure";
            ctx.cookie("bad", "v", o);
            ctx.text("unreachable");
        });
        app.get("/samesite", [](tern::context& ctx) {
            ctx.cookie("good", "1");
            tern::cookie_options o;
            o.same_site = tern::same_site::none;  // without Secure
            ctx.cookie("cross", "v", o);
            ctx.text("unreachable");
        });
        app.get("/caught", [](tern::context& ctx) {
            // The handler may catch the refusal itself and carry on.
            try {
                ctx.cookie("bad", "\"quoted\"");
            } catch (const std::invalid_argument&) {
                ctx.cookie("fallback", "1");
            }
            ctx.text("caught");
        });
    });
    for (const char* path : {"/space", "/semicolon", "/crlf", "/name", "/path", "/samesite"}) {
        INFO("path " << path);
        raw_client c = server.client();
        c.send(get_request(path));
        const auto r = c.read_response();
        INFO(describe(r));
        CHECK(r.status == 500);
        check_common_headers(r);
        CHECK(r.header_count("Set-Cookie") == 0);
        CHECK_FALSE(r.header("X-Injected"));
        CHECK(r.body == "Internal Server Error");
        // The 500 is the application's fault, not the client's: the connection stays usable.
        c.send(get_request(alive_path));
        const auto again = c.read_response();
        CHECK(again.status == 200);
        CHECK(again.body == "alive");
    }
    const auto r = fetch(server, get_request("/caught"));
    INFO(describe(r));
    CHECK(r.status == 200);
    CHECK(r.body == "caught");
    CHECK(r.header_count("Set-Cookie") == 1);
    CHECK(r.header("Set-Cookie") == "fallback=1; Path=/");
    check_still_serving(server.port());
}

TEST_CASE("a cookie set before an http_error is dropped, one on a deliberate error status stays",
          "[wire][cookies]") {
    test_server server([](tern::app& app) {
        app.get("/thrown", [](tern::context& ctx) {
            ctx.cookie("session", "new");
            throw tern::forbidden("no");
        });
        app.get("/status", [](tern::context& ctx) {
            ctx.remove_cookie("session");
            ctx.status(401);
        });
        app.after("/after", [](tern::context& ctx) { ctx.cookie("late", "1"); });
        app.get("/after", [](tern::context&) { throw tern::not_found("gone"); });
    });
    auto r = fetch(server, get_request("/thrown"));
    INFO(describe(r));
    CHECK(r.status == 403);
    CHECK(r.body == "no");
    CHECK(r.header_count("Set-Cookie") == 0);

    r = fetch(server, get_request("/status"));
    CHECK(r.status == 401);
    CHECK(r.body == "Unauthorized");
    CHECK(r.header_count("Set-Cookie") == 1);
    CHECK(r.header("Set-Cookie") ==
          "session=; Path=/; Max-Age=0; Expires=Thu, 01 Jan 1970 00:00:00 GMT");

    // An after filter runs after the mapping, so what it sets is sent.
    r = fetch(server, get_request("/after"));
    CHECK(r.status == 404);
    CHECK(r.body == "gone");
    CHECK(r.header("Set-Cookie") == "late=1; Path=/");
}

}  // namespace wire_test_cookies_wire
