#pragma once
// What the static-files layer answers for one request: a file to stream, a 304, a 301, an
// error status, or nothing (another layer answers).

#include "http/file_handle.hpp"

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace tern::detail {

/// The answer of the static-files layer to one request.
struct static_result {
    enum class kind {
        not_handled,   ///< no directory has this path: the caller answers (404) itself
        file,          ///< 200 or 206: send `length` bytes of `file` from `offset`
        not_modified,  ///< 304: header fields only, no body and no Content-Length
        redirect,      ///< 301 to the `Location` field (the caller may append "?query")
        error,         ///< `status` (400, 403, 412, 416, 500) with a short body of the caller's
    };
    kind what = kind::not_handled;
    int status = 200;
    /// Header fields to send, in order: Content-Type, Last-Modified, ETag, Accept-Ranges,
    /// Content-Encoding, Vary, Cache-Control, Content-Range, Location, as they apply. On a
    /// 416 error: Content-Range ("bytes */size").
    std::vector<std::pair<std::string, std::string>> fields;
    file_handle file;          ///< kind::file: the open regular file (also for HEAD)
    std::uint64_t offset = 0;  ///< first byte to send
    std::uint64_t length = 0;  ///< bytes to send, also the Content-Length

    /// The value of the first field named `name` (exact case, as set here), or empty.
    std::string_view field(std::string_view name) const noexcept {
        for (const auto& [n, v] : fields) {
            if (n == name) return v;
        }
        return {};
    }
};

}  // namespace tern::detail
