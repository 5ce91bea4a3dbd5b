// libFuzzer harness for the request parser (src/http/parser.hpp).
//
// An input is one connection's bytes; where it holds "\n--MARK--\n" (the convention of the
// h2o corpus and of fuzz/corpus/parser), the parts are the client's separate writes and the
// markers are not part of the stream. Each input is parsed five times, always with the
// feed/next loop of src/http1/connection.cpp:
//   1. the whole stream in one read, default limits;
//   2. the same bytes one byte per read, default limits;
//   3. one read per marked part, default limits;
//   4. the input read through FuzzedDataProvider: read sizes and, half the time, small
//      limits taken from its last bytes, the rest as the stream, so the limit paths run at
//      every split;
//   5. that stream with those limits in one read;
//   6, 7 and 8. runs 1, 2 and 4 again with every body streamed (body_plan::streamed: the
//      head alone first, then the body a piece per feed, each piece a view of that read):
//      the pieces joined must be the body the whole runs kept.
// Runs over the same bytes and limits must agree: where reads split the stream must not
// change what is parsed. Every read is copied into its own heap buffer that dies after the
// read, so a view the parser kept into an earlier read is a use-after-free ASan reports.
// Each completed request has every view read byte by byte. Broken invariants call
// __builtin_trap().

#include "http/parser.hpp"
#include "http/request.hpp"

#include <fuzzer/FuzzedDataProvider.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

