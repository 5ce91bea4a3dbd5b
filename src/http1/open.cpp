#include "http1/open.hpp"

#include "h2/connection.hpp"
#include "http1/connection.hpp"
#include "http1/upgraded.hpp"

namespace tern::detail {

std::shared_ptr<transport_user> open_protocol(std::shared_ptr<byte_transport> io,
                                              protocol_host& host, const opening& how) {
    if (how.what == opening::mode::serve && how.alpn == "h2") {
        auto h2 =
            make_h2_connection(host, h2_peer{io->remote_ip(), io->secure(), io->client_subject()});
        host.count_h2_connection();
        return std::make_shared<upgraded_connection>(std::move(io), host, std::move(h2),
                                                     std::string_view{});
    }
    return std::make_shared<http1_connection>(std::move(io), host, how.what, how.redirect_port);
}

bool h2_ready() noexcept { return true; }  // HTTP/2 needs no library: tern's own codec

}  // namespace tern::detail
