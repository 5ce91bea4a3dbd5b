#include "h2/stream_order.hpp"

#include <algorithm>

namespace tern::detail {

stream_order::stream_order(std::size_t remembered)
    : resets_(std::max<std::size_t>(remembered, 1)) {}

stream_order::verdict stream_order::on_headers(std::int32_t id, bool open) {
    if (id > highest_) {
        highest_ = id;
        return verdict::opens;
    }
    if (open || std::find(resets_.begin(), resets_.end(), id) != resets_.end()) {
        return verdict::late;
    }
    return verdict::out_of_order;
}

void stream_order::on_reset(std::int32_t id) {
    if (id <= 0) return;
    resets_[next_] = id;
    next_ = (next_ + 1) % resets_.size();
}

}  // namespace tern::detail
