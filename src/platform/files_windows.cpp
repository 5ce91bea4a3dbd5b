// The Windows path of platform/files.hpp: the CRT's descriptors (_wopen, _write), a spool
// file deleted when it closes (_O_TEMPORARY), reads at an offset and mappings through the
// file's handle (ReadFile with an OVERLAPPED offset, a file mapping). No kernel copy of file
// pieces (TransmitFile is not used). The walk below a static root (static/open_beneath.cpp)
// gets descriptors of directories too: a handle opened with CreateFileW (directories with
// FILE_FLAG_BACKUP_SEMANTICS) wrapped in a CRT descriptor (_open_osfhandle), and each name
// opened in the directory's final path. A reparse point (a symlink or a junction) is never
// opened (ELOOP) and no link is read, so symlinks are not followed on Windows; a name Windows
// would read as something else (a device such as CON, a stream "a:b", a trailing dot or
// space, an 8.3 short name) is refused (ENOENT), so it cannot reach a dotfile or a device.
#include "platform/files.hpp"

#include <windows.h>

#include <fcntl.h>
#include <io.h>
#include <sys/stat.h>

#include <cerrno>
#include <climits>
#include <cstdint>
#include <string>
#include <string_view>

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

namespace {

int errno_for_last_error() noexcept {
    switch (::GetLastError()) {
        case ERROR_FILE_NOT_FOUND:
        case ERROR_PATH_NOT_FOUND:
        case ERROR_INVALID_NAME:
        case ERROR_BAD_NETPATH:
            return ENOENT;
        case ERROR_ACCESS_DENIED:
        case ERROR_SHARING_VIOLATION:
            return EACCES;
        case ERROR_DIRECTORY:
            return ENOTDIR;
        case ERROR_TOO_MANY_OPEN_FILES:
            return EMFILE;
        case ERROR_FILENAME_EXCED_RANGE:
            return ENAMETOOLONG;
        default:
            return EIO;
    }
}

// The final path of the open `handle` (long names, a drive letter): empty when unknown.
std::wstring final_path(HANDLE handle) {
    std::wstring path(MAX_PATH, L'\0');
    for (int tries = 0; tries < 2; ++tries) {
        const DWORD n =
            ::GetFinalPathNameByHandleW(handle, path.data(), static_cast<DWORD>(path.size()),
                                        FILE_NAME_NORMALIZED | VOLUME_NAME_DOS);
        if (n == 0) return {};
        if (n < path.size()) {
            path.resize(n);
            return path;
        }
        path.resize(n);
    }
    return {};
}

// Whether Windows could read `name` as anything but the entry of that name: a device (CON,
// NUL, COM1, ... with or without an extension), a stream (':'), a separator, a trailing dot
// or space (dropped by Windows).
// Opens `path` (a file or a directory) for reading, shared with writers and deleters, without
// following a reparse point at its end (a symlink or a junction is opened itself): the handle,
// or INVALID_HANDLE_VALUE with errno.
HANDLE open_no_follow(const std::wstring& path) noexcept {
    const HANDLE h = ::CreateFileW(
        path.c_str(), GENERIC_READ, FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE, nullptr,
        OPEN_EXISTING, FILE_FLAG_OPEN_REPARSE_POINT | FILE_FLAG_BACKUP_SEMANTICS, nullptr);
    if (h == INVALID_HANDLE_VALUE) errno = errno_for_last_error();
    return h;
}

// A C runtime descriptor that owns `h`, read-only: -1 with errno (EMFILE), `h` closed, when
// none can be had.
int descriptor_of(HANDLE h) noexcept {
    const int fd = ::_open_osfhandle(reinterpret_cast<intptr_t>(h), _O_RDONLY | _O_BINARY);
    if (fd < 0) {
        ::CloseHandle(h);
        errno = EMFILE;
    }
    return fd;
}

bool ambiguous_name(std::string_view name) noexcept {
    if (name.empty() || name.back() == '.' || name.back() == ' ') return true;
    if (name.find_first_of(":\\*?\"<>|") != std::string_view::npos) return true;
    const std::string_view stem = name.substr(0, name.find('.'));
    static constexpr std::string_view devices[] = {"con", "prn", "aux", "nul", "conin$", "conout$"};
    auto lower_equal = [](std::string_view a, std::string_view b) {
        if (a.size() != b.size()) return false;
        for (std::size_t i = 0; i < a.size(); ++i) {
            const char c = a[i] >= 'A' && a[i] <= 'Z' ? static_cast<char>(a[i] - 'A' + 'a') : a[i];
            if (c != b[i]) return false;
        }
        return true;
    };
    for (const auto device : devices) {
        if (lower_equal(stem, device)) return true;
    }
    if (stem.size() == 4 &&
        (lower_equal(stem.substr(0, 3), "com") || lower_equal(stem.substr(0, 3), "lpt"))) {
        return true;
    }
    return false;
}

// Opens `name` in the directory descriptor `at` (the root's or one below it), never through a
// reparse point: a CRT descriptor owning the handle, or -1 with errno.
int open_in(int at, const char* name, bool directory) noexcept {
    try {
        if (ambiguous_name(name)) {
            errno = ENOENT;
            return -1;
        }
        const std::wstring dir = final_path(handle_of(at));
        if (dir.empty()) {
            errno = EBADF;
            return -1;
        }
        const std::wstring wide_name = widen(name);
        const std::wstring path = dir + L"\\" + wide_name;
        const HANDLE h = open_no_follow(path);
        if (h == INVALID_HANDLE_VALUE) return -1;
        BY_HANDLE_FILE_INFORMATION info{};
        int err = 0;
        if (!::GetFileInformationByHandle(h, &info)) {
            err = errno_for_last_error();
        } else if ((info.dwFileAttributes & FILE_ATTRIBUTE_REPARSE_POINT) != 0) {
            err = ELOOP;  // a symlink or a junction: never followed
        } else if (directory && (info.dwFileAttributes & FILE_ATTRIBUTE_DIRECTORY) == 0) {
            err = ENOTDIR;
        } else {
            // The entry Windows opened must carry the name asked for (case aside): an 8.3
            // short name ("ENV~1" for ".env") reaches a file under another name.
            const std::wstring opened = final_path(h);
            const std::size_t cut = opened.find_last_of(L'\\');
            const std::wstring last = cut == std::wstring::npos ? opened : opened.substr(cut + 1);
            if (::CompareStringOrdinal(last.c_str(), static_cast<int>(last.size()),
                                       wide_name.c_str(), static_cast<int>(wide_name.size()),
                                       TRUE) != CSTR_EQUAL) {
                err = ENOENT;
            }
        }
        if (err != 0) {
            ::CloseHandle(h);
            errno = err;
            return -1;
        }
        return descriptor_of(h);
    } catch (...) {
        errno = ENOMEM;
        return -1;
    }
}

}  // namespace

