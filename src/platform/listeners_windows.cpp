// The Windows path of platform/listeners.hpp: no listening socket is handed over by number
// (systemd's socket activation, app.listen_fd), no Unix domain socket is served
// (app.listen_unix), and there is no SIGPIPE. Each refusal comes at start, with its reason.
#include "platform/listeners.hpp"

#include <stdexcept>
#include <string>

namespace tern::detail::platform {

int listening_socket_family(int fd) {
    throw std::invalid_argument("tern: listen_fd(" + std::to_string(fd) +
                                "): a descriptor names no socket on Windows; listen on a "
                                "host and port (docs/platforms.md)");
}

native_socket open_unix_listener(const std::string& path, unsigned /*permissions*/) {
    throw std::invalid_argument("tern: listen_unix('" + path +
                                "'): Unix domain sockets are not served on Windows; listen on "
                                "a host and port (docs/platforms.md)");
}

void remove_unix_socket(const std::string& /*path*/) noexcept {}

void block_sigpipe() noexcept {}

}  // namespace tern::detail::platform
