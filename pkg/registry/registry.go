// Package registry holds the options every registry operation shares:
// authentication through the docker config keychain, TLS and plain-HTTP
// choices, retries and the user agent, turned into go-containerregistry
// options.
//
// Requests go through one transport (over internal/netguard) that
// retries what fails in transport, by internal/retry's policy, and
// resumes bodies. Explain turns a failure into an *Error in addonpkg's
// words whose Kind is one of the sentinels (errdef.ErrNotFound,
// ErrUnauthorized, ErrUnreachable, ErrServer, ...), for errors.Is; Login and Logout
// keep credentials in the docker config.
package registry

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"runtime/debug"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/addonpkg/addonpkg/internal/netguard"
	"github.com/addonpkg/addonpkg/internal/retry"
)

// Options are the transport choices of a registry operation.
type Options struct {
	// PlainHTTP talks HTTP, not HTTPS (localhost and 127.0.0.1 get it
	// automatically). It says nothing about certificates.
	PlainHTTP bool
	// InsecureSkipTLSVerify accepts any certificate. It does not turn
	// HTTPS into HTTP.
	InsecureSkipTLSVerify bool
	// CAFile adds a PEM bundle to the trusted roots.
	CAFile string
	// Keychain resolves credentials; nil means the docker config and its
	// credential helpers (authn.DefaultKeychain).
	Keychain authn.Keychain
	// Transport replaces the network transport (tests, proxies); nil means
	// http.DefaultTransport's settings with the TLS choices above. Either
	// way requests go through a netguard.Transport on top of it:
	// credentials only to their origin, never in clear except to loopback.
	// With nil each operation makes a transport of its own, whose idle
	// connections stay open for 90 s after it returns: a program that
	// reads registries again and again (an operator) passes one
	// transport, and its connections are reused.
	Transport http.RoundTripper
	// Retries is how many times a failed request is tried again on 429,
	// 5xx and dropped connections; 0 means 4, negative means none.
	Retries int
	// Timeout is the idle timeout (netguard): how long a request may wait
	// for its response headers once sent, and a response body (sized or
	// chunked) may pause; 0 means 60s. A stalled body is resumed within
	// Retries, then fails with a *netguard.IdleTimeoutError.
	Timeout time.Duration
	// UserAgent is sent with every request; "" means "addonpkg/VERSION",
	// VERSION being the addonpkg module's version in the program's build
	// information ("dev" when it has none). The CLI sets its own version.
	UserAgent string
	// Logger, when set, gets a debug record for each HTTP request and
	// response (method, URL and status; never a header or a credential).
	Logger *slog.Logger
}

// ParseReference parses an image reference, honouring PlainHTTP.
func (o Options) ParseReference(s string) (name.Reference, error) {
	var opts []name.Option
	if o.PlainHTTP {
		opts = append(opts, name.Insecure)
	}
	ref, err := name.ParseReference(s, opts...)
	if err != nil {
		return nil, fmt.Errorf("invalid reference %q: %w", s, err)
	}
	return ref, nil
}

// ParseRepository parses a repository name, honouring PlainHTTP.
func (o Options) ParseRepository(s string) (name.Repository, error) {
	var opts []name.Option
	if o.PlainHTTP {
		opts = append(opts, name.Insecure)
	}
	repo, err := name.NewRepository(s, opts...)
	if err != nil {
		return name.Repository{}, fmt.Errorf("invalid repository %q: %w", s, err)
	}
	return repo, nil
}

// Remote turns the options into go-containerregistry remote options.
func (o Options) Remote(ctx context.Context) ([]remote.Option, error) {
	rt, err := o.transport()
	if err != nil {
		return nil, err
	}
	kc := o.Keychain
	if kc == nil {
		kc = authn.DefaultKeychain
	}
	ua := o.Agent()
	opts := []remote.Option{
		remote.WithContext(ctx),
		remote.WithAuthFromKeychain(kc),
		remote.WithTransport(rt),
		remote.WithUserAgent(ua),
		// Status codes are retried below, once (retryTransport); here
		// only what go-containerregistry alone can redo: a whole blob
		// upload whose streamed body cannot be replayed, retried once.
		remote.WithRetryStatusCodes(),
		remote.WithRetryPredicate(shouldRetry),
	}
	if o.retries() > 0 {
		opts = append(opts, remote.WithRetryBackoff(remote.Backoff{Duration: 500 * time.Millisecond, Factor: 2, Jitter: 0.1, Steps: 2}))
	} else {
		opts = append(opts, remote.WithRetryBackoff(remote.Backoff{Steps: 1}))
	}
	return opts, nil
}