int stat_descriptor(int fd, file_status& st) noexcept {
    if (::fstat(fd, &st) != 0) return -1;
    st.written_ns = static_cast<std::uint64_t>(st.st_mtime) * 1'000'000'000U;
    BY_HANDLE_FILE_INFORMATION info{};
    if (::GetFileInformationByHandle(handle_of(fd), &info)) {
        if ((info.dwFileAttributes & FILE_ATTRIBUTE_DIRECTORY) != 0) {
            st.st_mode = static_cast<decltype(st.st_mode)>((st.st_mode & ~_S_IFMT) | _S_IFDIR);
        }
        // FILETIME: 100 ns steps since 1601-01-01; 1970 is 11644473600 s later.
        const std::uint64_t ticks =
            (static_cast<std::uint64_t>(info.ftLastWriteTime.dwHighDateTime) << 32U) |
            info.ftLastWriteTime.dwLowDateTime;
        constexpr std::uint64_t ticks_to_1970 = 116'444'736'000'000'000U;
        if (ticks >= ticks_to_1970) st.written_ns = (ticks - ticks_to_1970) * 100U;
    }
    return 0;
}

int open_file_at(int at, const char* name) noexcept { return open_in(at, name, false); }

ssize_t read_link_at(int /*at*/, const char* /*name*/, char* /*out*/,
                     std::size_t /*size*/) noexcept {
    errno = EINVAL;  // no link is read: reparse points are refused where they are met
    return -1;
}

int stat_at_no_follow(int /*at*/, const char* /*name*/, struct stat& /*st*/) noexcept {
    errno = ENOSYS;
    return -1;
}

int open_directory(const char* path) noexcept {
    try {
        const HANDLE h = open_no_follow(widen(path));
        if (h == INVALID_HANDLE_VALUE) return -1;
        BY_HANDLE_FILE_INFORMATION info{};
        if (!::GetFileInformationByHandle(h, &info) ||
            (info.dwFileAttributes & FILE_ATTRIBUTE_DIRECTORY) == 0 ||
            (info.dwFileAttributes & FILE_ATTRIBUTE_REPARSE_POINT) != 0) {
            ::CloseHandle(h);
            errno = ENOTDIR;
            return -1;
        }
        return descriptor_of(h);
    } catch (...) {
        errno = ENOMEM;
        return -1;
    }
}

int open_directory_at(int at, const char* name) noexcept { return open_in(at, name, true); }

}  // namespace tern::detail::platform
