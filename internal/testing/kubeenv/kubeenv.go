// Package kubeenv starts a real kube-apiserver and etcd on 127.0.0.1 for
// tests, as controller-runtime's envtest does, with two identities: an
// admin in system:masters and a restricted user that RBAC grants nothing
// beyond what every authenticated user may do.
//
// Binaries are found in this order: TEST_ASSET_KUBE_APISERVER and
// TEST_ASSET_ETCD (envtest's variables), the cache that
// hack/build-kube-apiserver.sh fills
// (${XDG_CACHE_HOME:-~/.cache}/addonpkg/kube-apiserver/VERSION/kube-apiserver),
// then $PATH. A missing binary skips the test, or fails it when CI is set.
//
// No controllers run: a test that needs a Deployment available, a Job
// complete or a Namespace gone plays that controller itself
// (FinalizeNamespaces does the namespace controller's last step).
//
// One server per test package is the intended use: Shared starts it on
// first use, and the package's TestMain calls StopShared after m.Run.
// Both processes run in their own process group with a parent-death
// signal, so they die with the test binary even when it panics, and a
// reaper process then removes their folder from TMPDIR (startReaper).
package kubeenv

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
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
	"sync"
	"syscall"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/addonpkg/addonpkg/internal/testing/child"
)

// KubeVersion is the kube-apiserver version hack/build-kube-apiserver.sh
// builds and caches.
const KubeVersion = "v1.37.2"

// The identities of the token file.
const (
	AdminUser      = "admin"
	RestrictedUser = "restricted"
)

// ErrMissingBinary is returned by Start when kube-apiserver or etcd cannot
// be found.
var ErrMissingBinary = errors.New("kube-apiserver or etcd not installed: run hack/install-deps.sh (Debian etcd-server; hack/build-kube-apiserver.sh)")

// Env is a running API server.
type Env struct {
	// Dir holds etcd's data, the certificates, the token file and the
	// kubeconfigs; Stop removes it.
	Dir string
	// URL is the API server's https://127.0.0.1:PORT.
	URL string
	// Admin and Restricted are the two identities' client configs.
	Admin, Restricted *rest.Config
	// AdminKubeconfig and RestrictedKubeconfig are kubeconfig files for
	// the same identities (for kubectl and for clientcmd loading).
	AdminKubeconfig, RestrictedKubeconfig string

	etcd, apiserver *child.Process
	egress          *egressProxy
	reaper          *os.File // see startReaper
	stopOnce        sync.Once
}

// Binaries finds kube-apiserver and etcd; ok is false when either is
// missing.
func Binaries() (apiserver, etcd string, ok bool) {
	apiserver = find("TEST_ASSET_KUBE_APISERVER", cachePath(), "kube-apiserver")
	etcd = find("TEST_ASSET_ETCD", "", "etcd")
	return apiserver, etcd, apiserver != "" && etcd != ""
}

func cachePath() string {
	base := os.Getenv("XDG_CACHE_HOME")
	if base == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return ""
		}
		base = filepath.Join(home, ".cache")
	}
	return filepath.Join(base, "addonpkg", "kube-apiserver", KubeVersion, "kube-apiserver")
}

func find(env, cached, name string) string {
	if p := os.Getenv(env); p != "" {
		if _, err := os.Stat(p); err == nil {
			return p
		}
		return ""
	}
	if cached != "" {
		if fi, err := os.Stat(cached); err == nil && !fi.IsDir() {
			return cached
		}
	}
	p, err := exec.LookPath(name)
	if err != nil {
		return ""
	}
	return p
}

// startAttempts is how many times Start tries, each time on new ports:
// freePorts closes its listeners before etcd and kube-apiserver bind the
// ports, seconds later for kube-apiserver (three RSA keys are made in
// between), and meanwhile another process may take one (any outgoing
// connection takes an ephemeral port, and other test packages start
// servers at the same time). testregistry retries the same way.
const startAttempts = 3

// errPortTaken: etcd or kube-apiserver exited because its port was
// taken.
var errPortTaken = errors.New("port taken")

// pickPorts is freePorts; a test hands out a taken port through it.
var pickPorts = freePorts

// Start starts etcd and kube-apiserver on free ports and waits until
// /readyz answers ok (about 6 s); a port taken before a server bound it
// is tried again on new ones. It does not need a *testing.T, so TestMain
// can call it.
func Start(ctx context.Context) (*Env, error) {
	apiBin, etcdBin, ok := Binaries()
	if !ok {
		return nil, ErrMissingBinary
	}
	var err error
	for range startAttempts {
		var e *Env
		if e, err = startOnce(ctx, apiBin, etcdBin); !errors.Is(err, errPortTaken) {
			return e, err
		}
	}
	return nil, err
}

