// Command mkimage builds addonpkg's own container image (see
// hack/selfimage) into an OCI layout and, with -push, to a
// registry. make image runs it.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strconv"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/addonpkg/addonpkg/hack/selfimage"
	"github.com/addonpkg/addonpkg/pkg/registry"
)

func main() {
	var (
		o                    selfimage.Options
		out, tag, push, plat string
	)
	flag.StringVar(&o.Binary, "binary", "", "static addonpkg binary (required)")
	flag.StringVar(&plat, "platform", "linux/amd64", "the binary's platform")
	flag.StringVar(&o.Version, "version", "", "version label")
	flag.StringVar(&o.Revision, "revision", "", "revision label (git commit)")
	flag.StringVar(&o.Source, "source", "", "source label (repository URL)")
	flag.StringVar(&out, "o", ".work/image", "OCI layout to write")
	flag.StringVar(&tag, "tag", "latest", "tag in the layout")
	flag.StringVar(&push, "push", "", "also push to this reference")
	flag.Parse()
	if err := run(o, plat, out, tag, push); err != nil {
		fmt.Fprintln(os.Stderr, "mkimage: "+err.Error())
		os.Exit(1)
	}
}

func run(o selfimage.Options, plat, out, tag, push string) error {
	ctx := context.Background()
	p, err := v1.ParsePlatform(plat)
	if err != nil {
		return fmt.Errorf("-platform %q: %w", plat, err)
	}
	o.Platform = *p
	if s := os.Getenv("SOURCE_DATE_EPOCH"); s != "" {
		sec, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return fmt.Errorf("SOURCE_DATE_EPOCH=%q: not a number of seconds", s)
		}
		o.Created = time.Unix(sec, 0).UTC()
	}
	img, err := selfimage.Build(ctx, o)
	if err != nil {
		return err
	}
	if err := selfimage.WriteLayout(out, tag, img); err != nil {
		return err
	}
	d, err := img.Digest()
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "wrote %s:%s\n", out, tag)
	if push != "" {
		if err := selfimage.Push(ctx, img, push, registry.Options{}); err != nil {
			return err
		}
		fmt.Fprintf(os.Stderr, "pushed %s\n", push)
	}
	fmt.Println(d)
	return nil
}
