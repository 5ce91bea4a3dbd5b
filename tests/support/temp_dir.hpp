#pragma once
/// @file temp_dir.hpp
/// A fresh directory under the system's temporary directory for one test, removed with
/// everything in it when the test ends.

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <system_error>

namespace tern_test {

/// A directory of a name no other has (as mkdtemp makes, which Windows lacks: a random
/// name, made with create_directory, which is false when the name exists), removed by the
/// destructor.
struct temp_dir {
    std::filesystem::path path;

    explicit temp_dir(const std::string& prefix = "tern-wire-") {
        const auto base = std::filesystem::temp_directory_path();
        std::random_device random;
        for (int attempt = 0; attempt < 100 && path.empty(); ++attempt) {
            const auto candidate = base / (prefix + std::to_string(random()));
            if (std::filesystem::create_directory(candidate)) path = candidate;
        }
        REQUIRE(!path.empty());
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
