package main

import "io"

// stdoutWriter is stdout remembering its first failed write: a command
// that printed its result with fmt.Fprintln and ignored the error (a
// digest, a tag list) still exits non-zero when the result was lost, as
// on a full disk (addonpkg ls REPO > tags.txt). A broken pipe ends the
// process by SIGPIPE before it gets here.
type stdoutWriter struct {
	w   io.Writer
	err error
}

func (s *stdoutWriter) Write(p []byte) (int, error) {
	if s.err != nil {
		return 0, s.err
	}
	n, err := s.w.Write(p)
	if err != nil {
		s.err = err
	}
	return n, err
}
