#pragma once
// HTTP/2 framing (RFC 9113 section 4 and 6), transport-free: the frame reader that works in
// place on a connection's read buffer (frame_reader.cpp) and the writer that appends frames
// to its write buffer (frame_writer.cpp). Neither allocates per frame nor throws: the reader
// yields views into the bytes it was given, the writer appends to a string whose capacity
// the connection keeps. What a frame means for its stream is stream_states.hpp's; the
// connection (h2/connection.cpp) drives both.

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace tern::h2::frames {

/// The frame types of RFC 9113 section 6. Others are extensions, which the reader skips.
enum class frame_type : std::uint8_t {
    data = 0,
    headers = 1,
    priority = 2,
    rst_stream = 3,
    settings = 4,
    push_promise = 5,
    ping = 6,
    goaway = 7,
    window_update = 8,
    continuation = 9,
};

/// Frame flags (RFC 9113 section 6); a flag a type does not define is ignored.
namespace flag {
inline constexpr std::uint8_t end_stream = 0x1;   ///< DATA, HEADERS
inline constexpr std::uint8_t ack = 0x1;          ///< SETTINGS, PING
inline constexpr std::uint8_t end_headers = 0x4;  ///< HEADERS, PUSH_PROMISE, CONTINUATION
inline constexpr std::uint8_t padded = 0x8;       ///< DATA, HEADERS, PUSH_PROMISE
inline constexpr std::uint8_t priority = 0x20;    ///< HEADERS
}  // namespace flag

/// The error codes of RFC 9113 section 7, all fourteen. A received code outside them is
/// kept as its number (RST_STREAM and GOAWAY carry std::uint32_t).
enum class error_code : std::uint32_t {
    no_error = 0x0,
    protocol_error = 0x1,
    internal_error = 0x2,
    flow_control_error = 0x3,
    settings_timeout = 0x4,
    stream_closed = 0x5,
    frame_size_error = 0x6,
    refused_stream = 0x7,
    cancel = 0x8,
    compression_error = 0x9,
    connect_error = 0xa,
    enhance_your_calm = 0xb,
    inadequate_security = 0xc,
    http_1_1_required = 0xd,
};

/// The settings of RFC 9113 section 6.5.2, and two registered since whose values are
/// checked (RFC 8441 3, RFC 9218 2.1); other ids are ignored on receipt (6.5.2).
enum class setting_id : std::uint16_t {
    header_table_size = 0x1,
    enable_push = 0x2,
    max_concurrent_streams = 0x3,
    initial_window_size = 0x4,
    max_frame_size = 0x5,
    max_header_list_size = 0x6,
    enable_connect_protocol = 0x8,
    no_rfc7540_priorities = 0x9,
};

/// The size of every frame's header (RFC 9113 4.1).
inline constexpr std::size_t header_size = 9;
/// The bytes a client sends first (RFC 9113 3.4).
inline constexpr std::string_view client_preface = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";
/// SETTINGS_MAX_FRAME_SIZE: its initial value and the largest value allowed (RFC 9113 6.5.2).
inline constexpr std::uint32_t default_max_frame_size = 16384;
inline constexpr std::uint32_t largest_max_frame_size = 16777215;
/// The 31 bits of a stream id, a window increment or a dependency (RFC 9113 4.1).
inline constexpr std::uint32_t max_stream_id = 0x7fffffff;
/// The largest flow-control window (RFC 9113 6.9.1): 2^31 - 1.
inline constexpr std::uint32_t max_window = 0x7fffffff;

/// A frame's 9-byte header, with the stream id's reserved bit cleared (RFC 9113 4.1).
struct frame_header {
    std::uint32_t length = 0;  ///< payload bytes (24 bits)
    std::uint8_t type = 0;     ///< a frame_type, or an extension's type
    std::uint8_t flags = 0;
    std::uint32_t stream_id = 0;  ///< 31 bits
};

/// Reads a frame header from `bytes`, which holds at least header_size bytes.
frame_header parse_header(const std::uint8_t* bytes) noexcept;
/// Writes `header` as 9 bytes at `out` (length and stream id truncated to 24 and 31 bits).
void write_header(std::uint8_t* out, const frame_header& header) noexcept;

/// A complete frame: its header and a view of its payload in the reader's input.
struct frame_view {
    frame_header header;
    std::span<const std::uint8_t> payload;
    frame_type type() const noexcept { return static_cast<frame_type>(header.type); }
    bool has(std::uint8_t f) const noexcept { return (header.flags & f) != 0; }
};

/// Why a frame was refused: the code for RST_STREAM or GOAWAY, whether it ends the
/// connection (RFC 9113 5.4.1) or only the frame's stream (5.4.2), and a static text.
struct failure {
    error_code code = error_code::no_error;
    bool connection_error = false;
    const char* reason = "";
};

// ---- typed payloads: each reads a frame the reader yielded (so already validated) ----

/// A stream dependency (RFC 9113 5.3.2, deprecated; checked and ignored).
struct priority_fields {
    std::uint32_t dependency = 0;
    bool exclusive = false;
    std::uint8_t weight = 0;  ///< as sent: the weight minus one
};

struct data_payload {
    std::span<const std::uint8_t> data;  ///< padding stripped
    std::uint32_t flow_length = 0;       ///< what the frame costs the windows: its whole payload
    bool end_stream = false;
};
data_payload parse_data(const frame_view& frame) noexcept;

struct headers_payload {
    std::span<const std::uint8_t> fragment;  ///< padding and priority stripped
    bool end_stream = false;
    bool end_headers = false;
    bool has_priority = false;
    priority_fields priority;
};
headers_payload parse_headers(const frame_view& frame) noexcept;

/// A CONTINUATION frame's fragment of the header block.
struct continuation_payload {
    std::span<const std::uint8_t> fragment;
    bool end_headers = false;
};
continuation_payload parse_continuation(const frame_view& frame) noexcept;

priority_fields parse_priority(const frame_view& frame) noexcept;
/// RST_STREAM's error code, as sent (it may be one tern does not know).
std::uint32_t parse_rst_stream(const frame_view& frame) noexcept;
/// WINDOW_UPDATE's increment (1 to 2^31 - 1).
std::uint32_t parse_window_update(const frame_view& frame) noexcept;

struct setting {
    std::uint16_t id = 0;  ///< a setting_id, or one to ignore
    std::uint32_t value = 0;
};

/// The entries of a SETTINGS frame, read as they are iterated (no copy).
class settings_payload {
public:
    class iterator {
    public:
        using value_type = setting;
        using difference_type = std::ptrdiff_t;
        iterator() = default;
        explicit iterator(const std::uint8_t* at) noexcept : at_(at) {}
        setting operator*() const noexcept;
        iterator& operator++() noexcept {
            at_ += 6;
            return *this;
        }
        iterator operator++(int) noexcept {
            auto was = *this;
            at_ += 6;
            return was;
        }
        bool operator==(const iterator&) const = default;

    private:
        const std::uint8_t* at_ = nullptr;
    };

    explicit settings_payload(const frame_view& frame) noexcept
        : bytes_(frame.payload), ack_(frame.has(flag::ack)) {}
    bool ack() const noexcept { return ack_; }
    std::size_t size() const noexcept { return bytes_.size() / 6; }
    iterator begin() const noexcept { return iterator(bytes_.data()); }
    iterator end() const noexcept { return iterator(bytes_.data() + bytes_.size()); }

private:
    std::span<const std::uint8_t> bytes_;
    bool ack_ = false;
};

struct ping_payload {
    std::span<const std::uint8_t, 8> opaque;
    bool ack = false;
};
ping_payload parse_ping(const frame_view& frame) noexcept;

struct goaway_payload {
    std::uint32_t last_stream_id = 0;
    std::uint32_t error_code = 0;  ///< as sent
    std::span<const std::uint8_t> debug_data;
};
goaway_payload parse_goaway(const frame_view& frame) noexcept;

// ---- the reader ----------------------------------------------------------------------

/// What the reader holds a client to.
struct reader_limits {
    /// The SETTINGS_MAX_FRAME_SIZE tern advertised: a longer frame is a connection
    /// FRAME_SIZE_ERROR (RFC 9113 4.2), found from its header alone.
    std::uint32_t max_frame_size = default_max_frame_size;
    /// CONTINUATION frames one header block may take (CVE-2024-28182, the CONTINUATION
    /// flood): one more is a connection ENHANCE_YOUR_CALM. 8 is nghttp2's limit, which tern
    /// had before; a block is then at most 9 x max_frame_size bytes.
    std::uint32_t max_continuations = 8;
};

enum class read_status : std::uint8_t {
    need_more,         ///< no complete frame in the bytes given (nothing of one consumed)
    frame,             ///< `frame` is valid for its type
    stream_error,      ///< `frame` breaks a rule of its stream: reset it with `error.code`
    connection_error,  ///< GOAWAY with `error.code`; every later call says the same
};

struct read_result {
    read_status status = read_status::need_more;
    /// Bytes of the input this call used: the preface, skipped extension frames and the
    /// frame yielded. The caller drops them before the next call.
    std::size_t consumed = 0;
    /// The frame (status frame or stream_error). A stream error's frame is still whole, so
    /// that a HEADERS frame's block can be decoded to keep HPACK's table in step (RFC 9113
    /// 5.1, "minimally process").
    frame_view frame;
    failure error;  ///< stream_error and connection_error
};

/// Reads a client's frames in place. Give `next` the bytes received and not yet consumed;
/// it checks the client preface once, then yields one complete frame per call as a view
/// into those bytes (valid while they are), with every rule of RFC 9113 that needs no
/// stream state checked: lengths, stream ids 0 or not, padding, SETTINGS values, the first
/// frame being SETTINGS, and CONTINUATION sequencing. Extension frame types are skipped
/// (section 5.5), except inside a header block. No allocation, no exception.
class reader {
public:
    explicit reader(reader_limits limits = {}) noexcept : limits_(limits) {}

    read_result next(std::span<const std::uint8_t> bytes) noexcept;

    /// Whether the whole client preface has arrived (false after an error: a client that is
    /// not speaking HTTP/2 gets no GOAWAY).
    bool preface_done() const noexcept { return preface_done_; }
    /// The stream whose header block is being continued (0: none).
    std::uint32_t continuing_stream() const noexcept { return continuing_; }
    /// Changes the frame size limit once the client acknowledged a new
    /// SETTINGS_MAX_FRAME_SIZE (RFC 9113 6.5.3).
    void set_max_frame_size(std::uint32_t size) noexcept { limits_.max_frame_size = size; }

private:
    read_result fail(error_code code, const char* reason) noexcept;
    failure check(const frame_header& h, std::span<const std::uint8_t> payload) noexcept;

    reader_limits limits_;
    failure failed_;  // a connection error, once
    std::uint32_t continuing_ = 0;
    std::uint32_t continuations_ = 0;
    bool preface_done_ = false;
    bool settings_seen_ = false;
};

// ---- the writer: frames appended to the connection's write buffer ----------------------

/// One SETTINGS entry to send.
struct setting_entry {
    setting_id id;
    std::uint32_t value;
};

/// SETTINGS with `entries` (stream 0).
void write_settings(std::string& out, std::span<const setting_entry> entries);
/// The acknowledgement of the client's SETTINGS.
void write_settings_ack(std::string& out);
/// A PING (with ACK: the answer to a client's PING, echoing its 8 bytes).
void write_ping(std::string& out, std::span<const std::uint8_t, 8> opaque, bool ack);
/// GOAWAY naming the last stream tern processed, why, and optional debug text.
void write_goaway(std::string& out, std::uint32_t last_stream_id, error_code code,
                  std::string_view debug = {});
void write_rst_stream(std::string& out, std::uint32_t stream_id, error_code code);
/// WINDOW_UPDATE on a stream (0: the connection); `increment` 1 to 2^31 - 1.
void write_window_update(std::string& out, std::uint32_t stream_id, std::uint32_t increment);
/// A DATA frame's header alone, for a payload of `length` bytes the caller appends next
/// (from a file, say).
void write_data_header(std::string& out, std::uint32_t stream_id, std::uint32_t length,
                       bool end_stream);
/// A whole DATA frame; `data` no longer than the client's SETTINGS_MAX_FRAME_SIZE.
void write_data(std::string& out, std::uint32_t stream_id, std::span<const std::uint8_t> data,
                bool end_stream);
void write_data(std::string& out, std::uint32_t stream_id, std::string_view data, bool end_stream);

/// Begins a HEADERS frame: reserves its 9-byte header and returns where it starts. The
/// caller appends the HPACK block right after, then calls end_headers.
std::size_t begin_headers(std::string& out);
/// Ends the header block begun at `start`: fills in the HEADERS frame's header and, when
/// the block is longer than `max_frame_size` (the client's SETTINGS_MAX_FRAME_SIZE),
/// splits it into HEADERS and CONTINUATION frames in place (one pass moving the block's
/// tail). END_STREAM goes on the HEADERS frame, END_HEADERS on the last one (RFC 9113 6.10).
void end_headers(std::string& out, std::size_t start, std::uint32_t stream_id, bool end_stream,
                 std::uint32_t max_frame_size);

}  // namespace tern::h2::frames
