#pragma once
// Bytes written as hex in a test (RFC 7541's examples are printed that way): every pair of
// lower-case hex digits is one byte; anything else (spaces, line breaks) is skipped.

#include <string>
#include <string_view>

namespace tern_test {

inline std::string from_hex(std::string_view hex) {
    std::string out;
    int high = -1;
    for (const char c : hex) {
        int v = -1;
        if (c >= '0' && c <= '9') v = c - '0';
        if (c >= 'a' && c <= 'f') v = c - 'a' + 10;
        if (v < 0) continue;
        if (high < 0) {
            high = v;
        } else {
            out.push_back(static_cast<char>(high * 16 + v));
            high = -1;
        }
    }
    return out;
}

}  // namespace tern_test
