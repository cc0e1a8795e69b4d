package signature_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/addonpkg/addonpkg/pkg/signature"
)

func TestLoadKeyVerifier(t *testing.T) {
	_, pub, err := signature.GenerateKeyPair(nil)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.pub"), filepath.Join(dir, "b.pub")
	for _, f := range []string{a, b} {
		if err := os.WriteFile(f, pub, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	v, err := signature.LoadKeyVerifier(a, b)
	if err != nil || len(v.Keys) != 2 {
		t.Fatalf("LoadKeyVerifier: %v, %v", v, err)
	}
	if _, err := signature.LoadKeyVerifier(a, filepath.Join(dir, "missing.pub")); !errors.Is(err, signature.ErrBadKey) {
		t.Errorf("a missing key file: %v, want ErrBadKey", err)
	}
}
