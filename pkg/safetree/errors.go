package safetree

import (
	"errors"
	"fmt"
)

// ErrUnsafe matches every refusal of an entry (errors.Is), whatever its
// class.
var ErrUnsafe = errors.New("unsafe entry")

// The classes of refusal. Each matches ErrUnsafe too.
var (
	// ErrPathEscape: an absolute name, a ".." component or a NUL byte.
	ErrPathEscape error = class("path leaves the tree")
	// ErrLinkEscape: a symbolic or hard link whose target is absolute,
	// empty, or resolves outside the tree (through other links too), or
	// a chain of links that does not end.
	ErrLinkEscape error = class("link leaves the tree")
	// ErrLinkLoop: a symbolic link to a folder that holds it (CheckLink).
	ErrLinkLoop error = class("link to a folder that holds it")
	// ErrUnsupportedType: a device, FIFO, socket or unknown entry type.
	ErrUnsupportedType error = class("unsupported entry type")
	// ErrCaseCollision: two names of one directory that a case-folding or
	// normalizing file system would merge.
	ErrCaseCollision error = class("names collide when case is folded")
	// ErrBadName: a path component longer than file systems hold
	// (MaxNameBytes).
	ErrBadName error = class("name no file system can hold")
)

type class string

func (c class) Error() string        { return string(c) }
func (c class) Is(target error) bool { return target == ErrUnsafe }

// Error is a refused entry: its name (as the input gave it), why, and
// the class (Err).
type Error struct {
	Entry  string
	Reason string
	Err    error
}

func (e *Error) Error() string {
	return fmt.Sprintf("entry %q: %s", Sanitize(e.Entry), Sanitize(e.Reason))
}

func (e *Error) Unwrap() error { return e.Err }

func refuse(entry string, class error, format string, args ...any) *Error {
	return &Error{Entry: entry, Reason: fmt.Sprintf(format, args...), Err: class}
}

// ErrLimit matches every *LimitError.
var ErrLimit = errors.New("limit exceeded")

// LimitError says which limit a tree crossed.
type LimitError struct {
	// Name says what was counted: "file size", "add-on size", ...
	Name string
	// Limit is the bound that was crossed.
	Limit int64
	// Which identifies the limit (a field of Limits, or
	// LimitDownloadBytes); empty only for a bound that is not a size
	// (the entries of a docker-archive).
	Which LimitID
	// Entry is the entry that crossed it, if any (sanitized when printed).
	Entry string
	// Size is the size that crossed it, when one is known (a
	// descriptor's claim, a Content-Length, bytes in memory); 0 when the
	// bytes only ran over.
	Size int64
}

func (e *LimitError) Error() string {
	s := fmt.Sprintf("%s limit of %d exceeded", e.Name, e.Limit)
	if e.Size > 0 {
		s += fmt.Sprintf(" (%d bytes)", e.Size)
	}
	if e.Entry != "" {
		s = fmt.Sprintf("%s: %s", Sanitize(e.Entry), s)
	}
	return s
}

func (e *LimitError) Unwrap() error { return ErrLimit }
