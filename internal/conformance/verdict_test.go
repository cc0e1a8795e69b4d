package conformance_test

import (
	"errors"
	"testing"

	"github.com/addonpkg/addonpkg/internal/conformance"
)

func TestVerdict(t *testing.T) {
	pass := conformance.Outcome{}
	fail := conformance.Outcome{Problems: []string{"files differ"}}
	if err := conformance.Verdict([]conformance.Outcome{pass, pass}); err != nil {
		t.Errorf("all passed: %v", err)
	}
	err := conformance.Verdict([]conformance.Outcome{pass, fail, fail})
	if !errors.Is(err, conformance.ErrFailed) || err.Error() != "2 of 3 conformance vectors failed" {
		t.Errorf("two failed: %v", err)
	}
	if n := conformance.Failed([]conformance.Outcome{fail, pass}); n != 1 {
		t.Errorf("Failed = %d", n)
	}
}
