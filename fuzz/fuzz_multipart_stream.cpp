// libFuzzer harness for the streamed multipart parser (src/web/multipart_stream.hpp),
// differential: the whole-body parser (parse_multipart, src/web/multipart.hpp) is its oracle.
//
// Input layout: byte 0 picks the boundary (from a few, some overlapping themselves) and the
// number of cuts (0..15); then two bytes per cut (a position, taken modulo the body's size
// plus one); then the limits (max_file_size: two bytes, max_parts: one, max_part_header_size:
// two); the rest is the body. The body is fed in the pieces the cuts make, each piece in a
// heap buffer of its own that is freed when the next one is fed (so that ASan sees a data
// view that outlives its piece). Traps on any disagreement in the status or in the complete
// parts (names, filenames, content types, bytes), except the two written down in
// docs/uploads.md: header_too_large where the whole parser says malformed for the same
// block, and file_too_large where the whole parser, reading the part to its end first, says
// malformed for something later.

#include "web/multipart.hpp"
#include "web/multipart_stream.hpp"

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace {

using tern::detail::multipart_limits;
using tern::detail::multipart_status;
using tern::detail::multipart_stream;

void check(bool ok) {
    if (!ok) __builtin_trap();
}

struct part_copy {
    std::string name;
    bool has_filename = false;
    std::string filename;
    std::string content_type;
    std::string data;
    bool operator==(const part_copy&) const = default;
};

constexpr std::array<std::string_view, 6> boundaries = {
    "XyZ", "a", "-", "aa-aa", "----WebKitFormBoundary7MA4YWxk", "ab ab",
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    std::string_view in(reinterpret_cast<const char*>(data), size);
    auto byte = [&in]() -> unsigned {
        if (in.empty()) return 0;
        const auto b = static_cast<unsigned char>(in.front());
        in.remove_prefix(1);
        return b;
    };
    auto two = [&byte]() -> unsigned {
        const unsigned high = byte();
        return high << 8 | byte();
    };

    const unsigned first = byte();
    const std::string_view boundary = boundaries[(first >> 4) % boundaries.size()];
    std::vector<unsigned> cut_seeds(first & 0x0F);
    for (auto& c : cut_seeds) c = two();
    multipart_limits limits;
    limits.max_file_size = two();
    limits.max_parts = byte();
    limits.max_part_header_size = two() % 1024;
    const std::string_view body = in;

    // The oracle.
    std::vector<tern::detail::multipart_part> whole_parts;
    std::string whole_message;
    const multipart_status whole =
        tern::detail::parse_multipart(body, boundary, limits, whole_parts, &whole_message);

    // The streamed parser, fed in pieces.
    std::vector<std::size_t> cuts;
    for (const unsigned c : cut_seeds) cuts.push_back(c % (body.size() + 1));
    std::sort(cuts.begin(), cuts.end());
    cuts.push_back(body.size());

    multipart_stream parser(boundary, limits);
    std::vector<part_copy> parts;  // complete ones
    part_copy current;
    bool in_part = false;
    std::unique_ptr<char[]> piece;
    std::size_t from = 0;
    std::size_t next_cut = 0;
    std::size_t fed = 0;
    std::size_t given = 0;  // data bytes given out in the current part
    multipart_status streamed = multipart_status::ok;
    std::string streamed_message;
    for (bool done = false; !done;) {
        switch (parser.next()) {
            case multipart_stream::event::need_more: {
                if (next_cut == cuts.size()) {
                    parser.finish();
                    break;
                }
                const std::size_t to = cuts[next_cut++];
                piece.reset();  // the last piece is gone: nothing may view it now
                piece = std::make_unique<char[]>(to - from + 1);
                std::copy(body.begin() + static_cast<std::ptrdiff_t>(from),
                          body.begin() + static_cast<std::ptrdiff_t>(to), piece.get());
                parser.feed(std::string_view(piece.get(), to - from));
                from = to;
                fed = to;
                break;
            }
            case multipart_stream::event::part:
                check(!in_part);
                in_part = true;
                current = part_copy{parser.part().name,
                                    parser.part().has_filename,
                                    parser.part().filename,
                                    parser.part().content_type,
                                    {}};
                given = 0;
                break;
            case multipart_stream::event::data:
                check(in_part && !parser.data().empty());
                current.data.append(parser.data());
                given += parser.data().size();
                // A file part never gives out more than its limit, nor more than was fed.
                check(!current.has_filename || given <= limits.max_file_size);
                check(given <= fed);
                break;
            case multipart_stream::event::part_end:
                check(in_part);
                in_part = false;
                parts.push_back(std::move(current));
                break;
            case multipart_stream::event::end:
                done = true;
                break;
            case multipart_stream::event::failed:
                streamed = parser.status();
                streamed_message = parser.message();
                check(!streamed_message.empty());
                done = true;
                break;
        }
    }

    // The status, but for the two intended differences.
    if (streamed == multipart_status::header_too_large) {
        check(whole == multipart_status::malformed && whole_message == streamed_message);
    } else if (streamed == multipart_status::file_too_large &&
               whole == multipart_status::malformed) {
        // Refused as the file passed its limit; the whole parser read on to a later fault.
    } else {
        check(streamed == whole);
        if (streamed != multipart_status::ok) check(streamed_message == whole_message);
    }
    // The complete parts, the same and in order.
    check(parts.size() == whole_parts.size());
    for (std::size_t i = 0; i < parts.size() && i < whole_parts.size(); ++i) {
        const auto& w = whole_parts[i];
        check(parts[i] ==
              part_copy{w.name, w.has_filename, w.filename, w.content_type, std::string(w.data)});
    }
    return 0;
}
