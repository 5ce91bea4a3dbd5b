// Sessions over the wire (docs/sessions.md): a log-in flow whose cookie comes back to the
// same session, the cookie's attributes over plain HTTP and TLS, rotation on log-in, a
// made-up id never adopted (fixation), idle expiry, log-out clearing the cookie, sessions
// across a blocking handler, a flood of new sessions that evicts no established one, a store
// that fails, ctx.session() without app.sessions(), and signed cookies (a changed one reads as
// absent).

#include <catch2/catch.hpp>
#include <chrono>
#include <memory>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "support/eventually.hpp"
#include "support/raw_client.hpp"
#include "support/test_certs.hpp"
#include "support/test_server.hpp"

namespace wire_test_sessions_wire {

using namespace tern_test;
using namespace std::chrono_literals;

namespace {

// The Set-Cookie fields of `r`.
std::vector<std::string> set_cookies(const response& r) {
    std::vector<std::string> out;
    for (const auto& [name, value] : r.headers) {
        if (iequals(name, "Set-Cookie")) out.push_back(value);
    }
    return out;
}

// The one Set-Cookie of `r` for the session cookie; fails the test when there is none.
std::string session_set_cookie(const response& r, const std::string& name = "tern_session") {
    INFO(describe(r));
    const auto all = set_cookies(r);
    REQUIRE(all.size() == 1);
    REQUIRE(all[0].starts_with(name + "="));
    return all[0];
}

// The id a Set-Cookie value carries.
std::string id_of(const std::string& set_cookie) {
    const auto eq = set_cookie.find('=');
    return set_cookie.substr(eq + 1, set_cookie.find(';') - eq - 1);
}

std::string cookie_header(const std::string& id) { return "Cookie: tern_session=" + id + "\r\n"; }

// POST /login?user=x: log-in (rotates the id); GET /me: who is logged in (reading only);
// POST /visit: counts visits in the session; POST /logout: invalidate.
void session_routes(tern::app& app) {
    app.post("/login", [](tern::context& ctx) {
        auto& s = ctx.session();
        s.regenerate();
        s.set("user", ctx.query_param("user", "nobody"));
        ctx.text("welcome");
    });
    app.get("/me", [](tern::context& ctx) {
        ctx.text(ctx.session().get("user", "anonymous") + " " + ctx.session().get("visits", "0"));
    });
    app.post("/visit", [](tern::context& ctx) {
        auto& s = ctx.session();
        s.set("visits", std::to_string(std::stoi(s.get("visits", "0")) + 1));
        ctx.text(s.get("visits", "0"));
    });
    app.post("/logout", [](tern::context& ctx) {
        ctx.session().invalidate();
        ctx.text("bye");
    });
}

tern::config with_sessions(tern::session_config sessions = {}) {
    auto cfg = test_config();
    cfg.sessions = std::move(sessions);
    return cfg;
}

std::string login(const test_server& server, const std::string& user,
                  const std::string& extra = {}) {
    const auto r = fetch(server, body_request("POST", "/login?user=" + user, "", extra));
    REQUIRE(r.status == 200);
    return id_of(session_set_cookie(r));
}

}  // namespace

TEST_CASE("sessions: a log-in sets an HttpOnly SameSite=Lax cookie that brings the session back",
          "[wire][sessions]") {
    test_server server(session_routes, with_sessions());
    auto r = fetch(server, body_request("POST", "/login?user=alice", ""));
    INFO(describe(r));
    REQUIRE(r.status == 200);
    const auto cookie = session_set_cookie(r);
    CHECK(cookie.find("; Path=/") != std::string::npos);
    CHECK(cookie.find("; HttpOnly") != std::string::npos);
    CHECK(cookie.find("; SameSite=Lax") != std::string::npos);
    CHECK(cookie.find("Secure") == std::string::npos);  // plain HTTP
    CHECK(cookie.find("Max-Age") == std::string::npos);
    const auto id = id_of(cookie);
    CHECK(id.size() == 43);

    // The cookie sent back, on another connection, finds the same session; a request that
    // only reads it gets no Set-Cookie.
    r = fetch(server, get_request("/me", cookie_header(id)));
    CHECK(r.body == "alice 0");
    CHECK(set_cookies(r).empty());
    // A change keeps the id and sends the cookie again.
    r = fetch(server, body_request("POST", "/visit", "", cookie_header(id)));
    CHECK(r.body == "1");
    CHECK(id_of(session_set_cookie(r)) == id);
    r = fetch(server, get_request("/me", cookie_header(id)));
    CHECK(r.body == "alice 1");
    // Without the cookie: a new, empty session, and nothing set.
    r = fetch(server, get_request("/me"));
    CHECK(r.body == "anonymous 0");
    CHECK(set_cookies(r).empty());
}

TEST_CASE("sessions: the cookie is Secure over TLS", "[wire][sessions][tls]") {
    static const tern_test::test_ca ca;
    const auto pair = ca.issue({"localhost"});
    auto cfg = with_sessions();
    cfg.tls.emplace();
    cfg.tls->certificates.push_back({});
    cfg.tls->certificates.back().cert_pem = pair.cert_pem;
    cfg.tls->certificates.back().key_pem = pair.key_pem;
    test_server server(session_routes, cfg);
    raw_client c(server.port());
    tls_options o;
    o.server_name = "localhost";
    o.ca_pem = ca.cert_pem();
    const bool ok = c.start_tls(o);
    INFO(c.tls_error());
    REQUIRE(ok);
    c.send(body_request("POST", "/login?user=alice", ""));
    const auto r = c.read_response();
    const auto cookie = session_set_cookie(r);
    CHECK(cookie.find("; Secure") != std::string::npos);
    CHECK(cookie.find("; HttpOnly") != std::string::npos);
    c.send(get_request("/me", cookie_header(id_of(cookie))));
    CHECK(c.read_response().body == "alice 0");
}

TEST_CASE("sessions: log-in rotates the id and the old cookie no longer finds the session",
          "[wire][sessions]") {
    test_server server(session_routes, with_sessions());
    // An anonymous session first (a visit), then a log-in in it.
    auto r = fetch(server, body_request("POST", "/visit", ""));
    const auto before = id_of(session_set_cookie(r));
    const auto after = login(server, "alice", cookie_header(before));
    CHECK(after != before);
    CHECK(fetch(server, get_request("/me", cookie_header(after))).body == "alice 1");
    CHECK(fetch(server, get_request("/me", cookie_header(before))).body == "anonymous 0");
}

TEST_CASE("sessions: a made-up session id is never adopted (fixation)", "[wire][sessions]") {
    test_server server(session_routes, with_sessions());
    const std::string made_up = "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA";  // 43, well-formed
    REQUIRE(made_up.size() == 43);
    // Reading with it: an empty session, nothing set.
    auto r = fetch(server, get_request("/me", cookie_header(made_up)));
    CHECK(r.body == "anonymous 0");
    CHECK(set_cookies(r).empty());
    // Writing with it (no log-in rotation here): the server issues its own id.
    r = fetch(server, body_request("POST", "/visit", "", cookie_header(made_up)));
    const auto issued = id_of(session_set_cookie(r));
    CHECK(issued != made_up);
    CHECK(issued.size() == 43);
    CHECK(fetch(server, get_request("/me", cookie_header(made_up))).body == "anonymous 0");
    CHECK(fetch(server, get_request("/me", cookie_header(issued))).body == "anonymous 1");
    // Malformed ids (too long, bad characters, huge) are ignored the same way.
    for (const std::string& bad :
         {made_up + "A", std::string(43, '.'), std::string(3000, 'A'), std::string("\"quoted\"")}) {
        r = fetch(server, body_request("POST", "/visit", "", cookie_header(bad)));
        INFO(describe(r));
        CHECK(r.body == "1");
        CHECK(id_of(session_set_cookie(r)) != bad);
    }
    check_still_serving(server.port());
}

TEST_CASE("sessions: a session unused for idle_timeout has ended", "[wire][sessions]") {
    tern::session_config sessions;
    sessions.idle_timeout = 1s;
    test_server server(session_routes, with_sessions(sessions));
    const auto id = login(server, "alice");
    // Each try first stays away longer than the idle timeout (a request in between would
    // keep the session alive), then asks.
    CHECK(eventually(
        [&] {
            std::this_thread::sleep_for(1100ms);
            return fetch(server, get_request("/me", cookie_header(id))).body == "anonymous 0";
        },
        30s));
}

TEST_CASE("sessions: log-out clears the cookie and the old id stops working", "[wire][sessions]") {
    test_server server(session_routes, with_sessions());
    const auto id = login(server, "alice");
    const auto r = fetch(server, body_request("POST", "/logout", "", cookie_header(id)));
    INFO(describe(r));
    CHECK(r.body == "bye");
    const auto cleared = session_set_cookie(r);
    CHECK(cleared.starts_with("tern_session=;"));
    CHECK(cleared.find("Max-Age=0") != std::string::npos);
    CHECK(cleared.find("; HttpOnly") != std::string::npos);
    CHECK(fetch(server, get_request("/me", cookie_header(id))).body == "anonymous 0");
}

TEST_CASE("sessions: 200 log-ins get 200 distinct well-formed ids", "[wire][sessions][entropy]") {
    test_server server(session_routes, with_sessions());
    std::set<std::string> ids;
    raw_client c(server.port());
    for (int i = 0; i < 200; ++i) {
        c.send(body_request("POST", "/login?user=u" + std::to_string(i), ""));
        const auto id = id_of(session_set_cookie(c.read_response()));
        CHECK(id.size() == 43);
        CHECK(id.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                                   "0123456789-_") == std::string::npos);
        ids.insert(id);
    }
    CHECK(ids.size() == 200);
}

