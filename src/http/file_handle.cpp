#include "http/file_handle.hpp"

#include <unistd.h>

namespace tern::detail {

void file_handle::reset() noexcept {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
}

}  // namespace tern::detail
