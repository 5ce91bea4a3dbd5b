#include "http/file_handle.hpp"

#include <unistd.h>

namespace tern::detail {

file_handle::~file_handle() { reset(); }

file_handle& file_handle::operator=(file_handle&& other) noexcept {
    if (this != &other) {
        reset();
        fd_ = other.release();
    }
    return *this;
}

void file_handle::reset() noexcept {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
}

}  // namespace tern::detail
