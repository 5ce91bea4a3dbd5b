#pragma once
// The test client's cookies (RFC 6265 section 5, the parts a single-origin client needs):
// stored from Set-Cookie by name and path, sent back to targets within their path, removed
// by Max-Age <= 0 or an Expires in the past. Domain is ignored: every cookie is the test
// server's.

#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tern::testing::detail {

/// The cookies one client holds.
class cookie_jar {
public:
    /// Applies one Set-Cookie field answering a request for `request_target`. A field
    /// without `name=` is ignored, as RFC 6265 section 5.2 says.
    void store(std::string_view set_cookie, std::string_view request_target);
    /// Adds (or replaces) `name=value` for path "/", without expiry.
    void put(std::string name, std::string value);
    /// The Cookie field's value for a request to `request_target` ("a=1; b=2"), longer
    /// paths first; empty when no cookie applies. Expired cookies are dropped first.
    std::string header_for(std::string_view request_target);
    /// The value of the first live cookie named `name`.
    std::optional<std::string> find(std::string_view name) const;
    /// Forgets every cookie.
    void clear() noexcept { cookies_.clear(); }

private:
    struct entry {
        std::string name;
        std::string value;
        std::string path;
        std::optional<std::chrono::system_clock::time_point> expires;
    };
    void drop_expired();

    std::vector<entry> cookies_;  // in creation order
};

/// The time an IMF-fixdate ("Sun, 06 Nov 1994 08:49:37 GMT") names; std::nullopt when
/// `text` is not one.
std::optional<std::chrono::system_clock::time_point> parse_imf_fixdate(std::string_view text);

}  // namespace tern::testing::detail
