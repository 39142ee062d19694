package remotehttp

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"syscall"
)

// NetReason says in a few words why a connection to a remote server
// failed, without the url a *url.Error carries (its query may hold a key).
// For an error it has no words for, reason is empty and cause is the
// innermost error of the url and network wrappers, for the caller to
// show; timeout says whether the network timed out.
func NetReason(err error) (reason string, timeout bool, cause error) {
	var dnsErr *net.DNSError
	var certErr *tls.CertificateVerificationError
	var unknownCA x509.UnknownAuthorityError
	var hostErr x509.HostnameError
	var recErr tls.RecordHeaderError
	var netErr net.Error
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection refused", false, nil
	case errors.As(err, &dnsErr):
		if dnsErr.IsNotFound {
			return "host not found", false, nil
		}
		return "DNS lookup failed", false, nil
	case errors.As(err, &hostErr):
		return "TLS certificate is not valid for this host", false, nil
	case errors.As(err, &unknownCA):
		return "TLS certificate is signed by an unknown authority", false, nil
	case errors.As(err, &certErr):
		return "TLS certificate was not accepted", false, nil
	case errors.As(err, &recErr):
		return "TLS handshake failed (is the server plain http?)", false, nil
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, net.ErrClosed):
		return "the server closed the connection", false, nil
	case errors.As(err, &netErr) && netErr.Timeout():
		return "the network timed out", true, nil
	case errors.Is(err, syscall.ENETUNREACH), errors.Is(err, syscall.EHOSTUNREACH):
		return "network unreachable", false, nil
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	var oe *net.OpError
	if errors.As(err, &oe) && oe.Err != nil {
		err = oe.Err
	}
	return "", false, err
}

// IsEventStream reports whether resp is a server-sent event stream.
func IsEventStream(resp *http.Response) bool {
	ct, _, _ := strings.Cut(resp.Header.Get("Content-Type"), ";")
	return strings.EqualFold(strings.TrimSpace(ct), "text/event-stream")
}
