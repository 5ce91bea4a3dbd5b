// On-the-fly compression of a ~50 KB JSON response: CPU time per response and the size
// ratio (compressed / original) for gzip, br and zstd at the levels compression_config uses
// by default and at a few others, through tern::detail::encode_whole as the server calls
// it. docs/compression.md quotes the figures.

#include "web/encoders.hpp"

#include <benchmark/benchmark.h>

#include <string>

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
    for (auto _ : state) {
        out.clear();
        benchmark::DoNotOptimize(tern::detail::encode_whole(c, body, level, out));
        benchmark::DoNotOptimize(out.data());
    }
    state.counters["bytes_in"] = static_cast<double>(body.size());
    state.counters["bytes_out"] = static_cast<double>(out.size());
    state.counters["ratio"] = static_cast<double>(out.size()) / static_cast<double>(body.size());
    state.SetBytesProcessed(state.iterations() * static_cast<std::int64_t>(body.size()));
}

}  // namespace

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