TEST_CASE("sessions: a before filter, a blocking handler and an after filter share the session",
          "[wire][sessions][blocking]") {
    test_server server(
        [](tern::app& app) {
            app.before("/work", [](tern::context& ctx) { ctx.session().set("before", "yes"); });
            app.get("/work", tern::blocking([](tern::context& ctx) {
                        auto& s = ctx.session();
                        s.set("handler", s.get("before", "missing"));
                        ctx.text("ok");
                    }));
            app.after("/work", [](tern::context& ctx) { ctx.session().set("after", "yes"); });
            app.get("/show", [](tern::context& ctx) {
                const auto& v = ctx.session().values();
                std::string out;
                for (const auto& [k, val] : v) out += k + "=" + val + ";";
                ctx.text(out);
            });
        },
        with_sessions());
    auto r = fetch(server, get_request("/work"));
    INFO(describe(r));
    CHECK(r.body == "ok");
    const auto id = id_of(session_set_cookie(r));
    CHECK(fetch(server, get_request("/show", cookie_header(id))).body ==
          "after=yes;before=yes;handler=yes;");
}

TEST_CASE("sessions: a deferred answer saves what the handler and the completion set",
          "[wire][sessions][deferred]") {
    test_server server(
        [](tern::app& app) {
            app.get("/later", [](tern::context& ctx) {
                ctx.session().set("handler", "yes");
                std::thread([reply = ctx.defer()] {
                    reply.complete([](tern::context& c) {
                        c.session().set("completion", "yes");
                        c.text("done");
                    });
                }).detach();
            });
            // Throws after defer(): the exception answers; the session is still saved.
            app.get("/throws", [](tern::context& ctx) {
                (void)ctx.defer();
                ctx.session().set("threw", "yes");
                throw tern::http_error(409, "conflict");
            });
            app.get("/show", [](tern::context& ctx) {
                std::string out;
                for (const auto& [k, v] : ctx.session().values()) out += k + "=" + v + ";";
                ctx.text(out);
            });
        },
        with_sessions());
    auto r = fetch(server, get_request("/later"));
    INFO(describe(r));
    CHECK(r.body == "done");
    auto id = id_of(session_set_cookie(r));
    CHECK(fetch(server, get_request("/show", cookie_header(id))).body ==
          "completion=yes;handler=yes;");
    r = fetch(server, get_request("/throws"));
    CHECK(r.status == 409);
    id = id_of(session_set_cookie(r));
    CHECK(fetch(server, get_request("/show", cookie_header(id))).body == "threw=yes;");
}

