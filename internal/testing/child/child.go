// Package child supervises a server that a test helper runs as a child
// process: it starts an *exec.Cmd the caller has configured (arguments,
// environment, SysProcAttr, WaitDelay), keeps the combined output for
// failure messages, reports when the process exits and with what Wait
// error, and stops it politely, then forcibly, and waits for it.
//
// The policy stays with the caller: which environment the child sees,
// whether it gets its own process group or a parent-death signal, how
// readiness is polled, how long it may take to stop, and whether a start
// that failed is retried. kubeenv (etcd, kube-apiserver) and testregistry
// (CNCF Distribution) use it.
package child

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"syscall"
	"time"
)

// MaxOutput bounds the output a Process keeps: when it grows past this,
// the oldest half is dropped, so a chatty server cannot exhaust memory in
// a long test while its newest (and most telling) lines stay.
const MaxOutput = 1 << 20

// Process is a started child. Its methods are safe for concurrent use.
type Process struct {
	cmd  *exec.Cmd
	out  buffer
	done chan struct{} // closed when Wait has returned
	err  error         // Wait's error, set before done is closed
	stop sync.Once
}

// Start starts cmd with its standard output and error both going to the
// Process's buffer, and waits for it in a goroutine. cmd's Stdout and
// Stderr must be unset.
func Start(cmd *exec.Cmd) (*Process, error) {
	if cmd.Stdout != nil || cmd.Stderr != nil {
		return nil, errors.New("start child: Stdout or Stderr already set")
	}
	p := &Process{cmd: cmd, done: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = &p.out, &p.out
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	go func() {
		p.err = cmd.Wait()
		close(p.done)
	}()
	return p, nil
}

// Pid is the process's id (its group's id too when the cmd set Setpgid).
func (p *Process) Pid() int { return p.cmd.Process.Pid }

// Done is closed once the process has exited and Wait has returned.
func (p *Process) Done() <-chan struct{} { return p.done }

// Exited reports whether Done is closed.
func (p *Process) Exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// Wait blocks until the process has exited and returns exec.Cmd.Wait's
// error (nil for a zero exit status).
func (p *Process) Wait() error {
	<-p.done
	return p.err
}

// Output is all the output kept so far (at most MaxOutput bytes, the
// newest).
func (p *Process) Output() string { return p.out.String() }

// Tail is at most the last n bytes of the output, after "..." when some
// were left out.
func (p *Process) Tail(n int) string {
	s := p.out.String()
	if len(s) > n {
		s = "..." + s[len(s)-n:]
	}
	return s
}

// Stop sends SIGTERM and, if the process has not exited after grace,
// SIGKILL, then waits for it. The signals go to the whole process group
// when the cmd set SysProcAttr.Setpgid (so whatever the child started
// goes too), else to the process alone. A process that has already
// exited is left alone. Stop is safe to call more than once: the later
// calls return at once, after the first has finished.
func (p *Process) Stop(grace time.Duration) {
	p.stop.Do(func() {
		if p.Exited() {
			return
		}
		if err := p.signal(syscall.SIGTERM); err != nil {
			// Already gone, or SIGTERM refused: killing covers both.
			_ = p.signal(syscall.SIGKILL)
		}
		t := time.NewTimer(grace)
		defer t.Stop()
		select {
		case <-p.done:
		case <-t.C:
			_ = p.signal(syscall.SIGKILL)
			<-p.done
		}
	})
}

func (p *Process) signal(sig syscall.Signal) error {
	if a := p.cmd.SysProcAttr; a != nil && a.Setpgid {
		return syscall.Kill(-p.cmd.Process.Pid, sig)
	}
	return p.cmd.Process.Signal(sig)
}

// Running reports whether the process pid runs, reading Linux's
// /proc/PID/stat: a zombie (exited, not yet reaped) counts as gone. It is
// for tests that check nothing outlived a Stop.
func Running(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	// The state follows the command name, which is in parentheses and
	// may hold spaces.
	i := bytes.LastIndexByte(b, ')')
	return i >= 0 && i+2 < len(b) && b[i+2] != 'Z'
}

// buffer is the output, written by exec.Cmd's copying goroutines while
// the helper reads it.
type buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	n, _ := b.b.Write(p)
	if b.b.Len() > MaxOutput {
		b.b.Next(b.b.Len() - MaxOutput/2)
	}
	return n, nil
}

func (b *buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}
