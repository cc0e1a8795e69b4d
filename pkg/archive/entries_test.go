package archive_test

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/addonpkg/addonpkg/pkg/archive"
)

func TestEntries(t *testing.T) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, n := range []string{"a", "b"} {
		if err := tw.WriteHeader(&tar.Header{Name: n, Typeflag: tar.TypeReg, Mode: 0o644}); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	good := buf.Bytes()
	var names []string
	n, err := archive.Entries(context.Background(), tar.NewReader(bytes.NewReader(good)), func(h *tar.Header) error {
		names = append(names, h.Name)
		return nil
	})
	if err != nil || n != 2 || strings.Join(names, ",") != "a,b" {
		t.Fatalf("Entries: %d %v %v", n, names, err)
	}

	// A broken second header names the entry before it.
	broken := append(append([]byte(nil), good[:512]...), bytes.Repeat([]byte{'x'}, 512)...)
	_, err = archive.Entries(context.Background(), tar.NewReader(bytes.NewReader(broken)), func(*tar.Header) error { return nil })
	var he *archive.HeaderError
	if !errors.As(err, &he) || he.After != "a" || !strings.Contains(err.Error(), `the tar entry after "a"`) {
		t.Errorf("broken header: %v", err)
	}

	// fn's error and a cancelled context stop the walk.
	stop := errors.New("stop")
	if n, err := archive.Entries(context.Background(), tar.NewReader(bytes.NewReader(good)), func(*tar.Header) error { return stop }); n != 1 || err != stop {
		t.Errorf("fn error: %d %v", n, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := archive.Entries(ctx, tar.NewReader(bytes.NewReader(good)), func(*tar.Header) error { return nil }); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
}
