package main

import (
	"bytes"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/addonpkg/addonpkg/pkg/apply"
)

// A wait where stderr is no terminal (a CI log) says nothing when it is
// short, a line each interval when it lasts, and that the objects are
// ready when it spoke; a wait that ends otherwise (a timeout, a failure)
// stops at once. Whole lines, no carriage return. It printed nothing at
// all, however long the wait.
func TestWaitLogInALog(t *testing.T) {
	changes := []apply.Change{{Object: "Deployment/ns/a"}, {Object: "Deployment/ns/b"}}
	newLog := func() (*waitLog, *bytes.Buffer) {
		var b bytes.Buffer
		l := newWaitLog(&b, 5*time.Minute)
		l.interval = 20 * time.Millisecond
		return l, &b
	}

	t.Run("short", func(t *testing.T) {
		l, b := newLog()
		l.report(apply.Stage{Addon: "web", Name: "waiting", Changes: changes})
		l.report(apply.Stage{Addon: "web", Name: "ready", Changes: changes})
		if b.Len() != 0 {
			t.Errorf("a short wait printed %q", b.String())
		}
	})

	t.Run("long", func(t *testing.T) {
		l, b := newLog()
		l.report(apply.Stage{Addon: "web", Name: "resources", Changes: changes})
		l.report(apply.Stage{Addon: "web", Name: "waiting", Changes: changes})
		time.Sleep(5 * l.interval)
		l.report(apply.Stage{Addon: "web", Name: "ready", Changes: changes})
		lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
		still := regexp.MustCompile(`^addonpkg: web: still waiting for 2 objects to be ready \(\d+s of 5m0s\)$`)
		if len(lines) < 3 || !regexp.MustCompile(`^addonpkg: web: 2 objects ready after \d+s$`).MatchString(lines[len(lines)-1]) {
			t.Fatalf("a long wait printed %q; want lines while it waited, then one saying it is over", b.String())
		}
		for _, line := range lines[:len(lines)-1] {
			if !still.MatchString(line) {
				t.Errorf("line %q, want %s", line, still)
			}
		}
		if strings.Contains(b.String(), "\r") {
			t.Errorf("a carriage return in a log: %q", b.String())
		}
	})

	// An uninstall's wait says when its objects are gone: the next
	// add-on's work (or nothing) came after it, and its ticker went on
	// saying "still waiting" for objects long gone.
	t.Run("gone", func(t *testing.T) {
		l, b := newLog()
		l.report(apply.Stage{Addon: "web", Name: "deleting", Changes: changes})
		time.Sleep(3 * l.interval)
		l.report(apply.Stage{Addon: "web", Name: "gone", Changes: changes})
		lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
		if !regexp.MustCompile(`^addonpkg: web: 2 objects gone after \d+s$`).MatchString(lines[len(lines)-1]) {
			t.Fatalf("a deletion's wait printed %q; want a last line saying they are gone", b.String())
		}
		n := b.Len()
		time.Sleep(3 * l.interval)
		if b.Len() != n {
			t.Errorf("a wait over printed on: %q", b.String())
		}
	})

	// An apply's wait for its own objects still being deleted, before
	// its first change, says what it waits for: a log showed nothing
	// until the apply went on or timed out.
	t.Run("terminating", func(t *testing.T) {
		l, b := newLog()
		l.report(apply.Stage{Addon: "web", Name: "terminating", Changes: changes})
		time.Sleep(3 * l.interval)
		l.report(apply.Stage{Addon: "web", Name: "gone", Changes: changes})
		lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
		still := regexp.MustCompile(`^addonpkg: web: still waiting for 2 objects being deleted to be gone before applying them again \(\d+s of 5m0s\)$`)
		if len(lines) < 2 || !still.MatchString(lines[0]) || !regexp.MustCompile(`^addonpkg: web: 2 objects gone after \d+s$`).MatchString(lines[len(lines)-1]) {
			t.Fatalf("a wait for objects being deleted printed %q; want lines saying so, then one saying they are gone", b.String())
		}
	})

	t.Run("ended", func(t *testing.T) {
		l, b := newLog()
		l.report(apply.Stage{Addon: "web", Name: "deleting", Changes: changes[:1]})
		time.Sleep(3 * l.interval)
		if !l.end() || !strings.HasPrefix(b.String(), "addonpkg: web: still waiting for 1 object to be gone (") {
			t.Fatalf("a deletion's wait printed %q", b.String())
		}
		n := b.Len()
		time.Sleep(3 * l.interval)
		if b.Len() != n || strings.Contains(b.String(), "ready") {
			t.Errorf("a wait ended printed on: %q", b.String())
		}
	})
}

// The interval: a tenth of the timeout, between 1 and 30 seconds.
func TestWaitLogInterval(t *testing.T) {
	for timeout, want := range map[time.Duration]time.Duration{
		2 * time.Second:  time.Second,
		time.Minute:      6 * time.Second,
		5 * time.Minute:  30 * time.Second,
		30 * time.Minute: 30 * time.Second,
	} {
		if got := waitLogInterval(timeout); got != want {
			t.Errorf("waitLogInterval(%s) = %s, want %s", timeout, got, want)
		}
	}
}