TEST_CASE("sessions: a flood of new sessions evicts neither a log-in nor a returning visitor",
          "[wire][sessions][flood]") {
    tern::session_config sessions;
    sessions.max_sessions = 16;  // 2 for new sessions, 14 for established ones
    test_server server(session_routes, with_sessions(sessions));
    const auto alice = login(server, "alice");
    // Bob visits twice without logging in: a session used on a second request.
    const auto bob = id_of(session_set_cookie(fetch(server, body_request("POST", "/visit", ""))));
    REQUIRE(fetch(server, body_request("POST", "/visit", "", cookie_header(bob))).body == "2");

    // Twice the store's capacity of anonymous requests that each make a session, on one
    // connection, without cookies.
    raw_client flood(server.port());
    std::vector<std::string> flooded;
    for (int i = 0; i < 32; ++i) {
        flood.send(body_request("POST", "/visit", ""));
        const auto r = flood.read_response();
        REQUIRE(r.body == "1");
        flooded.push_back(id_of(session_set_cookie(r)));
    }
    CHECK(fetch(server, get_request("/me", cookie_header(alice))).body == "alice 0");
    CHECK(fetch(server, get_request("/me", cookie_header(bob))).body == "anonymous 2");
    // The flood's own sessions took turns in the room for new ones: the last still works,
    // the first was evicted.
    CHECK(fetch(server, get_request("/me", cookie_header(flooded.back()))).body == "anonymous 1");
    CHECK(fetch(server, get_request("/me", cookie_header(flooded.front()))).body == "anonymous 0");
}

