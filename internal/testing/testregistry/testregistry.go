// Package testregistry starts and stops a real CNCF Distribution registry
// (the Debian package docker-registry, version 2.8.x) for end-to-end tests.
//
// A real registry is used instead of an in-process fake because the fakes
// are more permissive than the real thing (content negotiation, auth
// challenges, TLS handshakes, delete support), and end-to-end tests exist to
// catch exactly those differences.
//
// Every registry listens on 127.0.0.1 only, stores its data under
// t.TempDir(), and is stopped by a t.Cleanup, so tests can run in parallel
// and leave nothing behind.
package testregistry

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/addonpkg/addonpkg/internal/testing/child"
)

// Mode selects how the registry is exposed: plain HTTP or TLS, with or
// without htpasswd basic authentication. The modes exist because client code
// takes different paths (scheme selection, CA trust, credential handling)
// for each of them, and each path needs to be exercised against a real
// server.
type Mode int

const (
	// Plain serves the registry over plain HTTP without authentication.
	Plain Mode = iota
	// TLS serves the registry over HTTPS with a certificate issued by a
	// freshly generated, self-signed CA (see Registry.CAFile), without
	// authentication.
	TLS
	// BasicAuth serves the registry over plain HTTP and requires htpasswd
	// basic authentication.
	BasicAuth
	// TLSBasicAuth serves the registry over HTTPS (like TLS) and requires
	// htpasswd basic authentication (like BasicAuth).
	TLSBasicAuth
)

// String returns the name of the mode, so that it can be used directly as a
// subtest name.
func (m Mode) String() string {
	switch m {
	case Plain:
		return "Plain"
	case TLS:
		return "TLS"
	case BasicAuth:
		return "BasicAuth"
	case TLSBasicAuth:
		return "TLSBasicAuth"
	default:
		return "Mode(" + strconv.Itoa(int(m)) + ")"
	}
}

func (m Mode) useTLS() bool  { return m == TLS || m == TLSBasicAuth }
func (m Mode) useAuth() bool { return m == BasicAuth || m == TLSBasicAuth }

// Default credentials used by the auth modes when Options leaves them empty.
// They are fixed (not random) so that failures can be reproduced by hand
// against a registry started with the same configuration.
const (
	DefaultUsername = "addon"
	DefaultPassword = "s3cret-pass"
)

// Options configures Start. The zero value starts a plain-HTTP registry
// without authentication and with deletes disabled, which is the registry's
// own default.
type Options struct {
	// Mode selects plain HTTP or TLS, with or without basic auth.
	Mode Mode
	// Username and Password are the credentials accepted in the auth modes
	// (BasicAuth, TLSBasicAuth). Empty values default to DefaultUsername and
	// DefaultPassword. They are ignored in the other modes.
	Username, Password string
	// DeleteEnabled sets storage.delete.enabled, without which the registry
	// answers every DELETE with 405 Unsupported.
	DeleteEnabled bool
	// ForeignURLs are regular expressions of the urls that the foreign
	// (non-distributable) layers of a manifest may name
	// (validation.manifests.urls.allow). Without one, the registry refuses
	// every manifest that has such a layer.
	ForeignURLs []string
}

// Registry describes a running registry started by Start. All fields are
// read-only; the registry is stopped automatically when the test ends.
type Registry struct {
	// Host is "127.0.0.1:PORT", suitable as the registry part of an image
	// reference.
	Host string
	// URL is "http://127.0.0.1:PORT" or, in the TLS modes,
	// "https://127.0.0.1:PORT".
	URL string
	// CAFile is the path of the PEM-encoded self-signed CA certificate that
	// issued the server certificate in the TLS modes, so that tools outside
	// this process (or code under test that reads CA files) can trust the
	// registry. It is "" in the plain-HTTP modes.
	CAFile string
	// CertPool contains only the CA from CAFile; nil in the plain-HTTP modes.
	CertPool *x509.CertPool
	// Username and Password are the credentials accepted by the registry in
	// the auth modes; both are "" in the other modes.
	Username, Password string
	// Dir is the storage root (storage.filesystem.rootdirectory), so that
	// tests can inspect or corrupt what the registry stored.
	Dir string

	// stop stops the process (see Stop).
	stop func()
}

