package conformance_test

import (
	"strings"
	"testing"

	"github.com/addonpkg/addonpkg/internal/conformance"
)

// A reader that floods stdout is a failing reader, not a reason to hold
// its output: the runner keeps at most the result cap of it.
func TestRunVectorCapsStdout(t *testing.T) {
	v := conformance.Vector{Name: "flood", Dir: t.TempDir(), Source: "oci:x:v1", Expected: conformance.Result{Result: conformance.ResultOK}}
	o := conformance.RunVector(t.Context(), v, conformance.RunOptions{Command: []string{"sh", "-c", "head -c 50000000 /dev/zero; exit 0", "reader"}})
	if o.Passed() || len(o.Problems) != 1 || !strings.Contains(o.Problems[0], "more than") {
		t.Errorf("a reader that printed 50 MB: problems %q, want one saying stdout is more than a result", o.Problems)
	}
}
