package unpack

// SetReadAheadBudget lets tests make lower layers wait for the merge.
func SetReadAheadBudget(n int64) (restore func()) {
	old := readAheadBudget
	readAheadBudget = n
	return func() { readAheadBudget = old }
}
