package main

import (
	"io"
	"log"
	"os"
)

// The command owns the process, so it, not a library, chooses where the
// process's os.Stderr and standard logger go (pkg/render's package doc).
// kustomize, which render runs in memory, prints each deprecated field
// of a kustomization on os.Stderr when it loads it, and logs a few lines
// through the standard logger (vars never replaced, among others). render
// works out those conditions itself and returns them as warnings, which
// the command prints its own way (addonpkg: warning:, one line, made
// printable): kustomize's own copies would say each twice, unsanitised,
// so os.Stderr points at the null device and the standard logger at
// nothing. What the logger alone would have said is kustomize's to say
// in corner cases render does not work out (render.Result.Warnings).
//
// routeProcessOutput does this once, from main, after newRoot has taken
// the process's standard error as it was for the command's own output,
// and before the command runs any goroutine that could write.
func routeProcessOutput() {
	if null, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0); err == nil {
		processStderr, os.Stderr = os.Stderr, null
	}
	log.SetOutput(io.Discard)
}

// processStderr is the process's standard error, where os.Stderr
// pointed before routeProcessOutput pointed it at the null device; nil
// until then (and in tests that run the command in process).
var processStderr *os.File

// withProcessStderr runs f with os.Stderr the process's standard error
// again. client-go hands a kubeconfig's credential plugin (kubelogin,
// aws eks get-token, gke-gcloud-auth-plugin) os.Stderr as it is when the
// client is made, for the plugin's prompts ("open this URL to log in")
// and its reasons for failing: without them the user reads only "exec:
// executable aws failed with exit code 255". A command connects after
// its render has returned, never during one, so kustomize, whose lines
// the null device is for, is not writing meanwhile; and f runs on the
// command's goroutine, where nothing else reads os.Stderr.
func withProcessStderr(f func()) {
	if processStderr == nil {
		f()
		return
	}
	null := os.Stderr
	os.Stderr = processStderr
	defer func() { os.Stderr = null }()
	f()
}
