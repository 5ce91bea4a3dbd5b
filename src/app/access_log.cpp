// tern::access_log: one line per request in the shape of the common/combined log formats,
// plus the time the handler chain took.

#include <tern/app.hpp>

#include "http/date.hpp"
#include "platform/system.hpp"

#include <fmt/core.h>

#include <chrono>
#include <cstdio>
#include <ctime>
#include <stdexcept>
#include <string>

namespace tern {

namespace {

// Appends `s` for a quoted log field: '"' and '\' escaped, control and non-ASCII bytes as
// \xHH, so a request cannot forge log lines or terminal escapes. Empty becomes "-".
void append_quoted_field(std::string& out, std::string_view s) {
    if (s.empty()) {
        out.push_back('-');
        return;
    }
    for (const char ch : s) {
        const auto c = static_cast<unsigned char>(ch);
        if (c == '"' || c == '\\') {
            out.push_back('\\');
            out.push_back(static_cast<char>(c));
        } else if (c < 0x20 || c >= 0x7f) {
            out.append(fmt::format("\\x{:02X}", c));
        } else {
            out.push_back(static_cast<char>(c));
        }
    }
}

std::string timestamp(std::chrono::system_clock::time_point now) {
    const std::time_t t = std::chrono::system_clock::to_time_t(now);
    std::tm tm{};
    detail::platform::utc_time(t, tm);
    return fmt::format("{:02}/{}/{:04}:{:02}:{:02}:{:02} +0000", tm.tm_mday,
                       detail::month_abbreviations[static_cast<std::size_t>(tm.tm_mon)],
                       tm.tm_year + 1900, tm.tm_hour, tm.tm_min, tm.tm_sec);
}

std::string format_line(const context& ctx, std::chrono::nanoseconds took) {
    std::string line = ctx.ip();
    line.append(" - - [");
    line.append(timestamp(std::chrono::system_clock::now()));
    line.append("] \"");
    if (ctx.method().empty()) {
        line.push_back('-');  // the request line never arrived whole
    } else {
        std::string request(ctx.method());
        request.push_back(' ');
        request.append(ctx.path());
        if (!ctx.query_string().empty()) {
            request.push_back('?');
            request.append(ctx.query_string());
        }
        request.push_back(' ');
        request.append(ctx.protocol());
        append_quoted_field(line, request);
    }
    line.append(fmt::format("\" {} {} \"", ctx.status(), ctx.response_length()));
    append_quoted_field(line, ctx.header("referer").value_or(""));
    line.append("\" \"");
    append_quoted_field(line, ctx.header("user-agent").value_or(""));
    line.append(
        fmt::format("\" {:.3f}ms", std::chrono::duration<double, std::milli>(took).count()));
    // With app.request_ids: the id last, quoted (it is kept from the request only when it
    // has no quote, space or control character, and escaped all the same).
    if (!ctx.request_id().empty()) {
        line.append(" \"");
        append_quoted_field(line, ctx.request_id());
        line.push_back('"');
    }
    return line;
}

}  // namespace

log_handler access_log() {
    return [](const context& ctx, std::chrono::nanoseconds took) {
        auto line = format_line(ctx, took);
        line.push_back('\n');
        // One fwrite per line: lines from several worker threads do not interleave.
        std::fwrite(line.data(), 1, line.size(), stderr);
    };
}

log_handler access_log(std::function<void(std::string_view line)> sink) {
    if (!sink) throw std::invalid_argument("tern: access_log needs a sink");
    return [sink = std::move(sink)](const context& ctx, std::chrono::nanoseconds took) {
        sink(format_line(ctx, took));
    };
}

}  // namespace tern
