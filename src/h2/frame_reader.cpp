#include "h2/frames.hpp"

#include <algorithm>
#include <cstring>

namespace tern::h2::frames {

namespace {

std::uint32_t read_u32(const std::uint8_t* p) noexcept {
    return (std::uint32_t{p[0]} << 24) | (std::uint32_t{p[1]} << 16) | (std::uint32_t{p[2]} << 8) |
           std::uint32_t{p[3]};
}

constexpr std::size_t priority_size = 5;  // dependency and weight (5.3.2)

failure connection_failure(error_code code, const char* reason) noexcept {
    return {code, true, reason};
}
failure stream_failure(error_code code, const char* reason) noexcept {
    return {code, false, reason};
}

bool no_failure(const failure& f) noexcept { return f.code == error_code::no_error; }

// Rules a frame's header alone decides: checked as soon as its 9 bytes are in, so that a
// frame announcing 16 MiB is refused without waiting for it. Only connection errors: a
// stream error needs the whole frame, which is passed over.
failure check_header(const frame_header& h, std::uint32_t max_frame_size) noexcept {
    // RFC 9113 4.2: a frame over the advertised size; a connection error for every type,
    // since most can change the connection's state and a DATA frame's size is no different
    // a mistake.
    if (h.length > max_frame_size) {
        return connection_failure(error_code::frame_size_error,
                                  "frame larger than SETTINGS_MAX_FRAME_SIZE");
    }
    const bool on_connection = h.stream_id == 0;
    switch (static_cast<frame_type>(h.type)) {
        case frame_type::data:
            if (on_connection)
                return connection_failure(error_code::protocol_error, "DATA on stream 0");
            if ((h.flags & flag::padded) != 0 && h.length < 1) {
                return connection_failure(error_code::protocol_error,
                                          "DATA padded without a pad length");
            }
            break;
        case frame_type::headers: {
            if (on_connection)
                return connection_failure(error_code::protocol_error, "HEADERS on stream 0");
            const std::size_t pad = (h.flags & flag::padded) != 0 ? 1 : 0;
            if (pad != 0 && h.length < 1) {
                return connection_failure(error_code::protocol_error,
                                          "HEADERS padded without a pad length");
            }
            if ((h.flags & flag::priority) != 0 && h.length < pad + priority_size) {
                return connection_failure(error_code::frame_size_error,
                                          "HEADERS too short for its priority");
            }
            break;
        }
        case frame_type::priority:
            if (on_connection)
                return connection_failure(error_code::protocol_error, "PRIORITY on stream 0");
            break;  // a wrong length is a stream error (6.3): the whole frame first
        case frame_type::rst_stream:
            if (on_connection) {
                return connection_failure(error_code::protocol_error, "RST_STREAM on stream 0");
            }
            if (h.length != 4) {
                return connection_failure(error_code::frame_size_error, "RST_STREAM length not 4");
            }
            break;
        case frame_type::settings:
            if (!on_connection) {
                return connection_failure(error_code::protocol_error, "SETTINGS on a stream");
            }
            if ((h.flags & flag::ack) != 0 && h.length != 0) {
                return connection_failure(error_code::frame_size_error,
                                          "SETTINGS ack with a payload");
            }
            if (h.length % 6 != 0) {
                return connection_failure(error_code::frame_size_error,
                                          "SETTINGS length not a multiple of 6");
            }
            break;
        case frame_type::push_promise:
            // RFC 9113 8.4: only a server pushes; tern advertises nothing that would allow a
            // client to.
            return connection_failure(error_code::protocol_error, "PUSH_PROMISE from a client");
        case frame_type::ping:
            if (!on_connection)
                return connection_failure(error_code::protocol_error, "PING on a stream");
            if (h.length != 8)
                return connection_failure(error_code::frame_size_error, "PING length not 8");
            break;
        case frame_type::goaway:
            if (!on_connection)
                return connection_failure(error_code::protocol_error, "GOAWAY on a stream");
            if (h.length < 8)
                return connection_failure(error_code::frame_size_error, "GOAWAY shorter than 8");
            break;
        case frame_type::window_update:
            if (h.length != 4) {
                return connection_failure(error_code::frame_size_error,
                                          "WINDOW_UPDATE length not 4");
            }
            break;
        case frame_type::continuation:
            // Sequencing (the only way to a valid CONTINUATION) is checked by the reader.
            if (on_connection) {
                return connection_failure(error_code::protocol_error, "CONTINUATION on stream 0");
            }
            break;
    }
    return {};
}

// Rules that need the payload.
failure check_payload(const frame_header& h, std::span<const std::uint8_t> p) noexcept {
    switch (static_cast<frame_type>(h.type)) {
        case frame_type::data:
            // RFC 9113 6.1: padding as long as the payload or longer.
            if ((h.flags & flag::padded) != 0 && p[0] >= h.length) {
                return connection_failure(error_code::protocol_error, "DATA padding too long");
            }
            break;
        case frame_type::headers: {
            std::size_t at = 0;
            std::size_t room = h.length;
            if ((h.flags & flag::padded) != 0) {
                at = 1;
                room -= 1;
            }
            if ((h.flags & flag::priority) != 0) room -= priority_size;
            // 6.2: padding beyond what the fragment leaves. Checked before the stream error
            // below: a frame that comes out as a stream error is still decoded (HPACK's table
            // must stay in step), so its padding must be whole. Found by fuzz_h2_frames.
            if ((h.flags & flag::padded) != 0 && p[0] > room) {
                return connection_failure(error_code::protocol_error, "HEADERS padding too long");
            }
            if ((h.flags & flag::priority) != 0 &&
                (read_u32(p.data() + at) & max_stream_id) == h.stream_id) {
                return stream_failure(error_code::protocol_error,
                                      "HEADERS depends on its own stream");
            }
            break;
        }
        case frame_type::priority:
            if (h.length != priority_size) {
                return stream_failure(error_code::frame_size_error, "PRIORITY length not 5");
            }
            // 5.3.1: a stream cannot depend on itself.
            if ((read_u32(p.data()) & max_stream_id) == h.stream_id) {
                return stream_failure(error_code::protocol_error,
                                      "PRIORITY depends on its own stream");
            }
            break;
        case frame_type::settings:
            for (std::size_t i = 0; i + 6 <= p.size(); i += 6) {
                const auto id = static_cast<std::uint16_t>((p[i] << 8) | p[i + 1]);
                const std::uint32_t value = read_u32(p.data() + i + 2);
                switch (static_cast<setting_id>(id)) {
                    case setting_id::enable_push:
                        if (value > 1) {
                            return connection_failure(error_code::protocol_error,
                                                      "SETTINGS_ENABLE_PUSH not 0 or 1");
                        }
                        break;
                    case setting_id::initial_window_size:
                        if (value > max_window) {
                            return connection_failure(error_code::flow_control_error,
                                                      "SETTINGS_INITIAL_WINDOW_SIZE over 2^31-1");
                        }
                        break;
                    case setting_id::max_frame_size:
                        if (value < default_max_frame_size || value > largest_max_frame_size) {
                            return connection_failure(error_code::protocol_error,
                                                      "SETTINGS_MAX_FRAME_SIZE out of range");
                        }
                        break;
                    case setting_id::enable_connect_protocol:  // RFC 8441 3
                        if (value > 1) {
                            return connection_failure(
                                error_code::protocol_error,
                                "SETTINGS_ENABLE_CONNECT_PROTOCOL not 0 or 1");
                        }
                        break;
                    case setting_id::no_rfc7540_priorities:  // RFC 9218 2.1
                        if (value > 1) {
                            return connection_failure(error_code::protocol_error,
                                                      "SETTINGS_NO_RFC7540_PRIORITIES not 0 or 1");
                        }
                        break;
                    default:
                        break;  // unknown ids are ignored (6.5.2)
                }
            }
            break;
        case frame_type::window_update:
            // 6.9: an increment of 0 is an error of what it applies to.
            if ((read_u32(p.data()) & max_stream_id) == 0) {
                return h.stream_id == 0
                           ? connection_failure(error_code::protocol_error, "WINDOW_UPDATE of 0")
                           : stream_failure(error_code::protocol_error,
                                            "WINDOW_UPDATE of 0 on a stream");
            }
            break;
        default:
            break;
    }
    return {};
}

bool known_type(std::uint8_t type) noexcept {
    return type <= static_cast<std::uint8_t>(frame_type::continuation);
}

}  // namespace

frame_header parse_header(const std::uint8_t* b) noexcept {
    frame_header h;
    h.length = (std::uint32_t{b[0]} << 16) | (std::uint32_t{b[1]} << 8) | std::uint32_t{b[2]};
    h.type = b[3];
    h.flags = b[4];
    h.stream_id = read_u32(b + 5) & max_stream_id;
    return h;
}

read_result reader::fail(error_code code, const char* reason) noexcept {
    failed_ = connection_failure(code, reason);
    read_result r;
    r.status = read_status::connection_error;
    r.error = failed_;
    return r;
}

read_result reader::next(std::span<const std::uint8_t> bytes) noexcept {
    if (!no_failure(failed_)) {
        read_result r;
        r.status = read_status::connection_error;
        r.error = failed_;
        return r;
    }
    std::size_t used = 0;
    if (!preface_done_) {
        // RFC 9113 3.4: refused as soon as a byte differs, so a client speaking something
        // else is not kept waiting for 24 bytes.
        const std::size_t have = std::min(bytes.size(), client_preface.size());
        // (memcmp is not given the null pointer of an empty span, even for 0 bytes.)
        if (have != 0 && std::memcmp(bytes.data(), client_preface.data(), have) != 0) {
            return fail(error_code::protocol_error, "not the HTTP/2 client preface");
        }
        if (have < client_preface.size()) return {};
        preface_done_ = true;
        used = client_preface.size();
    }
    for (;;) {
        const auto rest = bytes.subspan(used);
        if (rest.size() < header_size) break;
        const frame_header h = parse_header(rest.data());
        // 3.4: the preface ends with a SETTINGS frame.
        if (!settings_seen_) {
            if (h.type != static_cast<std::uint8_t>(frame_type::settings) ||
                (h.flags & flag::ack) != 0) {
                return fail(error_code::protocol_error, "the preface's SETTINGS frame missing");
            }
        }
        // 6.2 and 6.10: a header block is a contiguous run of frames on one stream.
        const bool is_continuation = h.type == static_cast<std::uint8_t>(frame_type::continuation);
        if (continuing_ != 0) {
            if (!is_continuation || h.stream_id != continuing_) {
                return fail(error_code::protocol_error, "a header block interrupted");
            }
            if (continuations_ + 1 > limits_.max_continuations) {
                return fail(error_code::enhance_your_calm, "too many CONTINUATION frames");
            }
        } else if (is_continuation) {
            return fail(error_code::protocol_error, "CONTINUATION outside a header block");
        }
        if (failure f = check_header(h, limits_.max_frame_size); !no_failure(f)) {
            return fail(f.code, f.reason);
        }
        if (rest.size() - header_size < h.length) break;
        const auto payload = rest.subspan(header_size, h.length);
        const std::size_t frame_bytes = header_size + h.length;
        if (!known_type(h.type)) {
            used += frame_bytes;  // 5.5: extension frames are ignored
            continue;
        }
        const failure f = check_payload(h, payload);
        if (!no_failure(f) && f.connection_error) return fail(f.code, f.reason);
        settings_seen_ = true;
        if (h.type == static_cast<std::uint8_t>(frame_type::headers)) {
            continuing_ = (h.flags & flag::end_headers) != 0 ? 0 : h.stream_id;
            continuations_ = 0;
        } else if (is_continuation) {
            ++continuations_;
            if ((h.flags & flag::end_headers) != 0) continuing_ = 0;
        }
        read_result r;
        r.status = no_failure(f) ? read_status::frame : read_status::stream_error;
        r.consumed = used + frame_bytes;
        r.frame = {h, payload};
        r.error = f;
        return r;
    }
    read_result r;
    r.consumed = used;
    return r;
}

// ---- typed payloads ------------------------------------------------------------------

data_payload parse_data(const frame_view& frame) noexcept {
    data_payload d;
    d.flow_length = frame.header.length;
    d.end_stream = frame.has(flag::end_stream);
    auto p = frame.payload;
    if (frame.has(flag::padded)) p = p.subspan(1, p.size() - 1 - p[0]);
    d.data = p;
    return d;
}

headers_payload parse_headers(const frame_view& frame) noexcept {
    headers_payload out;
    out.end_stream = frame.has(flag::end_stream);
    out.end_headers = frame.has(flag::end_headers);
    auto p = frame.payload;
    std::size_t pad = 0;
    if (frame.has(flag::padded)) {
        pad = p[0];
        p = p.subspan(1);
    }
    if (frame.has(flag::priority)) {
        out.has_priority = true;
        const std::uint32_t dep = read_u32(p.data());
        out.priority = {dep & max_stream_id, (dep & 0x80000000U) != 0, p[4]};
        p = p.subspan(priority_size);
    }
    out.fragment = p.first(p.size() - pad);
    return out;
}

continuation_payload parse_continuation(const frame_view& frame) noexcept {
    return {frame.payload, frame.has(flag::end_headers)};
}

priority_fields parse_priority(const frame_view& frame) noexcept {
    const std::uint32_t dep = read_u32(frame.payload.data());
    return {dep & max_stream_id, (dep & 0x80000000U) != 0, frame.payload[4]};
}

std::uint32_t parse_rst_stream(const frame_view& frame) noexcept {
    return read_u32(frame.payload.data());
}

std::uint32_t parse_window_update(const frame_view& frame) noexcept {
    return read_u32(frame.payload.data()) & max_stream_id;
}

setting settings_payload::iterator::operator*() const noexcept {
    return {static_cast<std::uint16_t>((at_[0] << 8) | at_[1]), read_u32(at_ + 2)};
}

ping_payload parse_ping(const frame_view& frame) noexcept {
    return {frame.payload.first<8>(), frame.has(flag::ack)};
}

goaway_payload parse_goaway(const frame_view& frame) noexcept {
    const auto& p = frame.payload;
    return {read_u32(p.data()) & max_stream_id, read_u32(p.data() + 4), p.subspan(8)};
}

}  // namespace tern::h2::frames
