// The client's address behind reverse proxies, without sockets: trusted proxy entries,
// Forwarded (RFC 7239) and X-Forwarded-For read from the right, and the spoofing attempts
// that reading from the left would let through.

#include "web/forwarded.hpp"

#include <catch2/catch.hpp>

#include <stdexcept>
#include <string>
#include <vector>

namespace unit_test_web_forwarded {

using tern::header_field;
using tern::detail::forwarding_header;
using tern::detail::parse_ip;
using tern::detail::proxy_list;
using tern::detail::resolve_client_ip;

namespace {

// The loopback proxies, a private range and an IPv6 unique-local range, writing
// X-Forwarded-For (the default) or Forwarded.
const proxy_list& proxies() {
    static const proxy_list list({"127.0.0.1", "10.0.0.0/8", "::1", "fd00::/8"});
    return list;
}

const proxy_list& forwarded_proxies() {
    static const proxy_list list({"127.0.0.1", "10.0.0.0/8", "::1", "fd00::/8"},
                                 forwarding_header::forwarded);
    return list;
}

std::string resolve(std::string_view peer, std::vector<header_field> headers) {
    return resolve_client_ip(proxies(), peer, headers);
}

std::string resolve_forwarded(std::string_view peer, std::vector<header_field> headers) {
    return resolve_client_ip(forwarded_proxies(), peer, headers);
}

std::string xff(std::string_view peer, std::string_view value) {
    return resolve(peer, {{"X-Forwarded-For", value}});
}

std::string fwd(std::string_view peer, std::string_view value) {
    return resolve_forwarded(peer, {{"Forwarded", value}});
}

}  // namespace

TEST_CASE("addresses of both families parse, an IPv4-mapped one as IPv4, and nothing else does",
          "[web][forwarded]") {
    CHECK(parse_ip("192.0.2.1"));
    CHECK_FALSE(parse_ip("192.0.2.1")->v6);
    CHECK(parse_ip("2001:db8::1")->v6);
    const auto mapped = parse_ip("::ffff:10.1.2.3");
    REQUIRE(mapped);
    CHECK_FALSE(mapped->v6);
    CHECK(proxies().trusts(*mapped));
    for (const char* bad : {"", "1.2.3", "1.2.3.4.5", "256.1.1.1", "example.com", "[::1]",
                            "1.2.3.4 ", "::1%eth0", "unknown", "1.2.3.4:80"}) {
        INFO(bad);
        CHECK_FALSE(parse_ip(bad));
    }
}

TEST_CASE("trusted proxy entries match single addresses and CIDR ranges of their own family",
          "[web][forwarded]") {
    const auto& p = proxies();
    CHECK(p.trusts(*parse_ip("127.0.0.1")));
    CHECK_FALSE(p.trusts(*parse_ip("127.0.0.2")));
    CHECK(p.trusts(*parse_ip("10.255.0.7")));
    CHECK_FALSE(p.trusts(*parse_ip("11.0.0.1")));
    CHECK(p.trusts(*parse_ip("::1")));
    CHECK(p.trusts(*parse_ip("fd12:3456::9")));
    CHECK_FALSE(p.trusts(*parse_ip("fe80::1")));
    CHECK_FALSE(p.trusts(*parse_ip("2001:db8::1")));
    const proxy_list odd({"192.168.4.0/22", "0.0.0.0/0"});
    CHECK(odd.trusts(*parse_ip("8.8.8.8")));
    CHECK_FALSE(odd.trusts(*parse_ip("::2")));  // /0 of IPv4 is every IPv4 address only
    const proxy_list narrow({"192.168.4.0/22"});
    CHECK(narrow.trusts(*parse_ip("192.168.7.255")));
    CHECK_FALSE(narrow.trusts(*parse_ip("192.168.8.0")));
}

TEST_CASE("a bad trusted proxy entry throws naming it", "[web][forwarded]") {
    for (const char* bad : {"localhost", "10.0.0.0/33", "::/129", "10.0.0.0/", "10.0.0.0/x",
                            "10.0.0.1/8", "fd00::1/8", "", "1.2.3.4/-1", "1.2.3.4/0008"}) {
        INFO(bad);
        try {
            proxy_list list({"127.0.0.1", bad});
            FAIL("no exception");
        } catch (const std::invalid_argument& e) {
            CHECK(std::string(e.what()).find(std::string("'") + bad + "'") != std::string::npos);
        }
    }
}

TEST_CASE("an untrusted peer's forwarding headers are ignored", "[web][forwarded]") {
    CHECK(xff("203.0.113.9", "198.51.100.1").empty());
    CHECK(fwd("203.0.113.9", "for=198.51.100.1").empty());
    CHECK(xff("2001:db8::5", "198.51.100.1").empty());
    CHECK(resolve("not an address", {{"X-Forwarded-For", "198.51.100.1"}}).empty());
}

TEST_CASE("a trusted peer without forwarding headers is the client", "[web][forwarded]") {
    CHECK(resolve("127.0.0.1", {{"Host", "x"}}).empty());
}

TEST_CASE("X-Forwarded-For is read from the right: the first untrusted hop is the client",
          "[web][forwarded]") {
    CHECK(xff("127.0.0.1", "198.51.100.1") == "198.51.100.1");
    // The proxies of the chain are skipped.
    CHECK(xff("127.0.0.1", "198.51.100.1, 10.0.0.2, 10.1.1.1") == "198.51.100.1");
    // Spoofing: the client wrote "1.1.1.1" itself; the proxy appended the real address.
    CHECK(xff("127.0.0.1", "1.1.1.1, 198.51.100.7") == "198.51.100.7");
    CHECK(xff("127.0.0.1", "10.0.0.9, 198.51.100.7") == "198.51.100.7");  // a trusted-looking lie
    // Every hop trusted: the leftmost.
    CHECK(xff("127.0.0.1", "10.0.0.3, 10.0.0.2") == "10.0.0.3");
    // Whitespace and empty-looking values.
    CHECK(xff("127.0.0.1", "  198.51.100.1  ") == "198.51.100.1");
}

TEST_CASE("several X-Forwarded-For lines are joined in order", "[web][forwarded]") {
    CHECK(resolve("127.0.0.1", {{"X-Forwarded-For", "1.1.1.1, 198.51.100.2"},
                                {"X-Forwarded-For", "10.0.0.4"}}) == "198.51.100.2");
    CHECK(resolve("127.0.0.1", {{"x-forwarded-for", "198.51.100.2"},
                                {"X-FORWARDED-FOR", "198.51.100.3"}}) == "198.51.100.3");
}

TEST_CASE("X-Forwarded-For takes IPv6, bracketed addresses and ports", "[web][forwarded]") {
    CHECK(xff("::1", "2001:db8::1") == "2001:db8::1");
    CHECK(xff("::1", "2001:DB8:0:0::1") == "2001:db8::1");  // canonical form
    CHECK(xff("::1", "[2001:db8::1]:4711") == "2001:db8::1");
    CHECK(xff("127.0.0.1", "198.51.100.1:8080") == "198.51.100.1");
    CHECK(xff("127.0.0.1", "2001:db8::2, fd00::1") == "2001:db8::2");
    CHECK(xff("::ffff:127.0.0.1", "198.51.100.1") == "198.51.100.1");  // a mapped peer
}

TEST_CASE("a malformed X-Forwarded-For entry stops the walk at the last good hop",
          "[web][forwarded]") {
    // Right of the garbage: a trusted proxy, which is then the answer.
    CHECK(xff("127.0.0.1", "198.51.100.1, garbage, 10.0.0.5") == "10.0.0.5");
    // Garbage right at the peer: the peer.
    CHECK(xff("127.0.0.1", "198.51.100.1, garbage") == "127.0.0.1");
    CHECK(xff("127.0.0.1", "198.51.100.1,,") == "127.0.0.1");
    CHECK(xff("127.0.0.1", "") == "127.0.0.1");
    CHECK(xff("127.0.0.1", "unknown") == "127.0.0.1");
    CHECK(xff("127.0.0.1", "198.51.100.1:99999") == "127.0.0.1");
    CHECK(xff("127.0.0.1", "[2001:db8::1") == "127.0.0.1");
    CHECK(xff("127.0.0.1", "1.2.3.4\r\nX: y") == "127.0.0.1");
    // Garbage left of the client does not matter: the walk stops at the client first.
    CHECK(xff("127.0.0.1", "garbage, 198.51.100.1") == "198.51.100.1");
}

TEST_CASE("Forwarded for= is read from the right, with quoted IPv6 and ports", "[web][forwarded]") {
    CHECK(fwd("127.0.0.1", "for=198.51.100.1") == "198.51.100.1");
    CHECK(fwd("127.0.0.1", "for=198.51.100.1;proto=https;by=10.0.0.1") == "198.51.100.1");
    CHECK(fwd("127.0.0.1", "proto=http;FOR=198.51.100.1") == "198.51.100.1");
    CHECK(fwd("127.0.0.1", "for=\"[2001:db8:cafe::17]:4711\"") == "2001:db8:cafe::17");
    CHECK(fwd("127.0.0.1", "for=\"[2001:db8::1]\"") == "2001:db8::1");
    CHECK(fwd("127.0.0.1", "for=\"198.51.100.1:8443\"") == "198.51.100.1");
    CHECK(fwd("127.0.0.1", "for=\"198.51.100.1:_port\"") == "198.51.100.1");
    CHECK(fwd("127.0.0.1", "for=1.1.1.1, for=198.51.100.9;proto=https, for=10.2.2.2") ==
          "198.51.100.9");
    CHECK(fwd("127.0.0.1", "for=10.0.0.7, for=10.2.2.2") == "10.0.0.7");
    // A comma inside a quoted value does not split elements.
    CHECK(fwd("127.0.0.1", "for=198.51.100.4;ext=\"a,b\"") == "198.51.100.4");
}

TEST_CASE(
    "only the header the proxies write is read: a client's own Forwarded never decides the "
    "address behind an X-Forwarded-For proxy, nor its X-Forwarded-For behind a Forwarded one",
    "[web][forwarded]") {
    // nginx with proxy_add_x_forwarded_for passes the client's Forwarded through untouched
    // (issue 31: for=6.6.6.6, quoted IPv6, two elements, a trusted address).
    for (const char* forged :
         {"for=6.6.6.6", "for=\"[2001:db8::66]\"", "for=6.6.6.6, for=7.7.7.7", "for=10.0.0.1"}) {
        INFO(forged);
        CHECK(resolve("127.0.0.1", {{"Forwarded", forged}, {"X-Forwarded-For", "198.51.100.1"}}) ==
              "198.51.100.1");
        CHECK(resolve("127.0.0.1", {{"Forwarded", forged}}).empty());  // the peer itself
    }
    // The other way round: a Forwarded proxy, and a client's own X-Forwarded-For.
    CHECK(resolve_forwarded("127.0.0.1", {{"X-Forwarded-For", "6.6.6.6"},
                                          {"Forwarded", "for=198.51.100.2"}}) == "198.51.100.2");
    CHECK(resolve_forwarded("127.0.0.1", {{"X-Forwarded-For", "6.6.6.6"}}).empty());
}

TEST_CASE("several Forwarded lines are joined in order", "[web][forwarded]") {
    CHECK(resolve_forwarded("127.0.0.1", {{"Forwarded", "for=198.51.100.2"},
                                          {"Forwarded", "for=198.51.100.3, for=10.0.0.1"}}) ==
          "198.51.100.3");
}

TEST_CASE("unknown, obfuscated and malformed Forwarded nodes stop the walk at the last good hop",
          "[web][forwarded]") {
    CHECK(fwd("127.0.0.1", "for=unknown") == "127.0.0.1");
    CHECK(fwd("127.0.0.1", "for=_hidden, for=10.0.0.3") == "10.0.0.3");
    CHECK(fwd("127.0.0.1", "for=198.51.100.1, proto=https") == "127.0.0.1");  // no for=
    CHECK(fwd("127.0.0.1", "for=2001:db8::1") == "127.0.0.1");  // IPv6 must be bracketed
    CHECK(fwd("127.0.0.1", "for=\"[198.51.100.1]\"") == "127.0.0.1");
    CHECK(fwd("127.0.0.1", "for=\"[2001:db8::1]:x\"") == "127.0.0.1");
    CHECK(fwd("127.0.0.1", "for=\"198.51.100.1") == "127.0.0.1");  // unterminated quote
    CHECK(fwd("127.0.0.1", "for=") == "127.0.0.1");
    CHECK(fwd("127.0.0.1", "") == "127.0.0.1");
    // The client's own leftmost lie does not survive a real hop to its right.
    CHECK(fwd("127.0.0.1", "for=127.0.0.1, for=203.0.113.50") == "203.0.113.50");
}

TEST_CASE("the entry unix trusts a Unix domain socket's peer, which has no address of its own",
          "[web][forwarded]") {
    const proxy_list with_unix({"unix", "10.0.0.0/8"});
    const std::vector<header_field> xff = {{"X-Forwarded-For", "203.0.113.9, 10.1.2.3"}};
    CHECK(resolve_client_ip(with_unix, "unix", xff) == "203.0.113.9");
    // No forwarding header, or garbage as the last hop: the peer itself (no address).
    CHECK(resolve_client_ip(with_unix, "unix", {}).empty());
    const std::vector<header_field> garbage = {{"X-Forwarded-For", "203.0.113.9, nonsense"}};
    CHECK(resolve_client_ip(with_unix, "unix", garbage).empty());
    // Without the entry a Unix peer's headers are ignored.
    const proxy_list without({"127.0.0.1"});
    CHECK(resolve_client_ip(without, "unix", xff).empty());
}

}  // namespace unit_test_web_forwarded
