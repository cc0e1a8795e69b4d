package child_test

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/addonpkg/addonpkg/internal/testing/child"
)

// start starts sh -c script, in its own process group when pgid is set,
// and stops it when the test ends.
func start(t *testing.T, script string, pgid bool) *child.Process {
	t.Helper()
	cmd := exec.Command("/bin/sh", "-c", script)
	if pgid {
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	}
	p, err := child.Start(cmd)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		p.Stop(time.Second)
		if pgid {
			_ = syscall.Kill(-p.Pid(), syscall.SIGKILL) // whatever a failed test left
		}
	})
	return p
}

// waitOutput waits until the output holds want.
func waitOutput(t *testing.T, p *child.Process, want string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(p.Output(), want) {
		if time.Now().After(deadline) || p.Exited() {
			t.Fatalf("output %q never held %q", p.Output(), want)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// gone waits a little for pid to go: an orphan is reaped by init, not us.
func gone(pid int) bool {
	deadline := time.Now().Add(5 * time.Second)
	for child.Running(pid) {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(20 * time.Millisecond)
	}
	return true
}

func TestStopProcess(t *testing.T) {
	p := start(t, "exec sleep 30", false)
	if p.Exited() || !child.Running(p.Pid()) {
		t.Fatal("not running after Start")
	}
	p.Stop(5 * time.Second)
	if !p.Exited() {
		t.Fatal("Stop returned before the process exited")
	}
	if child.Running(p.Pid()) {
		t.Errorf("process %d runs after Stop", p.Pid())
	}
	var ee *exec.ExitError
	if err := p.Wait(); !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGTERM {
		t.Errorf("Wait = %v, want killed by SIGTERM", err)
	}
	p.Stop(5 * time.Second) // a second Stop does nothing
}

// With Setpgid, Stop reaches what the child started: the shell's sleep,
// which would outlive a signal to the shell alone. (Its output goes
// elsewhere, so it does not hold the pipe that Wait waits for.)
func TestStopGroup(t *testing.T) {
	p := start(t, "sleep 30 >/dev/null 2>&1 & echo pid $!; wait", true)
	waitOutput(t, p, "\n")
	f := strings.Fields(p.Output())
	if len(f) != 2 || f[0] != "pid" {
		t.Fatalf("output %q", p.Output())
	}
	sleeper, err := strconv.Atoi(f[1])
	if err != nil {
		t.Fatal(err)
	}
	if !child.Running(sleeper) {
		t.Fatalf("sleep %d not running before Stop", sleeper)
	}
	began := time.Now()
	p.Stop(5 * time.Second)
	if took := time.Since(began); took > 4*time.Second {
		t.Errorf("Stop took %s: SIGTERM did not end the shell", took)
	}
	if child.Running(p.Pid()) {
		t.Errorf("shell %d runs after Stop", p.Pid())
	}
	if !gone(sleeper) {
		t.Errorf("sleep %d, the shell's child, runs after Stop", sleeper)
	}
}

// A child that ignores SIGTERM is killed once grace has passed.
func TestStopForcibly(t *testing.T) {
	p := start(t, "trap '' TERM; echo ready; sleep 30", true)
	waitOutput(t, p, "ready")
	const grace = 300 * time.Millisecond
	began := time.Now()
	p.Stop(grace)
	if took := time.Since(began); took < grace {
		t.Errorf("Stop took %s, less than its grace %s: SIGTERM was not ignored?", took, grace)
	}
	var ee *exec.ExitError
	if err := p.Wait(); !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Errorf("Wait = %v, want killed by SIGKILL", err)
	}
	if child.Running(p.Pid()) {
		t.Errorf("process %d runs after Stop", p.Pid())
	}
}

func TestExit(t *testing.T) {
	p := start(t, "echo out; echo err >&2; exit 3", false)
	select {
	case <-p.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("Done not closed after the process exited")
	}
	if !p.Exited() {
		t.Error("Exited is false after Done")
	}
	var ee *exec.ExitError
	if err := p.Wait(); !errors.As(err, &ee) || ee.ExitCode() != 3 {
		t.Errorf("Wait = %v, want exit status 3", err)
	}
	if got := p.Output(); got != "out\nerr\n" {
		t.Errorf("Output = %q, want both streams", got)
	}
	p.Stop(time.Minute) // returns at once: nothing to stop
}

func TestTail(t *testing.T) {
	p := start(t, "printf 0123456789", false)
	if err := p.Wait(); err != nil {
		t.Fatal(err)
	}
	for n, want := range map[int]string{4: "...6789", 10: "0123456789", 100: "0123456789"} {
		if got := p.Tail(n); got != want {
			t.Errorf("Tail(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestOutputBounded(t *testing.T) {
	p := start(t, fmt.Sprintf("head -c %d /dev/zero; echo END", 3*child.MaxOutput), false)
	if err := p.Wait(); err != nil {
		t.Fatal(err)
	}
	out := p.Output()
	if len(out) > child.MaxOutput || !strings.HasSuffix(out, "END\n") {
		t.Errorf("kept %d bytes ending %q, want at most %d ending with the newest", len(out), p.Tail(8), child.MaxOutput)
	}
}

func TestStartRefusesOutput(t *testing.T) {
	cmd := exec.Command("/bin/true")
	cmd.Stdout = os.Stdout
	if _, err := child.Start(cmd); err == nil {
		t.Error("Start took a cmd whose Stdout was set")
	}
	if cmd.Process != nil {
		t.Error("Start started it anyway")
	}
}
