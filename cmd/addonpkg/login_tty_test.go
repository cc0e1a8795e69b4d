package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/addonpkg/addonpkg/internal/testing/testregistry"
)

// On a terminal, login asks for the user name and then the password,
// which the terminal does not echo; without a terminal and without
// --password-stdin it says how to pass the password.
func TestLoginPromptsOnATerminal(t *testing.T) {
	termHome(t)
	reg := testregistry.Start(t, testregistry.Options{Mode: testregistry.BasicAuth})
	master, slave := openPTY(t)

	// Everything the terminal shows (its echo) is collected until the
	// slave side is closed.
	shown := make(chan string, 1)
	go func() {
		var b bytes.Buffer
		_, _ = io.Copy(&b, master) // ends with EIO once the slave is closed
		shown <- b.String()
	}()

	var stdout, stderr bytes.Buffer
	root, a := newRoot(slave, &stdout, &stderr)
	done := make(chan int, 1)
	go func() { done <- execute(context.Background(), root, a, []string{"login", reg.Host}) }()

	if _, err := io.WriteString(master, reg.Username+"\n"); err != nil {
		t.Fatal(err)
	}
	// Type the password only once echo is off, as a person would after
	// the prompt (typed earlier, the terminal would echo it itself).
	for {
		tio, err := unix.IoctlGetTermios(int(slave.Fd()), unix.TCGETS)
		if err != nil {
			t.Fatal(err)
		}
		if tio.Lflag&unix.ECHO == 0 {
			break
		}
		select {
		case code := <-done:
			t.Fatalf("login ended (exit %d) before asking for the password: %s", code, stderr.String())
		default:
			runtime.Gosched()
		}
	}
	if _, err := io.WriteString(master, reg.Password+"\n"); err != nil {
		t.Fatal(err)
	}
	code := <-done
	slave.Close()
	echo := <-shown

	if code != 0 {
		t.Fatalf("login: exit %d, stderr %q", code, stderr.String())
	}
	if want := "Username: Password: \nlogin succeeded: " + reg.Host + "\n"; stderr.String() != want {
		t.Errorf("stderr %q, want %q", stderr.String(), want)
	}
	if !strings.Contains(echo, reg.Username) {
		t.Errorf("the user name was not echoed: %q", echo)
	}
	if strings.Contains(echo, reg.Password) || strings.Contains(stderr.String()+stdout.String(), reg.Password) {
		t.Errorf("the password was shown: terminal %q, stderr %q", echo, stderr.String())
	}
	cfg, err := os.ReadFile(filepath.Join(os.Getenv("DOCKER_CONFIG"), "config.json"))
	if err != nil || !strings.Contains(string(cfg), reg.Host) {
		t.Errorf("credentials not saved: %s %v", cfg, err)
	}

	// No terminal, no --password-stdin: told what to do, nothing saved.
	r := termRun(t, context.Background(), "", nil, "login", "127.0.0.1:1", "-u", "x")
	if r.code != 1 || r.stderr != "addonpkg: no terminal to ask for the password: pass it with --password-stdin (and -u USER), never on the command line\n" {
		t.Errorf("login without a terminal: %+v", r)
	}
}
