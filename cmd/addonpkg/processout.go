package main

import (
	"bytes"
	"io"
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
// stderr, the process's standard error as it was.
func routeProcessOutput(stderr io.Writer) {
	if null, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0); err == nil {
		os.Stderr = null
	}
	log.SetFlags(0)
	log.SetPrefix("")
	log.SetOutput(logWarnings{stderr})
}

// logWarnings prints what is written to it as addonpkg: warning: lines.
// The standard logger writes one message at a time, under its lock.
type logWarnings struct{ w io.Writer }

func (l logWarnings) Write(p []byte) (int, error) {
	var b bytes.Buffer
	for line := range bytes.Lines(p) {
		if s := bytes.TrimSpace(line); len(s) > 0 {
			b.WriteString("addonpkg: warning: " + oneLine(string(s)) + "\n")
		}
	}
	if _, err := l.w.Write(b.Bytes()); err != nil {
		return 0, err
	}
	return len(p), nil
}
