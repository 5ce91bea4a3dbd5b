#include "http/spooled_body.hpp"

#include "http/spool_quota.hpp"
#include "platform/files.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <string>
#include <utility>

namespace tern::detail {

spooled_body::spooled_body(int fd, std::shared_ptr<spool_quota> quota) noexcept
    : fd_(fd), quota_(std::move(quota)) {}

std::shared_ptr<spooled_body> spooled_body::create(std::string_view dir, spool_quota* quota) {
    auto owner = quota != nullptr ? quota->shared_from_this() : nullptr;
    std::string path(dir);
    if (path.empty()) {
        const char* tmp = std::getenv("TMPDIR");
        path = tmp != nullptr && *tmp != '\0' ? tmp : "/tmp";
    }
    const int fd = platform::open_spool_file(path);
    if (fd < 0) return nullptr;
    return std::make_shared<spooled_body>(fd, std::move(owner));
}

spooled_body::~spooled_body() {
    if (map_ != nullptr) platform::unmap_file(map_, static_cast<std::size_t>(size_));
    ::close(fd_);
    if (quota_) quota_->give(reserved_);
}

spooled_body::outcome spooled_body::reserve(std::uint64_t total) noexcept {
    if (total <= reserved_) return outcome::stored;
    if (quota_ && !quota_->take(total - reserved_)) return outcome::full;
    reserved_ = total;
    return outcome::stored;
}

spooled_body::outcome spooled_body::append(std::string_view data) noexcept {
    if (const auto room = reserve(size_ + data.size()); room != outcome::stored) return room;
    while (!data.empty()) {
        const ssize_t n = platform::write_file(fd_, data.data(), data.size());
        if (n < 0) {
            if (errno == EINTR) continue;
            return outcome::failed;
        }
        data.remove_prefix(static_cast<std::size_t>(n));
        size_ += static_cast<std::uint64_t>(n);
    }
    return outcome::stored;
}

bool spooled_body::finish() noexcept {
    if (size_ == 0) return true;
    map_ = platform::map_file(fd_, static_cast<std::size_t>(size_));
    return map_ != nullptr;
}

std::string_view spooled_body::view() const noexcept {
    if (map_ == nullptr) return {};
    return {static_cast<const char*>(map_), static_cast<std::size_t>(size_)};
}

}  // namespace tern::detail
