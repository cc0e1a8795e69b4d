// Package errdef holds the sentinel errors that several packages return
// for one cause, so that a caller tests for the cause once, with
// errors.Is, whichever package it called: a tag or digest that is not
// there (in a registry, the local store, a layout), a blob that is not
// the one its descriptor names (a registry's, a layout's, an archive's,
// the unpacker's), and a request that kept failing through every retry.
//
// A sentinel of one package's own rule stays in that package
// (safetree.ErrLimit, source.ErrUnsupportedDestination, ...); no package
// re-exports another's under a second name.
package errdef

import "errors"

// ErrNotFound marks a repository, tag or digest that is not where it
// was looked for: a registry (registry.Error's Kind), the local store or
// a layout, or the place signatures are looked up.
var ErrNotFound = errors.New("not found")

// ErrDigestMismatch marks bytes that do not match the digest they were
// asked for or are described by: changed or cut short on the way. Every
// blob and manifest read by digest, from a registry, a layout or an
// archive, is checked as it is read. ErrSizeMismatch matches it too.
var ErrDigestMismatch = errors.New("digest mismatch")

// ErrSizeMismatch marks a blob that is shorter or longer than its
// descriptor says. A blob of the wrong size cannot match its digest
// either, so errors.Is(err, ErrDigestMismatch) holds for it too.
var ErrSizeMismatch error = sizeMismatch{}

type sizeMismatch struct{}

func (sizeMismatch) Error() string   { return "size mismatch" }
func (sizeMismatch) Is(t error) bool { return t == ErrDigestMismatch }

// ErrRetriesExhausted marks a failure that was already retried as often
// as the retry budget allows (a registry request, a blob read): nothing
// above should try it again.
var ErrRetriesExhausted = errors.New("kept failing")
