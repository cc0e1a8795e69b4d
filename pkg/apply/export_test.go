package apply

// SetTestHook sets the function called between Apply's stages; nil
// removes it.
func SetTestHook(f func(stage string)) { testHook = f }
