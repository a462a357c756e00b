package tcmclient

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"
)

// SimulatorClock is a Clock for tests against the tcmkit simulator with a
// manual clock: it waits by moving the simulator's clock (POST
// /_control/clock/advance) at once, and its own time moves by what it
// waited. A test then waits out a Retry-After of 60 s in no time, and the
// simulator counts the 60 s.
type SimulatorClock struct {
	control, token string
	now            time.Time
}

// NewSimulatorClock drives the control API at controlURL (such as
// http://127.0.0.1:8080/_control), with the control token if it has one.
func NewSimulatorClock(controlURL, token string) *SimulatorClock {
	return &SimulatorClock{control: strings.TrimRight(controlURL, "/"), token: token, now: time.Now()}
}

func (s *SimulatorClock) Now() time.Time { return s.now }

func (s *SimulatorClock) Sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	d = d.Truncate(time.Millisecond) + time.Millisecond // never less than asked
	body, _ := json.Marshal(map[string]string{"duration": d.String()})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.control+"/clock/advance", bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	if s.token != "" {
		req.Header.Set("X-Control-Token", s.token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("moving the simulator's clock: %w", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("moving the simulator's clock: %s", resp.Status)
	}
	s.now = s.now.Add(d)
	return nil
}
