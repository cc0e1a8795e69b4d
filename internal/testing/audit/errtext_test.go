package audit_test

import (
	"path/filepath"
	"slices"
	"testing"

	"github.com/addonpkg/addonpkg/internal/testing/audit"
)

// No production code in pkg/ or internal/ recognises an error by its
// text: a sentinel or a type is what a caller (and we) test, with
// errors.Is or errors.As.
func TestNoErrorTextMatching(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", "..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	found, err := audit.ErrorTextMatches(filepath.Join(root, "pkg"), filepath.Join(root, "internal"), filepath.Join(root, "cmd"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range found {
		t.Errorf("%s: an error recognised by its text: use errors.Is with a sentinel or errors.As with a type", f)
	}
}

// The check itself: it finds the error's text in the string functions,
// a regexp and a comparison, through a conversion, and passes what looks
// at other strings.
func TestCheckErrorTextSource(t *testing.T) {
	src := `package x
import ("errors"; "regexp"; "strings")
var re = regexp.MustCompile("x")
func contains(err error) bool { return strings.Contains(err.Error(), "EOF") }
func prefix(err error) bool { return strings.HasPrefix(strings.ToLower(err.Error()), "x509:") }
func (t *T) rx(err error) bool { return re.MatchString(err.Error()) }
func eq(err error) bool { return err.Error() == "boom" }
func good(err error, s string) bool { return errors.Is(err, errX) || strings.Contains(s, "EOF") }
var errX = errors.New("x")
type T struct{}
`
	found, err := audit.CheckErrorTextSource("x.go", src)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range found {
		got = append(got, f.Func+" "+f.Call)
	}
	want := []string{"contains strings.Contains", "prefix strings.HasPrefix", "T.rx re.MatchString", "eq =="}
	if !slices.Equal(got, want) {
		t.Fatalf("found %q, want %q", got, want)
	}
}
