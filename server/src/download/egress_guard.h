// EgressGuard: which addresses a download may connect to (AIS cmn.IsBlockedEgressIP). A download
// fetches URLs a user supplied, so the server must not become the user's way into its own host or
// network (SSRF). Checked on the resolved address of every connection libcurl opens (redirects
// included), so a name that resolves differently the second time (DNS rebinding) changes nothing.
#pragma once

#include <sys/socket.h>

#include <string>

namespace ais {

struct EgressPolicy {
  // Private ranges (RFC 1918, IPv6 ULA fc00::/7): cluster feature Dload-Allow-Private-Egress.
  bool allow_private = false;
  // Loopback (127/8, ::1): --download-allow-loopback, for tests and single-user laptops.
  bool allow_loopback = false;
};

// "" when `addr` may be reached under `policy`, else why not ("loopback", "link-local", ...).
// Always refused: unspecified (0.0.0.0/8, ::), link-local (169.254/16, fe80::/10, which holds
// cloud metadata services), multicast, CGNAT (100.64/10), and the IPv6 transition prefixes that
// carry an IPv4 destination that cannot be checked (64:ff9b:1::/48, 2002::/16, 2001::/32); an
// IPv4-mapped or NAT64 (64:ff9b::/96) address is checked as the IPv4 address it carries.
// Any family other than IPv4 and IPv6 is refused.
std::string EgressRefusal(const sockaddr* addr, socklen_t len, const EgressPolicy& policy);

// The address as text ("127.0.0.1", "::1") for messages.
std::string AddressText(const sockaddr* addr, socklen_t len);

}  // namespace ais
