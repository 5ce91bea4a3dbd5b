#include "web/encoders.hpp"

#include "compression/library.hpp"
#include "http/accept_encoding.hpp"

#include <algorithm>
#include <array>
#include <cstdint>
#include <limits>

namespace tern::detail {

namespace {

/// Calls deflateEnd however gzip_compress leaves.
struct deflate_stream {
    z_stream z{};
    bool open = false;
    deflate_stream() = default;
    deflate_stream(const deflate_stream&) = delete;
    deflate_stream& operator=(const deflate_stream&) = delete;
    ~deflate_stream() {
        if (open) zlib_library().deflateEnd(&z);
    }
};

bool brotli_whole(std::string_view in, int level, std::string& out) {
    const auto& brotli = brotli_library();
    const std::size_t bound = brotli.BrotliEncoderMaxCompressedSize(in.size());
    if (bound == 0) return false;  // too large for brotli's one-shot bound
    out.resize(bound);
    // A window no larger than the body: brotli sizes its tables by the window, and
    // allocating (and faulting in) 4 MiB of them for a 50 KB body costs more than coding it.
    int window = BROTLI_MIN_WINDOW_BITS;
    while (window < BROTLI_DEFAULT_WINDOW && (std::size_t{1} << window) < in.size()) ++window;
    std::size_t size = out.size();
    if (brotli.BrotliEncoderCompress(level, window, BROTLI_MODE_GENERIC, in.size(),
                                     reinterpret_cast<const std::uint8_t*>(in.data()), &size,
                                     reinterpret_cast<std::uint8_t*>(out.data())) != BROTLI_TRUE) {
        return false;
    }
    out.resize(size);
    return true;
}

struct zstd_context_deleter {
    void operator()(ZSTD_CCtx* c) const noexcept { zstd_library().ZSTD_freeCCtx(c); }
};
using zstd_context = std::unique_ptr<ZSTD_CCtx, zstd_context_deleter>;

bool zstd_whole(std::string_view in, int level, std::string& out, ZSTD_CCtx* context) {
    const auto& zstd = zstd_library();
    if (context == nullptr) return false;
    out.resize(zstd.ZSTD_compressBound(in.size()));
    const std::size_t size =
        zstd.ZSTD_compressCCtx(context, out.data(), out.size(), in.data(), in.size(), level);
    if (zstd.ZSTD_isError(size) != 0U) return false;
    out.resize(size);
    return true;
}

/// Whether the library that codes `c` loads (compression/library.hpp): without it the body
/// goes uncompressed.
bool coder_available(coding c) noexcept {
    switch (c) {
        case coding::gzip:
            return zlib_available();
        case coding::br:
            return brotli_available();
        case coding::zstd:
            return zstd_available();
        case coding::identity:
            break;
    }
    return false;
}

// ---- streams ------------------------------------------------------------------------------

// log2 of the window of brotli and zstd streams: 256 KiB.
constexpr std::uint32_t stream_window_log = 18;

class gzip_stream final : public stream_encoder {
public:
    bool start(int level) {
        // windowBits 15 + 16: the gzip wrapper (RFC 1952), as for whole bodies.
        z_.open = deflate_init2(z_.z, level, 15 + 16, 8, Z_DEFAULT_STRATEGY) == Z_OK;
        return z_.open;
    }

    bool encode(std::string_view piece, bool finish, std::string& out) override {
        const auto& zlib = zlib_library();
        const int flush = finish ? Z_FINISH : Z_SYNC_FLUSH;
        z_.z.next_in = reinterpret_cast<const Bytef*>(piece.data());
        z_.z.avail_in = static_cast<uInt>(piece.size());
        for (;;) {
            const std::size_t at = out.size();
            const std::size_t room = zlib.deflateBound(&z_.z, z_.z.avail_in) + 64;
            out.resize(at + room);
            z_.z.next_out = reinterpret_cast<Bytef*>(out.data() + at);
            z_.z.avail_out = static_cast<uInt>(room);
            const int rc = zlib.deflate(&z_.z, flush);
            out.resize(at + room - z_.z.avail_out);
            if (rc == Z_STREAM_END) return true;
            if (rc != Z_OK && rc != Z_BUF_ERROR) return false;
            // Done when the input is used and the flush left room to spare.
            if (z_.z.avail_in == 0 && z_.z.avail_out != 0 && !finish) return true;
        }
    }

private:
    deflate_stream z_;
};

class brotli_stream final : public stream_encoder {
public:
    brotli_stream() = default;
    brotli_stream(const brotli_stream&) = delete;
    brotli_stream& operator=(const brotli_stream&) = delete;
    ~brotli_stream() override {
        if (state_ != nullptr) brotli_library().BrotliEncoderDestroyInstance(state_);
    }

