// The Windows path of platform/files.hpp: the CRT's descriptors (_wopen, _write), a spool
// file deleted when it closes (_O_TEMPORARY), reads at an offset and mappings through the
// file's handle (ReadFile with an OVERLAPPED offset, a file mapping). No kernel copy of file
// pieces (TransmitFile is not used). Directories are not opened on Windows: the walk below
// a static root (static/open_beneath.cpp) needs descriptors of directories, which the CRT
// does not give, so open_directory refuses (ENOSYS) and static files are not served there yet.
#include "platform/files.hpp"

#include <windows.h>

#include <fcntl.h>
#include <io.h>
#include <sys/stat.h>

#include <cerrno>
#include <climits>
#include <string>

namespace tern::detail::platform {

namespace {

std::wstring widen(const std::string& utf8) {
    if (utf8.empty()) return {};
    const int n =
        ::MultiByteToWideChar(CP_UTF8, 0, utf8.data(), static_cast<int>(utf8.size()), nullptr, 0);
    std::wstring wide(static_cast<std::size_t>(n), L'\0');
    ::MultiByteToWideChar(CP_UTF8, 0, utf8.data(), static_cast<int>(utf8.size()), wide.data(), n);
    return wide;
}

HANDLE handle_of(int file) noexcept { return reinterpret_cast<HANDLE>(::_get_osfhandle(file)); }

}  // namespace

int open_spool_file(const std::string& dir) {
    wchar_t name[MAX_PATH];
    if (::GetTempFileNameW(widen(dir).c_str(), L"trn", 0, name) == 0) {
        errno = EACCES;
        return -1;
    }
    // GetTempFileNameW made the file; it is opened again, deleted when the last descriptor
    // closes (_O_TEMPORARY: FILE_FLAG_DELETE_ON_CLOSE), and never inherited.
    const int fd =
        ::_wopen(name, _O_RDWR | _O_BINARY | _O_TEMPORARY | _O_NOINHERIT, _S_IREAD | _S_IWRITE);
    if (fd < 0) {
        const int err = errno;
        ::DeleteFileW(name);
        errno = err;
    }
    return fd;
}

int open_read_only(const char* path) noexcept {
    return ::_wopen(widen(path).c_str(), _O_RDONLY | _O_BINARY | _O_NOINHERIT);
}

ssize_t read_file_at(int file, void* out, std::size_t n, std::uint64_t offset) noexcept {
    const HANDLE h = handle_of(file);
    if (h == INVALID_HANDLE_VALUE) {
        errno = EBADF;
        return -1;
    }
    OVERLAPPED at{};
    at.Offset = static_cast<DWORD>(offset);
    at.OffsetHigh = static_cast<DWORD>(offset >> 32);
    DWORD got = 0;
    const DWORD want = n > MAXDWORD / 2 ? MAXDWORD / 2 : static_cast<DWORD>(n);
    if (!::ReadFile(h, out, want, &got, &at)) {
        if (::GetLastError() == ERROR_HANDLE_EOF) return 0;
        errno = EIO;
        return -1;
    }
    return static_cast<ssize_t>(got);
}

ssize_t write_file(int file, const void* data, std::size_t n) noexcept {
    const unsigned length = n > INT_MAX ? INT_MAX : static_cast<unsigned>(n);
    return ::_write(file, data, length);
}

const void* map_file(int file, std::size_t size) noexcept {
    const HANDLE mapping =
        ::CreateFileMappingW(handle_of(file), nullptr, PAGE_READONLY, 0, 0, nullptr);
    if (mapping == nullptr) return nullptr;
    const void* view = ::MapViewOfFile(mapping, FILE_MAP_READ, 0, 0, size);
    // The view keeps the mapping alive.
    ::CloseHandle(mapping);
    return view;
}

void unmap_file(const void* view, std::size_t /*size*/) noexcept { ::UnmapViewOfFile(view); }

ssize_t send_file_piece(native_socket /*socket*/, int /*file*/, std::uint64_t /*offset*/,
                        std::size_t /*n*/) noexcept {
    errno = ENOSYS;
    return -1;
}

std::string real_path(const char* path) {
    wchar_t full[MAX_PATH];
    if (::_wfullpath(full, widen(path).c_str(), MAX_PATH) == nullptr) {
        errno = ENOENT;
        return {};
    }
    const int n = ::WideCharToMultiByte(CP_UTF8, 0, full, -1, nullptr, 0, nullptr, nullptr);
    if (n <= 1) {
        errno = ENOENT;
        return {};
    }
    std::string narrow(static_cast<std::size_t>(n - 1), '\0');
    ::WideCharToMultiByte(CP_UTF8, 0, full, -1, narrow.data(), n, nullptr, nullptr);
    return narrow;
}

int stat_no_follow(const char* path, struct stat& st) noexcept { return ::stat(path, &st); }

int open_file_at(int /*at*/, const char* /*name*/) noexcept {
    errno = ENOSYS;
    return -1;
}

ssize_t read_link_at(int /*at*/, const char* /*name*/, char* /*out*/,
                     std::size_t /*size*/) noexcept {
    errno = EINVAL;
    return -1;
}

int stat_at_no_follow(int /*at*/, const char* /*name*/, struct stat& /*st*/) noexcept {
    errno = ENOSYS;
    return -1;
}

int open_directory(const char* /*path*/) noexcept {
    errno = ENOSYS;
    return -1;
}

int open_directory_at(int /*at*/, const char* /*name*/) noexcept {
    errno = ENOSYS;
    return -1;
}

}  // namespace tern::detail::platform
