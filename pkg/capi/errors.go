package capi

import (
	"errors"
	"fmt"
)

// Sentinel errors, checked with errors.Is.
var (
	// ErrInvalid marks options (or member names) the API server or Cluster
	// API's webhook would refuse: a name or namespace that is not a DNS
	// label, an empty or malformed cluster selector, an unknown strategy.
	ErrInvalid = errors.New("invalid ClusterResourceSet")
	// ErrNoResources marks a set none of whose members renders an object:
	// a ClusterResourceSet lists at least one resource.
	ErrNoResources = errors.New("nothing to install")
	// ErrTooLarge marks a document that does not fit one ConfigMap or
	// Secret by itself (SizeError): documents are never cut.
	ErrTooLarge = errors.New("document too large for a ConfigMap or Secret")
	// ErrTooManyResources marks a set that needs more ConfigMaps and
	// Secrets than one ClusterResourceSet may list (MaxResources).
	ErrTooManyResources = errors.New("too many resources for one ClusterResourceSet")
)

// SizeError is a member one of whose documents is larger, alone, than
// the data a ConfigMap or Secret may hold. It matches ErrTooLarge. Its
// message is one line.
type SizeError struct {
	// Member is the member's name, MemberBytes the size of its whole
	// rendered stream.
	Member      string
	MemberBytes int
	// Object names the document ("apps/v1/Deployment ns/name"), Bytes is
	// its size, and Limit the most a ConfigMap or Secret holds.
	Object string
	Bytes  int
	Limit  int
}

func (e *SizeError) Error() string {
	return fmt.Sprintf("member %s (%d bytes) cannot be split across ConfigMaps: its document %s alone is %d bytes, over the %d bytes of data a ConfigMap or Secret holds",
		e.Member, e.MemberBytes, e.Object, e.Bytes, e.Limit)
}

// Is makes a SizeError match ErrTooLarge.
func (e *SizeError) Is(target error) bool { return target == ErrTooLarge }
