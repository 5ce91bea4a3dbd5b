// On-the-fly compression of a ~50 KB JSON response: CPU time per response and the size
// ratio (compressed / original) for gzip, br and zstd at the levels compression_config uses
// by default and at a few others, through tern::detail::encode_whole as the server calls
// it. And what one streamed body's coder holds (bm_stream_coder_memory): the heap a stream
// encoder takes after a first small piece, and after 1 MiB more of text in 64 KiB pieces
// (as the transport pulls them). docs/compression.md quotes the figures.

#include "web/encoders.hpp"

#include <benchmark/benchmark.h>

#include <malloc.h>

#include <algorithm>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace {

using tern::detail::coding;

// An API answer: 330 objects with ids, names, e-mail addresses, numbers and flags, ~50 KB.
std::string json_body() {
    std::string s = "[";
    for (int i = 0; i < 330; ++i) {
        if (i > 0) s += ',';
        s += R"({"id":)" + std::to_string(1000 + i * 37) + R"(,"name":"user )" +
             std::to_string(i * 7919 % 10007) + R"(","email":"user)" + std::to_string(i) +
             R"(@example.com","balance":)" +
             std::to_string((static_cast<unsigned>(i) * 2654435761U) % 100000) + "." +
             std::to_string(i % 100) + R"(,"active":)" + (i % 3 == 0 ? "true" : "false") +
             R"(,"tags":["alpha","beta"],"created":"2026-11-)" + std::to_string(10 + i % 20) +
             "T12:" + std::to_string(10 + i % 50) + ":00Z\"}";
    }
    return s + "]";
}

const std::string body = json_body();

void bm_encode(benchmark::State& state, coding c, int level) {
    std::string out;
    tern::detail::whole_body_coders coders;  // kept across responses, as a loop keeps them
    for (auto _ : state) {
        out.clear();
        benchmark::DoNotOptimize(tern::detail::encode_whole(c, body, level, out, &coders));
        benchmark::DoNotOptimize(out.data());
    }
    state.counters["bytes_in"] = static_cast<double>(body.size());
    state.counters["bytes_out"] = static_cast<double>(out.size());
    state.counters["ratio"] = static_cast<double>(out.size()) / static_cast<double>(body.size());
    state.SetBytesProcessed(state.iterations() * static_cast<std::int64_t>(body.size()));
}

// Heap bytes in use now (glibc's count: what malloc has handed out).
double heap_in_use() {
    const auto info = mallinfo2();
    return static_cast<double>(info.uordblks + info.hblkhd);  // small blocks and mmapped ones
}

void bm_stream_coder_memory(benchmark::State& state, coding c, int level) {
    constexpr int streams = 50;
    std::string text;
    for (int i = 0; text.size() < (1U << 20); ++i) {
        text += "line " + std::to_string(i * 7919 % 100003) + " of an ordinary log, status " +
                std::to_string(200 + i % 5) + "\n";
    }
    double first = 0;
    double after = 0;
    for (auto _ : state) {
        std::vector<std::unique_ptr<tern::detail::stream_encoder>> open;
        std::string out;
        const double before = heap_in_use();
        for (int i = 0; i < streams; ++i) {
            open.push_back(tern::detail::make_stream_encoder(c, level));
            open.back()->encode(std::string(2000, 'a') + "first piece", false, out);
            out.clear();
        }
        first = (heap_in_use() - before) / streams;
        for (auto& encoder : open) {
            for (std::size_t at = 0; at < text.size(); at += 64 * 1024) {
                encoder->encode(std::string_view(text).substr(at, 64 * 1024), false, out);
                out.clear();
            }
        }
        after = (heap_in_use() - before) / streams;
    }
    state.counters["kib_after_first_piece"] = first / 1024;
    state.counters["kib_after_1_mib"] = after / 1024;
}

}  // namespace

BENCHMARK_CAPTURE(bm_stream_coder_memory, gzip_6, coding::gzip, 6)->Iterations(1);
BENCHMARK_CAPTURE(bm_stream_coder_memory, br_3, coding::br, 3)->Iterations(1);
BENCHMARK_CAPTURE(bm_stream_coder_memory, zstd_3, coding::zstd, 3)->Iterations(1);

BENCHMARK_CAPTURE(bm_encode, gzip_1, coding::gzip, 1);
BENCHMARK_CAPTURE(bm_encode, gzip_6_default, coding::gzip, 6);
BENCHMARK_CAPTURE(bm_encode, br_1, coding::br, 1);
BENCHMARK_CAPTURE(bm_encode, br_2, coding::br, 2);
BENCHMARK_CAPTURE(bm_encode, br_3_default, coding::br, 3);
BENCHMARK_CAPTURE(bm_encode, br_4, coding::br, 4);
BENCHMARK_CAPTURE(bm_encode, br_6, coding::br, 6);
BENCHMARK_CAPTURE(bm_encode, br_11, coding::br, 11);
BENCHMARK_CAPTURE(bm_encode, zstd_1, coding::zstd, 1);
BENCHMARK_CAPTURE(bm_encode, zstd_3_default, coding::zstd, 3);
BENCHMARK_CAPTURE(bm_encode, zstd_9, coding::zstd, 9);
