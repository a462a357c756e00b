package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/tcmkit/tcmkit/schemas/jsondoc"
)

// startPrism starts prism proxy --errors on a free port of 127.0.0.1 and
// waits until it listens.
func startPrism(ctx context.Context, prism, doc, upstream, logPath string) (string, func(), error) {
	port, err := freePort()
	if err != nil {
		return "", nil, err
	}
	logFile, err := os.Create(logPath)
	if err != nil {
		return "", nil, err
	}
	cmd := exec.Command(prism, "proxy", "--errors", "-h", "127.0.0.1", "-p", fmt.Sprint(port), doc, upstream)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		logFile.Close()
		return "", nil, fmt.Errorf("start %s: %w", prism, err)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	stop := func() {
		cmd.Process.Kill()
		<-exited
		logFile.Close()
	}
	url := fmt.Sprintf("http://127.0.0.1:%d", port)
	deadline := time.Now().Add(90 * time.Second)
	for {
		select {
		case <-exited:
			logFile.Close()
			log, _ := os.ReadFile(logPath)
			return "", nil, fmt.Errorf("prism exited before listening:\n%s", log)
		case <-ctx.Done():
			stop()
			return "", nil, ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
		if c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port)); err == nil {
			c.Close()
			return url, stop, nil
		}
		if time.Now().After(deadline) {
			stop()
			log, _ := os.ReadFile(logPath)
			return "", nil, fmt.Errorf("prism does not listen after 90 s:\n%s", log)
		}
	}
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// violation is one entry of Prism's list.
type violation struct {
	Location []string `json:"location"`
	Code     string   `json:"code"`
	Message  string   `json:"message"`
}

// inBody reports whether the violation is about the response body.
func (v violation) inBody() bool {
	return len(v.Location) >= 2 && v.Location[0] == "response" && v.Location[1] == "body"
}

// prismVerdict reads Prism's verdict on an answer: with --errors, an
// answer with violations becomes a problem document whose type ends in
// #VIOLATIONS and whose validation lists them (the sl-violations header
// repeats them, cut when long).
func prismVerdict(h http.Header, body []byte) (bool, []violation) {
	var problem struct {
		Type       string      `json:"type"`
		Validation []violation `json:"validation"`
	}
	if strings.HasPrefix(h.Get("Content-Type"), "application/problem+json") && json.Unmarshal(body, &problem) == nil &&
		strings.HasSuffix(problem.Type, "#VIOLATIONS") {
		return true, problem.Validation
	}
	if v := h.Get("sl-violations"); v != "" {
		return true, []violation{{Message: jsondoc.Excerpt(v, 200)}}
	}
	return false, nil
}