namespace {

// A store of the application's own that cannot save (a database that is down).
struct failing_store final : tern::session_store {
    std::optional<tern::session_data> load(std::string_view) override { return std::nullopt; }
    void save(std::string_view, const tern::session_data&,
              std::chrono::system_clock::time_point) override {
        throw std::runtime_error("the database is down");
    }
    void erase(std::string_view) override {}
};

}  // namespace

TEST_CASE("sessions: a store that cannot save turns the answer into a 500 without a cookie",
          "[wire][sessions]") {
    tern::session_config sessions;
    sessions.store = std::make_shared<failing_store>();
    test_server server(session_routes, with_sessions(sessions));
    const auto r = fetch(server, body_request("POST", "/login?user=alice", ""));
    INFO(describe(r));
    CHECK(r.status == 500);
    CHECK(set_cookies(r).empty());
    CHECK(r.body.find("welcome") == std::string::npos);
    check_still_serving(server.port());
}

TEST_CASE("sessions: ctx.session() without app.sessions() is a 500 and bad settings throw",
          "[wire][sessions]") {
    test_server server(session_routes);
    const auto r = fetch(server, body_request("POST", "/visit", ""));
    INFO(describe(r));
    CHECK(r.status == 500);
    CHECK(set_cookies(r).empty());
    check_still_serving(server.port());

    tern::app app;
    tern::session_config bad;
    bad.cookie_name = "has space";
    CHECK_THROWS_AS(app.sessions(bad), std::invalid_argument);
    bad = {};
    bad.idle_timeout = 0s;
    CHECK_THROWS_AS(app.sessions(bad), std::invalid_argument);
    CHECK_NOTHROW(app.sessions());
}

