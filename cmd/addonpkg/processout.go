package main

import (
	"bytes"
	"log"
	"os"
)

// The command owns the process, so it, not a library, chooses where the
// process's os.Stderr and standard logger go (pkg/render's package doc).
// kustomize, which render runs in memory, prints each deprecated field
// of a kustomization on os.Stderr when it loads it, and logs a few lines
// through the standard logger (vars never used, a git:: remote). render
// returns the deprecated fields as warnings, which the command prints
// its own way (addonpkg: warning:, one line, made printable): kustomize's
// own copy would say each twice, unsanitised, so os.Stderr points at
// the null device. The standard logger's lines are printed as warnings,
// one line each and made printable (an add-on names its own vars).
//
// routeProcessOutput does this once, from main, before the command runs
// any goroutine that could write; the command's own output goes to
// a.stderr, the process's standard error as it was, and the logger's
// lines are a's warnings (so --quiet silences them, as it does the
// render's own).
func routeProcessOutput(a *app) {
	if null, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0); err == nil {
		os.Stderr = null
	}
	log.SetFlags(0)
	log.SetPrefix("")
	log.SetOutput(logWarnings{a})
}

// logWarnings passes the standard logger's lines to the command's
// warnings, one each. The logger writes one message at a time, under its
// lock.
type logWarnings struct{ a *app }

func (l logWarnings) Write(p []byte) (int, error) {
	var lines []string
	for line := range bytes.Lines(p) {
		if s := bytes.TrimSpace(line); len(s) > 0 {
			lines = append(lines, string(s))
		}
	}
	l.a.warn(lines)
	return len(p), nil
}
