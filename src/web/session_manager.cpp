#include "web/session_manager.hpp"

#include "http/request.hpp"
#include "http/token.hpp"
#include "web/cookies.hpp"
#include "web/session_id.hpp"

#include <algorithm>
#include <stdexcept>
#include <vector>

namespace tern::detail {

namespace {

// Cookies named like the session cookie that are looked up at most: a client sending more
// does not get more store lookups for it.
constexpr std::size_t max_candidates = 4;

cookie_options cookie_attributes(const session_config& cfg, bool secure) {
    cookie_options o;
    o.path = cfg.cookie_path;
    o.domain = cfg.cookie_domain;
    o.http_only = true;
    o.same_site = cfg.same_site;
    o.secure = cfg.secure.value_or(secure);
    if (cfg.persistent) o.max_age = cfg.absolute_timeout;
    return o;
}

}  // namespace

void check_session_config(const session_config& cfg) {
    if (!is_token(cfg.cookie_name)) {
        throw std::invalid_argument("sessions: cookie_name '" + cfg.cookie_name +
                                    "' is not a token");
    }
    if (cfg.idle_timeout.count() <= 0) {
        throw std::invalid_argument("sessions: idle_timeout must be more than zero");
    }
    if (cfg.absolute_timeout.count() <= 0) {
        throw std::invalid_argument("sessions: absolute_timeout must be more than zero");
    }
    if (!cfg.store && cfg.max_sessions < 2) {
        throw std::invalid_argument("sessions: max_sessions must be at least 2");
    }
    if (!cfg.store && cfg.max_store_bytes < 64 * 1024) {
        throw std::invalid_argument("sessions: max_store_bytes must be at least 65536");
    }
    if (cfg.same_site == same_site::none && cfg.secure != true) {
        throw std::invalid_argument(
            "sessions: same_site none needs secure = true (browsers refuse it otherwise)");
    }
    // The cookie's own rules (path, domain): a cookie that could never be written is a
    // setup error now, not a 500 at the first log-in.
    (void)format_set_cookie(cfg.cookie_name, "x", cookie_attributes(cfg, true));
}

session_manager::session_manager(session_config cfg, session_clock now)
    : cfg_(std::move(cfg)), now_(std::move(now)), store_(cfg_.store) {
    check_session_config(cfg_);
    if (!store_) {
        auto own =
            std::make_shared<memory_session_store>(cfg_.max_sessions, cfg_.max_store_bytes, now_);
        memory_ = own.get();
        store_ = std::move(own);
    }
}

std::unique_ptr<session> session_manager::open(
    std::span<const header_field> request_headers) const {
    auto s = session_access::make();
    const auto now = now_();
    std::vector<cookie_pair> pairs;
    for (const auto& h : request_headers) {
        if (iequals(h.name, "cookie")) parse_cookie_header(h.value, pairs);
    }
    std::size_t tried = 0;
    for (const auto& pair : pairs) {
        if (pair.name != cfg_.cookie_name || !looks_like_session_id(pair.value)) continue;
        if (++tried > max_candidates) break;
        auto data = store_->load(pair.value);
        if (!data) continue;
        if (now - data->last_access >= cfg_.idle_timeout ||
            now - data->created >= cfg_.absolute_timeout) {
            store_->erase(pair.value);
            continue;
        }
        session_access::id(*s).assign(pair.value);
        session_access::stored_id(*s).assign(pair.value);
        session_access::data(*s) = std::move(*data);
        return s;
    }
    return s;  // a new session: its timestamps are set when it is first saved
}

std::optional<std::string> session_manager::commit(session& s, bool secure) const {
    auto& id = session_access::id(s);
    const auto& stored = session_access::stored_id(s);
    auto& data = session_access::data(s);
    if (!stored.empty() && stored != id) store_->erase(stored);
    const auto options = cookie_attributes(cfg_, secure);
    if (id.empty()) {
        if (!session_access::clear_cookie(s)) return std::nullopt;
        auto gone = options;
        gone.max_age = std::chrono::seconds(0);
        gone.expires = std::chrono::system_clock::time_point{};
        return format_set_cookie(cfg_.cookie_name, "", gone);
    }
    using duration = std::chrono::system_clock::duration;
    const auto now = now_();
    if (data.created == std::chrono::system_clock::time_point{}) data.created = now;
    data.last_access = now;
    const auto expires =
        std::min(now + std::chrono::duration_cast<duration>(cfg_.idle_timeout),
                 data.created + std::chrono::duration_cast<duration>(cfg_.absolute_timeout));
    if (memory_ != nullptr) {
        memory_->save(id, data, expires, session_access::regenerated(s));
    } else {
        store_->save(id, data, expires);
    }
    if (!session_access::changed(s) && id == stored) return std::nullopt;
    return format_set_cookie(cfg_.cookie_name, id, options);
}

}  // namespace tern::detail
