// libFuzzer harness for the response parser (src/http/response_parser.hpp).
//
// An input is the bytes a server sends on one client connection; where it holds
// "\n--MARK--\n" (as in fuzz/corpus/parser), the parts are the server's separate writes and
// the markers are not part of the stream. Each input is read five times, always as a client
// reads: expect() before each response, feeding on after every head, finish() when the
// stream ends inside a response (the server closed the connection):
//   1. the whole stream in one read, default limits, no request a HEAD;
//   2. the same bytes one byte per read;
//   3. one read per marked part;
//   4. the input read through FuzzedDataProvider: read sizes, which of the first eight
//      requests were HEAD and, half the time, small limits, taken from its last bytes, the
//      rest as the stream, so the limit paths run at every split;
//   5. that stream with those choices in one read.
// Runs over the same bytes and choices must agree: where reads split the stream must not
// change what is read. Every read is copied into its own heap buffer that dies after the
// read, so a view the parser kept into an earlier read is a use-after-free ASan reports.
// Every head has every view read byte by byte; the body is taken (and cleared) after each
// feed, as a streaming client does. Broken invariants call __builtin_trap().

#include "http/response_parser.hpp"

#include <fuzzer/FuzzedDataProvider.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace {

using tern::detail::response_error;
using tern::detail::response_head;
using tern::detail::response_limits;
using tern::detail::response_parser;
using event = response_parser::event;

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

bool is_ows(char c) { return c == ' ' || c == '\t'; }

// Checks a head against the limits and reads all of it; returns it flattened for comparing
// runs.
std::string check_head(const response_head& head, const response_limits& limits) {
    check(head.status >= 100 && head.status <= 999 && head.status != 101);
    check(head.version_major == 1);
    check(head.reason.size() <= limits.max_line_size);
    check(head.headers.size() <= limits.max_header_count);
    check(within(head.reason, head.storage));
    std::uint64_t sum = touch(head.reason) + touch(head.storage);
    std::string flat = std::to_string(head.status);
    flat.push_back(static_cast<char>('0' + head.version_minor));
    flat.append(" ").append(head.reason);
    std::size_t header_bytes = 0;
    for (const auto& h : head.headers) {
        check(!h.name.empty());
        check(within(h.name, head.storage) && within(h.value, head.storage));
        check(h.value.empty() || (!is_ows(h.value.front()) && !is_ows(h.value.back())));
        sum += touch(h.name) + touch(h.value);
        header_bytes += h.name.size() + h.value.size();
        flat.append("\n").append(h.name).append(": ").append(h.value);
    }
    check(header_bytes <= limits.max_header_size);
    sink = sum;
    return flat;
}

// What one run produced: every completed response, flattened, then how the run ended.
struct outcome {
    std::vector<std::string> responses;
    bool failed = false;  ///< the stream was refused, or ended inside a response
    bool closed = false;  ///< stopped after a response that does not keep the connection
};

// One client connection: the parser and what the responses so far have given.
class client {
public:
    client(const response_limits& limits, std::uint8_t head_mask)
        : limits_(limits), head_mask_(head_mask), parser_(limits) {
        expect();
    }

    // Parses one read; false when the run is over (an error, or a response that closes).
    bool read(std::string_view data) {
        for (;;) {
            const auto r = parser_.feed(data);
            check(r.consumed <= data.size());
            // need_more means every byte was taken: anything else would make the caller loop.
            check(r.what != event::need_more || r.consumed == data.size());
            data.remove_prefix(r.consumed);
            used_ += r.consumed;
            take_body();
            switch (r.what) {
                case event::need_more:
                    return true;
                case event::head:
                    check(r.consumed > 0);  // a head ends on a byte of this read
                    on_head();
                    break;  // feed on, even with nothing left: a bodiless response ends there
                case event::complete:
                    if (!on_complete()) return false;
                    if (data.empty()) return true;
                    break;
                case event::error:
                    on_error();
                    return false;
            }
        }
    }

    // The stream ended: a response in progress ends here (finish), or fails.
    void end() {
        if (used_ == 0) return;  // no response was under way
        const auto r = parser_.finish();
        check(r.consumed == 0);
        take_body();
        if (r.what == event::complete) {
            on_complete();
        } else {
            check(r.what == event::error);
            on_error();
        }
    }

    outcome result;

private:
    void expect() {
        head_request_ = index_ < 8 && (head_mask_ >> index_ & 1) != 0;
        parser_.expect(head_request_);
        ++index_;
        used_ = 0;
        heads_.clear();
        body_.clear();
        check(parser_.body_bytes() == 0 && parser_.body().empty());
        check(parser_.error() == response_error::none);
    }

    // The caller takes what arrived, as a streaming client does.
    void take_body() {
        body_ += parser_.body();
        parser_.body().clear();
        check(parser_.body_bytes() == body_.size());
        check(parser_.body_bytes() <= limits_.max_body_size);
    }

