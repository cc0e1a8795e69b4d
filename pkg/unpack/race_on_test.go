//go:build race

package unpack_test

// raceEnabled: the race detector slows decompression about tenfold, so the
// bomb tests stop at a lower MaxImageBytes under -race.
const raceEnabled = true
