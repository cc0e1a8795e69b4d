package main

import (
	"bytes"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"unsafe"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"golang.org/x/sys/unix"

	"github.com/addonpkg/addonpkg/pkg/apply"
)

// openPTY opens a pseudo-terminal pair: what a user's terminal looks like
// to the process.
func openPTY(t *testing.T) (master, slave *os.File) {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals here: %v", err)
	}
	var unlock int32
	if _, _, e := unix.Syscall(unix.SYS_IOCTL, m.Fd(), unix.TIOCSPTLCK, uintptr(unsafe.Pointer(&unlock))); e != 0 {
		t.Fatal(e)
	}
	n, err := unix.IoctlGetInt(int(m.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Fatal(err)
	}
	s, err := os.OpenFile("/dev/pts/"+strconv.Itoa(n), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	// A fresh pty is 0x0; a real terminal has a size.
	if err := unix.IoctlSetWinsize(int(s.Fd()), unix.TIOCSWINSZ, &unix.Winsize{Row: 24, Col: 100}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close(); m.Close() })
	return m, s
}

// Piped, nothing is drawn; on a terminal, a bar per blob is; --quiet
// turns it off.
func TestBlobBars(t *testing.T) {
	t.Setenv("TERM", "xterm")
	h := v1.Hash{Algorithm: "sha256", Hex: strings.Repeat("ab", 32)}

	piped := &app{stderr: &bytes.Buffer{}}
	if report, wait := piped.blobBars(); report != nil {
		wait()
		t.Error("progress drawn on a pipe")
	}
	master, slave := openPTY(t)
	quiet := &app{stderr: slave, quiet: true}
	if report, wait := quiet.blobBars(); report != nil {
		wait()
		t.Error("progress drawn with --quiet")
	}

	term := &app{stderr: slave}
	report, wait := term.blobBars()
	if report == nil {
		t.Fatal("no progress on a terminal")
	}
	// Drain the terminal the whole time: a full pty would block the bars.
	var mu sync.Mutex
	var seen bytes.Buffer
	go func() {
		buf := make([]byte, 4096)
		for {
			n, err := master.Read(buf)
			mu.Lock()
			seen.Write(buf[:n])
			mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	report(h, 512, 1024)
	deadline := time.Now().Add(5 * time.Second)
	var got string
	for time.Now().Before(deadline) {
		mu.Lock()
		got = seen.String()
		mu.Unlock()
		if strings.Contains(got, h.Hex[:12]) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	report(h, 1024, 1024)
	wait()
	if !strings.Contains(got, h.Hex[:12]) {
		t.Errorf("terminal output %q has no bar for the blob", got)
	}
}

// A terminal that cannot move its cursor (TERM=dumb: Emacs' shell, a
// CI log that claims a tty) gets no bars: their redraws are cursor
// escapes that it shows as text.
func TestBlobBarsNotOnDumbTerminal(t *testing.T) {
	t.Setenv("TERM", "dumb")
	_, slave := openPTY(t)
	dumb := &app{stderr: slave}
	if report, wait := dumb.blobBars(); report != nil {
		wait()
		t.Error("progress bars drawn with TERM=dumb")
	}
}

// An apply's stages are one line each on a terminal, counted by action,
// empty stages left out, the wait for its objects still being deleted
// (what an earlier prune without --wait deleted) among them; piped, only a wait that lasts (waitLog, which
// the command's end stops); --quiet, nothing.
func TestApplyProgressLines(t *testing.T) {
	if piped := (&app{stderr: &bytes.Buffer{}}); piped.progress(time.Minute) == nil || len(piped.waitLogs) != 1 {
		t.Error("no wait log on a pipe")
	}
	master, slave := openPTY(t)
	if (&app{stderr: slave, quiet: true}).progress(time.Minute) != nil {
		t.Error("apply progress with --quiet")
	}
	report := (&app{stderr: slave}).progress(time.Minute)
	if report == nil {
		t.Fatal("no apply progress on a terminal")
	}
	created := apply.Change{Object: "ConfigMap/default/a", Action: apply.Created}
	unchanged := apply.Change{Object: "ConfigMap/default/b", Action: apply.Unchanged}
	going := apply.Change{Object: "CustomResourceDefinition/widgets.example.com", Action: apply.Deleted, Reason: "being deleted"}
	report(apply.Stage{Addon: "dns", Name: "terminating", Changes: []apply.Change{going}})
	report(apply.Stage{Addon: "dns", Name: "gone", Changes: []apply.Change{going}})
	report(apply.Stage{Addon: "dns", Name: "definitions"})
	report(apply.Stage{Addon: "dns", Name: "resources", Changes: []apply.Change{created, unchanged, created}})
	report(apply.Stage{Addon: "dns", Name: "pruned"})
	report(apply.Stage{Addon: "dns", Name: "waiting", Changes: []apply.Change{created, unchanged, created}})
	report(apply.Stage{Addon: "dns", Name: "ready", Changes: []apply.Change{created}})
	report(apply.Stage{Addon: "dns", Name: "deleting", Changes: []apply.Change{created, created}})
	report(apply.Stage{Addon: "dns", Name: "gone", Changes: []apply.Change{created, created}})
	slave.Close()
	got, _ := io.ReadAll(master)
	want := "addonpkg: dns: 1 object of the add-on still being deleted, waiting up to 1m0s for them to be gone before applying them again\r\n" +
		"addonpkg: dns: 1 object gone\r\n" +
		"addonpkg: dns: resources: 2 created, 1 unchanged\r\n" +
		"addonpkg: dns: waiting up to 1m0s for 3 objects to be ready\r\n" +
		"addonpkg: dns: 1 object ready\r\n" +
		"addonpkg: dns: deleted 2 objects, waiting up to 1m0s for them to be gone\r\n" +
		"addonpkg: dns: 2 objects gone\r\n"
	if string(got) != want {
		t.Errorf("terminal shows %q, want %q", got, want)
	}
}
