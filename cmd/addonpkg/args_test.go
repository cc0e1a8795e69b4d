package main

import (
	"slices"
	"testing"
)

func TestParseUse(t *testing.T) {
	for _, tc := range []struct {
		use                string
		required, optional []string
		variadic           bool
	}{
		{"images", nil, nil, false},
		{"build PATH", []string{"PATH"}, nil, false},
		{"push NAME[:TAG] [DEST]", []string{"NAME[:TAG]"}, []string{"DEST"}, false},
		{"rm NAME...", []string{"NAME"}, nil, true},
		{"diff A B", []string{"A", "B"}, nil, false},
		{"run [-- READER [ARG...]]", nil, []string{"READER", "ARG"}, true},
		{"mirror [-f addons.yaml] --to REGISTRY/PREFIX|oci-archive:FILE [-o FILE]", nil, nil, false},
		{"render [-f addons.yaml] [-o DIR]", nil, nil, false},
		{"lock [-f addons.yaml] [--update [NAME...]] [--check]", nil, []string{"NAME"}, true},
		{"x [--flag] ARG", []string{"ARG"}, nil, false},
	} {
		got := parseUse(tc.use)
		if !slices.Equal(got.required, tc.required) || !slices.Equal(got.optional, tc.optional) || got.variadic != tc.variadic {
			t.Errorf("parseUse(%q) = %+v", tc.use, got)
		}
	}
}
