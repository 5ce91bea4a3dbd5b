#include "http/error.hpp"

#include <string>

namespace tern::detail {

namespace {

class category final : public std::error_category {
public:
    const char* name() const noexcept override { return "tern"; }

    std::string message(int value) const override {
        switch (static_cast<error>(value)) {
            case error::bad_request:
                return "malformed request";
            case error::too_many_empty_lines:
                return "too many empty lines before the request";
            case error::missing_host:
                return "HTTP/1.1 request without Host";
            case error::duplicate_host:
                return "more than one Host header";
            case error::bad_host:
                return "invalid Host header";
            case error::duplicate_content_type:
                return "more than one Content-Type header";
            case error::bad_transfer_encoding:
                return "Transfer-Encoding must end in chunked";
            case error::unknown_transfer_coding:
                return "unsupported transfer coding";
            case error::chunk_extension_too_long:
                return "chunk extensions too long";
            case error::line_too_long:
                return "request line too long";
            case error::header_too_large:
                return "request header fields too large";
            case error::too_many_headers:
                return "too many request header fields";
            case error::body_too_large:
                return "request body too large";
            case error::unsupported_expectation:
                return "unsupported expectation";
            case error::method_not_supported:
                return "method not supported";
            case error::unknown_method:
                return "unknown method";
            case error::version_not_supported:
                return "HTTP version not supported";
            case error::header_timeout:
                return "request headers not received in time";
            case error::body_timeout:
                return "request body stalled";
            case error::body_spool_failed:
            case error::body_spool_full:
                return std::string(failure_message(static_cast<error>(value)));
        }
        return "unknown tern error";
    }
};

}  // namespace

const std::error_category& error_category() noexcept {
    static const category instance;
    return instance;
}

std::string_view failure_message(error e) noexcept {
    switch (e) {
        case error::body_spool_failed:
            return "request body could not be stored";
        case error::body_spool_full:
            return "request body could not be stored now: the spool is full";
        default:
            return "";
    }
}

int status_of(error e) noexcept {
    switch (e) {
        case error::unknown_transfer_coding:
        case error::method_not_supported:
        case error::unknown_method:
            return 501;
        case error::line_too_long:
            return 414;
        case error::header_too_large:
        case error::too_many_headers:
            return 431;
        case error::body_too_large:
            return 413;
        case error::unsupported_expectation:
            return 417;
        case error::version_not_supported:
            return 505;
        case error::header_timeout:
        case error::body_timeout:
            return 408;
        case error::body_spool_failed:
            return 500;
        case error::body_spool_full:
            return 503;
        default:
            return 400;
    }
}

}  // namespace tern::detail