func (o Options) transport() (http.RoundTripper, error) {
	return o.retryingTransport(false)
}

// retryingTransport is transport; callerVerifies leaves the digest
// check of blobs to the caller (Blobs).
func (o Options) retryingTransport(callerVerifies bool) (*retryTransport, error) {
	base, err := o.BaseTransport()
	if err != nil {
		return nil, err
	}
	base = withLog(manifestCap{base}, o.Logger)
	return &retryTransport{inner: base, retries: max(o.retries(), 0), base: 200 * time.Millisecond, sleep: retry.Sleep, callerVerifies: callerVerifies}, nil
}

// idle is the idle timeout: Timeout, 60s by default.
func (o Options) idle() time.Duration {
	if o.Timeout == 0 {
		return 60 * time.Second
	}
	return o.Timeout
}

// retries is the number of retries of one request: Retries, 4 by default.
func (o Options) retries() int {
	switch {
	case o.Retries == 0:
		return 4
	case o.Retries < 0:
		return 0
	}
	return o.Retries
}

// BaseTransport is the HTTP transport every registry request goes through,
// before retries: a netguard.Transport (credentials only to their origin,
// never in clear except to loopback; the idle timeout) over Transport, or
// over a transport with the TLS choices (CA file, skipped verification),
// proxies from the environment, dial and header timeouts. Tools that send
// raw registry requests (the doctor's probes) use it to behave the same.
func (o Options) BaseTransport() (http.RoundTripper, error) {
	if g, ok := o.Transport.(*netguard.Transport); ok {
		return g, nil // already guarded (a BaseTransport passed back in)
	}
	if o.Transport != nil {
		return &netguard.Transport{Base: o.Transport, Idle: o.idle()}, nil
	}
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.ResponseHeaderTimeout = o.idle()
	t.DialContext = (&net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}).DialContext
	t.Proxy = http.ProxyFromEnvironment
	tc, err := o.TLSConfig()
	if err != nil {
		return nil, err
	}
	t.TLSClientConfig = tc
	return &netguard.Transport{Base: t, Idle: o.idle()}, nil
}

// TLSConfig is the TLS client configuration the options ask for: the
// system roots plus CAFile, and no verification only when
// InsecureSkipTLSVerify says so. Every https client of addonpkg (the
// registry's, an http source's) uses it.
func (o Options) TLSConfig() (*tls.Config, error) {
	tc := &tls.Config{MinVersion: tls.VersionTLS12}
	if o.CAFile != "" {
		pem, err := os.ReadFile(o.CAFile)
		if err != nil {
			return nil, fmt.Errorf("read CA file: %w", err)
		}
		pool, err := x509.SystemCertPool()
		if err != nil || pool == nil {
			pool = x509.NewCertPool()
		}
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("CA file %s: no PEM certificates in it", o.CAFile)
		}
		tc.RootCAs = pool
	}
	if o.InsecureSkipTLSVerify {
		tc.InsecureSkipVerify = true //nolint:gosec // the user asked for it, by name
	}
	return tc, nil
}

// Agent is the user agent of a request: UserAgent, or addonpkg/VERSION.
func (o Options) Agent() string {
	if o.UserAgent != "" {
		return o.UserAgent
	}
	return "addonpkg/" + moduleVersion()
}

// moduleVersion is the addonpkg module's version in the build
// information: the main module's, or the dependency's of a program that
// imports addonpkg.
func moduleVersion() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "dev"
	}
	mods := append([]*debug.Module{&bi.Main}, bi.Deps...)
	for _, m := range mods {
		if m.Path == "github.com/addonpkg/addonpkg" && m.Version != "" && m.Version != "(devel)" {
			return m.Version
		}
	}
	return "dev"
}
