#pragma once
// What the static-files layer made of one request, beside the response it filled.

namespace tern::detail {

/// What static_files::serve (and respond_with_file) made of a request.
enum class static_outcome {
    not_handled,  ///< no directory has this path: the response is untouched; the caller
                  ///< answers (404) itself
    answered,     ///< the response is complete: 200 or 206 with a file body, or a 304
    status_only,  ///< the response has its status, 301 or an error (400, 403, 412, 416,
                  ///< 500), and its header fields (Location on a 301, Content-Range on a
                  ///< 416); the caller adds the body
};

}  // namespace tern::detail
