// The PROXY protocol header parser (v1 text, v2 binary), without sockets.

#include "http/proxy_header.hpp"

#include <catch2/catch.hpp>

#include <string>
#include <string_view>

namespace unit_test_http_proxy_header {

using tern::detail::max_proxy_header;
using tern::detail::parse_proxy_header;
using tern::detail::proxy_header;
using state = proxy_header::state;

namespace {

const std::string v2_signature("\r\n\r\n\0\r\nQUIT\n", 12);

// A v2 header: version 2, `command` (0 LOCAL, 1 PROXY), `family_transport`, then `payload`.
std::string v2(unsigned char command, unsigned char family_transport, const std::string& payload) {
    std::string h = v2_signature;
    h.push_back(static_cast<char>(0x20 | command));
    h.push_back(static_cast<char>(family_transport));
    h.push_back(static_cast<char>((payload.size() >> 8) & 0xFF));
    h.push_back(static_cast<char>(payload.size() & 0xFF));
    return h + payload;
}

std::string ipv4_payload() {
    // 203.0.113.7 -> 192.0.2.1, ports 51234 -> 443
    return std::string("\xCB\x00\x71\x07\xC0\x00\x02\x01\xC8\x22\x01\xBB", 12);
}

}  // namespace

TEST_CASE("v1 TCP4 and TCP6 headers give the source address and their exact length", "[proxy]") {
    const std::string h4 = "PROXY TCP4 203.0.113.7 192.0.2.1 51234 443\r\n";
    auto r = parse_proxy_header(h4 + "GET / HTTP/1.1\r\n");
    REQUIRE(r.result == state::done);
    CHECK(r.size == h4.size());
    CHECK(r.source == "203.0.113.7");

    const std::string h6 = "PROXY TCP6 2001:DB8::1 2001:db8::2 4711 80\r\n";
    r = parse_proxy_header(h6 + "\x16\x03\x01");
    REQUIRE(r.result == state::done);
    CHECK(r.size == h6.size());
    CHECK(r.source == "2001:db8::1");  // canonical form
}

TEST_CASE("v1 UNKNOWN keeps the peer's address", "[proxy]") {
    const auto r = parse_proxy_header("PROXY UNKNOWN ffff::1 ffff::2 1 2\r\nGET");
    REQUIRE(r.result == state::done);
    CHECK(r.size == 35);
    CHECK(r.source.empty());
}

TEST_CASE("a v1 header arriving in pieces is incomplete until its CR LF", "[proxy]") {
    const std::string h = "PROXY TCP4 10.0.0.1 10.0.0.2 1000 80\r\n";
    for (std::size_t n = 1; n < h.size(); ++n) {
        INFO("prefix of " << n << " bytes");
        const auto r = parse_proxy_header(h.substr(0, n));
        CHECK(r.result == state::incomplete);
        CHECK(r.needed >= 1);
    }
    CHECK(parse_proxy_header(h).result == state::done);
}

TEST_CASE("malformed v1 headers are invalid", "[proxy]") {
    for (const char* bad : {
             "GET / HTTP/1.1\r\n",                                // not PROXY at all
             "PROXY TCP4 203.0.113.7 192.0.2.1 51234\r\n",        // a field missing
             "PROXY TCP4 203.0.113.7 192.0.2.1 51234 443 x\r\n",  // one too many
             "PROXY TCP4 2001:db8::1 192.0.2.1 1 2\r\n",          // IPv6 under TCP4
             "PROXY TCP6 203.0.113.7 2001:db8::2 1 2\r\n",        // IPv4 under TCP6
             "PROXY TCP4 203.0.113.999 192.0.2.1 1 2\r\n",        // not an address
             "PROXY TCP4 203.0.113.7 192.0.2.1 65536 2\r\n",      // port out of range
             "PROXY TCP4 203.0.113.7 192.0.2.1 080 2\r\n",        // leading zero
             "PROXY TCP4  203.0.113.7 192.0.2.1 1 2\r\n",         // two spaces
             "PROXY UDP4 203.0.113.7 192.0.2.1 1 2\r\n",          // not TCP
             "proxy TCP4 203.0.113.7 192.0.2.1 1 2\r\n",          // case matters
         }) {
        INFO(bad);
        CHECK(parse_proxy_header(bad).result == state::invalid);
    }
    // Longer than 107 bytes without a CR LF.
    CHECK(parse_proxy_header("PROXY TCP6 " + std::string(120, 'a')).result == state::invalid);
    // A NUL or another non-printable byte inside an address field: inet_pton would stop at
    // the NUL and take the address before it (issue 31, item 6).
    using namespace std::string_literals;
    for (const std::string& bad : {
             "PROXY TCP4 203.0.113.7\0 192.0.2.1 1 2\r\n"s,
             "PROXY TCP4 203.0.113.7 192.0.2.1\0 1 2\r\n"s,
             "PROXY TCP6 2001:db8::1\0 2001:db8::2 1 2\r\n"s,
             "PROXY TCP4 203.0.113.7\t 192.0.2.1 1 2\r\n"s,
             "PROXY TCP4 203.0.113.7 192.0.2.1 1 2\0\r\n"s,
         }) {
        INFO(bad);
        CHECK(parse_proxy_header(bad).result == state::invalid);
    }
}

TEST_CASE("v2 PROXY over TCP4 and TCP6, with TLVs skipped", "[proxy]") {
    auto h = v2(1, 0x11, ipv4_payload());
    auto r = parse_proxy_header(h + "GET /");
    REQUIRE(r.result == state::done);
    CHECK(r.size == 28);
    CHECK(r.source == "203.0.113.7");

    std::string six(36, '\0');
    six[0] = '\x20';
    six[1] = '\x01';
    six[2] = '\x0d';
    six[3] = '\xb8';
    six[15] = '\x01';  // 2001:db8::1
    const std::string tlv(
        "\x04\x00\x03"
        "abc",
        6);  // an unknown TLV: ignored
    h = v2(1, 0x21, six + tlv);
    r = parse_proxy_header(h);
    REQUIRE(r.result == state::done);
    CHECK(r.size == 16 + 36 + 6);
    CHECK(r.source == "2001:db8::1");
}

TEST_CASE("v2 LOCAL and UNSPEC keep the peer's address", "[proxy]") {
    auto r = parse_proxy_header(v2(0, 0x00, ""));
    REQUIRE(r.result == state::done);
    CHECK(r.size == 16);
    CHECK(r.source.empty());
    r = parse_proxy_header(v2(1, 0x00, ""));
    REQUIRE(r.result == state::done);
    CHECK(r.source.empty());
}

TEST_CASE("v2 headers arriving byte by byte are incomplete until whole", "[proxy]") {
    const auto h = v2(1, 0x11, ipv4_payload());
    for (std::size_t n = 1; n < h.size(); ++n) {
        INFO("prefix of " << n << " bytes");
        const auto r = parse_proxy_header(h.substr(0, n));
        REQUIRE(r.result == state::incomplete);
        CHECK(r.needed == (n < 12 ? 12 - n : n < 16 ? 16 - n : h.size() - n));
    }
}

TEST_CASE("malformed v2 headers are invalid", "[proxy]") {
    std::string wrong_version = v2(1, 0x11, ipv4_payload());
    wrong_version[12] = '\x11';
    CHECK(parse_proxy_header(wrong_version).result == state::invalid);
    std::string wrong_command = v2(1, 0x11, ipv4_payload());
    wrong_command[12] = '\x22';
    CHECK(parse_proxy_header(wrong_command).result == state::invalid);
    // Addresses shorter than the family needs.
    CHECK(parse_proxy_header(v2(1, 0x11, std::string(8, '\0'))).result == state::invalid);
    CHECK(parse_proxy_header(v2(1, 0x21, std::string(20, '\0'))).result == state::invalid);
    // UDP and Unix sockets are not this server's transport.
    CHECK(parse_proxy_header(v2(1, 0x12, ipv4_payload())).result == state::invalid);
    CHECK(parse_proxy_header(v2(1, 0x31, std::string(216, '\0'))).result == state::invalid);
    // Past the bound on a header's size.
    CHECK(parse_proxy_header(v2(1, 0x11, std::string(max_proxy_header, '\0'))).result ==
          state::invalid);
    // A broken signature.
    std::string broken = v2(1, 0x11, ipv4_payload());
    broken[7] = 'X';
    CHECK(parse_proxy_header(broken).result == state::invalid);
}

}  // namespace unit_test_http_proxy_header
