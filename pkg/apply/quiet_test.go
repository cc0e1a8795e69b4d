package apply_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
	_ "unsafe" // go:linkname, for controllerRuntimeLogCreated

	"k8s.io/client-go/rest"
	_ "sigs.k8s.io/controller-runtime/pkg/log" // controllerRuntimeLogCreated

	"github.com/addonpkg/addonpkg/pkg/apply"
)

const (
	// quietHelperEnv runs the test binary as runQuietHelper, against the
	// API server at its URL.
	quietHelperEnv = "APPLY_TEST_QUIET_HELPER"
	// serverWarning is what the fake API server warns of.
	serverWarning = "policy/v1beta1 PodSecurityPolicy is deprecated"
)

// controllerRuntimeLogCreated is when controller-runtime's root logger was
// made (its package's init): the first time that logger is used at least
// 30 s later, it prints "log.SetLogger(...) was never called" to stderr,
// unless the program set one. The helper moves it back 31 s instead of
// sleeping them (a sleep held one of the two parallel slots of a 2-CPU
// run for 31 s); controller-runtime's own check then runs as it would
// in a program 31 s old.
//
//go:linkname controllerRuntimeLogCreated sigs.k8s.io/controller-runtime/pkg/log.rootLogCreated
var controllerRuntimeLogCreated time.Time

// runQuietHelper makes Clients and pings the API server, which answers
// with a warning: once without a Logger, once with one (whose records
// go to stdout), and once more when controller-runtime's logger would
// complain that nobody set it (30 s after it started, for
// controller-runtime). Its stderr must stay empty.
func runQuietHelper() int {
	ctx := context.Background()
	cfg := &rest.Config{Host: os.Getenv(quietHelperEnv)}
	ping := func(opts apply.ClientOptions) int {
		c, err := apply.New(cfg, opts)
		if err != nil {
			fmt.Fprintln(os.Stdout, "new:", err)
			return 2
		}
		if err := c.Ping(ctx); err != nil {
			fmt.Fprintln(os.Stdout, "ping:", err)
			return 2
		}
		return 0
	}
	if code := ping(apply.ClientOptions{}); code != 0 {
		return code
	}
	log := slog.New(slog.NewTextHandler(os.Stdout, nil))
	if code := ping(apply.ClientOptions{Logger: log}); code != 0 {
		return code
	}
	if controllerRuntimeLogCreated.IsZero() {
		fmt.Fprintln(os.Stdout, "controller-runtime's rootLogCreated is not set: is it still the time its logger was made?")
		return 2
	}
	controllerRuntimeLogCreated = controllerRuntimeLogCreated.Add(-31 * time.Second)
	return ping(apply.ClientOptions{})
}

// A library prints nothing: the API server's warnings go to
// ClientOptions.Logger (or nowhere), not to stderr through client-go's
// klog, and a Client made 30 s after the program started does not make
// controller-runtime print that its logger was never set. Run in a
// process of its own, whose stderr is all it printed.
func TestClientPrintsNothing(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Warning", `299 - "`+serverWarning+`"`)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"major":"1","minor":"37","gitVersion":"v1.37.2"}`))
	}))
	defer srv.Close()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), quietHelperEnv+"="+srv.URL)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("helper: %v\n%s%s", err, stdout.String(), stderr.String())
	}
	if stderr.Len() > 0 {
		t.Errorf("the client printed to stderr:\n%s", stderr.String())
	}
	if n := strings.Count(stdout.String(), "level=WARN msg=\"API server warning: "+serverWarning+"\" warning=\""+serverWarning+"\""); n != 1 {
		t.Errorf("the Logger got the warning %d times, want once (the other clients have none):\n%s", n, stdout.String())
	}
}
