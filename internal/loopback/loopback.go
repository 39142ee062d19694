// Package loopback says whether a host, a Host header or a listen address
// names this machine's loopback interface. mcpc decides that in several
// places: its HTTP endpoints refuse other Host headers and Origins (DNS
// rebinding), `mcpc run --http` and `mcpc ui` refuse to listen beyond
// loopback without a token, and remote URLs in clear text to another host
// get a warning. One definition keeps them in agreement.
package loopback

import (
	"net"
	"net/netip"
	"strings"
)

// Host reports whether host (a name or an address, without a port;
// brackets allowed) is this machine's loopback: "localhost", a name under
// ".localhost" (RFC 6761: resolvers and browsers answer those with
// loopback), an address in 127.0.0.0/8 or ::1, in an IPv4-mapped or zoned
// form too. Case and a trailing dot do not matter.
func Host(host string) bool {
	h := strings.ToLower(strings.TrimSuffix(strings.Trim(host, "[]"), "."))
	if h == "localhost" || strings.HasSuffix(h, ".localhost") {
		return true
	}
	return loopbackIP(h)
}

// HostPort reports whether a Host header or a URL's host (host[:port])
// names loopback, as Host does.
func HostPort(hostport string) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	return Host(host)
}

// ListenAddr reports whether a listen address (HOST:PORT) binds loopback
// only: "localhost" or a loopback address. Not a name under ".localhost",
// which a listener resolves through the system's resolver, which need not
// know RFC 6761; not an empty host, which is every interface.
func ListenAddr(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil || host == "" {
		return false
	}
	return strings.EqualFold(host, "localhost") || loopbackIP(host)
}

func loopbackIP(s string) bool {
	addr, err := netip.ParseAddr(s)
	return err == nil && addr.Unmap().WithZone("").IsLoopback()
}
