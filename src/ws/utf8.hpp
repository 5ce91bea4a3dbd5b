#pragma once
// Incremental UTF-8 validation (RFC 3629) for WebSocket text messages, which arrive in
// fragments that may split a character (RFC 6455 5.6, 8.1). Rejects overlong forms,
// surrogates (U+D800..U+DFFF) and code points above U+10FFFF, as soon as the first byte that
// makes the sequence invalid arrives (fail fast).

#include <cstdint>
#include <string_view>

namespace tern::detail::ws {

class utf8_validator {
public:
    /// Validates the next piece. False once any byte so far is invalid (and stays false).
    bool feed(std::string_view piece) noexcept;
    /// True when everything fed is valid and no character is left incomplete.
    bool complete() const noexcept { return state_ == 0; }
    /// Starts a new message (also after a failure).
    void reset() noexcept { state_ = 0; }

private:
    // 0 between characters; otherwise what the next byte must be (utf8.cpp), or the sticky
    // failed state, so that complete() is false after a failure and reset() clears it.
    std::uint32_t state_ = 0;
};

/// Whole-string check.
bool is_valid_utf8(std::string_view s) noexcept;

}  // namespace tern::detail::ws
