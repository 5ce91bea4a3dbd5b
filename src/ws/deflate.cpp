#include "ws/deflate.hpp"

#include "compression/library.hpp"
#include "http/header_values.hpp"
#include "http/request.hpp"
#include "http/token.hpp"

#include <algorithm>
#include <array>
#include <limits>
#include <new>

namespace tern::detail::ws {

namespace {

// The part of `rest` before the first `sep` outside a quoted-string (RFC 9110 5.6.4), which
// is removed from `rest` with the separator; `more` tells whether there was one. Extension
// parameters may be quoted, and a quoted value may hold a comma or a semicolon.
std::string_view next_part(std::string_view& rest, char sep, bool& more) noexcept {
    bool quoted = false;
    for (std::size_t i = 0; i < rest.size(); ++i) {
        const char c = rest[i];
        if (quoted && c == '\\') {
            ++i;  // quoted-pair: the next byte is literal
        } else if (c == '"') {
            quoted = !quoted;
        } else if (!quoted && c == sep) {
            const std::string_view part = rest.substr(0, i);
            rest.remove_prefix(i + 1);
            more = true;
            return part;
        }
    }
    const std::string_view part = rest;
    rest = {};
    more = false;
    return part;
}

// A parameter value: a token, or a quoted-string whose content is a token (RFC 6455 9.1:
// "the value MUST conform to the token ABNF after any quoted-string unescaping"). Written to
// `out`; false when it is neither.
bool unquote(std::string_view v, std::string& out) {
    out.clear();
    if (v.size() >= 2 && v.front() == '"' && v.back() == '"') {
        v = v.substr(1, v.size() - 2);
        for (std::size_t i = 0; i < v.size(); ++i) {
            if (v[i] == '\\') {
                if (++i == v.size()) return false;
            } else if (v[i] == '"') {
                return false;
            }
            out += v[i];
        }
    } else {
        out.assign(v);
    }
    return is_token(out);
}

// A window size parameter's value: 8..15 in decimal without leading zeroes (RFC 7692
// 7.1.2.1), or -1.
int window_bits(std::string_view v) noexcept {
    if (v.empty() || v.size() > 2 || v[0] == '0') return -1;
    int bits = 0;
    for (const char c : v) {
        if (c < '0' || c > '9') return -1;
        bits = bits * 10 + (c - '0');
    }
    return bits >= 8 && bits <= 15 ? bits : -1;
}

// One permessage-deflate offer's parameters (the text after its name and ';'), or nullopt when the
// offer has to be declined (RFC 7692 7.1: an unknown parameter, a parameter given twice, a
// bad value) or asks for what tern cannot do (server_max_window_bits=8).
std::optional<deflate_params> read_offer(std::string_view params, std::string& scratch) {
    deflate_params p;
    bool seen_server_nct = false;
    bool seen_client_nct = false;
    bool seen_server_bits = false;
    bool seen_client_bits = false;
    for (bool more = true; more;) {
        const std::string_view param = next_part(params, ';', more);
        const std::size_t eq = param.find('=');
        const std::string_view name = trim_ows(param.substr(0, eq));
        const bool has_value = eq != std::string_view::npos;
        if (has_value && !unquote(trim_ows(param.substr(eq + 1)), scratch)) return std::nullopt;
        if (iequals(name, "server_no_context_takeover")) {
            if (seen_server_nct || has_value) return std::nullopt;
            seen_server_nct = true;
            p.server_no_context_takeover = true;
        } else if (iequals(name, "client_no_context_takeover")) {
            if (seen_client_nct || has_value) return std::nullopt;
            seen_client_nct = true;
            p.client_no_context_takeover = true;
        } else if (iequals(name, "server_max_window_bits")) {
            if (seen_server_bits || !has_value) return std::nullopt;
            seen_server_bits = true;
            p.server_max_window_bits = window_bits(scratch);
            // zlib refuses a raw deflate stream with an 8-bit window (since 1.2.9 it makes a
            // 9-bit one instead, which would break the client's limit): decline.
            if (p.server_max_window_bits < 9) return std::nullopt;
            // RFC 7692 7.1.2.1: accepting this parameter means answering with it, at the same
            // or a smaller value. deflate_params cannot say that 15 was offered (15 is also
            // "not offered", which the answer leaves out), so an offer of 15 gets 14.
            if (p.server_max_window_bits == 15) p.server_max_window_bits = 14;
        } else if (iequals(name, "client_max_window_bits")) {
            // Without a value: the client can honour a limit; tern sets none (the inflater
            // takes any window), so the answer leaves it out (RFC 7692 7.1.2.2).
            if (seen_client_bits) return std::nullopt;
            seen_client_bits = true;
            if (has_value) {
                p.client_max_window_bits = window_bits(scratch);
                if (p.client_max_window_bits < 0) return std::nullopt;
            }
        } else {
            return std::nullopt;  // unknown, or empty ("permessage-deflate;")
        }
    }
    return p;
}

// Inflate output is produced in steps of this size, so a message is never given more memory
// than its limit plus one step.
constexpr std::size_t inflate_step = 16 * 1024;
constexpr std::array<unsigned char, 4> sync_tail = {0x00, 0x00, 0xFF, 0xFF};

// Makes room in `out` for `needed` bytes, doubling its capacity but never past `most`. A
// std::string grown by resize or reserve may double past what was asked (libstdc++ does),
// which would let a bomb cost twice the limit; a fresh string reserves exactly.
void grow(std::string& out, std::size_t needed, std::size_t most) {
    if (needed <= out.capacity()) return;
    std::string bigger;
    bigger.reserve(std::max(needed, std::min(out.capacity() * 2, most)));
    bigger.append(out);
    out.swap(bigger);
}

}  // namespace

std::optional<deflate_params> negotiate_deflate(std::string_view offers,
                                                bool server_no_context_takeover) {
    std::string scratch;
    for (bool more = true; more;) {
        std::string_view offer = next_part(offers, ',', more);
        bool has_params = false;
        const std::string_view name = trim_ows(next_part(offer, ';', has_params));
        if (!iequals(name, "permessage-deflate")) continue;  // another extension, or empty
        std::optional<deflate_params> p = deflate_params{};
        if (has_params) p = read_offer(offer, scratch);
        if (!p) continue;  // RFC 7692 5: declined; the next offer may do
        p->server_no_context_takeover = p->server_no_context_takeover || server_no_context_takeover;
        // zlib is loaded here, at the first offer accepted; without it every offer is
        // declined and the connection goes on uncompressed.
        if (!zlib_available()) return std::nullopt;
        return p;
    }
    return std::nullopt;
}

std::string format_deflate_answer(const deflate_params& p) {
    std::string out = "permessage-deflate";
    if (p.server_no_context_takeover) out += "; server_no_context_takeover";
    if (p.client_no_context_takeover) out += "; client_no_context_takeover";
    // 15 is the default: an offer of 15 (or none) is honoured without naming it, and
    // client_max_window_bits may only be named when the offer carried it (RFC 7692 7.1.2.2).
    if (p.server_max_window_bits < 15) {
        out += "; server_max_window_bits=";
        out += std::to_string(p.server_max_window_bits);
    }
    if (p.client_max_window_bits < 15) {
        out += "; client_max_window_bits=";
        out += std::to_string(p.client_max_window_bits);
    }
    return out;
}

struct inflater::state {
    z_stream z{};
    explicit state(int window_bits) {
        if (inflate_init2(z, -window_bits) != Z_OK) throw std::bad_alloc();
    }
    ~state() { zlib_library().inflateEnd(&z); }
    state(const state&) = delete;
    state& operator=(const state&) = delete;
};

inflater::inflater(const deflate_params& p) noexcept
    // Window 15 whatever client_max_window_bits says: an inflater with a larger window
    // reads a stream made with a smaller one.
    : reset_each_message_(p.client_no_context_takeover), window_bits_(15) {}

inflater::~inflater() = default;

inflater::status inflater::inflate(std::string_view compressed, std::string& out,
                                   std::size_t limit) {
    // An empty payload is an empty message (RFC 7692 7.2.3.6 sends 0x00, but an empty
    // payload with RSV1 says the same), and the stream is left as it was.
    if (compressed.empty()) return status::ok;
    if (!z_) z_ = std::make_unique<state>(window_bits_);
    const auto& zlib = zlib_library();
    z_stream& z = z_->z;
    const std::size_t start = out.size();
    std::size_t produced = 0;
    // The most `out` may ever need: the limit and the one byte that shows it was passed.
    const std::size_t most = limit < std::numeric_limits<std::size_t>::max() - start - 1
                                 ? start + limit + 1
                                 : std::numeric_limits<std::size_t>::max();
    status result = status::ok;
    bool stream_ended = false;
    // The message, then the tail the sender removed (RFC 7692 7.2.2).
    const std::array<std::string_view, 2> inputs = {
        compressed, {reinterpret_cast<const char*>(sync_tail.data()), sync_tail.size()}};
    for (std::size_t part = 0; part < inputs.size() && result == status::ok && !stream_ended;
         ++part) {
        z.next_in = reinterpret_cast<const Bytef*>(inputs[part].data());
        z.avail_in = static_cast<uInt>(inputs[part].size());
        for (;;) {
            // At most one more byte than the limit allows, so that passing it is seen.
            const std::size_t left = limit - produced;
            const std::size_t room = left < inflate_step ? left + 1 : inflate_step;
            grow(out, start + produced + room, most);
            out.resize(start + produced + room);
            z.next_out = reinterpret_cast<Bytef*>(out.data() + start + produced);
            z.avail_out = static_cast<uInt>(room);
            const int rc = zlib.inflate(&z, Z_SYNC_FLUSH);
            produced += room - z.avail_out;
            if (produced > limit) {
                result = status::too_big;
                break;
            }
            if (rc == Z_STREAM_END) {
                // A block with BFINAL set ends the stream (RFC 7692 7.2.3.4); the next
                // message starts a new one. Bytes of the message after it are not deflate.
                if (part == 0 && z.avail_in != 0) result = status::bad_data;
                stream_ended = true;
                zlib.inflateReset(&z);
                break;
            }
            if (rc == Z_MEM_ERROR) throw std::bad_alloc();
            if (rc != Z_OK && rc != Z_BUF_ERROR) {
                result = status::bad_data;
                break;
            }
            // Done with this input once it is used up and zlib had room to spare.
            if (z.avail_in == 0 && z.avail_out != 0) break;
        }
    }
    // The tail is an empty stored block, after which zlib waits at a block boundary
    // (data_type's 128 bit). Anywhere else, the message ended inside a block: its next bytes
    // would be read as the rest of this one.
    if (result == status::ok && !stream_ended && (z.data_type & 128) == 0) {
        result = status::bad_data;
    }
    out.resize(start + std::min(produced, limit));
    if (result != status::ok || reset_each_message_) zlib.inflateReset(&z);
    return result;
}

struct deflater::state {
    z_stream z{};
    state(int level, int window_bits) {
        if (deflate_init2(z, level, -window_bits, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
            throw std::bad_alloc();
        }
    }
    ~state() { zlib_library().deflateEnd(&z); }
    state(const state&) = delete;
    state& operator=(const state&) = delete;
};

deflater::deflater(const deflate_params& p, int level) noexcept
    : reset_each_message_(p.server_no_context_takeover),
      window_bits_(std::clamp(p.server_max_window_bits, 9, 15)),
      level_(level >= 0 && level <= 9 ? level : Z_DEFAULT_COMPRESSION) {}

deflater::~deflater() = default;

void deflater::deflate(std::string_view message, std::string& out) {
    if (!z_) z_ = std::make_unique<state>(level_, window_bits_);
    const auto& zlib = zlib_library();
    z_stream& z = z_->z;
    const std::size_t start = out.size();
    std::size_t produced = 0;
    z.next_in = reinterpret_cast<const Bytef*>(message.data());
    z.avail_in = static_cast<uInt>(message.size());
    // deflateBound plus room for the flush's empty stored block; more if zlib asks for it.
    std::size_t room = zlib.deflateBound(&z, static_cast<uLong>(message.size())) + 16;
    for (;;) {
        out.resize(start + produced + room);
        z.next_out = reinterpret_cast<Bytef*>(out.data() + start + produced);
        z.avail_out = static_cast<uInt>(room);
        const int rc = zlib.deflate(&z, Z_SYNC_FLUSH);
        produced += room - z.avail_out;
        if (rc == Z_MEM_ERROR) throw std::bad_alloc();
        // With Z_SYNC_FLUSH deflate is done when it leaves output space unused (also on
        // Z_BUF_ERROR: nothing came since the last flush).
        if (z.avail_out != 0) break;
        room = inflate_step;
    }
    // RFC 7692 7.2.1: the flush ends with 00 00 ff ff, which the receiver puts back.
    if (produced >= sync_tail.size() &&
        std::equal(sync_tail.begin(), sync_tail.end(),
                   reinterpret_cast<const unsigned char*>(out.data() + start + produced) -
                       sync_tail.size())) {
        produced -= sync_tail.size();
    }
    if (produced == 0) {
        // Nothing new since the last flush (an empty message: zlib answers Z_BUF_ERROR and
        // writes nothing). An empty stored block is the empty message (RFC 7692 7.2.3.6).
        out.resize(start);
        out.push_back('\0');
        produced = 1;
    }
    out.resize(start + produced);
    if (reset_each_message_) zlib.deflateReset(&z);
}

}  // namespace tern::detail::ws
