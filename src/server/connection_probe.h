// Tells whether the client of an in-flight HTTP request has gone away, so a
// generation nobody will read can be cancelled. cpp-httplib 0.11.4 does not
// expose a request's socket, so the probe finds it by its address 4-tuple.
#pragma once

#include <string>

namespace tessera {

class ConnectionProbe {
public:
    // Looks up the connected socket whose local and peer address/port match.
    // If none matches (should not happen), the probe reports "still connected".
    ConnectionProbe(const std::string& local_addr, int local_port, const std::string& remote_addr, int remote_port);

    bool found() const { return fd_ >= 0; }
    // True once the peer has closed the connection or reset it. Does not
    // consume data the client may already have sent (a pipelined request).
    bool peer_closed() const;

private:
    int fd_ = -1;  // borrowed from httplib, valid while the request is handled
};

}  // namespace tessera
