package source

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"time"

	"github.com/addonpkg/addonpkg/internal/netguard"
	"github.com/addonpkg/addonpkg/pkg/registry"
	"github.com/addonpkg/addonpkg/pkg/safetree"
)

// The helpers below are for location packages (pkg/source/git,
// pkg/source/https, a program's own fetching kind): they keep every remote kind under the
// rules of the built-in ones (the same transport, credentials, timeouts
// and messages).

// IdleTimeout is Options.Timeout, or DefaultTimeout.
func (o Options) IdleTimeout() time.Duration { return o.timeout() }

// BaseTransport is the transport under a remote source's requests:
// Registry.Transport if set, else the default one with Registry's TLS
// choices, ConnectTimeout and the proxy environment.
func (o Options) BaseTransport() (http.RoundTripper, error) { return o.transport() }

// GuardedTransport is base under a netguard.Transport for requests to u:
// credentials only to u's origin, none in clear except to loopback, the
// idle timeout; requests are logged to Registry.Logger.
func (o Options) GuardedTransport(base http.RoundTripper, u *url.URL) http.RoundTripper {
	origin := netguard.OriginOf(u)
	return registry.LogTransport(&netguard.Transport{Base: base, Idle: o.timeout(), CredentialOrigin: &origin}, o.Registry.Logger)
}

// PlainHTTPAllowed reports whether u may be fetched: it is not plain
// http, or its host is loopback, or Registry.PlainHTTP is set.
func (o Options) PlainHTTPAllowed(u *url.URL) bool { return plainHTTPAllowed(u, o) }

// PlainHTTPRefused is the error of a URL PlainHTTPAllowed refuses.
func PlainHTTPRefused(u *url.URL) error { return plainHTTPRefused(u) }

// NetrcLogin is the login and password of host in the netrc file
// (Options.Netrc, $NETRC or ~/.netrc).
func (o Options) NetrcLogin(host string) (user, password string, ok bool) {
	return netrcLookup(o.netrcFile(), host)
}

// RedactURL removes the credentials of a URL, for messages and records.
func RedactURL(s string) string { return redactURL(s) }

// UnwrapURLError drops the *url.Error wrapping, whose text repeats the
// URL (credentials included).
func UnwrapURLError(err error) error { return unwrapURLError(err) }

// RemoteName is the default add-on name of an http or git source: the
// last element of the subdirectory, else of the URL path, without
// extensions (.git, .tar.gz, ...).
func RemoteName(ref Ref) string { return remoteName(ref) }

// WrapError wraps err in an *Error naming ref (unless it is one): the
// error a LoadTree of a remote kind returns.
func WrapError(ref Ref, err error) error { return sourceErr(ref, err) }

// ErrPlainHTTP marks an http:// (or git over http://) source to a host
// that is not loopback, refused unless Options.Registry.PlainHTTP allows it.
var ErrPlainHTTP = errors.New("plain http:// refused")

type plainHTTPError struct{ host string }

func (e *plainHTTPError) Error() string {
	return fmt.Sprintf("plain http:// to %s is refused (only loopback hosts get it): use https://", safetree.Sanitize(e.host))
}

func (e *plainHTTPError) Is(target error) bool { return target == ErrPlainHTTP }

func plainHTTPRefused(u *url.URL) error { return &plainHTTPError{host: u.Host} }

// transport builds the base transport: the registry options' transport
// if set, else the default one with the TLS choices and timeouts.
func (o Options) transport() (http.RoundTripper, error) {
	if o.Registry.Transport != nil {
		return o.Registry.Transport, nil
	}
	connect := o.ConnectTimeout
	if connect <= 0 {
		connect = DefaultTimeout
	}
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.Proxy = http.ProxyFromEnvironment
	t.DialContext = (&net.Dialer{Timeout: connect, KeepAlive: 30 * time.Second}).DialContext
	t.TLSHandshakeTimeout = connect
	tc, err := o.Registry.TLSConfig()
	if err != nil {
		return nil, err
	}
	t.TLSClientConfig = tc
	return t, nil
}

// MaxDownload is Options.MaxDownloadBytes, or DefaultMaxDownloadBytes.
func (o Options) MaxDownload() int64 { return o.maxDownload() }
