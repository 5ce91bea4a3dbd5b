#include "h2/frames.hpp"

#include <algorithm>
#include <cstring>

namespace tern::h2::frames {

namespace {

void put_u32(std::uint8_t* p, std::uint32_t v) noexcept {
    p[0] = static_cast<std::uint8_t>(v >> 24);
    p[1] = static_cast<std::uint8_t>(v >> 16);
    p[2] = static_cast<std::uint8_t>(v >> 8);
    p[3] = static_cast<std::uint8_t>(v);
}

std::uint8_t* bytes_at(std::string& out, std::size_t at) noexcept {
    return reinterpret_cast<std::uint8_t*>(out.data() + at);
}

// Appends a frame header and room for `length` payload bytes; returns where the payload
// starts.
std::uint8_t* append_frame(std::string& out, frame_type type, std::uint8_t flags,
                           std::uint32_t stream_id, std::uint32_t length) {
    const std::size_t at = out.size();
    out.resize(at + header_size + length);
    write_header(bytes_at(out, at), {length, static_cast<std::uint8_t>(type), flags, stream_id});
    return bytes_at(out, at + header_size);
}

}  // namespace

void write_header(std::uint8_t* out, const frame_header& h) noexcept {
    out[0] = static_cast<std::uint8_t>(h.length >> 16);
    out[1] = static_cast<std::uint8_t>(h.length >> 8);
    out[2] = static_cast<std::uint8_t>(h.length);
    out[3] = h.type;
    out[4] = h.flags;
    put_u32(out + 5, h.stream_id & max_stream_id);
}

void write_settings(std::string& out, std::span<const setting_entry> entries) {
    auto* p = append_frame(out, frame_type::settings, 0, 0,
                           static_cast<std::uint32_t>(entries.size() * 6));
    for (const auto& e : entries) {
        const auto id = static_cast<std::uint16_t>(e.id);
        p[0] = static_cast<std::uint8_t>(id >> 8);
        p[1] = static_cast<std::uint8_t>(id);
        put_u32(p + 2, e.value);
        p += 6;
    }
}

void write_settings_ack(std::string& out) {
    append_frame(out, frame_type::settings, flag::ack, 0, 0);
}

void write_ping(std::string& out, std::span<const std::uint8_t, 8> opaque, bool ack) {
    auto* p = append_frame(out, frame_type::ping, ack ? flag::ack : 0, 0, 8);
    std::memcpy(p, opaque.data(), 8);
}

void write_goaway(std::string& out, std::uint32_t last_stream_id, error_code code,
                  std::string_view debug) {
    auto* p =
        append_frame(out, frame_type::goaway, 0, 0, static_cast<std::uint32_t>(8 + debug.size()));
    put_u32(p, last_stream_id & max_stream_id);
    put_u32(p + 4, static_cast<std::uint32_t>(code));
    if (!debug.empty()) std::memcpy(p + 8, debug.data(), debug.size());
}

void write_rst_stream(std::string& out, std::uint32_t stream_id, error_code code) {
    put_u32(append_frame(out, frame_type::rst_stream, 0, stream_id, 4),
            static_cast<std::uint32_t>(code));
}

void write_window_update(std::string& out, std::uint32_t stream_id, std::uint32_t increment) {
    put_u32(append_frame(out, frame_type::window_update, 0, stream_id, 4),
            increment & max_stream_id);
}

void write_data_header(std::string& out, std::uint32_t stream_id, std::uint32_t length,
                       bool end_stream) {
    const std::size_t at = out.size();
    out.resize(at + header_size);
    write_header(bytes_at(out, at), {length, static_cast<std::uint8_t>(frame_type::data),
                                     end_stream ? flag::end_stream : std::uint8_t{0}, stream_id});
}

void write_data(std::string& out, std::uint32_t stream_id, std::span<const std::uint8_t> data,
                bool end_stream) {
    write_data_header(out, stream_id, static_cast<std::uint32_t>(data.size()), end_stream);
    out.append(reinterpret_cast<const char*>(data.data()), data.size());
}

void write_data(std::string& out, std::uint32_t stream_id, std::string_view data, bool end_stream) {
    write_data_header(out, stream_id, static_cast<std::uint32_t>(data.size()), end_stream);
    out.append(data);
}

std::size_t begin_headers(std::string& out) {
    const std::size_t start = out.size();
    out.resize(start + header_size);
    return start;
}

void end_headers(std::string& out, std::size_t start, std::uint32_t stream_id, bool end_stream,
                 std::uint32_t max_frame_size) {
    const std::size_t block = out.size() - start - header_size;
    const std::uint8_t first_flags = end_stream ? flag::end_stream : std::uint8_t{0};
    if (block <= max_frame_size) {
        write_header(
            bytes_at(out, start),
            {static_cast<std::uint32_t>(block), static_cast<std::uint8_t>(frame_type::headers),
             static_cast<std::uint8_t>(first_flags | flag::end_headers), stream_id});
        return;
    }
    // HEADERS carries the first max_frame_size bytes; each CONTINUATION the next. The
    // string grows once by all the headers to insert, then the block's tail pieces move
    // back to front, each to its final place: every byte moves at most once.
    const std::size_t pieces = (block + max_frame_size - 1) / max_frame_size;
    const std::size_t inserted = (pieces - 1) * header_size;
    const std::size_t block_start = start + header_size;
    out.resize(out.size() + inserted);
    for (std::size_t i = pieces - 1; i >= 1; --i) {
        const std::size_t from = block_start + i * max_frame_size;
        const std::size_t length =
            std::min<std::size_t>(max_frame_size, block - i * max_frame_size);
        // Piece i moves past the i headers now before it; its own header goes just ahead.
        const std::size_t to = from + i * header_size;
        std::memmove(out.data() + to, out.data() + from, length);
        write_header(bytes_at(out, to - header_size),
                     {static_cast<std::uint32_t>(length),
                      static_cast<std::uint8_t>(frame_type::continuation),
                      i == pieces - 1 ? flag::end_headers : std::uint8_t{0}, stream_id});
    }
    write_header(
        bytes_at(out, start),
        {max_frame_size, static_cast<std::uint8_t>(frame_type::headers), first_flags, stream_id});
}

}  // namespace tern::h2::frames