// Stop stops the registry before the test ends, for tests of what happens
// once it is out of reach (an air gap). It waits for the process to exit;
// the cleanup's own stop is then a no-op.
func (r *Registry) Stop() {
	if r.stop != nil {
		r.stop()
	}
}

// Transport returns a fresh http.RoundTripper for talking to the registry.
// In the TLS modes it trusts only the registry's CA (not the system roots),
// so a passing test proves the CA is what made the connection succeed. It
// never uses a proxy, because the registry is only reachable on 127.0.0.1.
func (r *Registry) Transport() http.RoundTripper {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.Proxy = nil
	if r.CertPool != nil {
		tr.TLSClientConfig = &tls.Config{
			RootCAs:    r.CertPool,
			MinVersion: tls.VersionTLS12,
		}
	}
	return tr
}

// binEnv names the environment variable that overrides the registry binary,
// for machines where it is installed somewhere other than $PATH or under a
// different name (for example a self-built registry).
const binEnv = "TESTREGISTRY_BIN"

// missingMsg is the message shown when the registry binary is not installed;
// it tells the reader how to fix it rather than just what is wrong.
const missingMsg = "docker-registry not installed: run hack/install-deps.sh (Debian package docker-registry)"

// Require skips the test if the docker-registry binary is not installed, or
// fails it if the environment variable CI is non-empty: on a developer
// machine a missing optional dependency should not block `go test ./...`,
// but in CI a silently skipped end-to-end suite would hide regressions.
//
// If TESTREGISTRY_BIN is set, it names the binary to use; if that binary
// does not exist the test always fails, because an explicit setting that
// does not work is a mistake that skipping would hide.
func Require(t testing.TB) {
	t.Helper()
	requireBin(t)
}

// requireBin implements Require and returns the binary path for Start.
func requireBin(t testing.TB) string {
	t.Helper()
	if bin := os.Getenv(binEnv); bin != "" {
		path, err := exec.LookPath(bin)
		if err != nil {
			t.Fatalf("%s=%q is not usable: %v", binEnv, bin, err)
		}
		return path
	}
	path, err := exec.LookPath("docker-registry")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("%s", missingMsg)
		}
		t.Skip(missingMsg)
	}
	return path
}

const (
	// readyTimeout bounds how long Start waits for /v2/ to answer. The
	// registry normally starts in well under a second; 15 s leaves room for
	// loaded CI machines without making a broken setup hang a test run.
	readyTimeout = 15 * time.Second
	// stopTimeout is how long the registry gets to exit after SIGTERM
	// before it is killed.
	stopTimeout = 5 * time.Second
	// startAttempts bounds the retries when the chosen port was taken
	// between picking it and the registry binding it.
	startAttempts = 5
	// outputTail is how much of the registry's output is included in
	// failure messages: enough for the fatal log line and some context,
	// without flooding the test log.
	outputTail = 2 << 10
)

