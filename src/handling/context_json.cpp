// The part of tern::context that checks a request body before body_as parses it as JSON.

#include <tern/context.hpp>
#include <tern/http_error.hpp>

#include "handling/exchange.hpp"
#include "http/request.hpp"
#include "web/json_depth.hpp"

#include <string>

namespace tern {

std::string_view context::json_body() const {
    const std::string_view text = ex_->req.body_view();
    if (text.size() > ex_->env.max_json_size) {
        throw content_too_large("JSON request body larger than max_json_size (" +
                                std::to_string(ex_->env.max_json_size) + " bytes)");
    }
    // JSON text never holds a raw NUL (RFC 8259 2, 7), and nlohmann_json's lexer takes one
    // for the end of input: "[1]\0<anything>" would be read as [1] and the rest ignored.
    if (const auto nul = text.find('\0'); nul != std::string_view::npos) {
        throw bad_request("malformed JSON in the request body: a NUL byte at offset " +
                          std::to_string(nul));
    }
    // Before any document exists: nlohmann_json copies and serializes recursively, so a
    // tree as deep as the body allows would overflow the stack later.
    if (!detail::json_depth_within(text, ex_->env.max_json_depth)) {
        throw bad_request("JSON nesting deeper than max_json_depth (" +
                          std::to_string(ex_->env.max_json_depth) + ")");
    }
    return text;
}

}  // namespace tern
