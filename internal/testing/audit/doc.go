// Package audit holds checks over the project's own source: a test here
// fails when code under pkg/ or internal/ reads untrusted input without a
// cap (spec/SECURITY.md, "sizes are never trusted for allocation").
package audit