func startOnce(ctx context.Context, apiBin, etcdBin string) (*Env, error) {
	dir, err := os.MkdirTemp("", "kubeenv-")
	if err != nil {
		return nil, fmt.Errorf("create kubeenv dir: %w", err)
	}
	e := &Env{Dir: dir}
	if e.reaper, err = startReaper(dir); err != nil {
		_ = os.RemoveAll(dir)
		return nil, err
	}
	if err := e.start(ctx, apiBin, etcdBin); err != nil {
		e.Stop()
		return nil, err
	}
	return e, nil
}

func (e *Env) start(ctx context.Context, apiBin, etcdBin string) error {
	ports, err := pickPorts(3)
	if err != nil {
		return err
	}
	etcdClient, etcdPeer, apiPort := ports[0], ports[1], ports[2]
	etcdURL := "http://127.0.0.1:" + strconv.Itoa(etcdClient)
	e.etcd, err = startProcess(etcdBin,
		"--data-dir", filepath.Join(e.Dir, "etcd"),
		"--listen-client-urls", etcdURL,
		"--advertise-client-urls", etcdURL,
		"--listen-peer-urls", "http://127.0.0.1:"+strconv.Itoa(etcdPeer),
		"--initial-advertise-peer-urls", "http://127.0.0.1:"+strconv.Itoa(etcdPeer),
		"--initial-cluster", "default=http://127.0.0.1:"+strconv.Itoa(etcdPeer),
		"--unsafe-no-fsync",
	)
	if err != nil {
		return fmt.Errorf("start etcd: %w", err)
	}

	caPEM, err := writeServingCerts(e.Dir)
	if err != nil {
		return err
	}
	if err := writeSAKey(filepath.Join(e.Dir, "sa.key")); err != nil {
		return err
	}
	adminToken, restrictedToken := randomToken(), randomToken()
	tokens := fmt.Sprintf("%s,%s,%s,\"system:masters\"\n%s,%s,%s\n",
		adminToken, AdminUser, AdminUser, restrictedToken, RestrictedUser, RestrictedUser)
	if err := os.WriteFile(filepath.Join(e.Dir, "tokens.csv"), []byte(tokens), 0o600); err != nil {
		return fmt.Errorf("write token file: %w", err)
	}

	if e.egress, err = startEgressProxy(egressSocket(e.Dir)); err != nil {
		return err
	}
	egressFile := filepath.Join(e.Dir, "egress.yaml")
	if err := os.WriteFile(egressFile, []byte(egressConfig(egressSocket(e.Dir))), 0o600); err != nil {
		return fmt.Errorf("write egress selector config: %w", err)
	}

	e.apiserver, err = startProcess(apiBin,
		"--etcd-servers", etcdURL,
		"--bind-address", "127.0.0.1",
		"--advertise-address", "127.0.0.1",
		"--secure-port", strconv.Itoa(apiPort),
		"--endpoint-reconciler-type", "none",
		"--tls-cert-file", filepath.Join(e.Dir, "serving.crt"),
		"--tls-private-key-file", filepath.Join(e.Dir, "serving.key"),
		"--service-account-issuer", "https://kubernetes.default.svc",
		"--service-account-key-file", filepath.Join(e.Dir, "sa.key"),
		"--service-account-signing-key-file", filepath.Join(e.Dir, "sa.key"),
		"--service-cluster-ip-range", "10.0.0.0/24",
		"--authorization-mode", "RBAC",
		"--token-auth-file", filepath.Join(e.Dir, "tokens.csv"),
		"--allow-privileged=true",
		"--cert-dir", filepath.Join(e.Dir, "certs"),
		"--egress-selector-config-file", egressFile,
	)
	if err != nil {
		return fmt.Errorf("start kube-apiserver: %w", err)
	}
	e.URL = "https://127.0.0.1:" + strconv.Itoa(apiPort)
	mk := func(token string) *rest.Config {
		return &rest.Config{Host: e.URL, BearerToken: token, TLSClientConfig: rest.TLSClientConfig{CAData: caPEM}, QPS: 200, Burst: 400}
	}
	e.Admin, e.Restricted = mk(adminToken), mk(restrictedToken)
	if e.AdminKubeconfig, err = e.writeKubeconfig("admin", adminToken, caPEM); err != nil {
		return err
	}
	if e.RestrictedKubeconfig, err = e.writeKubeconfig("restricted", restrictedToken, caPEM); err != nil {
		return err
	}
	return e.waitReady(ctx, caPEM, adminToken)
}

