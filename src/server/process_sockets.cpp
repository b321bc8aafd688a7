#include "server/process_sockets.h"

#include <dirent.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <cstdlib>

namespace tessera {

void for_each_open_fd(const std::function<bool(int fd)>& visit) {
    DIR* dir = opendir("/proc/self/fd");
    if (!dir) return;
    while (const dirent* e = readdir(dir)) {
        char* end = nullptr;
        const long fd = std::strtol(e->d_name, &end, 10);
        if (end == e->d_name || *end != '\0') continue;
        if (!visit(static_cast<int>(fd))) break;
    }
    closedir(dir);
}

int find_listening_socket(int local_port) {
    int found = -1;
    for_each_open_fd([&](int fd) {
        int listening = 0;
        socklen_t len = sizeof listening;
        if (getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &listening, &len) != 0 || listening == 0) return true;
        sockaddr_storage ss{};
        len = sizeof ss;
        if (getsockname(fd, reinterpret_cast<sockaddr*>(&ss), &len) != 0) return true;
        int port = -1;
        if (ss.ss_family == AF_INET) port = ntohs(reinterpret_cast<const sockaddr_in*>(&ss)->sin_port);
        if (ss.ss_family == AF_INET6) port = ntohs(reinterpret_cast<const sockaddr_in6*>(&ss)->sin6_port);
        if (port != local_port) return true;
        found = fd;
        return false;
    });
    return found;
}

}  // namespace tessera
