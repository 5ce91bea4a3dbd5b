#pragma once
// RFC 7692: the permessage-deflate extension. Negotiation (the Sec-WebSocket-Extensions
// offer and answer) and the per-message compressor and decompressor over zlib's raw
// deflate. The decompressor never inflates past a limit, so a small message that inflates
// to gigabytes (a zip bomb) is refused after `limit` bytes of output.

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace tern::detail::ws {

/// Negotiated parameters (RFC 7692 7.1).
struct deflate_params {
    bool server_no_context_takeover = false;
    bool client_no_context_takeover = false;
    int server_max_window_bits = 15;  ///< 9..15 (tern declines offers asking for 8)
    int client_max_window_bits = 15;  ///< 8..15
};

/// Reads the client's Sec-WebSocket-Extensions value(s) (a comma list of offers, each with
/// `;` parameters) and accepts the first permessage-deflate offer tern can honour. Returns
/// nullopt when there is none: no offer, only offers with unknown or duplicate parameters or
/// invalid values (RFC 7692 7.1: such an offer is declined), or server_max_window_bits=8;
/// also when zlib cannot be loaded (compression/library.hpp), which an accepted offer loads.
/// `server_no_context_takeover`: the server wants to reset its compressor per message
/// (it answers with that parameter whatever the client offered).
std::optional<deflate_params> negotiate_deflate(std::string_view offers,
                                                bool server_no_context_takeover);

/// The Sec-WebSocket-Extensions answer for `p` (e.g. "permessage-deflate;
/// server_no_context_takeover"): every parameter the server applies, and
/// client_max_window_bits only when the client's offer named a value.
std::string format_deflate_answer(const deflate_params& p);

/// Decompresses whole messages (RFC 7692 7.2.2): the message's payload with the
/// 0x00 0x00 0xff 0xff tail appended, through a raw inflate stream kept between messages
/// unless the client resets (client_no_context_takeover). zlib state is allocated on first
/// use.
class inflater {
public:
    explicit inflater(const deflate_params& p) noexcept;
    ~inflater();
    inflater(const inflater&) = delete;
    inflater& operator=(const inflater&) = delete;

    enum class status { ok, too_big, bad_data };
    /// Appends the inflated message to `out`. `too_big` as soon as the output would pass
    /// `limit` bytes (what was inflated so far stays in `out`; the connection is to be
    /// closed with 1009); `bad_data` for a stream zlib rejects (the connection closes with
    /// 1007: the payload is not what its frame says it is).
    status inflate(std::string_view compressed, std::string& out, std::size_t limit);

private:
    struct state;
    std::unique_ptr<state> z_;
    bool reset_each_message_;
    int window_bits_;
};

/// Compresses whole messages (RFC 7692 7.2.1): raw deflate, flushed with Z_SYNC_FLUSH, the
/// trailing 0x00 0x00 0xff 0xff removed; the context is kept between messages unless
/// server_no_context_takeover. zlib state is allocated on first use.
class deflater {
public:
    explicit deflater(const deflate_params& p, int level = 6) noexcept;
    ~deflater();
    deflater(const deflater&) = delete;
    deflater& operator=(const deflater&) = delete;

    /// Appends the compressed form of `message` to `out`.
    void deflate(std::string_view message, std::string& out);

private:
    struct state;
    std::unique_ptr<state> z_;
    bool reset_each_message_;
    int window_bits_;
    int level_;
};

}  // namespace tern::detail::ws
