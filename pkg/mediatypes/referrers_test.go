package mediatypes_test

import (
	"strings"
	"testing"

	"github.com/addonpkg/addonpkg/pkg/mediatypes"
)

func TestIsReferrerTag(t *testing.T) {
	hex := strings.Repeat("ab", 32)
	tests := []struct {
		tag  string
		want bool
	}{
		{"sha256-" + hex, true},
		{"sha256-" + hex + ".sig", true},
		{"sha256-" + hex + ".att", true},
		{"sha256-" + hex + ".sbom", true},
		{"sha256-" + hex + ".other", false},
		{"sha256-" + hex[:63], false},
		{"v1.0", false},
		{"sha512-" + hex, false},
	}
	for _, tt := range tests {
		if got := mediatypes.IsReferrerTag(tt.tag); got != tt.want {
			t.Errorf("IsReferrerTag(%q) = %v, want %v", tt.tag, got, tt.want)
		}
	}
}
