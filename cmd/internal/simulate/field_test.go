package simulate

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tcmkit/tcmkit/schemas"

	"github.com/tcmkit/tcmkit/schemas/redact"
)

// started runs the binary's run in the background until the test ends and
// returns its info file, once it is written.
func started(t *testing.T, args ...string) (map[string]string, *lockedBuffer) {
	t.Helper()
	infoPath := filepath.Join(t.TempDir(), "info.json")
	ctx, cancel := context.WithCancel(context.Background())
	stdout, stderr := &lockedBuffer{}, &lockedBuffer{}
	code := make(chan int, 1)
	go func() {
		code <- run(ctx, append(args, "--speed", "0", "--channels", "2", "--history", "24h", "--info-file", infoPath), stdout, stderr)
	}()
	t.Cleanup(func() {
		cancel()
		if c := <-code; c != 0 {
			t.Errorf("exit %d: %s", c, stderr.waitFor(""))
		}
	})
	for range 200 {
		if raw, err := os.ReadFile(infoPath); err == nil {
			var info map[string]string
			if err := unmarshalInfo(raw, &info); err != nil {
				t.Fatal(err)
			}
			return info, stdout
		}
		select {
		case c := <-code:
			code <- c
			t.Fatalf("run returned %d before listening", c)
		case <-time.After(25 * time.Millisecond):
		}
	}
	t.Fatal("no info file")
	return nil, nil
}

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

// waitFor returns the text once it holds want (the banner comes after the
// info file).
func (l *lockedBuffer) waitFor(want string) string {
	for range 200 {
		l.mu.Lock()
		s := l.b.String()
		l.mu.Unlock()
		if strings.Contains(s, want) {
			return s
		}
		time.Sleep(25 * time.Millisecond)
	}
	return ""
}

func TestRefusesToExposeAnOpenControlAPI(t *testing.T) {
	for _, addr := range []string{"0.0.0.0:0", ":0", "[::]:0", "192.0.2.1:0", "example.com:0"} {
		var stderr bytes.Buffer
		if code := run(context.Background(), []string{"--addr", addr}, io.Discard, &stderr); code != 2 {
			t.Errorf("%s: exit %d, want 2", addr, code)
		}
		if !strings.Contains(stderr.String(), "--control-token") || strings.Count(stderr.String(), "\n") != 1 {
			t.Errorf("%s: %q", addr, stderr.String())
		}
	}
	// With a token (from the environment, as in the container) it serves,
	// and says so.
	t.Setenv("TCM_SIM_CONTROL_TOKEN", "s3cret-of-16-characters")
	info, stdout := started(t, "--addr", "0.0.0.0:0")
	banner := stdout.waitFor("reachable beyond this machine; control API behind X-Control-Token")
	if banner == "" {
		t.Errorf("banner: %s", stdout.waitFor(""))
	}
	if strings.Contains(banner, info["proKey"]) || !strings.Contains(banner, redact.Form(info["proKey"])) {
		t.Errorf("beyond loopback the banner shows keys redacted: %s", banner)
	}
	port := info["url"][strings.LastIndex(info["url"], ":")+1:]
	req, _ := http.NewRequest("GET", "http://127.0.0.1:"+port+"/_control/info", nil)
	for token, want := range map[string]int{"": 401, "s3cret-of-16-characters": 200} {
		req.Header.Set("X-Control-Token", token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("token %q: %d, want %d", token, resp.StatusCode, want)
		}
	}
}

func TestListFlagsFromTheEnvironment(t *testing.T) {
	t.Setenv("TCM_SIM_CORS", "http://localhost:5173, http://127.0.0.1:3000")
	t.Setenv("TCM_SIM_CONTROL_HOST", "simulator")
	t.Setenv("TCM_SIM_CONTROL_TOKEN", "s3cret-of-16-characters") // a control host beyond loopback needs one
	o, err := parseOptions("simulator", []string{"--control-host", "sim.internal"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if len(o.Sim.CORSOrigins) != 2 || o.Sim.CORSOrigins[1] != "http://127.0.0.1:3000" {
		t.Errorf("cors %q", o.Sim.CORSOrigins)
	}
	if len(o.Sim.ControlHosts) != 1 || o.Sim.ControlHosts[0] != "sim.internal" {
		t.Errorf("a flag set wins over its variable: %q", o.Sim.ControlHosts)
	}
	for _, bad := range [][]string{{"--tls-cert", "x"}, {"--cors", "localhost:5173"}, {"--max-events", "-3"}} {
		var stderr bytes.Buffer
		if code := run(context.Background(), bad, io.Discard, &stderr); code != 2 {
			t.Errorf("%v: exit %d, want 2 (%s)", bad, code, stderr.String())
		}
	}
}

func TestTLS(t *testing.T) {
	dir := t.TempDir()
	certPEM, keyPEM := selfSigned(t)
	cert, key := filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	if err := os.WriteFile(cert, certPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(key, keyPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	info, _ := started(t, "--addr", "127.0.0.1:0", "--tls-cert", cert, "--tls-key", key)
	if !strings.HasPrefix(info["url"], "https://") {
		t.Fatalf("url %s", info["url"])
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(certPEM)
	c := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	req, _ := http.NewRequest("GET", info["url"]+schemas.PathFeed+"?limit=1", nil)
	req.Header.Set("Authorization", "Bearer "+info["proKey"])
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 || resp.TLS == nil {
		t.Errorf("feed over TLS: %d", resp.StatusCode)
	}
	// Plain HTTP on the TLS port is refused by net/http (see HTTPServer).
	resp, err = http.Get("http" + strings.TrimPrefix(info["url"], "https") + schemas.PathFeed)
	if err == nil {
		resp.Body.Close()
		if resp.StatusCode != 400 {
			t.Errorf("plain HTTP to the TLS port: %d", resp.StatusCode)
		}
	}
}

func selfSigned(t *testing.T) (certPEM, keyPEM []byte) {
	t.Helper()
	priv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "127.0.0.1"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &priv.PublicKey, priv)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalECPrivateKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder})
}

func TestHealthCheck(t *testing.T) {
	info, _ := started(t, "--addr", "127.0.0.1:0")
	addr := strings.TrimPrefix(info["url"], "http://")
	if code := run(context.Background(), []string{"--health-check", "--addr", addr}, io.Discard, io.Discard); code != 0 {
		t.Errorf("health check of a running simulator: exit %d", code)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := ln.Addr().String()
	ln.Close()
	if code := run(context.Background(), []string{"--health-check", "--addr", closed}, io.Discard, io.Discard); code != 1 {
		t.Errorf("health check of nothing: exit %d, want 1", code)
	}
}
