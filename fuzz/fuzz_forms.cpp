// libFuzzer harness for what tern reads from request bodies and Cookie headers
// (src/web/multipart.hpp, src/web/cookies.hpp): inputs a client controls completely.
//
// The input is split into a Content-Type value, a body, a Cookie header value and a cookie
// name/value to write. Checks: the multipart parser never reads outside the body (every
// part's data views it), keeps its limits, and safe_filename always yields one harmless
// path component; parsed cookies view the header; a Set-Cookie that format_set_cookie
// accepts cannot split the header block. Broken invariants call __builtin_trap().

#include "web/cookies.hpp"
#include "web/multipart.hpp"

#include <tern/cookie.hpp>

#include <fuzzer/FuzzedDataProvider.h>

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace {

void check(bool ok) {
    if (!ok) __builtin_trap();
}

bool within(std::string_view inner, std::string_view outer) {
    return inner.empty() || (inner.data() >= outer.data() &&
                             inner.data() + inner.size() <= outer.data() + outer.size());
}

void multipart(const std::string& content_type, const std::string& body, std::size_t file_limit) {
    const auto boundary = tern::detail::multipart_boundary(content_type);
    if (!boundary) return;
    check(!boundary->empty() && boundary->size() <= 70);
    tern::detail::multipart_limits limits;
    limits.max_file_size = file_limit;
    limits.max_parts = 64;
    std::vector<tern::detail::multipart_part> parts;
    std::string message;
    const auto status = tern::detail::parse_multipart(body, *boundary, limits, parts, &message);
    check(parts.size() <= limits.max_parts);
    if (status != tern::detail::multipart_status::ok) check(!message.empty());
    for (const auto& p : parts) {
        check(within(p.data, body));
        if (status == tern::detail::multipart_status::ok && p.has_filename) {
            check(p.data.size() <= limits.max_file_size);
        }
        const std::string safe = tern::detail::safe_filename(p.filename);
        check(!safe.empty() && safe.size() <= 255);
        check(safe != "." && safe != ".." && safe.front() != '.');
        for (const char c : safe) {
            check(c != '/' && c != '\\' && c != '\0' && static_cast<unsigned char>(c) >= 0x20);
        }
    }
}

void cookies(const std::string& header, const std::string& name, const std::string& value) {
    std::vector<tern::detail::cookie_pair> pairs;
    tern::detail::parse_cookie_header(header, pairs);
    for (const auto& c : pairs) {
        check(!c.name.empty());
        check(within(c.name, header) && within(c.value, header));
    }
    tern::cookie_options options;
    options.path = name.substr(0, name.size() / 2);
    try {
        const std::string line = tern::detail::format_set_cookie(name, value, options);
        for (const char c : line) check(c != '\r' && c != '\n' && c != '\0');
    } catch (const std::invalid_argument&) {
        // Refused, as documented, for names, values or attributes that cannot be sent.
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    FuzzedDataProvider fdp(data, size);
    const std::size_t file_limit = fdp.ConsumeIntegralInRange<std::size_t>(0, 4096);
    const std::string content_type = fdp.ConsumeRandomLengthString(128);
    const std::string header = fdp.ConsumeRandomLengthString(256);
    const std::string name = fdp.ConsumeRandomLengthString(32);
    const std::string value = fdp.ConsumeRandomLengthString(64);
    const std::string body = fdp.ConsumeRemainingBytesAsString();
    multipart(content_type, body, file_limit);
    // The same body under a fixed, valid boundary, so the fuzzer need not find one first.
    multipart("multipart/form-data; boundary=XyZ", body, file_limit);
    cookies(header, name, value);
    return 0;
}
