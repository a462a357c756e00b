package pace

import (
	"context"
	"sync"
	"testing"
	"time"
)

// fakeVirtual is a manual clock: waiting moves it at once.
type fakeVirtual struct {
	mu    sync.Mutex
	moved time.Duration
}

func (c *fakeVirtual) Wait(_ context.Context, d time.Duration) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.moved += d
	return nil
}

func (c *fakeVirtual) Now(context.Context) (time.Time, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return time.Unix(0, 0).Add(c.moved), nil
}

func (*fakeVirtual) Virtual() bool { return true }

// On a virtual clock, lanes that wait at once move the clock by the
// longest of their waits, as real time would pass; lanes that hold the
// same key wait one after the other.
func TestPacerLanesOverlapOnAVirtualClock(t *testing.T) {
	for _, tc := range []struct {
		name string
		keys [3][]string // what each of three lanes holds
		want time.Duration
	}{
		{"three keys", [3][]string{{"a"}, {"b"}, nil}, 2 * time.Minute},
		{"one key twice", [3][]string{{"a"}, {"a"}, nil}, 4 * time.Minute},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clock := &fakeVirtual{}
			p := New(context.Background(), clock, nil)
			var wg sync.WaitGroup
			wg.Add(3)
			errs := make(chan error, 3)
			for _, keys := range tc.keys {
				p.Lane(context.Background(), "lane", func(ctx context.Context) {
					defer wg.Done()
					release, err := p.Hold(ctx, keys...)
					if err != nil {
						errs <- err
						return
					}
					defer release()
					// two waits of a minute, a request's worth of work between
					for range 2 {
						if err := p.Wait(ctx, time.Minute); err != nil {
							errs <- err
						}
					}
				})
			}
			wg.Wait()
			if err := p.Drain(context.Background()); err != nil {
				t.Fatal(err)
			}
			close(errs)
			for err := range errs {
				t.Fatal(err)
			}
			waited, _ := p.Waited()
			if clock.moved != tc.want || waited != tc.want {
				t.Errorf("the clock moved %s (the Pacer says %s), want %s", clock.moved, waited, tc.want)
			}
		})
	}
}

// Outside the lanes a wait moves the clock at once, and a move of the
// world is no wait.
func TestPacerOutsideLanes(t *testing.T) {
	clock := &fakeVirtual{}
	p := New(context.Background(), clock, nil)
	before := p.ClientTime()
	if err := p.Wait(context.Background(), 30*time.Second); err != nil {
		t.Fatal(err)
	}
	if err := (world{p}).Wait(context.Background(), time.Hour); err != nil {
		t.Fatal(err)
	}
	waited, moved := p.Waited()
	if waited != 30*time.Second || moved != time.Hour || clock.moved != time.Hour+30*time.Second {
		t.Errorf("waited %s, moved %s, the clock %s: want 30s, 1h, 1h0m30s", waited, moved, clock.moved)
	}
	if got := p.ClientTime().Sub(before); got != 30*time.Second {
		t.Errorf("the suite's records moved %s, want the 30 s waited (the world's moves left out)", got)
	}
}

// A sequence that runs alone holds every other exchange back.
func TestPacerAlone(t *testing.T) {
	p := New(context.Background(), &fakeVirtual{}, nil)
	inside := make(chan struct{})
	release := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		p.Alone(context.Background(), func(context.Context) {
			close(inside)
			<-release
		})
		close(finished)
	}()
	<-inside
	sent := make(chan struct{})
	go func() {
		p.Exchange(context.Background())()
		close(sent)
	}()
	select {
	case <-sent:
		t.Fatal("an exchange went out while a sequence ran alone")
	case <-time.After(50 * time.Millisecond):
	}
	close(release)
	<-finished
	<-sent
}
