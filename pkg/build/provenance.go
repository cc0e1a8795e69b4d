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
	if err != nil {
		return time.Time{}, fmt.Errorf("SOURCE_DATE_EPOCH=%q: not a number of seconds", s)
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
