package conformance

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/onsi/ginkgo/v2/types"
)

// maxNamed is how many specs a message names before it counts the rest.
const maxNamed = 20

// undone says, when the run was cut short (its deadline, which Ginkgo or
// the run's own end met first, or an interrupt), how long it had and which
// selected specs it left undone: the one under way and those never
// started. "" when the run was not cut short.
func (r *run) undone(rep types.Report) string {
	timeout := slices.ContainsFunc(rep.SpecialSuiteFailureReasons, func(s string) bool { return strings.Contains(s, "Timeout") })
	interrupt := slices.ContainsFunc(rep.SpecialSuiteFailureReasons, func(s string) bool { return strings.Contains(s, "Interrupted") })
	var ended *deadlineError
	deadline := errors.As(context.Cause(r.runCtx), &ended)
	if !timeout && !interrupt && !deadline {
		return ""
	}
	match, err := types.ParseLabelFilter(r.filter)
	if err != nil {
		match = func([]string) bool { return true }
	}
	var names []string
	for _, sr := range rep.SpecReports {
		if !sr.LeafNodeType.Is(types.NodeTypeIt) {
			continue
		}
		cut := sr.State.Is(types.SpecStateTimedout | types.SpecStateInterrupted | types.SpecStateAborted)
		never := sr.State.Is(types.SpecStateSkipped) && sr.Failure.Message == "" && match(sr.Labels())
		if cut || never {
			// the top container's text is every spec's: left out
			texts := append(slices.Clone(sr.ContainerHierarchyTexts[min(1, len(sr.ContainerHierarchyTexts)):]), sr.LeafNodeText)
			names = append(names, strings.Join(texts, " "))
		}
	}
	if len(names) == 0 && !timeout && !interrupt {
		return "" // the deadline passed once every spec was done
	}
	var msg string
	switch {
	case interrupt:
		msg = fmt.Sprintf("the run was interrupted after %s: %d selected specs were left undone", time.Since(r.started).Round(time.Second), len(names))
	case r.shortened:
		msg = fmt.Sprintf("the run deadline (%s, to end before go test's -timeout) was reached after %s: %d selected specs were left undone",
			r.deadline, time.Since(r.started).Round(time.Second), len(names))
	default:
		msg = fmt.Sprintf("the run deadline (--run-deadline=%s) was reached after %s: %d selected specs were left undone",
			r.deadline, time.Since(r.started).Round(time.Second), len(names))
	}
	if len(names) == 0 {
		return msg
	}
	shown := names[:min(len(names), maxNamed)]
	msg += ":\n  " + strings.Join(shown, "\n  ")
	if rest := len(names) - len(shown); rest > 0 {
		msg += fmt.Sprintf("\n  … and %d more", rest)
	}
	return msg
}
