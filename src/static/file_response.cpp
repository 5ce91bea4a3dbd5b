#include "static/file_response.hpp"

#include "http/accept_encoding.hpp"
#include "http/date.hpp"
#include "http/header_values.hpp"
#include "static/byte_ranges.hpp"
#include "static/validators.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <charconv>
#include <string>

namespace tern::detail {

namespace {

struct variant {
    std::string_view suffix;  ///< appended to the file name
    std::string_view coding;  ///< Content-Encoding value
    int weight;               ///< the client's q-value for it
};

/// Replaces `opened` by its precompressed sibling `name + suffix` when that is a regular
/// file. A sibling that is missing, a symlink, or anything but a regular file is skipped.
bool open_sibling(opened_file& opened, std::string_view suffix) {
    std::string name = opened.name;
    name.append(suffix);
    const int fd = ::openat(opened.dir, name.c_str(),
                            O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY);
    if (fd < 0) return false;
    file_handle sibling(fd);
    struct stat st {};
    if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) return false;
    opened.file = std::move(sibling);
    opened.st = st;
    return true;
}

/// The coding of the representation chosen for the client, after swapping `opened` to it:
/// the acceptable variant with the highest q-value (br first on a tie) that exists, or ""
/// for the file itself.
std::string_view choose_representation(opened_file& opened, std::span<const header_field> headers) {
    const accepted_codings accepted = parse_accept_encoding(headers);
    variant first{".br", "br", accepted.br};
    variant second{".gz", "gzip", accepted.gzip};
    if (second.weight > first.weight) std::swap(first, second);
    for (const variant& v : {first, second}) {
        if (v.weight > 0 && open_sibling(opened, v.suffix)) return v.coding;
    }
    return {};
}

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

}  // namespace

static_outcome respond_with_file(opened_file opened, const file_response_options& options,
                                 std::span<const header_field> headers, response& res) {
    const std::string_view coding =
        options.precompressed ? choose_representation(opened, headers) : std::string_view{};
    const auto size = static_cast<std::uint64_t>(opened.st.st_size);
    const std::time_t mtime = opened.st.st_mtime;
    std::string etag = make_etag(opened.st, coding);
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
            fields.emplace_back("ETag", std::move(etag));
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
    format_http_date(mtime, date);
    fields.reserve(fields.size() + 7);
    fields.emplace_back("Last-Modified", std::string(date, sizeof date));
    fields.emplace_back("ETag", std::move(etag));
    fields.emplace_back("Accept-Ranges", "bytes");
    if (!coding.empty()) fields.emplace_back("Content-Encoding", std::string(coding));
    add_cache_fields();
    if (range.what == byte_range::kind::partial) {
        res.status = 206;
        res.file.offset = range.offset;
        res.file.length = range.length;
        fields.emplace_back("Content-Range", content_range(range.offset, range.length, size));
    } else {
        res.status = 200;
        res.file.offset = 0;
        res.file.length = size;
    }
    res.content_type = options.content_type;
    res.file.file = std::move(opened.file);
    return static_outcome::answered;
}

}  // namespace tern::detail
