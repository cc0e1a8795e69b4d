package main

import (
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/addonpkg/addonpkg/pkg/apply"
)

// waitLog reports a wait where stderr is no terminal (a CI log, a pipe):
// nothing while the wait is shorter than its interval, so piped output
// of a quick apply stays quiet; then a line each interval, as kubectl
// rollout status prints a line as a rollout goes on, so that a log does
// not show nothing for minutes; and, when it spoke, a last line once the
// objects are ready. Whole lines only, never a carriage return.
type waitLog struct {
	w        io.Writer
	timeout  time.Duration
	interval time.Duration

	mu    sync.Mutex    // guards w's lines and spoke
	spoke bool          // the current wait printed a line
	stop  chan struct{} // closed to end the current wait's ticker
	done  chan struct{} // closed when that ticker has ended
	begun time.Time
}

// waitLogInterval is how often a wait of timeout says it still waits:
// every tenth of it, at least every 30 seconds and at most every second.
func waitLogInterval(timeout time.Duration) time.Duration {
	return min(max(timeout/10, time.Second), 30*time.Second)
}

func newWaitLog(w io.Writer, timeout time.Duration) *waitLog {
	return &waitLog{w: w, timeout: timeout, interval: waitLogInterval(timeout)}
}

// report is an apply.Options.Progress: "waiting", "deleting" and
// "terminating" start a wait, "ready" and "gone" end one saying so, any other stage ends one
// silently.
func (l *waitLog) report(st apply.Stage) {
	switch st.Name {
	case "waiting":
		l.start(st.Addon, objects(len(st.Changes))+" to be ready")
	case "deleting":
		l.start(st.Addon, objects(len(st.Changes))+" to be gone")
	case "terminating":
		l.start(st.Addon, objects(len(st.Changes))+" being deleted to be gone before applying them again")
	case "ready":
		if l.end() {
			l.line("addonpkg: %s: %s ready after %s", st.Addon, objects(len(st.Changes)), l.elapsed())
		}
	case "gone":
		if l.end() {
			l.line("addonpkg: %s: %s gone after %s", st.Addon, objects(len(st.Changes)), l.elapsed())
		}
	default:
		l.end()
	}
}

// start ends the wait under way, if any, and starts a ticker that says
// every interval that addon still waits for what.
func (l *waitLog) start(addon, what string) {
	l.end()
	l.mu.Lock()
	defer l.mu.Unlock()
	stop, done := make(chan struct{}), make(chan struct{})
	l.stop, l.done, l.spoke, l.begun = stop, done, false, time.Now()
	go func() {
		defer close(done)
		t := time.NewTicker(l.interval)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
				l.mu.Lock()
				fmt.Fprintf(l.w, "addonpkg: %s: still waiting for %s (%s of %s)\n", addon, what, l.elapsedLocked(), l.timeout)
				l.spoke = true
				l.mu.Unlock()
			}
		}
	}()
}

// end stops the wait under way, if any, and says whether it printed a
// line. Once it returns, the wait prints nothing more: the command's
// result and error come after it, never between its lines.
func (l *waitLog) end() bool {
	l.mu.Lock()
	stop, done := l.stop, l.done
	l.stop, l.done = nil, nil
	l.mu.Unlock()
	if stop == nil {
		return false
	}
	close(stop)
	<-done
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.spoke
}

func (l *waitLog) line(format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	fmt.Fprintf(l.w, format+"\n", args...)
}

func (l *waitLog) elapsed() time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.elapsedLocked()
}

// elapsedLocked is how long the current wait has lasted, in whole
// seconds (a log line is read by a person).
func (l *waitLog) elapsedLocked() time.Duration {
	return time.Since(l.begun).Round(time.Second)
}
