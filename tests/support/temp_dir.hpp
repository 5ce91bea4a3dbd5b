#pragma once
/// @file temp_dir.hpp
/// A fresh directory under the system's temporary directory for one test, removed with
/// everything in it when the test ends.

#include <catch2/catch.hpp>

#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <system_error>

namespace tern_test {

/// A directory made with mkdtemp and removed by the destructor.
struct temp_dir {
    std::filesystem::path path;

    temp_dir() {
        std::string pattern =
            (std::filesystem::temp_directory_path() / "tern-wire-XXXXXX").string();
        REQUIRE(::mkdtemp(pattern.data()) != nullptr);
        path = pattern;
    }
    ~temp_dir() {
        std::error_code ec;
        std::filesystem::remove_all(path, ec);
    }
    temp_dir(const temp_dir&) = delete;
    temp_dir& operator=(const temp_dir&) = delete;

    /// Writes `content` to `rel` below the directory, creating the directories on the way.
    void write(const std::filesystem::path& rel, const std::string& content) const {
        std::filesystem::create_directories((path / rel).parent_path());
        std::ofstream(path / rel, std::ios::binary)
            .write(content.data(), static_cast<std::streamsize>(content.size()));
    }
};

}  // namespace tern_test
