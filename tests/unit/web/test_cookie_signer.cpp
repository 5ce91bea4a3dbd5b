// Signed cookies without sockets: HMAC-SHA256 over name and value, and every way a changed
// cookie must read as absent.

#include "web/base64url.hpp"
#include "web/cookie_signer.hpp"

#include <catch2/catch.hpp>

#include <stdexcept>
#include <string>

namespace unit_test_web_cookie_signer {

using tern::detail::cookie_signer;

namespace {

const std::string key(32, 'k');

}  // namespace

TEST_CASE("a signed cookie verifies under its name and key and carries any bytes",
          "[signed-cookies]") {
    const cookie_signer signer(key);
    const std::string value = std::string("user=alice; role=\"admin\"\0\xff", 27);
    const auto cookie = signer.sign("who", value);
    // Only cookie-octet characters: base64url and the dot.
    CHECK(cookie.find_first_not_of(
              "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.") ==
          std::string::npos);
    CHECK(signer.verify("who", cookie) == value);
    CHECK(signer.verify("who", signer.sign("who", "")) == std::string());
    // Deterministic: the same key, name and value sign the same.
    CHECK(signer.sign("who", value) == cookie);
}

TEST_CASE("a tampered, renamed, re-keyed or malformed signed cookie reads as absent",
          "[signed-cookies]") {
    const cookie_signer signer(key);
    const auto cookie = signer.sign("role", "user");
    const auto dot = cookie.rfind('.');
    // Another value with the old signature.
    const auto forged = tern::detail::base64url_encode("admin") + cookie.substr(dot);
    CHECK_FALSE(signer.verify("role", forged).has_value());
    // One character of the signature changed, at each position.
    for (std::size_t i = dot + 1; i < cookie.size(); ++i) {
        auto changed = cookie;
        changed[i] = changed[i] == 'A' ? 'B' : 'A';
        INFO("position " << i);
        CHECK_FALSE(signer.verify("role", changed).has_value());
    }
    // The same cookie under another name, or checked with another key.
    CHECK_FALSE(signer.verify("other", cookie).has_value());
    CHECK_FALSE(cookie_signer(std::string(32, 'x')).verify("role", cookie).has_value());
    // Malformed: no dot, a short signature, characters outside base64url, empty.
    CHECK_FALSE(signer.verify("role", "dXNlcg").has_value());
    CHECK_FALSE(signer.verify("role", cookie.substr(0, cookie.size() - 4)).has_value());
    CHECK_FALSE(signer.verify("role", cookie + "=").has_value());
    CHECK_FALSE(signer.verify("role", "").has_value());
    CHECK_FALSE(signer.verify("role", ".").has_value());
    // The unsigned value itself.
    CHECK_FALSE(signer.verify("role", "user").has_value());
}

TEST_CASE("a cookie secret under 32 bytes is refused", "[signed-cookies]") {
    CHECK_THROWS_AS(cookie_signer(std::string(31, 'k')), std::invalid_argument);
    CHECK_THROWS_AS(cookie_signer(""), std::invalid_argument);
    CHECK_NOTHROW(cookie_signer(std::string(32, 'k')));
}

}  // namespace unit_test_web_cookie_signer
