#pragma once
// An HTTP/3 connection (src/h3/connection.hpp) without QUIC, for tests and the fuzzer: the
// QUIC connection's side (quic::stream_control) is a fake that records what the connection
// asks of it, and a client made of nghttp3's own client connection exchanges stream bytes
// with it in memory (every byte written is at once delivered and acknowledged). Header-only:
// the HTTP/3 fuzzer includes it too.

#include "h3/connection.hpp"
#include "quic/stream_sink.hpp"
#include "support/fake_h2_host.hpp"
#include "support/fake_loop.hpp"

#include <nghttp3/nghttp3.h>

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <unordered_set>
#include <utility>
#include <vector>

namespace tern_test {

/// What the HTTP/3 connection asked of its QUIC connection.
class fake_stream_control final : public tern::detail::quic::stream_control {
public:
    std::int64_t open_uni_stream() override {
        const auto id = next_uni_;
        next_uni_ += 4;
        return id;
    }
    void shutdown_write(std::int64_t id, std::uint64_t code) override {
        resets.emplace_back(id, code);
    }
    void shutdown_read(std::int64_t id, std::uint64_t code) override {
        stops.emplace_back(id, code);
    }
    void want_write() override { ++wakes; }
    void release_stream(std::int64_t id) override { released.push_back(id); }
    void hold_window(std::int64_t id, std::uint64_t n) override { held[id] += n; }
    void give_window(std::int64_t id, std::uint64_t n) override { given[id] += n; }

    std::vector<std::pair<std::int64_t, std::uint64_t>> resets, stops;
    std::vector<std::int64_t> released;  // request streams whose places were given back
    // Request-body credit held back, and given back later, per stream.
    std::map<std::int64_t, std::uint64_t> held, given;
    int wakes = 0;

private:
    std::int64_t next_uni_ = 3;  // the server's unidirectional streams: 3, 7, 11, ...
};

/// A response as the client saw it.
struct h3_answer {
    std::vector<std::pair<std::string, std::string>> fields;
    std::string body;
    bool ended = false;
    std::string field(const std::string& name) const {
        for (const auto& [n, v] : fields) {
            if (n == name) return v;
        }
        return {};
    }
};

/// nghttp3's client over the connection under test.
class h3_rig {
public:
    h3_rig(tern::detail::request_handler& handler, const tern::config& settings,
           const tern::detail::parser_limits& limits)
        : host_(loop, handler, settings, limits) {
        server =
            std::make_unique<tern::detail::h3_connection>(control, host_, "127.0.0.1", registry_);
        server->on_peer_stream_limit(100);
        nghttp3_callbacks cb{};
        cb.recv_header = [](nghttp3_conn*, std::int64_t id, std::int32_t, nghttp3_rcbuf* name,
                            nghttp3_rcbuf* value, std::uint8_t, void* self, void*) {
            const auto n = nghttp3_rcbuf_get_buf(name);
            const auto v = nghttp3_rcbuf_get_buf(value);
            static_cast<h3_rig*>(self)->answers[id].fields.emplace_back(
                std::string(reinterpret_cast<const char*>(n.base), n.len),
                std::string(reinterpret_cast<const char*>(v.base), v.len));
            return 0;
        };
        cb.recv_data = [](nghttp3_conn*, std::int64_t id, const std::uint8_t* data,
                          std::size_t size, void* self, void*) {
            static_cast<h3_rig*>(self)->answers[id].body.append(reinterpret_cast<const char*>(data),
                                                                size);
            return 0;
        };
        cb.end_stream = [](nghttp3_conn*, std::int64_t id, void* self, void*) {
            static_cast<h3_rig*>(self)->answers[id].ended = true;
            return 0;
        };
        nghttp3_settings s;
        nghttp3_settings_default(&s);
        nghttp3_conn_client_new(&client_, &cb, &s, nullptr, this);
        nghttp3_conn_bind_control_stream(client_, 2);
        nghttp3_conn_bind_qpack_streams(client_, 6, 10);
    }
    ~h3_rig() {
        server.reset();
        nghttp3_conn_del(client_);
    }
    h3_rig(const h3_rig&) = delete;
    h3_rig& operator=(const h3_rig&) = delete;

