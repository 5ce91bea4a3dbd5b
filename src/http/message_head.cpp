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

void message_head::keep_trailer_name(const char* at, std::size_t len, bool new_field) {
    if (new_field) trailers_.push_back({trailer_store_->size(), 0, 0, 0});
    trailer_store_->append(at, len);
    trailers_.back().name_len += len;
}

void message_head::keep_trailer_value(const char* at, std::size_t len) {
    auto& f = trailers_.back();
    if (!in_value_) f.value_at = trailer_store_->size();
    if (len != 0) trailer_store_->append(at, len);
    f.value_len += len;
}

void message_head::build_trailers(std::vector<header_field>& out) const {
    out.clear();
    if (trailer_store_ == nullptr) return;
    const char* base = trailer_store_->data();
    for (const auto& f : trailers_) {
        out.push_back({{base + f.name_at, f.name_len}, trim_ows({base + f.value_at, f.value_len})});
    }
}

void message_head::release() noexcept {
    clear();
    std::vector<field_span>().swap(fields_);
    std::vector<field_span>().swap(trailers_);
}

}  // namespace tern::detail
