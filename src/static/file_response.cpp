#include "static/file_response.hpp"

#include "http/accept_encoding.hpp"
#include "http/date.hpp"
#include "http/header_values.hpp"
#include "static/byte_ranges.hpp"
#include "static/validators.hpp"

#include <array>
#include <charconv>
#include <cstring>
#include <string>

namespace tern::detail {

namespace {

struct variant {
    std::string_view suffix;            ///< appended to the file name
    std::string_view coding;            ///< Content-Encoding value
    int weight;                         ///< the client's q-value for it
    cached_variant cached_file::*held;  ///< where a cache entry keeps it
};

/// The precompressed variants in the order they are tried: the higher q-value first, br
/// first on a tie. Those with weight 0 are not acceptable.
std::array<variant, 2> variants_for(std::span<const header_field> headers) noexcept {
    const accepted_codings accepted = parse_accept_encoding(headers);
    variant first{".br", "br", accepted.br, &cached_file::br};
    variant second{".gz", "gzip", accepted.gzip, &cached_file::gzip};
    if (second.weight > first.weight) std::swap(first, second);
    return {first, second};
}

/// The coding of the representation chosen for the client, after swapping `opened` to it:
/// the acceptable variant with the highest q-value (br first on a tie) that exists, or ""
/// for the file itself.
std::string_view choose_representation(opened_file& opened, std::span<const header_field> headers) {
    for (const variant& v : variants_for(headers)) {
        if (v.weight > 0 && open_sibling(opened, v.suffix, opened.file, opened.st)) return v.coding;
    }
    return {};
}

/// What an answer is built from: one representation's stat, and its body as an open file
/// (`file` set) or as bytes a cache holds.
struct representation {
    const platform::file_status& st;
    std::string_view coding;  ///< "" for the file itself
    file_handle file;
    std::string_view bytes;
    const cached_variant* held = nullptr;  ///< a cache entry's: its validators are made
};

void append_number(std::string& out, std::uint64_t v) {
    char digits[24];
    out.append(digits, std::to_chars(digits, digits + sizeof digits, v).ptr);
}

/// RFC 9110 14.4: "bytes first-last/size".
std::string content_range(std::uint64_t first, std::uint64_t length, std::uint64_t size) {
    std::string out = "bytes ";
    append_number(out, first);
    out.push_back('-');
    append_number(out, first + length - 1);
    out.push_back('/');
    append_number(out, size);
    return out;
}

static_outcome respond(representation chosen, const file_response_options& options,
                       std::span<const header_field> headers, response& res) {
    const std::string_view coding = chosen.coding;
    const auto size = static_cast<std::uint64_t>(chosen.st.st_size);
    const std::time_t mtime = chosen.st.st_mtime;
    std::string made;  // the ETag of a file that no cache holds
    if (!chosen.held) made = make_etag(chosen.st, coding);
    const std::string_view etag = chosen.held ? std::string_view(chosen.held->etag) : made;
    auto& fields = res.fields;

    // RFC 9110 15.4.5: a 304 carries the ETag, Vary and Cache-Control a 200 would have.
    const auto add_cache_fields = [&] {
        if (options.precompressed) fields.emplace_back("Vary", "Accept-Encoding");
        if (!options.cache_control.empty()) {
            fields.emplace_back("Cache-Control", std::string(options.cache_control));
        }
    };

    switch (evaluate_preconditions(headers, etag, mtime)) {
        case precondition::failed:
            res.status = 412;
            return static_outcome::status_only;
        case precondition::not_modified:
            res.status = 304;
            fields.emplace_back("ETag", std::string(etag));
            add_cache_fields();
            return static_outcome::answered;
        case precondition::proceed:
            break;
    }

    // RFC 9110 13.2.2 step 5 and 13.1.5: Range applies unless If-Range says the client's
    // copy is stale. HEAD is answered like GET here, so a client can probe a range.
    byte_range range;
    if (const auto value = single_field(headers, "Range")) {
        bool apply = true;
        if (has_field(headers, "If-Range")) {
            const auto if_range = single_field(headers, "If-Range");
            apply = if_range && if_range_matches(*if_range, etag, mtime);
        }
        if (apply) range = parse_byte_range(*value, size);
    }
    if (range.what == byte_range::kind::unsatisfiable) {
        // RFC 9110 15.5.17: 416 names the current length.
        std::string unsatisfied = "bytes */";
        append_number(unsatisfied, size);
        fields.emplace_back("Content-Range", std::move(unsatisfied));
        res.status = 416;
        return static_outcome::status_only;
    }

    char date[29];
    if (chosen.held) {
        std::memcpy(date, chosen.held->last_modified, sizeof date);
    } else {
        format_http_date(mtime, date);
    }
    fields.reserve(fields.size() + 7);
    fields.emplace_back("Last-Modified", std::string(date, sizeof date));
    fields.emplace_back("ETag", std::string(etag));
    fields.emplace_back("Accept-Ranges", "bytes");
    if (!coding.empty()) fields.emplace_back("Content-Encoding", std::string(coding));
    add_cache_fields();
    std::uint64_t offset = 0;
    std::uint64_t length = size;
    if (range.what == byte_range::kind::partial) {
        res.status = 206;
        offset = range.offset;
        length = range.length;
        fields.emplace_back("Content-Range", content_range(range.offset, range.length, size));
    } else {
        res.status = 200;
    }
    res.content_type = options.content_type;
    if (chosen.file) {
        res.file.offset = offset;
        res.file.length = length;
        res.file.file = std::move(chosen.file);
    } else {
        // Held bytes: the connection writes them with the head, as it would have read them.
        res.body.assign(chosen.bytes.substr(offset, length));
    }
    return static_outcome::answered;
}

}  // namespace

static_outcome respond_with_file(opened_file opened, const file_response_options& options,
                                 std::span<const header_field> headers, response& res) {
    const std::string_view coding =
        options.precompressed ? choose_representation(opened, headers) : std::string_view{};
    return respond({opened.st, coding, std::move(opened.file), {}}, options, headers, res);
}

static_outcome respond_with_cached(const cached_file& file, const file_response_options& options,
                                   std::span<const header_field> headers, response& res) {
    if (options.precompressed) {
        for (const variant& v : variants_for(headers)) {
            const cached_variant& held = file.*v.held;
            if (v.weight > 0 && held.present) {
                return respond({held.st, v.coding, {}, held.bytes, &held}, options, headers, res);
            }
        }
    }
    return respond({file.identity.st, {}, {}, file.identity.bytes, &file.identity}, options,
                   headers, res);
}

}  // namespace tern::detail
