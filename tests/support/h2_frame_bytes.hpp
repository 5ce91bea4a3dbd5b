#pragma once
// Raw HTTP/2 frames for the frame layer's tests (tests/unit/h2/test_frames_*.cpp,
// test_stream_states.cpp): bytes built by hand, independent of tern's writer.

#include <cstdint>
#include <initializer_list>
#include <string_view>
#include <vector>

namespace test_h2_frame_bytes {

using bytes = std::vector<std::uint8_t>;

inline bytes frame(std::uint8_t type, std::uint8_t flags, std::uint32_t stream_id,
                   const bytes& payload = {}) {
    const auto n = payload.size();
    bytes out = {static_cast<std::uint8_t>(n >> 16),
                 static_cast<std::uint8_t>(n >> 8),
                 static_cast<std::uint8_t>(n),
                 type,
                 flags,
                 static_cast<std::uint8_t>(stream_id >> 24),
                 static_cast<std::uint8_t>(stream_id >> 16),
                 static_cast<std::uint8_t>(stream_id >> 8),
                 static_cast<std::uint8_t>(stream_id)};
    out.insert(out.end(), payload.begin(), payload.end());
    return out;
}

inline bytes u32(std::uint32_t v) {
    return {static_cast<std::uint8_t>(v >> 24), static_cast<std::uint8_t>(v >> 16),
            static_cast<std::uint8_t>(v >> 8), static_cast<std::uint8_t>(v)};
}

inline bytes setting(std::uint16_t id, std::uint32_t value) {
    bytes out = {static_cast<std::uint8_t>(id >> 8), static_cast<std::uint8_t>(id)};
    const auto v = u32(value);
    out.insert(out.end(), v.begin(), v.end());
    return out;
}

inline bytes text(std::string_view s) { return {s.begin(), s.end()}; }

inline bytes join(std::initializer_list<bytes> parts) {
    bytes out;
    for (const auto& p : parts) out.insert(out.end(), p.begin(), p.end());
    return out;
}

/// The client preface and an empty SETTINGS frame: what every connection begins with.
inline bytes preface() { return join({text("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"), frame(4, 0, 0)}); }

}  // namespace test_h2_frame_bytes
