// The process's own sockets, found through /proc/self/fd: cpp-httplib
// 0.11.4 (Debian's compiled library) exposes none of its sockets, so the
// server finds them by address (the connection probe, the slow-client guard,
// the listening socket's backlog).
#pragma once

#include <functional>

namespace tessera {

// Calls visit(fd) for each open file descriptor of the process until it
// returns false.
void for_each_open_fd(const std::function<bool(int fd)>& visit);

// The listening TCP socket bound to local_port, or -1 if there is none.
int find_listening_socket(int local_port);

}  // namespace tessera
