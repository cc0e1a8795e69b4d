package main

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestImagesNamesSignatures: a signature made in the store (cosign's
// sha256-HEX.sig tag beside the add-on) is listed by images --all (images
// alone lists add-ons), and described by inspect, as a signature, not as
// form "unknown"; unpack refuses it, saying what it is.
func TestImagesNamesSignatures(t *testing.T) {
	t.Parallel()
	cliNewHome(t)
	cliMust(t, "build", cliExampleDir("coredns"), "-t", "coredns:1")
	key, _ := cliKeys(t, "a")
	cliMust(t, "sign", "--key", key, "coredns:1")

	if rows := cliImagesJSON(t); len(rows) != 1 {
		t.Errorf("images: %+v, want the add-on alone", rows)
	}
	var rows []cliImageRow
	if err := json.Unmarshal([]byte(cliMust(t, "images", "--all", "--json")), &rows); err != nil {
		t.Fatal(err)
	}
	sig := ""
	for _, r := range rows {
		switch {
		case strings.HasSuffix(r.Name, ".sig"):
			sig = r.Name
			if r.Form != "signature" {
				t.Errorf("images: %s has form %q, want signature", r.Name, r.Form)
			}
		case r.Name == "coredns:1" && r.Form != "image":
			t.Errorf("images: coredns:1 has form %q", r.Form)
		}
	}
	if sig == "" {
		t.Fatal("images lists no signature")
	}
	if table := cliMust(t, "images", "--all"); !strings.Contains(table, "signature") || strings.Contains(table, "unknown") {
		t.Errorf("images:\n%s", table)
	}
	var in struct {
		Form string `json:"form"`
	}
	if err := json.Unmarshal([]byte(cliMust(t, "inspect", sig, "--json")), &in); err != nil || in.Form != "signature" {
		t.Errorf("inspect %s: form %q (%v), want signature", sig, in.Form, err)
	}
	cliCheckError(t, cliRun(t, "unpack", sig), sig, "not an add-on but a signature")
}
