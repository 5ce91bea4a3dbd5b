#pragma once
// Test-side decoders for the codings tern sends (gzip via zlib, br via brotli's decoder,
// zstd via libzstd's decoder): whole coded bodies back to their bytes, or nullopt when the
// input is malformed, truncated or has bytes after its end.

#include <brotli/decode.h>
#include <zlib.h>
#include <zstd.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace tern_test {

inline std::optional<std::string> decode_gzip(std::string_view in) {
    z_stream z{};
    if (inflateInit2(&z, 15 + 16) != Z_OK) return std::nullopt;  // +16: gzip framing only
    std::string out;
    z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
    z.avail_in = static_cast<uInt>(in.size());
    int rc = Z_OK;
    char buffer[16384];
    while (rc == Z_OK) {
        z.next_out = reinterpret_cast<Bytef*>(buffer);
        z.avail_out = sizeof buffer;
        rc = inflate(&z, Z_NO_FLUSH);
        out.append(buffer, sizeof buffer - z.avail_out);
        if (rc == Z_BUF_ERROR && z.avail_in == 0) break;
    }
    const bool complete = rc == Z_STREAM_END && z.avail_in == 0;
    inflateEnd(&z);
    if (!complete) return std::nullopt;
    return out;
}

/// Runs brotli's decoder over `in` until it needs more input or ends: what came out, how
/// it stopped, and whether input was left over.
struct br_run {
    std::string out;
    BrotliDecoderResult result = BROTLI_DECODER_RESULT_ERROR;
    bool input_left = false;
};

inline br_run run_br_decoder(std::string_view in) {
    br_run run;
    std::unique_ptr<BrotliDecoderState, void (*)(BrotliDecoderState*)> state(
        BrotliDecoderCreateInstance(nullptr, nullptr, nullptr), BrotliDecoderDestroyInstance);
    if (!state) return run;
    std::size_t avail_in = in.size();
    const auto* next_in = reinterpret_cast<const std::uint8_t*>(in.data());
    do {
        std::uint8_t buffer[16384];
        std::size_t avail_out = sizeof buffer;
        std::uint8_t* next_out = buffer;
        run.result = BrotliDecoderDecompressStream(state.get(), &avail_in, &next_in, &avail_out,
                                                   &next_out, nullptr);
        run.out.append(reinterpret_cast<const char*>(buffer), sizeof buffer - avail_out);
    } while (run.result == BROTLI_DECODER_RESULT_NEEDS_MORE_OUTPUT);
    run.input_left = avail_in != 0;
    return run;
}

inline std::optional<std::string> decode_br(std::string_view in) {
    auto run = run_br_decoder(in);
    // An error, or needs more input (truncated), or bytes after the end: not one stream.
    if (run.result != BROTLI_DECODER_RESULT_SUCCESS || run.input_left) return std::nullopt;
    return std::move(run.out);
}

/// Decodes what a flushed (not yet ended) brotli stream gives so far: every byte flushed
/// must come out even though the stream is not finished.
inline std::string decode_br_prefix(std::string_view in) { return run_br_decoder(in).out; }

inline std::optional<std::string> decode_zstd_impl(std::string_view in, bool need_end) {
    std::unique_ptr<ZSTD_DCtx, std::size_t (*)(ZSTD_DCtx*)> ctx(ZSTD_createDCtx(), ZSTD_freeDCtx);
    if (!ctx) return std::nullopt;
    std::string out;
    ZSTD_inBuffer input{in.data(), in.size(), 0};
    std::size_t left = 1;
    for (;;) {
        char buffer[16384];
        ZSTD_outBuffer output{buffer, sizeof buffer, 0};
        left = ZSTD_decompressStream(ctx.get(), &output, &input);
        if (ZSTD_isError(left) != 0U) return std::nullopt;
        out.append(buffer, output.pos);
        if (left == 0 && input.pos == input.size) return out;  // a frame ended, input used
        if (input.pos == input.size && output.pos < output.size) break;
    }
    if (need_end) return std::nullopt;  // truncated: the frame did not end
    return out;
}

inline std::optional<std::string> decode_zstd(std::string_view in) {
    return decode_zstd_impl(in, true);
}

/// Decodes what a flushed (not yet ended) zstd frame gives so far.
inline std::string decode_zstd_prefix(std::string_view in) {
    return decode_zstd_impl(in, false).value_or("<malformed>");
}

/// Decodes `in` by its Content-Encoding token ("gzip", "br", "zstd").
inline std::optional<std::string> decode_as(std::string_view coding, std::string_view in) {
    if (coding == "gzip") return decode_gzip(in);
    if (coding == "br") return decode_br(in);
    if (coding == "zstd") return decode_zstd(in);
    return std::nullopt;
}

}  // namespace tern_test