func (e *Env) writeKubeconfig(name, token string, ca []byte) (string, error) {
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["kubeenv"] = &clientcmdapi.Cluster{Server: e.URL, CertificateAuthorityData: ca}
	cfg.AuthInfos[name] = &clientcmdapi.AuthInfo{Token: token}
	cfg.Contexts[name] = &clientcmdapi.Context{Cluster: "kubeenv", AuthInfo: name}
	cfg.CurrentContext = name
	path := filepath.Join(e.Dir, name+".kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		return "", fmt.Errorf("write kubeconfig: %w", err)
	}
	return path, nil
}

const (
	readyTimeout = 90 * time.Second
	// stopTimeout is how long a process group gets to exit after SIGTERM
	// before it is killed.
	stopTimeout = 5 * time.Second
	// outputTail is how much of a process's output an error keeps.
	outputTail = 4 << 10
)

func (e *Env) waitReady(ctx context.Context, ca []byte, token string) error {
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(ca)
	client := &http.Client{Timeout: 3 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	defer client.CloseIdleConnections()
	deadline := time.Now().Add(readyTimeout)
	var last string
	for time.Now().Before(deadline) {
		for _, c := range []struct {
			name string
			p    *child.Process
		}{{"etcd", e.etcd}, {"kube-apiserver", e.apiserver}} {
			if c.p.Exited() {
				err := fmt.Errorf("%s exited: %v: %s", c.name, c.p.Wait(), c.p.Tail(outputTail))
				// Their words for it (Go's net package's, in both).
				if strings.Contains(c.p.Output(), "address already in use") {
					err = fmt.Errorf("%w: %w", errPortTaken, err)
				}
				return err
			}
		}
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, e.URL+"/readyz", nil)
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := client.Do(req)
		if err == nil {
			var b bytes.Buffer
			_, _ = b.ReadFrom(resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
			last = resp.Status
		} else {
			last = err.Error()
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
	return fmt.Errorf("kube-apiserver not ready after %s (%s): %s", readyTimeout, last, e.apiserver.Tail(outputTail))
}

// Stop kills both processes (their whole process groups) and removes Dir.
// It is safe to call more than once and on a half-started Env.
func (e *Env) Stop() {
	e.stopOnce.Do(func() {
		for _, p := range []*child.Process{e.apiserver, e.etcd} {
			if p != nil {
				p.Stop(stopTimeout)
			}
		}
		if e.egress != nil {
			e.egress.Close()
		}
		_ = os.RemoveAll(e.Dir)
		if e.reaper != nil {
			e.reaper.Close() // nothing left for it to remove: it exits
		}
	})
}

// reaperScript waits for the end of its standard input, then removes the
// folder $1, trying again for a few seconds while the processes that
// wrote in it (killed at the same moment) may still be going.
const reaperScript = `cat >/dev/null
for i in 1 2 3 4 5 6 7 8 9 10; do
  rm -rf -- "$1" 2>/dev/null
  [ -e "$1" ] || exit 0
  sleep 1
done
exit 1`

// startReaper starts a process that removes dir once this process is
// gone, however it went. Stop removes dir itself, but a test binary that
// panics (go test -timeout's panic among them) or is killed never gets
// to TestMain's StopShared: its etcd and kube-apiserver die with it
// (their parent-death signal), and their folder stayed in TMPDIR. The
// reaper is a shell reading a pipe whose one writer this process holds
// (the returned file): when this process ends, however it ends, the
// kernel closes it and the shell, at the end of its input, removes dir.
// It runs in its own process group, so that what kills the test binary
// and its group (a terminal's Ctrl-C) leaves it to do its work, and with
// no output, so that go test does not wait for it.
func startReaper(dir string) (*os.File, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("start kubeenv reaper: %w", err)
	}
	defer r.Close()
	cmd := exec.Command("/bin/sh", "-c", reaperScript, "kubeenv-reaper", dir)
	cmd.Stdin = r
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		w.Close()
		return nil, fmt.Errorf("start kubeenv reaper: %w", err)
	}
	go func() { _ = cmd.Wait() }() // reaped once it is done, if this process still runs
	return w, nil
}

// PIDs are the process ids of etcd and kube-apiserver (each its process
// group's leader), for tests of the cleanup.
func (e *Env) PIDs() []int {
	var out []int
	for _, p := range []*child.Process{e.etcd, e.apiserver} {
		if p != nil {
			out = append(out, p.Pid())
		}
	}
	return out
}

// Clientset is a typed client for cfg.
func Clientset(t testing.TB, cfg *rest.Config) *kubernetes.Clientset {
	t.Helper()
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

// FinalizeNamespaces plays the namespace controller's last step until ctx
// ends: a Namespace being deleted is finalized (its spec.finalizers
// emptied), so it goes away. It does not delete what the namespace holds;
// tests that care delete that themselves.
func (e *Env) FinalizeNamespaces(ctx context.Context) {
	cs, err := kubernetes.NewForConfig(e.Admin)
	if err != nil {
		return
	}
	go func() {
		for ctx.Err() == nil {
			list, err := cs.CoreV1().Namespaces().List(ctx, metav1.ListOptions{})
			if err == nil {
				for i := range list.Items {
					ns := &list.Items[i]
					if ns.DeletionTimestamp == nil || len(ns.Spec.Finalizers) == 0 {
						continue
					}
					ns.Spec.Finalizers = nil
					_, _ = cs.CoreV1().Namespaces().Finalize(ctx, ns, metav1.UpdateOptions{})
				}
			}
			select {
			case <-ctx.Done():
			case <-time.After(200 * time.Millisecond):
			}
		}
	}()
}

var shared struct {
	sync.Mutex
	env     *Env
	err     error
	started bool
	cancel  context.CancelFunc
}

// Shared returns the package's API server, starting it on first use, with
// FinalizeNamespaces running. A missing binary skips the test (fails it
// when CI is set); a server that does not start fails it.
func Shared(t testing.TB) *Env {
	t.Helper()
	shared.Lock()
	defer shared.Unlock()
	if !shared.started {
		shared.started = true
		ctx, cancel := context.WithCancel(context.Background())
		shared.cancel = cancel
		shared.env, shared.err = Start(ctx)
		if shared.err == nil {
			shared.env.FinalizeNamespaces(ctx)
		}
	}
	if errors.Is(shared.err, ErrMissingBinary) {
		if os.Getenv("CI") != "" {
			t.Fatal(shared.err)
		}
		t.Skip(shared.err)
	}
	if shared.err != nil {
		t.Fatalf("kubeenv: %v", shared.err)
	}
	return shared.env
}

// StopShared stops the server Shared started, if any. Call it from
// TestMain after m.Run.
func StopShared() {
	shared.Lock()
	defer shared.Unlock()
	if shared.cancel != nil {
		shared.cancel()
	}
	if shared.env != nil {
		shared.env.Stop()
	}
}

// startProcess starts bin in its own process group, so Stop kills
// whatever it started too, with a parent-death signal, which kills it if
// the test binary dies first.
func startProcess(bin string, args ...string) (*child.Process, error) {
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), "ETCD_UNSUPPORTED_ARCH=")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	cmd.WaitDelay = time.Second
	return child.Start(cmd)
}

