package main

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"

	"github.com/go-logr/logr"
	"k8s.io/klog/v2"
)

// klogLines takes what client-go logs through klog ("Unexpected error
// when reading response body" when a request is cancelled, say): a
// command says what went wrong in its own one line, so klog's lines go
// nowhere, or with -v to the command's stderr. klog's logger is the
// process's and may be set only before anything logs, so it is set once,
// to this, and each command says where the lines go.
var klogLines = &klogSink{}

var klogOnce sync.Once

// routeKlog points klog at klogLines, once.
func routeKlog() {
	klogOnce.Do(func() { klog.SetLogger(logr.FromSlogHandler(klogLines)) })
}

type klogSink struct{ to atomic.Pointer[lineHandler] }

func (s *klogSink) Enabled(context.Context, slog.Level) bool { return s.to.Load() != nil }

func (s *klogSink) Handle(ctx context.Context, r slog.Record) error {
	if h := s.to.Load(); h != nil {
		return h.Handle(ctx, r)
	}
	return nil
}

func (s *klogSink) WithAttrs([]slog.Attr) slog.Handler { return s }
func (s *klogSink) WithGroup(string) slog.Handler      { return s }