// Start starts a registry configured by opts and waits until GET /v2/
// answers (200, or 401 in the auth modes). It calls Require first, so a
// missing binary skips (or, in CI, fails) the test. The registry is stopped
// (SIGTERM, then SIGKILL after 5 s) and its files are removed by t.Cleanup.
//
// Start must be called from the goroutine running the test, because it may
// call t.Fatalf or t.Skip.
func Start(t testing.TB, opts Options) *Registry {
	t.Helper()
	bin := requireBin(t)

	switch opts.Mode {
	case Plain, TLS, BasicAuth, TLSBasicAuth:
	default:
		t.Fatalf("testregistry: unknown mode %v", opts.Mode)
	}

	// One temp dir holds storage, certificates, htpasswd and config; the
	// testing package removes it after our stop cleanup has run (cleanups
	// run last-registered first), so the registry never sees its files
	// vanish while running.
	base := t.TempDir()
	r := &Registry{Dir: filepath.Join(base, "storage")}
	if err := os.Mkdir(r.Dir, 0o700); err != nil {
		t.Fatalf("testregistry: %v", err)
	}

	var tlsCert, tlsKey string
	if opts.Mode.useTLS() {
		var err error
		r.CAFile, tlsCert, tlsKey, r.CertPool, err = writeCerts(filepath.Join(base, "certs"))
		if err != nil {
			t.Fatalf("testregistry: generating TLS certificates: %v", err)
		}
	}

	var htpasswd string
	if opts.Mode.useAuth() {
		r.Username = cmpOr(opts.Username, DefaultUsername)
		r.Password = cmpOr(opts.Password, DefaultPassword)
		htpasswd = filepath.Join(base, "htpasswd")
		if err := writeHtpasswd(htpasswd, r.Username, r.Password); err != nil {
			t.Fatalf("testregistry: writing htpasswd: %v", err)
		}
	}

	secret, err := randomHex(32)
	if err != nil {
		t.Fatalf("testregistry: %v", err)
	}

	scheme := "http"
	if opts.Mode.useTLS() {
		scheme = "https"
	}

	var lastOut string
	for attempt := 1; attempt <= startAttempts; attempt++ {
		port, err := freePort()
		if err != nil {
			t.Fatalf("testregistry: finding a free port: %v", err)
		}
		r.Host = net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
		r.URL = scheme + "://" + r.Host

		cfg := configYAML(configParams{
			addr:          r.Host,
			secret:        secret,
			rootDir:       r.Dir,
			deleteEnabled: opts.DeleteEnabled,
			tlsCert:       tlsCert,
			tlsKey:        tlsKey,
			htpasswd:      htpasswd,
			foreignURLs:   opts.ForeignURLs,
		})
		cfgPath := filepath.Join(base, "config.yml")
		if err := os.WriteFile(cfgPath, []byte(cfg), 0o600); err != nil {
			t.Fatalf("testregistry: writing config: %v", err)
		}

		p, err := startProcess(bin, cfgPath)
		if err != nil {
			t.Fatalf("testregistry: starting %s: %v", bin, err)
		}
		ready := false
		// Registered before waiting, so that a Fatalf below still stops
		// the process.
		t.Cleanup(func() {
			p.Stop(stopTimeout)
			if ready && t.Failed() {
				// The registry's own log is usually the quickest way to
				// understand a failed end-to-end test. (Start failures
				// already include it in their message.)
				t.Logf("testregistry %s output (last %d bytes):\n%s", r.URL, outputTail, p.Tail(outputTail))
			}
		})

		err = waitReady(r, p)
		if err == nil {
			ready = true
			r.stop = func() { p.Stop(stopTimeout) }
			return r
		}
		lastOut = p.Tail(outputTail)
		if p.Exited() && strings.Contains(p.Output(), "address already in use") {
			// Someone else grabbed the port between freePort closing its
			// listener and the registry binding it; pick another one.
			t.Logf("testregistry: port %d taken, retrying (attempt %d/%d)", port, attempt, startAttempts)
			continue
		}
		t.Fatalf("testregistry: registry at %s did not become ready: %v\nregistry output (last %d bytes):\n%s", r.URL, err, outputTail, lastOut)
	}
	t.Fatalf("testregistry: registry did not start after %d attempts (port always in use)\nregistry output (last %d bytes):\n%s", startAttempts, outputTail, lastOut)
	return nil
}

// cmpOr returns a if it is non-empty, else b.
func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// freePort asks the kernel for an unused port on 127.0.0.1. The port is
// released before the registry binds it, so another process can take it in
// between; Start retries in that case.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func randomHex(n int) (string, error) {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return hex.EncodeToString(b), nil
}

type configParams struct {
	addr, secret, rootDir string
	deleteEnabled         bool
	tlsCert, tlsKey       string // both "" for plain HTTP
	htpasswd              string // "" for no auth
	foreignURLs           []string
}