namespace {

using tern::detail::body_plan;
using tern::detail::parser_limits;
using tern::detail::request;
using tern::detail::request_parser;
using event = request_parser::event;

void check(bool ok) {
    if (!ok) __builtin_trap();
}

// Reads every byte of `s` (so ASan checks the whole view) and folds them into a sum the
// optimizer cannot drop.
std::uint64_t touch(std::string_view s) {
    std::uint64_t sum = s.size();
    for (const char c : s) sum = sum * 31 + static_cast<unsigned char>(c);
    return sum;
}

volatile std::uint64_t sink;

// True when `inner` lies within `outer` (an empty view may sit anywhere, even nowhere).
bool within(std::string_view inner, std::string_view outer) {
    if (inner.empty()) return true;
    return inner.data() >= outer.data() &&
           inner.data() + inner.size() <= outer.data() + outer.size();
}

// Checks a completed request against the limits and reads all of it; returns it flattened
// for comparing runs.
std::string check_request(const request& req, const parser_limits& limits) {
    std::uint64_t sum = touch(req.method) + touch(req.target) + touch(req.path) + touch(req.query) +
                        touch(req.body);
    check(!req.method.empty());
    check(!req.target.empty());
    // path is the target up to '?' (for the absolute form, from the path on; "/" when it
    // has none), query what follows the '?'.
    check(within(req.path, req.target) || req.path == "/");
    check(within(req.query, req.target));
    // HTTP/1.x only: a request line without a version, which llhttp takes as HTTP/0.9, is
    // an error.
    check(req.version_major == 1);
    check(req.method.size() + req.target.size() <= limits.max_line_size);
    check(req.headers.size() <= limits.max_header_count);
    check(req.body.size() <= limits.max_body_size);

    std::string flat;
    flat.append(req.method).append(" ").append(req.target).append(" ");
    flat.push_back(static_cast<char>('0' + req.version_minor));
    flat.push_back(req.keep_alive ? 'K' : 'C');
    flat.push_back(req.is_head ? 'H' : '-');
    std::size_t header_bytes = 0;
    for (const auto& h : req.headers) {
        sum += touch(h.name) + touch(h.value);
        header_bytes += h.name.size() + h.value.size();
        flat.append("\n").append(h.name).append(": ").append(h.value);
    }
    check(header_bytes <= limits.max_header_size);
    if (!req.headers.empty()) {
        const auto first = req.header(req.headers.front().name);
        check(first.has_value());
        sum += touch(*first);
    }
    sum += touch(req.header("host").value_or(std::string_view{}));
    flat.append("\n\n").append(req.body);
    sink = sum;
    return flat;
}

// Streams every body, up to max_body_size (the limit the whole runs apply).
class streaming_planner final : public tern::detail::body_planner {
public:
    explicit streaming_planner(std::size_t limit) : limit_(limit) {}
    std::size_t body_limit(const request&) const noexcept override { return limit_; }
    body_plan plan_body(const request&) const noexcept override { return {limit_, true}; }

private:
    std::size_t limit_;
};

// What one run produced: every completed request, flattened, then how the run ended.
struct outcome {
    std::vector<std::string> requests;
    std::error_code error;  ///< set when the stream was rejected
    bool closed = false;    ///< stopped after a request that does not keep the connection
};

// Parses `stream` as src/http1/connection.cpp does, one read of `next_read()` bytes (at least
// one) at a time.
outcome parse(std::string_view stream, const parser_limits& whole_limits,
              const std::function<std::size_t()>& next_read, bool streamed = false) {
    outcome out;
    const streaming_planner planner(whole_limits.max_body_size);
    parser_limits limits = whole_limits;
    if (streamed) limits.planner = &planner;
    request_parser parser(limits);
    std::string pieces;  // a streamed body's pieces, joined
    while (!stream.empty() && !out.error && !out.closed) {
        const std::size_t n = std::min(std::max<std::size_t>(next_read(), 1), stream.size());
        // A fresh allocation per read, freed at the end of this iteration.
        const auto buffer = std::make_unique<char[]>(n);
        std::copy_n(stream.data(), n, buffer.get());
        stream.remove_prefix(n);

        std::string_view data(buffer.get(), n);
        while (!data.empty()) {
            const auto r = parser.feed(data);
            check(r.consumed <= data.size());
            // need_more means every byte was taken: anything else would make the caller loop.
            check(r.what != event::need_more || r.consumed == data.size());
            // Only a streamed body gives pieces, each a view of this read.
            const std::string_view piece = parser.piece();
            check(streamed || (r.what != event::head && r.what != event::piece && piece.empty()));
            check(within(piece, data.substr(0, r.consumed)));
            check(r.what != event::piece || !piece.empty());
            pieces.append(piece);
            if (r.what == event::head) {
                check(parser.streaming() && parser.reading_body());
                check(pieces.empty());
            }
            data.remove_prefix(r.consumed);
            sink = parser.in_progress() + parser.reading_body() + parser.wants_continue();
            if (r.what == event::request) {
                check(r.consumed > 0);  // a request ends on a byte of this read
                check(!parser.in_progress());
                request& req = parser.current();
                if (parser.streaming()) {
                    check(req.body.empty());  // handed out, not kept
                    req.body = std::exchange(pieces, {});
                }
                check(pieces.empty());
                out.requests.push_back(check_request(req, limits));
                const bool keep_alive = req.keep_alive;
                parser.next();
                if (!keep_alive) {
                    out.closed = true;  // the connection answers and stops reading
                    break;
                }
            } else if (r.what == event::error) {
                out.error = parser.error();
                check(static_cast<bool>(out.error));
                // Errors are final: nothing fed afterwards is parsed.
                const auto again = parser.feed(data);
                check(again.what == event::error);
                check(again.consumed <= data.size());
                const auto fresh = parser.feed("GET / HTTP/1.1\r\nHost: a\r\n\r\n");
                check(fresh.what == event::error);
                check(parser.error() == out.error);
                break;
            }
        }
        if (!out.error && !out.closed && parser.wants_continue()) parser.continue_sent();
    }
    return out;
}

// Checks that two runs over the same bytes and limits produced the same requests and ended
// the same way. The error itself may differ: a stream that breaks two rules fails on
// whichever of them a read boundary exposes first (a header count reached in a partial read
// before a syntax error later in the same bytes).
void check_same(const outcome& a, const outcome& b) {
    check(a.requests == b.requests);
    check(static_cast<bool>(a.error) == static_cast<bool>(b.error));
    check(a.closed == b.closed);
}

// Splits an input at its markers: the writes, and the stream they make together.
std::vector<std::string_view> writes_of(std::string_view input, std::string& stream) {
    static constexpr std::string_view marker = "\n--MARK--\n";
    std::vector<std::string_view> parts;
    while (true) {
        const auto at = input.find(marker);
        parts.push_back(input.substr(0, at));
        if (at == std::string_view::npos) break;
        input.remove_prefix(at + marker.size());
    }
    stream.clear();
    for (const auto part : parts) stream.append(part);
    return parts;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view input(reinterpret_cast<const char*>(data), size);
    const parser_limits defaults;

    // 1, 2 and 3.
    std::string stream;
    std::vector<std::string_view> parts = writes_of(input, stream);
    std::erase_if(parts, [](std::string_view p) { return p.empty(); });
    const outcome at_once = parse(stream, defaults, [&] { return stream.size(); });
    const outcome bytewise = parse(stream, defaults, [] { return std::size_t{1}; });
    std::size_t part = 0;
    const outcome as_written =
        parse(stream, defaults, [&] { return part < parts.size() ? parts[part++].size() : 1; });
    check_same(at_once, bytewise);
    check_same(at_once, as_written);
    // 6 and 7.
    check_same(at_once, parse(
                            stream, defaults, [&] { return stream.size(); }, true));
    check_same(at_once, parse(
                            stream, defaults, [] { return std::size_t{1}; }, true));

    // 4 and 5: read sizes and limits chosen by the input.
    FuzzedDataProvider fdp(data, size);
    parser_limits limits;
    if (fdp.ConsumeBool()) {
        limits.max_body_size = fdp.ConsumeIntegralInRange<std::size_t>(0, 64);
        limits.max_header_count = fdp.ConsumeIntegralInRange<std::size_t>(1, 8);
        limits.max_header_size = fdp.ConsumeIntegralInRange<std::size_t>(1, 256);
        limits.max_line_size = fdp.ConsumeIntegralInRange<std::size_t>(16, 128);
        limits.max_empty_lines = fdp.ConsumeIntegralInRange<std::size_t>(0, 4);
    }
    std::vector<std::size_t> reads(fdp.ConsumeIntegralInRange<std::size_t>(1, 8));
    for (auto& r : reads) r = std::size_t{1} + fdp.ConsumeIntegral<std::uint8_t>();
    const std::string rest = fdp.ConsumeRemainingBytesAsString();
    writes_of(rest, stream);
    std::size_t turn = 0;
    const outcome chosen = parse(stream, limits, [&] { return reads[turn++ % reads.size()]; });
    check_same(parse(stream, limits, [&] { return stream.size(); }), chosen);
    // 8.
    turn = 0;
    check_same(chosen, parse(
                           stream, limits, [&] { return reads[turn++ % reads.size()]; }, true));
    return 0;
}