    /// Sends a request on the next request stream (0, 4, 8, ...); returns its id.
    std::int64_t request(const std::vector<std::pair<std::string, std::string>>& fields,
                         std::string body = {}) {
        const auto id = next_request_;
        next_request_ += 4;
        std::vector<nghttp3_nv> nv;
        for (const auto& [n, v] : fields) {
            nv.push_back({reinterpret_cast<std::uint8_t*>(const_cast<char*>(n.data())),
                          reinterpret_cast<std::uint8_t*>(const_cast<char*>(v.data())), n.size(),
                          v.size(), NGHTTP3_NV_FLAG_NONE});
        }
        bodies_[id] = std::move(body);
        nghttp3_data_reader reader{[](nghttp3_conn*, std::int64_t sid, nghttp3_vec* vec,
                                      std::size_t, std::uint32_t* flags, void* self,
                                      void*) -> nghttp3_ssize {
            auto& rig = *static_cast<h3_rig*>(self);
            auto& b = rig.bodies_[sid];
            if (rig.given_.contains(sid)) {
                if (rig.open_[sid]) return NGHTTP3_ERR_WOULDBLOCK;  // the rest never comes
                *flags |= NGHTTP3_DATA_FLAG_EOF;
                return 0;
            }
            if (!rig.open_[sid]) *flags |= NGHTTP3_DATA_FLAG_EOF;
            rig.given_.insert(sid);
            vec[0] = {reinterpret_cast<std::uint8_t*>(b.data()), b.size()};
            return 1;
        }};
        nghttp3_conn_submit_request(client_, id, nv.data(), nv.size(),
                                    bodies_[id].empty() ? nullptr : &reader, nullptr);
        return id;
    }

    /// Sends a request's head and `body`, without ending the stream (a body still to come).
    std::int64_t request_open(const std::vector<std::pair<std::string, std::string>>& fields,
                              std::string body) {
        open_[next_request_] = true;
        return request(fields, std::move(body));
    }

    /// Moves bytes both ways and runs what was posted until nothing moves. False when the
    /// server gave up the connection (on_stream_data or next_write failed).
    bool pump() {
        for (int round = 0; round < 10'000; ++round) {
            bool moved = loop.run();
            // The client's bytes to the server.
            for (;;) {
                std::int64_t id = -1;
                int fin = 0;
                nghttp3_vec vec[16];
                const auto n = nghttp3_conn_writev_stream(client_, &id, &fin, vec, 16);
                if (n < 0 || id < 0) break;
                std::string bytes;
                for (nghttp3_ssize i = 0; i < n; ++i) {
                    bytes.append(reinterpret_cast<const char*>(vec[i].base), vec[i].len);
                }
                nghttp3_conn_add_write_offset(client_, id, bytes.size());
                nghttp3_conn_add_ack_offset(client_, id, bytes.size());
                if (!feed(id, bytes, fin != 0)) return false;
                moved = true;
                if (bytes.empty()) break;
            }
            // The server's bytes to the client.
            for (;;) {
                std::int64_t id = -1;
                bool fin = false;
                tern::detail::quic::stream_vec vec[16];
                const auto n = server->next_write(id, fin, vec);
                if (n < 0) return false;
                if (id < 0) break;
                std::string bytes;
                for (long i = 0; i < n; ++i) {
                    bytes.append(reinterpret_cast<const char*>(vec[i].base), vec[i].len);
                }
                if (!server->on_written(id, bytes.size())) return false;
                if (acks && !server->on_acked(id, bytes.size())) return false;
                nghttp3_conn_read_stream(client_, id,
                                         reinterpret_cast<const std::uint8_t*>(bytes.data()),
                                         bytes.size(), fin ? 1 : 0);
                if (fin && acks) server->on_stream_close(id, NGHTTP3_H3_NO_ERROR);
                moved = true;
                if (bytes.empty()) break;
            }
            if (!moved) return true;
        }
        return true;
    }

    /// Raw bytes on a stream of the client's, as a hostile peer sends them. False when the
    /// server gives up the connection.
    bool feed(std::int64_t id, std::string_view bytes, bool fin) {
        return server->on_stream_data(
            id, {reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size()}, fin);
    }

    fake_loop loop;
    fake_stream_control control;
    bool acks = true;  // false: the client acknowledges nothing the server sends
    std::map<std::int64_t, h3_answer> answers;
    std::unique_ptr<tern::detail::h3_connection> server;

private:
    fake_h2_host host_;
    std::unordered_set<tern::detail::h3_connection*> registry_;
    nghttp3_conn* client_ = nullptr;
    std::int64_t next_request_ = 0;
    std::map<std::int64_t, std::string> bodies_;
    std::map<std::int64_t, bool> open_;
    std::unordered_set<std::int64_t> given_;
};

}  // namespace tern_test
