package archive

import (
	"archive/tar"
	"context"
	"fmt"
	"io"
	"strconv"
)

// HeaderError is a tar header that does not read: it names the entry
// before it, the last one that did, to say where the archive broke.
type HeaderError struct {
	// After is the name of the entry before ("" for the first).
	After string
	Err   error
}

func (e *HeaderError) Error() string {
	where := "the first tar entry"
	if e.After != "" {
		where = "the tar entry after " + strconv.Quote(e.After)
	}
	return fmt.Sprintf("read %s: %v", where, e.Err)
}

func (e *HeaderError) Unwrap() error { return e.Err }

// Entries calls fn for each entry of tr, in order, until the end of the
// archive, fn's first error, or ctx's end; it returns how many entries
// it read. A header that does not read is a *HeaderError. The caller
// sanitizes names before printing them (After is the archive's own).
func Entries(ctx context.Context, tr *tar.Reader, fn func(*tar.Header) error) (int, error) {
	n, last := 0, ""
	for {
		if err := ctx.Err(); err != nil {
			return n, err
		}
		hdr, err := tr.Next()
		if err == io.EOF {
			return n, nil
		}
		if err != nil {
			return n, &HeaderError{After: last, Err: err}
		}
		n++
		last = hdr.Name
		if err := fn(hdr); err != nil {
			return n, err
		}
	}
}
