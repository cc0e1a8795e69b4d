package unpack

import v1 "github.com/google/go-containerregistry/pkg/v1"

// SetHostPlatform lets tests run SelectImage as if on another host.
func SetHostPlatform(os, arch string) (restore func()) {
	old := hostPlatform
	hostPlatform = v1.Platform{OS: os, Architecture: arch}
	return func() { hostPlatform = old }
}

// SetReadAheadBudget lets tests make lower layers wait for the merge.
func SetReadAheadBudget(n int64) (restore func()) {
	old := readAheadBudget
	readAheadBudget = n
	return func() { readAheadBudget = old }
}

// SetShadowMemBytes lets tests send every hidden file held for hard links
// to the spill directory.
func SetShadowMemBytes(n int64) (restore func()) {
	old := shadowMemBytes
	shadowMemBytes = n
	return func() { shadowMemBytes = old }
}
