package source

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/addonpkg/addonpkg/pkg/errdef"
	"github.com/addonpkg/addonpkg/pkg/layout"
	"github.com/addonpkg/addonpkg/pkg/reference"
)

// ErrNotInStore marks a short name (one without a registry host) that the
// local store does not hold. A short name is a local name: addonpkg never
// looks it up in a registry. It also marks a registry reference read with
// Options.StoreFirst and the pull policy PullNever that the store does
// not hold.
var ErrNotInStore = errors.New("not in the local store")

// ErrShortName marks a short name used where a registry reference is
// needed: a short name never means Docker Hub.
var ErrShortName = errors.New("not a registry reference")

// NotInStoreError is the error of a short name the store does not hold,
// with the closest names it does hold, or of a registry reference it does
// not hold when the pull policy is PullNever. It matches ErrNotInStore and
// errdef.ErrNotFound.
type NotInStoreError struct {
	// Name is the name looked up, with its tag.
	Name string
	// Closest are store names that look like Name, closest first (at most
	// three).
	Closest []string
	// Path is a file or folder in the working directory whose path is
	// the name as written ("examples/coredns"), when there is one: the
	// SOURCE still reads as a name (its text decides), but the message
	// says how to name the path ("./examples/coredns").
	Path string
	// PathIsDir says Path is a folder.
	PathIsDir bool
	// PullNever says Name is a registry reference that the pull policy
	// PullNever kept from being pulled.
	PullNever bool
	// StoreOnly says Name was given where only the store is read (tag,
	// rm, push's source, the pull policy PullNever): no registry could
	// have been meant, so no word of Docker Hub.
	StoreOnly bool
}

func (e *NotInStoreError) Error() string {
	msg := e.Name + ": not in the local store"
	if e.PullNever {
		msg += " (and the pull policy is never)"
	}
	if !reference.HasRegistry(e.Name) && !e.StoreOnly {
		// Only a short name could have been meant for Docker Hub.
		msg += fmt.Sprintf(" (a name without a registry host is a local name; for Docker Hub write %s)", reference.DockerHub(e.Name))
	}
	if e.Path != "" {
		what := "file"
		if e.PathIsDir {
			what = "folder"
		}
		msg += "; for the " + what + " " + e.Path + " write ./" + e.Path
	}
	if len(e.Closest) > 0 {
		msg += "; did you mean " + strings.Join(e.Closest, ", ") + "?"
	}
	return msg
}

// Is makes errors.Is match ErrNotInStore and errdef.ErrNotFound.
func (e *NotInStoreError) Is(target error) bool {
	return target == ErrNotInStore || target == errdef.ErrNotFound
}

// NotInStore is the error of name, which st does not hold, with the
// closest names st does hold: what a command that names the store's own
// entries (tag, rm) says of one it lacks, as Open says it of a SOURCE.
func NotInStore(st *layout.Store, name string) *NotInStoreError {
	e := &NotInStoreError{Name: name, StoreOnly: true}
	entries, err := st.List()
	if err != nil {
		return e // the suggestions are a courtesy
	}
	names := make([]string, 0, len(entries))
	for _, en := range entries {
		names = append(names, en.Name)
	}
	e.Closest = reference.Closest(name, names)
	return e
}

func notInStore(st *layout.Store, name string, storeOnly bool) error {
	e := NotInStore(st, name)
	e.StoreOnly = storeOnly
	// The name as written: Parse added ":latest" to one without a tag.
	for _, p := range []string{strings.TrimSuffix(name, ":"+reference.DefaultTag), name} {
		if fi, err := os.Stat(p); err == nil {
			e.Path, e.PathIsDir = p, fi.IsDir()
			break
		}
	}
	return e
}
