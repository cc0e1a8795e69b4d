package build_test

import (
	"testing"
	"time"

	"github.com/addonpkg/addonpkg/pkg/build"
)

// SOURCE_DATE_EPOCH is seconds since 1970, as date +%s prints them: a
// negative value (the config said 1969), one past year 9999 or one that
// is no integer is refused.
func TestCreatedFromEnv(t *testing.T) {
	for in, want := range map[string]time.Time{
		"":             {},
		"0":            time.Unix(0, 0).UTC(),
		"1700000000":   time.Unix(1700000000, 0).UTC(),
		"253402300799": time.Unix(253402300799, 0).UTC(),
	} {
		t.Setenv("SOURCE_DATE_EPOCH", in)
		if got, err := build.CreatedFromEnv(); err != nil || !got.Equal(want) {
			t.Errorf("SOURCE_DATE_EPOCH=%q: %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"-5", "253402300800", "1.5", "soon"} {
		t.Setenv("SOURCE_DATE_EPOCH", in)
		if _, err := build.CreatedFromEnv(); err == nil {
			t.Errorf("SOURCE_DATE_EPOCH=%q: no error", in)
		}
	}
}
