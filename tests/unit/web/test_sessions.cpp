// Sessions without sockets: ids (shape and entropy), the in-memory store (bounds in sessions
// and bytes, the segmented LRU that keeps a flood of new sessions from evicting established
// ones, expiry), the manager (which session a cookie names, what is saved, which Set-Cookie goes
// out) with an injected clock, and the configuration checks.

#include "web/base64url.hpp"
#include "web/memory_session_store.hpp"
#include "web/session_id.hpp"
#include "web/session_manager.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <bit>
#include <chrono>
#include <memory>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

namespace unit_test_web_sessions {

using namespace std::chrono_literals;
using tern::header_field;
using tern::session_config;
using tern::session_data;
using tern::detail::memory_session_store;
using tern::detail::session_manager;

namespace {

// A clock the test moves by hand.
struct test_clock {
    std::shared_ptr<std::chrono::system_clock::time_point> now =
        std::make_shared<std::chrono::system_clock::time_point>(
            std::chrono::sys_days{std::chrono::year{2026} / 1 / 1});
    tern::detail::session_clock fn() const {
        return [now = now] { return *now; };
    }
    void advance(std::chrono::system_clock::duration d) const { *now += d; }
};

session_data with_value(std::string key, std::string value) {
    session_data d;
    d.values.emplace(std::move(key), std::move(value));
    return d;
}

// The session id in a Set-Cookie value "name=id; ...".
std::string id_of(const std::string& set_cookie) {
    const auto eq = set_cookie.find('=');
    const auto semi = set_cookie.find(';');
    return set_cookie.substr(eq + 1, semi - eq - 1);
}

// Opens the session a request with `cookie` (a whole Cookie header value) names.
std::unique_ptr<tern::session> open(const session_manager& m, const std::string& cookie) {
    std::vector<header_field> headers;
    if (!cookie.empty()) headers.push_back(header_field{"Cookie", cookie});
    return m.open(headers);
}

// A store of the test's own, over a memory store, counting what tern asks of it.
struct counting_store final : tern::session_store {
    memory_session_store inner{100, 1 << 20, [] { return std::chrono::system_clock::now(); }};
    int loads = 0;
    int saves = 0;
    int erases = 0;
    std::optional<session_data> load(std::string_view id) override {
        ++loads;
        return inner.load(id);
    }
    void save(std::string_view id, const session_data& data,
              std::chrono::system_clock::time_point expires) override {
        ++saves;
        inner.save(id, data, expires);
    }
    void erase(std::string_view id) override {
        ++erases;
        inner.erase(id);
    }
};

}  // namespace

TEST_CASE("base64url round-trips every byte and refuses what is not canonical", "[sessions]") {
    std::string all;
    for (int i = 0; i < 256; ++i) all.push_back(static_cast<char>(i));
    for (std::size_t n = 0; n <= all.size(); n += 17) {
        const auto text = tern::detail::base64url_encode(all.substr(0, n));
        CHECK(text.find_first_of("+/=") == std::string::npos);
        CHECK(tern::detail::base64url_decode(text) == all.substr(0, n));
    }
    CHECK(tern::detail::base64url_encode("\xfb\xff") == "-_8");
    CHECK_FALSE(tern::detail::base64url_decode("A").has_value());     // length 1 mod 4
    CHECK_FALSE(tern::detail::base64url_decode("AB+/").has_value());  // base64, not base64url
    CHECK_FALSE(tern::detail::base64url_decode("AA==").has_value());  // padding
    CHECK_FALSE(tern::detail::base64url_decode("AB").has_value());    // unused bits set
    CHECK(tern::detail::base64url_decode("AA") == std::string(1, '\0'));
}

TEST_CASE("session ids are 43 base64url characters of 32 random bytes, distinct and balanced",
          "[sessions][entropy]") {
    // The weak-id class of CVE-2022-3959 (Drogon): ids from a poor generator repeat, share
    // long prefixes or have stuck bits. 2,000 ids must show none of that.
    constexpr std::size_t count = 2000;
    std::vector<std::string> ids;
    std::set<std::string> distinct;
    std::size_t ones = 0;
    std::vector<std::size_t> ones_at(256, 0);  // per bit position, over all ids
    for (std::size_t i = 0; i < count; ++i) {
        auto id = tern::detail::new_session_id();
        REQUIRE(id.size() == tern::detail::session_id_length);
        REQUIRE(tern::detail::looks_like_session_id(id));
        const auto bytes = tern::detail::base64url_decode(id);
        REQUIRE(bytes.has_value());
        REQUIRE(bytes->size() == tern::detail::session_id_bytes);
        for (std::size_t b = 0; b < bytes->size(); ++b) {
            const auto byte = static_cast<unsigned char>((*bytes)[b]);
            ones += static_cast<std::size_t>(std::popcount(byte));
            for (int bit = 0; bit < 8; ++bit) {
                if ((byte >> bit) & 1U) ++ones_at[b * 8 + static_cast<std::size_t>(bit)];
            }
        }
        distinct.insert(id);
        ids.push_back(std::move(id));
    }
    CHECK(distinct.size() == count);
    const double fraction = static_cast<double>(ones) / (count * 256.0);
    INFO("fraction of one-bits: " << fraction);
    CHECK(fraction > 0.45);
    CHECK(fraction < 0.55);
    // No bit position stuck: each is set in 40..60 % of the ids (8.9 standard deviations
    // from half for 2,000 ids: a random generator never fails this, a stuck bit always).
    for (std::size_t bit = 0; bit < ones_at.size(); ++bit) {
        const double f = static_cast<double>(ones_at[bit]) / count;
        INFO("bit " << bit << ": " << f);
        CHECK((f > 0.40 && f < 0.60));
    }
    // No two ids share a prefix of 8 characters (48 bits; for 2,000 random ids the chance is
    // about 1 in 10^8); sorted, the longest shared prefix is between neighbours.
    std::sort(ids.begin(), ids.end());
    std::size_t longest = 0;
    for (std::size_t i = 1; i < ids.size(); ++i) {
        const auto [a, b] = std::mismatch(ids[i - 1].begin(), ids[i - 1].end(), ids[i].begin());
        longest = std::max(longest, static_cast<std::size_t>(a - ids[i - 1].begin()));
    }
    INFO("longest shared prefix: " << longest);
    CHECK(longest < 8);
}

TEST_CASE("looks_like_session_id refuses wrong lengths and characters", "[sessions]") {
    const auto id = tern::detail::new_session_id();
    CHECK(tern::detail::looks_like_session_id(id));
    CHECK_FALSE(tern::detail::looks_like_session_id(id.substr(1)));
    CHECK_FALSE(tern::detail::looks_like_session_id(id + "A"));
    CHECK_FALSE(tern::detail::looks_like_session_id(""));
    auto bad = id;
    bad[5] = '.';
    CHECK_FALSE(tern::detail::looks_like_session_id(bad));
    bad[5] = '=';
    CHECK_FALSE(tern::detail::looks_like_session_id(bad));
}

TEST_CASE("the memory store replaces, erases and evicts the least recently used new session",
          "[sessions]") {
    test_clock clock;
    memory_session_store store(24, 1 << 20, clock.fn());  // 3 new sessions, 21 established
    const auto later = *clock.now + 1h;
    store.save("a", with_value("k", "a"), later);
    store.save("b", with_value("k", "b"), later);
    store.save("c", with_value("k", "c"), later);
    CHECK(store.size() == 3);
    REQUIRE(store.load("a").has_value());  // a is now the most recently used; b the least
    store.save("d", with_value("k", "d"), later);
    CHECK(store.size() == 3);
    CHECK_FALSE(store.load("b").has_value());
    CHECK(store.load("a")->values.at("k") == "a");
    CHECK(store.load("d")->values.at("k") == "d");
    // Saving an id it holds replaces it (and, saved by a second request, it is established).
    store.save("c", with_value("k", "c2"), later);
    CHECK(store.load("c")->values.at("k") == "c2");
    CHECK(store.standing("c") == tern::detail::session_standing::returning);
    CHECK(store.standing("a") == tern::detail::session_standing::fresh);
    store.erase("c");
    store.erase("unknown");
    CHECK(store.size() == 2);
    CHECK_FALSE(store.load("c").has_value());
    CHECK(store.bytes() == memory_session_store::cost("a", with_value("k", "a")) +
                               memory_session_store::cost("d", with_value("k", "d")));
    CHECK_THROWS_AS(memory_session_store(1, 1 << 20, clock.fn()), std::invalid_argument);
    CHECK_THROWS_AS(memory_session_store(100, 1000, clock.fn()), std::invalid_argument);
}

TEST_CASE("a flood of new sessions evicts only new sessions, never a returning or rotated one",
          "[sessions][flood]") {
    using tern::detail::session_standing;
    test_clock clock;
    memory_session_store store(16, 1 << 20, clock.fn());  // 2 new sessions, 14 established
    const auto later = *clock.now + 1h;
    store.save("alice", with_value("user", "alice"), later, true);  // a log-in (regenerate)
    store.save("bob", with_value("visits", "1"), later);
    store.save("bob", with_value("visits", "2"), later);  // his cookie came back
    CHECK(store.standing("alice") == session_standing::rotated);
    CHECK(store.standing("bob") == session_standing::returning);
    std::vector<std::string> flood;
    for (int i = 0; i < 1000; ++i) {
        flood.push_back("new" + std::to_string(i));
        store.save(flood.back(), with_value("visits", "1"), later);
    }
    CHECK(store.size() == 4);  // alice, bob and the flood's last two
    CHECK(store.load("alice")->values.at("user") == "alice");
    CHECK(store.load("bob")->values.at("visits") == "2");
    CHECK(store.load(flood.back()).has_value());
    CHECK(store.load(flood[flood.size() - 2]).has_value());
    CHECK_FALSE(store.load(flood[flood.size() - 3]).has_value());
}

TEST_CASE("among established sessions a returning one evicts only returning ones, a log-in any",
          "[sessions][flood]") {
    using tern::detail::session_standing;
    test_clock clock;
    memory_session_store store(10, 1 << 20, clock.fn());  // 1 new session, 9 established
    const auto later = *clock.now + 1h;
    for (int i = 0; i < 8; ++i) store.save("user" + std::to_string(i), {}, later, true);
    store.save("carol", {}, later);
    store.save("carol", {}, later);  // returning: the ninth established session
    CHECK(store.size() == 9);
    // A second returning session evicts the least recently used returning one (carol),
    // not a log-in.
    store.save("dave", {}, later);
    store.save("dave", {}, later);
    CHECK(store.standing("dave") == session_standing::returning);
    CHECK_FALSE(store.load("carol").has_value());
    for (int i = 0; i < 8; ++i) CHECK(store.load("user" + std::to_string(i)).has_value());
    // A log-in evicts a returning session first, then the least recently used log-in
    // (user0: the loads above used it first).
    store.save("user8", {}, later, true);
    CHECK_FALSE(store.load("dave").has_value());
    store.save("user9", {}, later, true);
    CHECK_FALSE(store.load("user0").has_value());
    CHECK(store.load("user1").has_value());
    // With the established room all log-ins, a returning session cannot evict one: it
    // stays on probation.
    store.save("erin", {}, later);
    store.save("erin", {}, later);
    CHECK(store.standing("erin") == session_standing::fresh);
    CHECK(store.size() == 10);
    for (int i = 1; i < 10; ++i) CHECK(store.load("user" + std::to_string(i)).has_value());
}

TEST_CASE("the memory store counts bytes: new sessions hold an eighth of max_store_bytes",
          "[sessions][flood]") {
    test_clock clock;
    const std::size_t max_bytes = 64 * 1024;  // 8 KiB for new sessions
    memory_session_store store(100'000, max_bytes, clock.fn());
    const auto later = *clock.now + 1h;
    const auto kilobyte = with_value("v", std::string(1000, 'x'));
    const auto each = memory_session_store::cost("s000", kilobyte);
    store.save("login", kilobyte, later, true);
    for (int i = 0; i < 100; ++i) {
        store.save("s" + std::to_string(100 + i), kilobyte, later);
        CHECK(store.bytes() <= memory_session_store::cost("login", kilobyte) + max_bytes / 8);
    }
    CHECK(store.size() == 1 + (max_bytes / 8) / each);
    CHECK(store.load("login").has_value());
    // A new session larger than all the room for new ones is refused, and not kept.
    CHECK_THROWS_AS(store.save("huge", with_value("v", std::string(9000, 'x')), later),
                    std::length_error);
    CHECK_FALSE(store.load("huge").has_value());
    // A log-in of that size fits among the established.
    store.save("big-login", with_value("v", std::string(9000, 'x')), later, true);
    CHECK(store.load("big-login").has_value());
}

TEST_CASE("the memory store drops expired sessions on load and sweeps them on save", "[sessions]") {
    test_clock clock;
    memory_session_store store(100, 1 << 20, clock.fn());
    for (int i = 0; i < 5; ++i) {
        store.save("old" + std::to_string(i), with_value("k", "v"), *clock.now + 10min);
    }
    store.save("young", with_value("k", "v"), *clock.now + 1h);
    clock.advance(10min);  // the old ones expire now (expires <= now)
    CHECK_FALSE(store.load("old0").has_value());
    CHECK(store.size() == 5);
    // A save removes expired sessions from the least recently used end, a bounded number.
    store.save("new", with_value("k", "v"), *clock.now + 1h);
    CHECK(store.size() == 2);
    CHECK(store.load("young").has_value());
    CHECK(store.load("new").has_value());
}

TEST_CASE("a new session gets a cookie only once something is set, HttpOnly and SameSite=Lax",
          "[sessions]") {
    test_clock clock;
    session_manager m(session_config{}, clock.fn());
    auto s = open(m, "");
    CHECK(s->is_new());
    CHECK_FALSE(s->get("user").has_value());
    CHECK_FALSE(m.commit(*s, false).has_value());  // read only: nothing stored, no cookie

    s = open(m, "");
    s->set("user", "alice");
    const auto cookie = m.commit(*s, false);
    REQUIRE(cookie.has_value());
    CHECK(cookie->starts_with("tern_session="));
    CHECK(cookie->find("; Path=/") != std::string::npos);
    CHECK(cookie->find("; HttpOnly") != std::string::npos);
    CHECK(cookie->find("; SameSite=Lax") != std::string::npos);
    CHECK(cookie->find("Secure") == std::string::npos);
    CHECK(cookie->find("Max-Age") == std::string::npos);  // a browser-session cookie
    const auto id = id_of(*cookie);
    CHECK(tern::detail::looks_like_session_id(id));

    // The cookie sent back finds the same session; reading it sends no cookie.
    auto again = open(m, "other=1; tern_session=" + id);
    CHECK_FALSE(again->is_new());
    CHECK(again->get("user") == "alice");
    CHECK(again->get("missing", "none") == "none");
    CHECK_FALSE(m.commit(*again, false).has_value());
    // Over TLS the cookie is Secure.
    again = open(m, "tern_session=" + id);
    again->set("n", "1");
    const auto secure = m.commit(*again, true);
    REQUIRE(secure.has_value());
    CHECK(secure->find("; Secure") != std::string::npos);
    CHECK(id_of(*secure) == id);  // a change keeps the id
}

TEST_CASE("an id the store does not know is never adopted", "[sessions]") {
    test_clock clock;
    auto store = std::make_shared<counting_store>();
    session_config cfg;
    cfg.store = store;
    session_manager m(cfg, clock.fn());
    const auto made_up = tern::detail::new_session_id();
    auto s = open(m, "tern_session=" + made_up);
    CHECK(s->is_new());
    CHECK(store->loads == 1);
    s->set("user", "mallory");
    const auto cookie = m.commit(*s, false);
    REQUIRE(cookie.has_value());
    CHECK(id_of(*cookie) != made_up);
    CHECK_FALSE(store->inner.load(made_up).has_value());
    // Malformed ids are refused without asking the store, and at most four are looked up.
    store->loads = 0;
    s = open(m, "tern_session=short; tern_session=" + std::string(43, '.'));
    CHECK(s->is_new());
    CHECK(store->loads == 0);
    std::string many;
    for (int i = 0; i < 10; ++i) many += "tern_session=" + tern::detail::new_session_id() + "; ";
    s = open(m, many);
    CHECK(store->loads == 4);
}

TEST_CASE("regenerate gives a new id with the same values and the old id stops working",
          "[sessions]") {
    test_clock clock;
    session_manager m(session_config{}, clock.fn());
    auto s = open(m, "");
    s->set("cart", "3 apples");
    const auto old_id = id_of(*m.commit(*s, false));
    s = open(m, "tern_session=" + old_id);
    s->regenerate();
    s->set("user", "alice");
    const auto cookie = m.commit(*s, false);
    REQUIRE(cookie.has_value());
    const auto new_id = id_of(*cookie);
    CHECK(new_id != old_id);
    auto after = open(m, "tern_session=" + new_id);
    CHECK(after->get("cart") == "3 apples");
    CHECK(after->get("user") == "alice");
    CHECK(open(m, "tern_session=" + old_id)->is_new());
}

TEST_CASE("invalidate forgets the session and clears the cookie", "[sessions]") {
    test_clock clock;
    session_manager m(session_config{}, clock.fn());
    auto s = open(m, "");
    s->set("user", "alice");
    const auto id = id_of(*m.commit(*s, false));
    s = open(m, "tern_session=" + id);
    s->invalidate();
    CHECK(s->values().empty());
    const auto cookie = m.commit(*s, false);
    REQUIRE(cookie.has_value());
    CHECK(cookie->starts_with("tern_session=;"));
    CHECK(cookie->find("Max-Age=0") != std::string::npos);
    CHECK(open(m, "tern_session=" + id)->is_new());
    // A value set after invalidate starts a new session under a new id.
    s = open(m, "");
    s->set("a", "1");
    const auto first = id_of(*m.commit(*s, false));
    s = open(m, "tern_session=" + first);
    s->invalidate();
    s->set("flash", "logged out");
    const auto next = m.commit(*s, false);
    REQUIRE(next.has_value());
    CHECK(id_of(*next) != first);
    CHECK(open(m, "tern_session=" + id_of(*next))->get("flash") == "logged out");
    CHECK(open(m, "tern_session=" + first)->is_new());
}

TEST_CASE("a session unused for idle_timeout ends, one in use lasts until absolute_timeout",
          "[sessions]") {
    test_clock clock;
    session_config cfg;
    cfg.idle_timeout = 30min;
    cfg.absolute_timeout = 2h;
    session_manager m(cfg, clock.fn());
    auto s = open(m, "");
    s->set("user", "alice");
    const auto id = id_of(*m.commit(*s, false));
    // Used every 20 minutes (only read): each use keeps it alive past the idle timeout.
    for (int i = 0; i < 5; ++i) {
        clock.advance(20min);
        s = open(m, "tern_session=" + id);
        REQUIRE_FALSE(s->is_new());
        CHECK_FALSE(m.commit(*s, false).has_value());
    }
    // 100 minutes in; at 2 h it ends however often it is used.
    clock.advance(19min);
    s = open(m, "tern_session=" + id);
    CHECK_FALSE(s->is_new());
    (void)m.commit(*s, false);
    clock.advance(1min);
    CHECK(open(m, "tern_session=" + id)->is_new());

    // Idle: 30 minutes without a request.
    s = open(m, "");
    s->set("user", "bob");
    const auto idle_id = id_of(*m.commit(*s, false));
    clock.advance(29min);
    s = open(m, "tern_session=" + idle_id);
    CHECK_FALSE(s->is_new());
    (void)m.commit(*s, false);
    clock.advance(30min);
    CHECK(open(m, "tern_session=" + idle_id)->is_new());
}

TEST_CASE("session cookie attributes follow the configuration", "[sessions]") {
    test_clock clock;
    session_config cfg;
    cfg.cookie_name = "sid";
    cfg.cookie_path = "/app";
    cfg.cookie_domain = "example.com";
    cfg.same_site = tern::same_site::strict;
    cfg.secure = true;
    cfg.persistent = true;
    cfg.absolute_timeout = 3600s;
    session_manager m(cfg, clock.fn());
    auto s = open(m, "");
    s->set("a", "b");
    const auto cookie = m.commit(*s, false);
    REQUIRE(cookie.has_value());
    CHECK(cookie->starts_with("sid="));
    CHECK(cookie->find("; Path=/app") != std::string::npos);
    CHECK(cookie->find("; Domain=example.com") != std::string::npos);
    CHECK(cookie->find("; Max-Age=3600") != std::string::npos);
    CHECK(cookie->find("; Secure") != std::string::npos);  // secure = true: even over HTTP
    CHECK(cookie->find("; SameSite=Strict") != std::string::npos);
    CHECK(cookie->find("; HttpOnly") != std::string::npos);

    session_config never;
    never.secure = false;
    session_manager plain(never, clock.fn());
    s = open(plain, "");
    s->set("a", "b");
    CHECK(plain.commit(*s, true)->find("Secure") == std::string::npos);
}

TEST_CASE("a log-in and a session used twice survive a flood of new sessions through the manager",
          "[sessions][flood]") {
    test_clock clock;
    session_config cfg;
    cfg.max_sessions = 16;
    session_manager m(cfg, clock.fn());
    // Log-in from nothing: regenerate() on a new session makes it established at once.
    auto s = open(m, "");
    s->regenerate();
    s->set("user", "alice");
    const auto alice = id_of(*m.commit(*s, false));
    // A visitor whose cookie comes back once.
    s = open(m, "");
    s->set("cart", "3 apples");
    const auto bob = id_of(*m.commit(*s, false));
    (void)m.commit(*open(m, "tern_session=" + bob), false);
    // Invalidate then set: the session that follows a log-out is a new one, not a log-in.
    s = open(m, "tern_session=" + alice);
    s->regenerate();
    s->invalidate();
    s->set("flash", "bye");
    const auto after_logout = id_of(*m.commit(*s, false));
    s = open(m, "");
    s->regenerate();
    s->set("user", "alice");
    const auto alice2 = id_of(*m.commit(*s, false));
    for (int i = 0; i < 100; ++i) {
        s = open(m, "");
        s->set("visits", "1");
        (void)m.commit(*s, false);
    }
    CHECK(open(m, "tern_session=" + alice2)->get("user") == "alice");
    CHECK(open(m, "tern_session=" + bob)->get("cart") == "3 apples");
    CHECK(open(m, "tern_session=" + after_logout)->is_new());  // evicted with the flood
}

TEST_CASE("bad session settings are refused with a message", "[sessions]") {
    const auto refused = [](session_config cfg, const std::string& says) {
        INFO(says);
        try {
            tern::detail::check_session_config(cfg);
            FAIL("accepted");
        } catch (const std::invalid_argument& e) {
            CHECK(std::string(e.what()).find(says) != std::string::npos);
        }
    };
    session_config c;
    c.cookie_name = "bad name";
    refused(c, "cookie_name");
    c = {};
    c.idle_timeout = 0s;
    refused(c, "idle_timeout");
    c = {};
    c.absolute_timeout = -1s;
    refused(c, "absolute_timeout");
    c = {};
    c.max_sessions = 1;
    refused(c, "max_sessions");
    c = {};
    c.max_store_bytes = 65535;
    refused(c, "max_store_bytes");
    c = {};
    c.same_site = tern::same_site::none;
    refused(c, "secure");
    c = {};
    c.cookie_path = "/a;b";
    refused(c, "");
    c = {};
    c.same_site = tern::same_site::none;
    c.secure = true;
    CHECK_NOTHROW(tern::detail::check_session_config(c));
}

}  // namespace unit_test_web_sessions
