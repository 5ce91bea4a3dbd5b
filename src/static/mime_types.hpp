#pragma once
// Content-Type by file extension: a built-in table of the web's common types, extended or
// overridden per directory by `static_files_config::extra_mime_types`.

#include <map>
#include <string>
#include <string_view>

namespace tern::detail {

/// The Content-Type sent for a file whose extension no table knows.
inline constexpr std::string_view default_mime_type = "application/octet-stream";

/// Maps file names to Content-Type values. Immutable after construction.
class mime_types {
public:
    /// Only the built-in table.
    mime_types() = default;
    /// The built-in table, with `extra` (extension without the dot, or with it; any case ->
    /// full Content-Type value) taking precedence. Throws std::invalid_argument for an
    /// empty or dotted extension, or a value that is empty or holds a control character.
    explicit mime_types(const std::map<std::string, std::string>& extra);

    /// The Content-Type for `file_name` by its last extension, compared case-insensitively
    /// ("a.tar.GZ" -> "application/gzip"); `default_mime_type` when it has none or an
    /// unknown one. A leading dot does not start an extension (".htaccess" has none).
    std::string_view lookup(std::string_view file_name) const;

    /// The built-in type for a lowercase extension, or empty.
    static std::string_view builtin(std::string_view lowercase_extension) noexcept;

private:
    std::map<std::string, std::string, std::less<>> extra_;
};

}  // namespace tern::detail