// ---- signed cookies ----------------------------------------------------------------------

namespace {

const std::string secret = "0123456789abcdef0123456789abcdef";  // 32 bytes, tests only

void signed_routes(tern::app& app) {
    app.get("/sign", [](tern::context& ctx) {
        tern::cookie_options options;
        options.http_only = true;
        ctx.set_signed_cookie("prefs", ctx.query_param("v", "none"), options);
        ctx.text("signed");
    });
    app.get("/read", [](tern::context& ctx) {
        const auto v = ctx.signed_cookie("prefs");
        ctx.text(v ? "[" + *v + "]" : std::string("<absent>"));
    });
}

}  // namespace

TEST_CASE("signed cookies: a signed value reads back, a changed one reads as absent",
          "[wire][signed-cookies]") {
    auto cfg = test_config();
    cfg.cookie_secret = secret;
    test_server server(signed_routes, cfg);
    auto r = fetch(server, get_request("/sign?v=dark%20theme"));
    INFO(describe(r));
    const auto all = set_cookies(r);
    REQUIRE(all.size() == 1);
    REQUIRE(all[0].starts_with("prefs="));
    CHECK(all[0].find("; HttpOnly") != std::string::npos);
    const auto value = id_of(all[0]);
    const auto dot = value.rfind('.');
    REQUIRE(dot != std::string::npos);

    r = fetch(server, get_request("/read", "Cookie: prefs=" + value + "\r\n"));
    CHECK(r.body == "[dark theme]");
    // The value part swapped for another (base64url of "light"), the signature kept.
    r = fetch(server, get_request("/read", "Cookie: prefs=bGlnaHQ" + value.substr(dot) + "\r\n"));
    CHECK(r.body == "<absent>");
    // One character of the signature changed.
    auto changed = value;
    changed.back() = changed.back() == 'A' ? 'B' : 'A';
    r = fetch(server, get_request("/read", "Cookie: prefs=" + changed + "\r\n"));
    CHECK(r.body == "<absent>");
    // Unsigned, absent, and a forged one before the real one (the real one still counts).
    CHECK(fetch(server, get_request("/read", "Cookie: prefs=dark\r\n")).body == "<absent>");
    CHECK(fetch(server, get_request("/read")).body == "<absent>");
    r = fetch(server,
              get_request("/read", "Cookie: prefs=" + changed + "; prefs=" + value + "\r\n"));
    CHECK(r.body == "[dark theme]");
    // The same value under another server's secret does not verify.
    auto other_cfg = test_config();
    other_cfg.cookie_secret = std::string(32, 'z');
    test_server other(signed_routes, other_cfg);
    CHECK(fetch(other, get_request("/read", "Cookie: prefs=" + value + "\r\n")).body == "<absent>");
}

TEST_CASE("signed cookies: a short secret is refused and none at all is a 500",
          "[wire][signed-cookies]") {
    tern::app app;
    CHECK_THROWS_AS(app.cookie_secret("too short"), std::invalid_argument);
    CHECK_THROWS_AS(app.cookie_secret(std::string(31, 'k')), std::invalid_argument);
    CHECK_THROWS_AS(app.cookie_secret(""), std::invalid_argument);
    CHECK_NOTHROW(app.cookie_secret(secret));
    auto short_cfg = test_config();
    short_cfg.cookie_secret = "short";
    CHECK_THROWS_AS(tern::app(short_cfg), std::invalid_argument);

    test_server server(signed_routes);  // no secret
    for (const char* path : {"/sign", "/read"}) {
        const auto r = fetch(server, get_request(path, "Cookie: prefs=x.y\r\n"));
        INFO(describe(r));
        CHECK(r.status == 500);
        CHECK(set_cookies(r).empty());
    }
    check_still_serving(server.port());
}

}  // namespace wire_test_sessions_wire
