#include "http/message_head.hpp"

namespace tern::detail {

head_limit message_head::count_trailer(std::size_t len, bool new_field) noexcept {
    if (new_field && fields_.size() + ++trailer_count_ > limits_.max_header_count) {
        return head_limit::too_many_headers;
    }
    trailer_bytes_ += len;
    if (trailer_bytes_ > limits_.max_header_size) return head_limit::header_too_large;
    return head_limit::none;
}

void message_head::release() noexcept {
    clear();
    std::vector<field_span>().swap(fields_);
}

}  // namespace tern::detail
