package addonset

import (
	"errors"
	"fmt"
	"strings"
)

// Sentinel errors, checked with errors.Is.
var (
	// ErrInvalid marks a declaration or lock file that does not parse or
	// breaks a rule of the format. The more precise sentinels below wrap
	// into it as well.
	ErrInvalid = errors.New("invalid add-on set")
	// ErrNotASet marks a file whose document is some other kind of
	// object (a Deployment, a Kustomization): no declaration at all,
	// where a kubectl user gave -f a manifest. It wraps into ErrInvalid.
	ErrNotASet = errors.New("not an add-on set")
	// ErrUnknownField marks a field the format does not define.
	ErrUnknownField = errors.New("unknown field")
	// ErrDuplicateName marks two members with the same name.
	ErrDuplicateName = errors.New("duplicate name")
	// ErrUnknownDependency marks a dependsOn entry that names no member.
	ErrUnknownDependency = errors.New("unknown dependency")
	// ErrCycle marks members that depend on each other in a loop.
	ErrCycle = errors.New("dependency cycle")
	// ErrNoVersion marks a version range that no tag of the repository
	// matches.
	ErrNoVersion = errors.New("no tag matches the version range")
	// ErrLockStale marks a lock that does not pin the declaration as it
	// is: a member was added, removed or changed since the lock was made.
	ErrLockStale = errors.New("lock is stale")
	// ErrLockRedirected marks a lock entry that pins other content than
	// the declaration names: another place, or another digest, commit or
	// tag than the one declared (or a tag outside the declared range). It
	// also matches ErrLockStale: 'addonpkg lock' resolves the member again.
	ErrLockRedirected = errors.New("lock pins other content than the declaration names")
	// ErrLockMismatch marks a pinned source that no longer yields what the
	// lock recorded: a tag that moved, or different content.
	ErrLockMismatch = errors.New("content differs from the lock")
	// ErrUnknownMember marks a name (of an update, say) that is not a
	// member of the set.
	ErrUnknownMember = errors.New("unknown member")
)

// DeclError locates a problem in a declaration or lock file:
// "FILE:LINE: member NAME: problem". Err wraps one of the sentinels.
type DeclError struct {
	File   string
	Line   int
	Member string
	Err    error
}

func (e *DeclError) Error() string {
	var b strings.Builder
	if e.File != "" {
		b.WriteString(e.File)
		if e.Line > 0 {
			fmt.Fprintf(&b, ":%d", e.Line)
		}
		b.WriteString(": ")
	}
	if e.Member != "" {
		fmt.Fprintf(&b, "member %q: ", e.Member)
	}
	b.WriteString(e.Err.Error())
	return clean(b.String())
}

func (e *DeclError) Unwrap() []error { return []error{e.Err, ErrInvalid} }

// CycleError names the members of a dependency cycle, in order, the first
// repeated at the end: a -> b -> a.
type CycleError struct {
	Cycle []string
}

func (e *CycleError) Error() string {
	return ErrCycle.Error() + ": " + strings.Join(e.Cycle, " -> ")
}

func (e *CycleError) Unwrap() []error { return []error{ErrCycle, ErrInvalid} }

// StaleError says which member of the lock no longer matches the
// declaration, and why.
type StaleError struct {
	Member string
	Reason string
	// Redirected marks a lock entry that pins another place or content
	// than the declaration names (ErrLockRedirected).
	Redirected bool
}

func (e *StaleError) Error() string {
	return fmt.Sprintf("member %q: %s: %s (run 'addonpkg lock')", e.Member, ErrLockStale, e.Reason)
}

func (e *StaleError) Unwrap() []error {
	if e.Redirected {
		return []error{ErrLockStale, ErrLockRedirected}
	}
	return []error{ErrLockStale}
}

// MismatchError says that a member's pinned source yields something other
// than what the lock recorded. What is "digest" (a tag that now points
// elsewhere) or "identity" (different content).
type MismatchError struct {
	Member string
	Source string
	What   string
	Locked string
	Got    string
}

func (e *MismatchError) Error() string {
	return clean(fmt.Sprintf("member %q: %s: %s: %s %s, the lock has %s", e.Member, ErrLockMismatch, e.Source, e.What, e.Got, e.Locked))
}

func (e *MismatchError) Unwrap() error { return ErrLockMismatch }

// MemberError is the error of fetching or rendering one member.
type MemberError struct {
	Member string
	Err    error
}

func (e *MemberError) Error() string {
	// Errors that name the member themselves are not named twice.
	var me *MismatchError
	var se *StaleError
	if errors.As(e.Err, &me) && me.Member == e.Member || errors.As(e.Err, &se) && se.Member == e.Member {
		return e.Err.Error()
	}
	return clean(fmt.Sprintf("member %q: %s", e.Member, e.Err.Error()))
}

func (e *MemberError) Unwrap() error { return e.Err }

// clean makes a message one line: control characters (a newline in a
// server's answer, a terminal escape in a hostile tag) become '?'. Unlike
// oneline.Sanitize it does not shorten: a mismatch names two digests.
func clean(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return '?'
		}
		return r
	}, s)
}