// configYAML renders the registry configuration. It is written by hand
// rather than marshalled so that this package needs no YAML library; all
// strings go through yamlQuote so that unusual temp dir paths cannot break
// the document.
func configYAML(p configParams) string {
	var b strings.Builder
	b.WriteString("version: 0.1\n")
	// Only errors are logged, and access logs are off, so that a passing
	// test run is quiet; errors still reach the captured output used in
	// failure messages.
	b.WriteString("log:\n  level: error\n  formatter: text\n  accesslog:\n    disabled: true\n")
	b.WriteString("storage:\n")
	fmt.Fprintf(&b, "  filesystem:\n    rootdirectory: %s\n", yamlQuote(p.rootDir))
	fmt.Fprintf(&b, "  delete:\n    enabled: %t\n", p.deleteEnabled)
	// Upload purging is a background job that walks the storage; it is
	// pointless for short-lived registries and only adds noise.
	b.WriteString("  maintenance:\n    uploadpurging:\n      enabled: false\n")
	b.WriteString("http:\n")
	fmt.Fprintf(&b, "  addr: %s\n", yamlQuote(p.addr))
	// A fixed secret avoids the registry's warning about generating one.
	fmt.Fprintf(&b, "  secret: %s\n", yamlQuote(p.secret))
	// http.debug is deliberately absent: it would open a second listener
	// (pprof, metrics) that tests do not need and that could collide with
	// other ports.
	if p.tlsCert != "" {
		fmt.Fprintf(&b, "  tls:\n    certificate: %s\n    key: %s\n", yamlQuote(p.tlsCert), yamlQuote(p.tlsKey))
	}
	if p.htpasswd != "" {
		fmt.Fprintf(&b, "auth:\n  htpasswd:\n    realm: %s\n    path: %s\n", yamlQuote("testregistry"), yamlQuote(p.htpasswd))
	}
	if len(p.foreignURLs) > 0 {
		b.WriteString("validation:\n  manifests:\n    urls:\n      allow:\n")
		for _, u := range p.foreignURLs {
			fmt.Fprintf(&b, "        - %s\n", yamlQuote(u))
		}
	}
	return b.String()
}

// yamlQuote returns s as a YAML double-quoted scalar. strconv.Quote's escape
// sequences (\\, \", \n, \xNN, \uNNNN, \UNNNNNNNN, ...) are all valid in YAML
// double-quoted scalars, so its output can be used as is.
func yamlQuote(s string) string {
	return strconv.Quote(s)
}

// writeHtpasswd writes an htpasswd file with a single bcrypt entry, the only
// hash format the registry accepts. The minimum bcrypt cost is used because
// the registry checks the hash on every request and the password protects
// nothing of value; the default cost would slow tests down noticeably.
func writeHtpasswd(path, user, pass string) error {
	if strings.ContainsAny(user, ":\n") {
		return fmt.Errorf("username %q must not contain ':' or newline", user)
	}
	hash, err := bcrypt.GenerateFromPassword([]byte(pass), bcrypt.MinCost)
	if err != nil {
		return err
	}
	return os.WriteFile(path, []byte(user+":"+string(hash)+"\n"), 0o600)
}

