#include "http/spooled_body.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <string>

namespace tern::detail {

std::shared_ptr<spooled_body> spooled_body::create(std::string_view dir) {
    std::string path(dir);
    if (path.empty()) {
        const char* tmp = std::getenv("TMPDIR");
        path = tmp != nullptr && *tmp != '\0' ? tmp : "/tmp";
    }
#if defined(O_TMPFILE)
    const int fd = ::open(path.c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
    if (fd >= 0) return std::make_shared<spooled_body>(fd);
#endif
    // No O_TMPFILE (an old kernel, or a file system without it): a named file, unlinked
    // before anyone could use the name.
    std::string name = path + "/tern-body-XXXXXX";
    const int named = ::mkostemp(name.data(), O_CLOEXEC);
    if (named < 0) return nullptr;
    ::unlink(name.c_str());
    return std::make_shared<spooled_body>(named);
}

spooled_body::~spooled_body() {
    if (map_ != nullptr) ::munmap(map_, static_cast<std::size_t>(size_));
    ::close(fd_);
}

bool spooled_body::append(std::string_view data) noexcept {
    while (!data.empty()) {
        const ssize_t n = ::write(fd_, data.data(), data.size());
        if (n < 0) {
            if (errno == EINTR) continue;
            return false;
        }
        data.remove_prefix(static_cast<std::size_t>(n));
        size_ += static_cast<std::uint64_t>(n);
    }
    return true;
}

bool spooled_body::finish() noexcept {
    if (size_ == 0) return true;
    map_ = ::mmap(nullptr, static_cast<std::size_t>(size_), PROT_READ, MAP_PRIVATE, fd_, 0);
    if (map_ == MAP_FAILED) {
        map_ = nullptr;
        return false;
    }
    return true;
}

std::string_view spooled_body::view() const noexcept {
    if (map_ == nullptr) return {};
    return {static_cast<const char*>(map_), static_cast<std::size_t>(size_)};
}

}  // namespace tern::detail
