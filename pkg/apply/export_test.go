package apply

import "net/http"

// SetTestHook sets the function called between Apply's stages; nil
// removes it.
func SetTestHook(f func(stage string)) { testHook = f }

// HeldBy says what keeps a deleted object, as a timed-out wait names it.
var HeldBy = heldBy

// Wrap gives an API server's error the sentinels of its cause.
var Wrap = wrap

var Nth = nth

// ReadyStatus is the status a wait and Status compute of an object.
var ReadyStatus = readyStatus

// CheckAnswers is the transport New puts around the API server's.
func CheckAnswers(rt http.RoundTripper) http.RoundTripper { return answerCheck{rt} }
