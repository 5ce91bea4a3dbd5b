#include "testing/h2_client_codec.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <cstdio>
#include <vector>

namespace tern::testing::detail {

namespace {

// The largest response body the client takes: a broken server cannot make a test eat all
// memory (as the HTTP/1.1 reader's bound).
constexpr std::size_t max_body_size = 256 * 1024 * 1024;
// The stream window the client grants (SETTINGS_INITIAL_WINDOW_SIZE) and the connection's:
// large enough that a test's bodies arrive without waiting on WINDOW_UPDATE round trips.
constexpr std::int32_t window_size = 16 * 1024 * 1024;

h2_stream_state* state_of(nghttp2_session* session, std::int32_t stream_id) {
    return static_cast<h2_stream_state*>(nghttp2_session_get_stream_user_data(session, stream_id));
}

char lower(char c) noexcept { return c >= 'A' && c <= 'Z' ? static_cast<char>(c + 32) : c; }

// Fields HTTP/2 forbids (RFC 9113 section 8.2.2), and Host, which becomes :authority.
bool left_out(std::string_view lowered) {
    static constexpr std::array<std::string_view, 6> names = {
        "connection", "keep-alive", "proxy-connection", "transfer-encoding", "upgrade", "host"};
    return std::find(names.begin(), names.end(), lowered) != names.end();
}

nghttp2_nv field(std::string_view name, std::string_view value) {
    // nghttp2 copies the fields in nghttp2_submit_request and never writes through these.
    return {const_cast<std::uint8_t*>(reinterpret_cast<const std::uint8_t*>(name.data())),
            const_cast<std::uint8_t*>(reinterpret_cast<const std::uint8_t*>(value.data())),
            name.size(), value.size(), NGHTTP2_NV_FLAG_NONE};
}

// Sends the request body from the stream's state as nghttp2 asks for it.
ssize_t read_body(nghttp2_session*, std::int32_t, std::uint8_t* buffer, std::size_t length,
                  std::uint32_t* flags, nghttp2_data_source* source, void*) {
    auto* state = static_cast<h2_stream_state*>(source->ptr);
    const std::size_t n = std::min(length, state->body.size());
    std::copy_n(state->body.data(), n, buffer);
    state->body.remove_prefix(n);
    if (state->body.empty()) *flags |= NGHTTP2_DATA_FLAG_EOF;
    return static_cast<ssize_t>(n);
}

}  // namespace

std::string h2_error_name(std::uint32_t code) {
    std::array<char, 16> hex{};
    std::snprintf(hex.data(), hex.size(), "0x%x", code);
    return std::string(nghttp2_http2_strerror(code)) + " (" + hex.data() + ")";
}

h2_client_codec::h2_client_codec() {
    nghttp2_session_callbacks* callbacks = nullptr;
    if (nghttp2_session_callbacks_new(&callbacks) != 0) {
        throw client_error("HTTP/2: nghttp2_session_callbacks_new failed");
    }
    nghttp2_session_callbacks_set_on_header_callback(callbacks, on_header);
    nghttp2_session_callbacks_set_on_frame_recv_callback(callbacks, on_frame);
    nghttp2_session_callbacks_set_on_data_chunk_recv_callback(callbacks, on_data);
    nghttp2_session_callbacks_set_on_stream_close_callback(callbacks, on_close);
    const int made = nghttp2_session_client_new(&session_, callbacks, this);
    nghttp2_session_callbacks_del(callbacks);
    if (made != 0) throw client_error(std::string("HTTP/2: ") + nghttp2_strerror(made));
    const std::array<nghttp2_settings_entry, 2> settings = {
        {{NGHTTP2_SETTINGS_ENABLE_PUSH, 0}, {NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE, window_size}}};
    if (nghttp2_submit_settings(session_, NGHTTP2_FLAG_NONE, settings.data(), settings.size()) !=
            0 ||
        nghttp2_session_set_local_window_size(session_, NGHTTP2_FLAG_NONE, 0, window_size) != 0) {
        nghttp2_session_del(session_);
        throw client_error("HTTP/2: cannot queue the client's SETTINGS");
    }
}

h2_client_codec::~h2_client_codec() { nghttp2_session_del(session_); }

void h2_client_codec::submit(const outgoing_request& request, std::string_view scheme,
                             std::string_view authority, h2_stream_state& state) {
    std::vector<std::string> names;  // the lowered names, alive until the submit returns
    names.reserve(request.fields.size());
    std::vector<nghttp2_nv> fields;
    fields.reserve(request.fields.size() + 5);
    fields.push_back(field(":method", request.method));
    fields.push_back(field(":scheme", scheme));
    fields.push_back(field(":authority", authority));
    fields.push_back(field(":path", request.target));
    for (const testing::header& h : request.fields) {
        std::string& name = names.emplace_back(h.name);
        std::transform(name.begin(), name.end(), name.begin(), lower);
        if (name == "host") fields[2] = field(":authority", h.value);
        if (left_out(name)) continue;
        fields.push_back(field(name, h.value));
    }
    const std::string length = std::to_string(request.body.size());
    if (adds_content_length(request)) fields.push_back(field("content-length", length));

    state.body = request.body;
    nghttp2_data_provider provider{};
    provider.source.ptr = &state;
    provider.read_callback = read_body;
    const std::int32_t id =
        nghttp2_submit_request(session_, nullptr, fields.data(), fields.size(),
                               request.body.empty() ? nullptr : &provider, &state);
    if (id < 0) throw client_error(std::string("HTTP/2: ") + nghttp2_strerror(id));
    state.id = id;
}

void h2_client_codec::take_output(std::string& out) {
    for (;;) {
        const std::uint8_t* data = nullptr;
        const ssize_t n = nghttp2_session_mem_send(session_, &data);
        if (n < 0) {
            throw client_error(std::string("HTTP/2: ") + nghttp2_strerror(static_cast<int>(n)));
        }
        if (n == 0) return;
        out.append(reinterpret_cast<const char*>(data), static_cast<std::size_t>(n));
    }
}

void h2_client_codec::feed(const char* data, std::size_t size) {
    const ssize_t n =
        nghttp2_session_mem_recv(session_, reinterpret_cast<const std::uint8_t*>(data), size);
    if (n < 0) {
        throw client_error(std::string("HTTP/2: the server's bytes end the connection: ") +
                           nghttp2_strerror(static_cast<int>(n)));
    }
}

bool h2_client_codec::alive() const {
    return nghttp2_session_want_read(session_) != 0 || nghttp2_session_want_write(session_) != 0;
}

int h2_client_codec::on_header(nghttp2_session* session, const nghttp2_frame* frame,
                               const std::uint8_t* name, std::size_t name_length,
                               const std::uint8_t* value, std::size_t value_length, std::uint8_t,
                               void*) {
    h2_stream_state* state = state_of(session, frame->hd.stream_id);
    if (state == nullptr) return 0;
    const std::string_view n(reinterpret_cast<const char*>(name), name_length);
    const std::string_view v(reinterpret_cast<const char*>(value), value_length);
    state->received = true;
    if (n == ":status") {
        // A final status after an interim one (100, 103) replaces its fields.
        int status = 0;
        std::from_chars(v.data(), v.data() + v.size(), status);
        state->answer.status = status;
        state->answer.headers.clear();
        return 0;
    }
    if (!n.starts_with(':')) state->answer.headers.push_back({std::string(n), std::string(v)});
    return 0;
}

int h2_client_codec::on_frame(nghttp2_session* session, const nghttp2_frame* frame,
                              void* user_data) {
    auto* self = static_cast<h2_client_codec*>(user_data);
    if (frame->hd.type == NGHTTP2_GOAWAY) {
        h2_goaway& g = self->goaway_;
        g.received = true;
        g.error_code = frame->goaway.error_code;
        g.last_stream_id = frame->goaway.last_stream_id;
        g.debug_data.clear();
        for (std::size_t i = 0; i < frame->goaway.opaque_data_len && i < 200; ++i) {
            const auto c = static_cast<char>(frame->goaway.opaque_data[i]);
            if (c >= ' ' && c <= '~') g.debug_data += c;
        }
        return 0;
    }
    if (frame->hd.type == NGHTTP2_RST_STREAM) {
        if (h2_stream_state* state = state_of(session, frame->hd.stream_id)) {
            state->reset_by_server = true;
        }
        return 0;
    }
    const bool ends = (frame->hd.flags & NGHTTP2_FLAG_END_STREAM) != 0;
    if (ends && (frame->hd.type == NGHTTP2_HEADERS || frame->hd.type == NGHTTP2_DATA)) {
        if (h2_stream_state* state = state_of(session, frame->hd.stream_id)) state->complete = true;
    }
    return 0;
}

int h2_client_codec::on_data(nghttp2_session* session, std::uint8_t, std::int32_t stream_id,
                             const std::uint8_t* data, std::size_t length, void*) {
    h2_stream_state* state = state_of(session, stream_id);
    if (state == nullptr) return 0;
    std::string& body = state->answer.body;
    if (body.size() + length > max_body_size) {
        state->failure = "the response body is over the client's limit of 256 MiB";
        nghttp2_submit_rst_stream(session, NGHTTP2_FLAG_NONE, stream_id, NGHTTP2_CANCEL);
        return 0;
    }
    body.append(reinterpret_cast<const char*>(data), length);
    return 0;
}

int h2_client_codec::on_close(nghttp2_session* session, std::int32_t stream_id,
                              std::uint32_t error_code, void* user_data) {
    auto* self = static_cast<h2_client_codec*>(user_data);
    if (h2_stream_state* state = state_of(session, stream_id)) {
        state->closed = true;
        state->error_code = error_code;
        ++self->closed_;
    }
    return 0;
}

}  // namespace tern::testing::detail