    void on_head() {
        const auto& head = parser_.head();
        heads_.append(check_head(head, limits_)).append("\n\n");
        check(body_.empty());  // the head comes before any body byte
        check(!parser_.keep_alive());
    }

    // Records a complete response; false when the connection ends after it.
    bool on_complete() {
        const auto& head = parser_.head();
        const int status = head.status;
        check(status >= 200);  // interim heads never complete a response
        if (head_request_ || status == 204 || status == 304) check(body_.empty());
        sink = touch(head.reason);  // the head's views last until expect()
        const bool keep_alive = parser_.keep_alive();
        // Reported again, unchanged, until expect().
        check(parser_.feed("HTTP/1.1 200 OK\r\n\r\n").what == event::complete);
        check(parser_.finish().what == event::complete);
        std::string flat = heads_;
        flat.append(body_).push_back(keep_alive ? 'K' : 'C');
        result.responses.push_back(std::move(flat));
        if (!keep_alive) {
            result.closed = true;
            return false;
        }
        expect();
        return true;
    }

    void on_error() {
        const response_error e = parser_.error();
        check(e != response_error::none);
        check(!describe(e).empty());
        result.failed = true;
        // Errors are final: nothing fed, finished or expected afterwards changes them.
        check(parser_.feed("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n").what == event::error);
        check(parser_.finish().what == event::error);
        parser_.expect(false);
        check(parser_.error() == e);
    }

    response_limits limits_;
    std::uint8_t head_mask_;
    response_parser parser_;
    unsigned index_ = 0;  // responses expected so far
    bool head_request_ = false;
    std::size_t used_ = 0;  // bytes of the current response consumed
    std::string heads_;     // this response's heads, flattened
    std::string body_;      // this response's body, as taken
};

// Reads `stream` as a client does, one read of `next_read()` bytes (at least one) at a time.
outcome parse(std::string_view stream, const response_limits& limits, std::uint8_t head_mask,
              const std::function<std::size_t()>& next_read) {
    client c(limits, head_mask);
    bool going = true;
    while (!stream.empty() && going) {
        const std::size_t n = std::min(std::max<std::size_t>(next_read(), 1), stream.size());
        // A fresh allocation per read, freed at the end of this iteration.
        const auto buffer = std::make_unique<char[]>(n);
        std::copy_n(stream.data(), n, buffer.get());
        stream.remove_prefix(n);
        going = c.read({buffer.get(), n});
    }
    if (going) c.end();
    return c.result;
}

// Checks that two runs over the same bytes and choices produced the same responses and
// ended the same way. The error itself may differ: a stream that breaks two rules fails on
// whichever of them a read boundary exposes first.
void check_same(const outcome& a, const outcome& b) {
    check(a.responses == b.responses);
    check(a.failed == b.failed);
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
    const response_limits defaults;

    // 1, 2 and 3.
    std::string stream;
    std::vector<std::string_view> parts = writes_of(input, stream);
    std::erase_if(parts, [](std::string_view p) { return p.empty(); });
    const outcome at_once = parse(stream, defaults, 0, [&] { return stream.size(); });
    const outcome bytewise = parse(stream, defaults, 0, [] { return std::size_t{1}; });
    std::size_t part = 0;
    const outcome as_written =
        parse(stream, defaults, 0, [&] { return part < parts.size() ? parts[part++].size() : 1; });
    check_same(at_once, bytewise);
    check_same(at_once, as_written);

    // 4 and 5: read sizes, HEAD requests and limits chosen by the input.
    FuzzedDataProvider fdp(data, size);
    response_limits limits;
    if (fdp.ConsumeBool()) {
        limits.max_body_size = fdp.ConsumeIntegralInRange<std::uint64_t>(0, 64);
        limits.max_header_count = fdp.ConsumeIntegralInRange<std::size_t>(1, 8);
        limits.max_header_size = fdp.ConsumeIntegralInRange<std::size_t>(1, 256);
        limits.max_line_size = fdp.ConsumeIntegralInRange<std::size_t>(16, 128);
    }
    const auto head_mask = fdp.ConsumeIntegral<std::uint8_t>();
    std::vector<std::size_t> reads(fdp.ConsumeIntegralInRange<std::size_t>(1, 8));
    for (auto& r : reads) r = std::size_t{1} + fdp.ConsumeIntegral<std::uint8_t>();
    const std::string rest = fdp.ConsumeRemainingBytesAsString();
    writes_of(rest, stream);
    std::size_t turn = 0;
    const outcome chosen =
        parse(stream, limits, head_mask, [&] { return reads[turn++ % reads.size()]; });
    check_same(parse(stream, limits, head_mask, [&] { return stream.size(); }), chosen);
    return 0;
}
