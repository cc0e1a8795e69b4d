package signature_test

import "github.com/addonpkg/addonpkg/pkg/unpack"

func unpackOptions() unpack.Options { return unpack.Options{} }
