package client

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"
)

// A wait on real time says how long is left as it goes; a virtual clock
// moves at once, silently.
func TestCountdown(t *testing.T) {
	defer func(step time.Duration) { countdownStep = step }(countdownStep)
	countdownStep = 5 * time.Millisecond
	var log bytes.Buffer
	if err := Countdown(context.Background(), WallClock{}, 22*time.Millisecond, &log); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(log.String(), "left\n"); n != 4 {
		t.Errorf("%d countdown lines, want 4:\n%s", n, log.String())
	}
	log.Reset()
	virtual := &fake{}
	if err := Countdown(context.Background(), virtual, time.Minute, &log); err != nil || log.Len() != 0 || virtual.waited != time.Minute {
		t.Errorf("a virtual clock: err %v, log %q, waited %v", err, log.String(), virtual.waited)
	}
}

type fake struct{ waited time.Duration }

func (f *fake) Wait(_ context.Context, d time.Duration) error { f.waited += d; return nil }
func (f *fake) Now(context.Context) (time.Time, error)        { return time.Time{}, nil }