    bool start(int level) {
        const auto& brotli = brotli_library();
        state_ = brotli.BrotliEncoderCreateInstance(nullptr, nullptr, nullptr);
        // A 256 KiB window (stream_window_log) instead of the default 4 MiB: a stream keeps
        // its coder for its whole life, and many may be open at once.
        return state_ != nullptr &&
               brotli.BrotliEncoderSetParameter(state_, BROTLI_PARAM_QUALITY,
                                                static_cast<std::uint32_t>(level)) == BROTLI_TRUE &&
               brotli.BrotliEncoderSetParameter(state_, BROTLI_PARAM_LGWIN, stream_window_log) ==
                   BROTLI_TRUE;
    }

    bool encode(std::string_view piece, bool finish, std::string& out) override {
        const auto& brotli = brotli_library();
        const BrotliEncoderOperation op = finish ? BROTLI_OPERATION_FINISH : BROTLI_OPERATION_FLUSH;
        std::size_t avail_in = piece.size();
        const auto* next_in = reinterpret_cast<const std::uint8_t*>(piece.data());
        for (;;) {
            const std::size_t at = out.size();
            const std::size_t room = std::max<std::size_t>(avail_in + avail_in / 8 + 64, 4096);
            out.resize(at + room);
            std::size_t avail_out = room;
            auto* next_out = reinterpret_cast<std::uint8_t*>(out.data() + at);
            const bool ok =
                brotli.BrotliEncoderCompressStream(state_, op, &avail_in, &next_in, &avail_out,
                                                   &next_out, nullptr) == BROTLI_TRUE;
            out.resize(at + room - avail_out);
            if (!ok) return false;
            if (avail_in == 0 && brotli.BrotliEncoderHasMoreOutput(state_) == BROTLI_FALSE &&
                (!finish || brotli.BrotliEncoderIsFinished(state_) == BROTLI_TRUE)) {
                return true;
            }
        }
    }

private:
    BrotliEncoderState* state_ = nullptr;
};

class zstd_stream final : public stream_encoder {
public:
    bool start(int level) {
        const auto& zstd = zstd_library();
        context_.reset(zstd.ZSTD_createCCtx());
        // The same 256 KiB window bound as brotli's streams.
        return context_ &&
               zstd.ZSTD_isError(zstd.ZSTD_CCtx_setParameter(
                   context_.get(), ZSTD_c_compressionLevel, level)) == 0U &&
               zstd.ZSTD_isError(zstd.ZSTD_CCtx_setParameter(
                   context_.get(), ZSTD_c_windowLog, static_cast<int>(stream_window_log))) == 0U;
    }