func freePorts(n int) ([]int, error) {
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	var ports []int
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("find a free port: %w", err)
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

func randomToken() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return fmt.Sprintf("%x", b)
}

func writeSAKey(path string) error {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return fmt.Errorf("generate service-account key: %w", err)
	}
	return writePEM(path, "RSA PRIVATE KEY", x509.MarshalPKCS1PrivateKey(key))
}

// writeServingCerts writes a CA and a serving certificate for 127.0.0.1
// and returns the CA's PEM for the clients.
func writeServingCerts(dir string) ([]byte, error) {
	caKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return nil, fmt.Errorf("generate CA key: %w", err)
	}
	now := time.Now()
	caTmpl := &x509.Certificate{
		SerialNumber: serial(), Subject: pkix.Name{CommonName: "kubeenv-ca"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		return nil, fmt.Errorf("create CA certificate: %w", err)
	}
	ca, _ := x509.ParseCertificate(caDER)
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return nil, fmt.Errorf("generate serving key: %w", err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial(), Subject: pkix.Name{CommonName: "kube-apiserver"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour),
		KeyUsage:    x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")},
		DNSNames:    []string{"localhost", "kubernetes.default.svc"},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		return nil, fmt.Errorf("create serving certificate: %w", err)
	}
	if err := writePEM(filepath.Join(dir, "serving.crt"), "CERTIFICATE", der); err != nil {
		return nil, err
	}
	if err := writePEM(filepath.Join(dir, "serving.key"), "RSA PRIVATE KEY", x509.MarshalPKCS1PrivateKey(key)); err != nil {
		return nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}), nil
}

func serial() *big.Int {
	n, _ := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	return n
}

func writePEM(path, typ string, der []byte) error {
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
		return fmt.Errorf("write %s: %w", filepath.Base(path), err)
	}
	return nil
}