// writeCerts generates a self-signed ECDSA P-256 CA and a server certificate
// for 127.0.0.1 and localhost signed by it, and writes them as PEM files to
// dir. A separate CA (rather than a self-signed leaf) mirrors how private
// registries are really set up and is what clients expect in a CA file.
func writeCerts(dir string) (caFile, certFile, keyFile string, pool *x509.CertPool, err error) {
	if err = os.Mkdir(dir, 0o700); err != nil {
		return
	}
	// Backdate NotBefore to tolerate small clock differences; keep the
	// lifetime short since the files only live as long as the test.
	notBefore := time.Now().Add(-time.Hour)
	notAfter := notBefore.Add(25 * time.Hour)

	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return
	}
	caTmpl := &x509.Certificate{
		SerialNumber:          randomSerial(),
		Subject:               pkix.Name{CommonName: "testregistry CA", Organization: []string{"addonpkg testregistry"}},
		NotBefore:             notBefore,
		NotAfter:              notAfter,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
		MaxPathLenZero:        true,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		return
	}
	caCert, err := x509.ParseCertificate(caDER)
	if err != nil {
		return
	}

	srvKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return
	}
	srvTmpl := &x509.Certificate{
		SerialNumber: randomSerial(),
		Subject:      pkix.Name{CommonName: "127.0.0.1"},
		NotBefore:    notBefore,
		NotAfter:     notAfter,
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		// Both SANs, because clients may address the registry either way
		// and modern TLS stacks ignore the CommonName.
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)},
		DNSNames:    []string{"localhost"},
	}
	srvDER, err := x509.CreateCertificate(rand.Reader, srvTmpl, caCert, &srvKey.PublicKey, caKey)
	if err != nil {
		return
	}
	srvKeyDER, err := x509.MarshalPKCS8PrivateKey(srvKey)
	if err != nil {
		return
	}

	caFile = filepath.Join(dir, "ca.pem")
	certFile = filepath.Join(dir, "server.pem")
	keyFile = filepath.Join(dir, "server-key.pem")
	if err = writePEM(caFile, "CERTIFICATE", caDER); err != nil {
		return
	}
	if err = writePEM(certFile, "CERTIFICATE", srvDER); err != nil {
		return
	}
	if err = writePEM(keyFile, "PRIVATE KEY", srvKeyDER); err != nil {
		return
	}
	pool = x509.NewCertPool()
	pool.AddCert(caCert)
	return caFile, certFile, keyFile, pool, nil
}

// randomSerial returns a random 128-bit serial number; random serials keep
// certificates from different test runs distinguishable.
func randomSerial() *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 128))
	if err != nil {
		// crypto/rand does not fail on supported platforms.
		panic(err)
	}
	return n
}

func writePEM(path, typ string, der []byte) error {
	return os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600)
}

func startProcess(bin, cfgPath string) (*child.Process, error) {
	cmd := exec.Command(bin, "serve", cfgPath)
	// The registry lets REGISTRY_* variables override any config key;
	// drop them so that the developer's environment cannot change the
	// configuration under test.
	cmd.Env = filterEnv(os.Environ(), "REGISTRY_")
	// A test binary killed before its cleanups (a timeout, ^C, kill -9)
	// takes its registry with it, as kubeenv's servers.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	// Without WaitDelay, Wait (and so stop) would block for as long as any
	// leftover child of the binary holds the output pipe open, e.g. when
	// TESTREGISTRY_BIN is a wrapper script.
	cmd.WaitDelay = time.Second
	return child.Start(cmd)
}

func filterEnv(env []string, prefix string) []string {
	kept := env[:0:0]
	for _, kv := range env {
		if !strings.HasPrefix(kv, prefix) {
			kept = append(kept, kv)
		}
	}
	return kept
}

// waitReady polls GET /v2/ until the registry answers, the process exits,
// or readyTimeout passes.
func waitReady(r *Registry, p *child.Process) error {
	tr := r.Transport()
	defer tr.(*http.Transport).CloseIdleConnections()
	client := &http.Client{Transport: tr, Timeout: 2 * time.Second}

	deadline := time.Now().Add(readyTimeout)
	var lastErr error
	for {
		if p.Exited() {
			return fmt.Errorf("registry exited: %v", p.Wait())
		}
		lastErr = probe(client, r.URL+"/v2/")
		if lastErr == nil {
			// The answer might come from some other process that grabbed
			// the port; make sure ours is still alive.
			if p.Exited() {
				return fmt.Errorf("registry exited: %v", p.Wait())
			}
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("timed out after %v: %v", readyTimeout, lastErr)
		}
		select {
		case <-p.Done():
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// probe checks that url is served by a Distribution registry that is ready:
// status 200 (no auth) or 401 (auth required), plus the API version header
// that every registry /v2/ response carries, so that an unrelated server on
// the same port is not mistaken for ours.
func probe(client *http.Client, url string) error {
	resp, err := client.Get(url)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK && resp.StatusCode != http.StatusUnauthorized {
		return fmt.Errorf("GET %s: unexpected status %s", url, resp.Status)
	}
	if v := resp.Header.Get("Docker-Distribution-Api-Version"); v != "registry/2.0" {
		return errors.New("GET " + url + ": missing Docker-Distribution-Api-Version: registry/2.0 header")
	}
	return nil
}
