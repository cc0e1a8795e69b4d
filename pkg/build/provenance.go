package build

import (
	"fmt"
	"os"
	"strconv"
	"time"
)

// Provenance is where a tree came from (a git work tree's remote, commit
// and commit time; a download's URL): what a build records when its
// options say nothing else (source.Tree carries it).
type Provenance struct {
	Source   string
	Revision string
	Time     time.Time
}

// CreatedFromEnv reads SOURCE_DATE_EPOCH, the build time that
// reproducible builds agree on (reproducible-builds.org): the zero time
// when it is unset.
func CreatedFromEnv() (time.Time, error) {
	s := os.Getenv("SOURCE_DATE_EPOCH")
	if s == "" {
		return time.Time{}, nil
	}
	sec, err := strconv.ParseInt(s, 10, 64)
	// Seconds since 1970, as date +%s prints them: not before it (the
	// config said 1969), not past year 9999 (RFC 3339 ends there).
	if err != nil || sec < 0 || sec > 253402300799 {
		return time.Time{}, fmt.Errorf("SOURCE_DATE_EPOCH=%q: not a number of seconds since 1970 (date +%%s)", s)
	}
	return time.Unix(sec, 0).UTC(), nil
}

// WithProvenance fills what o leaves empty: Source and Revision from p,
// and Created from SOURCE_DATE_EPOCH, else p.Time (else it stays zero:
// the Unix epoch).
func (o Options) WithProvenance(p Provenance) (Options, error) {
	if o.Source == "" {
		o.Source = p.Source
	}
	if o.Revision == "" {
		o.Revision = p.Revision
	}
	if o.Created.IsZero() {
		t, err := CreatedFromEnv()
		if err != nil {
			return o, err
		}
		o.Created = t
	}
	if o.Created.IsZero() {
		o.Created = p.Time
	}
	return o, nil
}
