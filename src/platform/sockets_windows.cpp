// The Windows path of platform/sockets.hpp (TERN_IO=portable on Windows): Winsock sockets,
// started once; no SIGPIPE to ignore (a send on a reset connection is an error, WSAECONNRESET);
// one socket per port, as on the portable path.
#include "platform/sockets.hpp"

#include "platform/socket_api.hpp"

#include <cerrno>

namespace tern::detail::platform {

void ignore_sigpipe() noexcept { start_sockets(); }

native_socket open_stream_socket(int family, bool non_blocking) noexcept {
    start_sockets();
    const native_socket s = ::WSASocketW(family, SOCK_STREAM, 0, nullptr, 0,
                                         WSA_FLAG_OVERLAPPED | WSA_FLAG_NO_HANDLE_INHERIT);
    if (s == invalid_socket) return invalid_socket;
    u_long on = 1;
    if (non_blocking && ::ioctlsocket(s, static_cast<long>(FIONBIO), &on) != 0) {
        const int err = ::WSAGetLastError();
        ::closesocket(s);
        ::WSASetLastError(err);
        return invalid_socket;
    }
    return s;
}

native_socket duplicate_socket(native_socket s) noexcept {
    WSAPROTOCOL_INFOW info{};
    if (::WSADuplicateSocketW(s, ::GetCurrentProcessId(), &info) != 0) {
        errno_from_socket_error();
        return invalid_socket;
    }
    const native_socket copy =
        ::WSASocketW(FROM_PROTOCOL_INFO, FROM_PROTOCOL_INFO, FROM_PROTOCOL_INFO, &info, 0,
                     WSA_FLAG_OVERLAPPED | WSA_FLAG_NO_HANDLE_INHERIT);
    if (copy == invalid_socket) errno_from_socket_error();
    return copy;
}

bool balances_shared_port() noexcept { return false; }

void share_port(native_socket /*fd*/) noexcept {}

bool open_wake_channel(native_socket& read_end, native_socket& write_end) noexcept {
    // A listener on 127.0.0.1, a connection to it, and the accepted end: the listener is
    // closed at once.
    const native_socket listener = open_stream_socket(AF_INET, false);
    if (listener == invalid_socket) return false;
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socket_length length = sizeof address;
    native_socket writer = invalid_socket;
    native_socket reader = invalid_socket;
    const bool made =
        ::bind(listener, reinterpret_cast<const sockaddr*>(&address), sizeof address) == 0 &&
        ::listen(listener, 1) == 0 &&
        ::getsockname(listener, reinterpret_cast<sockaddr*>(&address), &length) == 0 &&
        (writer = open_stream_socket(AF_INET, false)) != invalid_socket &&
        ::connect(writer, reinterpret_cast<const sockaddr*>(&address), sizeof address) == 0 &&
        (reader = ::accept(listener, nullptr, nullptr)) != invalid_socket &&
        set_non_blocking(reader) && set_non_blocking(writer);
    const int err = made ? 0 : errno_from_socket_error();
    ::closesocket(listener);
    if (!made) {
        if (writer != invalid_socket) ::closesocket(writer);
        if (reader != invalid_socket) ::closesocket(reader);
        errno = err;
        return false;
    }
    const BOOL on = TRUE;
    ::setsockopt(writer, IPPROTO_TCP, TCP_NODELAY, reinterpret_cast<const char*>(&on), sizeof on);
    read_end = reader;
    write_end = writer;
    return true;
}

native_socket duplicate_descriptor(int /*fd*/) noexcept {
    errno = ENOTSUP;
    return invalid_socket;
}

bool keep_passed_socket(int /*fd*/) noexcept { return false; }

}  // namespace tern::detail::platform
