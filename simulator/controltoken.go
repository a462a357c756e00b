package simulator

import (
	"context"
	"fmt"
	"net/netip"
	"strings"
	"sync"
	"time"
)

// The control API stays closed to web pages whatever the configuration:
// a Host check is what keeps DNS rebinding out, so a Host beyond loopback
// (a name of Config.ControlHosts, or "*") needs a token, which a page of
// another site cannot send. A token must be worth its name (at least
// MinControlToken characters, none of them blank), and every failed try
// of one is slowed, per process, so that guessing takes forever.

// MinControlToken is the shortest control token accepted.
const MinControlToken = 16

// checkControlAccess refuses a configuration that would open the control
// API to web pages, or lock it for good.
func checkControlAccess(c Config) error {
	if c.NoControl {
		return nil
	}
	if tok := c.ControlToken; tok != "" {
		if strings.TrimSpace(tok) == "" {
			return fmt.Errorf("simulator: the control token is blank: no request could ever send it")
		}
		for _, r := range tok {
			if r <= ' ' || r == 0x7f {
				return fmt.Errorf("simulator: the control token holds a space or a control character, which an HTTP header does not carry as such; use letters, digits and punctuation")
			}
		}
		if n := len([]rune(tok)); n < MinControlToken {
			return fmt.Errorf("simulator: the control token has %d characters, fewer than %d: choose a longer one", n, MinControlToken)
		}
		return nil
	}
	for _, h := range c.ControlHosts {
		if !loopbackName(h) {
			return fmt.Errorf("simulator: control host %q opens the control API beyond loopback, to any web page that DNS rebinding points at it: set a control token (--control-token, TCM_SIM_CONTROL_TOKEN) too", excerpt(h))
		}
	}
	return nil
}

// loopbackName: a host name or address that only this machine reaches.
func loopbackName(host string) bool {
	name := hostName(host)
	if name == "localhost" || strings.HasSuffix(name, ".localhost") {
		return true
	}
	ip, err := netip.ParseAddr(name)
	return err == nil && ip.Unmap().IsLoopback()
}

// tokenBackoff slows the failed tries of a control token: each waits its
// turn, and the wait doubles with every failure up to maxTokenWait, back
// to nothing after a quiet tokenQuiet. A try with the right token never
// waits.
type tokenBackoff struct {
	mu       sync.Mutex // held while a failed try waits: one at a time
	failures int
	last     time.Time
}

const (
	firstTokenWait = 50 * time.Millisecond
	maxTokenWait   = 2 * time.Second
	tokenQuiet     = time.Minute
)

// failed waits as long as the failures so far ask for (or until the
// client gives up).
func (b *tokenBackoff) failed(ctx context.Context, sleep func(context.Context, time.Duration)) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if time.Since(b.last) > tokenQuiet {
		b.failures = 0
	}
	b.failures++
	wait := firstTokenWait << min(b.failures-1, 10)
	sleep(ctx, min(wait, maxTokenWait))
	b.last = time.Now()
}