    bool encode(std::string_view piece, bool finish, std::string& out) override {
        const auto& zstd = zstd_library();
        ZSTD_inBuffer input{piece.data(), piece.size(), 0};
        const ZSTD_EndDirective mode = finish ? ZSTD_e_end : ZSTD_e_flush;
        for (;;) {
            const std::size_t at = out.size();
            const std::size_t room = zstd.ZSTD_compressBound(input.size - input.pos) + 64;
            out.resize(at + room);
            ZSTD_outBuffer output{out.data() + at, room, 0};
            const std::size_t left =
                zstd.ZSTD_compressStream2(context_.get(), &output, &input, mode);
            out.resize(at + output.pos);
            if (zstd.ZSTD_isError(left) != 0U) return false;
            if (left == 0) return true;  // flushed (or ended) and all input taken
        }
    }

private:
    std::unique_ptr<ZSTD_CCtx, zstd_context_deleter> context_;
};

}  // namespace

std::string_view coding_name(coding c) noexcept {
    switch (c) {
        case coding::gzip:
            return "gzip";
        case coding::br:
            return "br";
        case coding::zstd:
            return "zstd";
        case coding::identity:
            break;
    }
    return {};
}

coding choose_coding(std::span<const header_field> request_headers,
                     const compression_config& config) noexcept {
    const accepted_codings accepted = parse_accept_encoding(request_headers);
    // Server preference on equal weights, first wins: zstd compresses fastest at a ratio
    // close to brotli's at the default levels (docs/compression.md has the figures), then
    // br, then gzip, which every client takes.
    const std::array<std::pair<coding, int>, 3> candidates = {{
        {coding::zstd, config.zstd ? accepted.zstd : 0},
        {coding::br, config.brotli ? accepted.br : 0},
        {coding::gzip, config.gzip ? accepted.gzip : 0},
    }};
    coding best = coding::identity;
    int best_weight = 0;
    for (const auto& [c, weight] : candidates) {
        if (weight > best_weight) {
            best = c;
            best_weight = weight;
        }
    }
    return best;
}

int coding_level(coding c, const compression_config& config) noexcept {
    switch (c) {
        case coding::br:
            return config.brotli_level;
        case coding::zstd:
            return config.zstd_level;
        case coding::gzip:
        case coding::identity:
            break;
    }
    return config.level;
}

bool gzip_compress(std::string_view in, int level, std::string& out) {
    const auto& zlib = zlib_library();
    deflate_stream stream;
    // windowBits 15 + 16 selects the gzip wrapper (RFC 1952) instead of zlib's (RFC 1950).
    if (deflate_init2(stream.z, level, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
        return false;
    }
    stream.open = true;

    // zlib counts in uInt, so a body over 4 GiB goes in and comes out in several steps.
    constexpr std::size_t max_step = std::numeric_limits<uInt>::max();
    out.resize(zlib.deflateBound(&stream.z, static_cast<uLong>(in.size())));
    std::size_t in_pos = 0;
    std::size_t out_pos = 0;
    for (;;) {
        if (stream.z.avail_in == 0 && in_pos < in.size()) {
            const std::size_t step = std::min(in.size() - in_pos, max_step);
            stream.z.next_in = reinterpret_cast<const Bytef*>(in.data() + in_pos);
            stream.z.avail_in = static_cast<uInt>(step);
            in_pos += step;
        }
        if (out_pos == out.size()) out.resize(out.size() * 2);
        const std::size_t room = std::min(out.size() - out_pos, max_step);
        stream.z.next_out = reinterpret_cast<Bytef*>(out.data() + out_pos);
        stream.z.avail_out = static_cast<uInt>(room);

        const int flush = in_pos == in.size() ? Z_FINISH : Z_NO_FLUSH;
        const int rc = zlib.deflate(&stream.z, flush);
        out_pos += room - stream.z.avail_out;
        if (rc == Z_STREAM_END) break;
        // Z_BUF_ERROR only says no progress was possible this round; the next round brings
        // more input or more room.
        if (rc != Z_OK && rc != Z_BUF_ERROR) return false;
    }
    out.resize(out_pos);
    return true;
}

struct whole_body_coders::kept {
    zstd_context zstd;  ///< made at the first zstd body
};

whole_body_coders::whole_body_coders() noexcept = default;
whole_body_coders::~whole_body_coders() = default;

bool encode_whole(coding c, std::string_view in, int level, std::string& out,
                  whole_body_coders* coders) {
    if (!coder_available(c)) return false;
    switch (c) {
        case coding::gzip:
            return gzip_compress(in, level, out);
        case coding::br:
            return brotli_whole(in, level, out);
        case coding::zstd: {
            if (coders == nullptr) {
                const zstd_context once(zstd_library().ZSTD_createCCtx());
                return zstd_whole(in, level, out, once.get());
            }
            if (!coders->kept_) coders->kept_ = std::make_unique<whole_body_coders::kept>();
            auto& context = coders->kept_->zstd;
            if (!context) context.reset(zstd_library().ZSTD_createCCtx());
            return zstd_whole(in, level, out, context.get());
        }
        case coding::identity:
            break;
    }
    return false;
}

std::unique_ptr<stream_encoder> make_stream_encoder(coding c, int level) {
    if (!coder_available(c)) return nullptr;
    switch (c) {
        case coding::gzip: {
            auto s = std::make_unique<gzip_stream>();
            if (!s->start(level)) return nullptr;
            return s;
        }
        case coding::br: {
            auto s = std::make_unique<brotli_stream>();
            if (!s->start(level)) return nullptr;
            return s;
        }
        case coding::zstd: {
            auto s = std::make_unique<zstd_stream>();
            if (!s->start(level)) return nullptr;
            return s;
        }
        case coding::identity:
            break;
    }
    return nullptr;
}

}  // namespace tern::detail
