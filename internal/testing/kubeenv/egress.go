package kubeenv

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// The API server calls out to the cluster itself: admission and
// conversion webhooks, aggregated APIs (an APIService's backend and its
// availability check). A Service's ClusterIP is routed nowhere here, so
// such a call would leave the machine by its default route, and a test
// that installs an add-on with webhooks would talk to whatever answers
// there. Its egress selector (the "cluster" kind of traffic, through an
// HTTP CONNECT proxy on a Unix socket) sends every such call through
// egressProxy, which connects only to loopback addresses (an
// ExternalName Service for "localhost", ServeAggregatedAPI) and refuses
// every other destination at once.

// egressConfig is the API server's EgressSelectorConfiguration for a
// proxy on socket.
func egressConfig(socket string) string {
	return fmt.Sprintf(`apiVersion: apiserver.k8s.io/v1beta1
kind: EgressSelectorConfiguration
egressSelections:
- name: cluster
  connection:
    proxyProtocol: HTTPConnect
    transport:
      uds:
        udsName: %s
`, socket)
}

// egressProxy serves HTTP CONNECT on the Unix socket path, to loopback
// destinations only, until Close.
type egressProxy struct {
	ln   net.Listener
	wg   sync.WaitGroup
	mu   sync.Mutex
	live map[net.Conn]bool
	// closed: Close has swept live; what is tracked after is closed at
	// once (a connection Accept returned as the listener closed, an
	// upstream a relay dialled meanwhile), or Close waited on it.
	closed bool
}

func startEgressProxy(path string) (*egressProxy, error) {
	ln, err := net.Listen("unix", path)
	if err != nil {
		return nil, fmt.Errorf("egress proxy: %w", err)
	}
	p := &egressProxy{ln: ln, live: map[net.Conn]bool{}}
	p.wg.Add(1)
	go p.serve()
	return p, nil
}

func (p *egressProxy) serve() {
	defer p.wg.Done()
	var delay time.Duration
	for {
		c, err := p.ln.Accept()
		if errors.Is(err, net.ErrClosed) {
			return
		}
		if err != nil {
			// Out of descriptors or a connection aborted before it was
			// accepted: the API server's next dial can still be served,
			// so back off and go on as net/http's Serve does, rather than
			// leave every later webhook call to fail for the rest of the
			// test.
			delay = min(max(2*delay, 5*time.Millisecond), time.Second)
			time.Sleep(delay)
			continue
		}
		delay = 0
		p.track(c, true)
		p.wg.Add(1)
		go func() {
			defer p.wg.Done()
			defer p.track(c, false)
			p.handle(c)
		}()
	}
}

func (p *egressProxy) track(c net.Conn, add bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if add && p.closed {
		c.Close()
		return
	}
	if add {
		p.live[c] = true
		return
	}
	delete(p.live, c)
	c.Close()
}

// handle answers one CONNECT: 200 and a relay to a loopback address, or
// 403 naming the refused destination.
func (p *egressProxy) handle(c net.Conn) {
	br := bufio.NewReader(c)
	req, err := http.ReadRequest(br)
	if err != nil {
		return
	}
	dest := req.Host
	if req.Method != http.MethodConnect || !loopback(dest) {
		fmt.Fprintf(c, "HTTP/1.1 403 Forbidden\r\nContent-Type: text/plain\r\n\r\nkubeenv: the test cluster reaches only 127.0.0.1, not %s\n", dest)
		return
	}
	host, port, _ := net.SplitHostPort(dest)
	if host == "localhost" {
		host = "127.0.0.1"
	}
	up, err := net.Dial("tcp", net.JoinHostPort(host, port))
	if err != nil {
		fmt.Fprintf(c, "HTTP/1.1 502 Bad Gateway\r\n\r\n")
		return
	}
	p.track(up, true)
	defer p.track(up, false)
	if _, err := io.WriteString(c, "HTTP/1.1 200 Connection established\r\n\r\n"); err != nil {
		return
	}
	// Either side closing ends both: the other copy's read then fails.
	done := make(chan struct{})
	go func() {
		_, _ = io.Copy(up, br) // what the reader already buffered, then the rest
		up.Close()
		close(done)
	}()
	_, _ = io.Copy(c, up)
	c.Close()
	<-done
}

// loopback says whether host:port names this machine's loopback.
func loopback(hostport string) bool {
	host, _, err := net.SplitHostPort(hostport)
	if err != nil {
		return false
	}
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// Close stops accepting, closes every connection and waits for the
// relays to end.
func (p *egressProxy) Close() {
	p.ln.Close()
	p.mu.Lock()
	p.closed = true
	for c := range p.live {
		c.Close()
	}
	p.mu.Unlock()
	p.wg.Wait()
	_ = os.Remove(p.ln.Addr().String())
}

// egressSocket is where the proxy listens: a short path, as a Unix
// socket's must be (108 bytes), beside the Env's files.
func egressSocket(dir string) string { return filepath.Join(dir, "egress.sock") }
